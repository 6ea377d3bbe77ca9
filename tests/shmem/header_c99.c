/* tessera/shmem.h alone, as strict C99: the header is valid C for C programs. */
#include "tessera/shmem.h"

/* Names from every family, so a declaration the C compiler rejects is caught. */
typedef void (*PutmemFn)(void*, const void*, size_t, int);
typedef long (*FetchAddFn)(long*, long, int);
typedef uint64_t (*SignalWaitFn)(uint64_t*, int, uint64_t);
typedef int (*SplitFn)(shmem_team_t, int, int, int, const shmem_team_config_t*, long,
                       shmem_team_t*);

PutmemFn header_c99_putmem = shmem_putmem;
FetchAddFn header_c99_fetch_add = shmem_long_atomic_fetch_add;
SignalWaitFn header_c99_signal_wait = shmem_signal_wait_until;
SplitFn header_c99_split = shmem_team_split_strided;
