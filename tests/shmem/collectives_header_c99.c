/* The collectives' declarations as strict C99 (no generic names there): typed, byte, complex and
 * active-set routines, so a declaration a C99 compiler rejects is caught. */
#include "tessera/shmem.h"

typedef int (*BroadcastFn)(shmem_team_t, long*, const long*, size_t, int);
typedef int (*AlltoallsFn)(shmem_team_t, void*, const void*, ptrdiff_t, ptrdiff_t, size_t);
typedef int (*SizeXorFn)(shmem_team_t, size_t*, const size_t*, size_t);
typedef int (*ComplexProdFn)(shmem_team_t, double _Complex*, const double _Complex*, size_t);
typedef void (*ActiveSetFn)(int, int, int, long*);

BroadcastFn collectives_c99_broadcast = shmem_long_broadcast;
AlltoallsFn collectives_c99_alltoalls = shmem_alltoallsmem;
SizeXorFn collectives_c99_xor = shmem_size_xor_reduce;
ComplexProdFn collectives_c99_prod = shmem_complexd_prod_reduce;
ActiveSetFn collectives_c99_sync = shmem_sync;
ActiveSetFn collectives_c99_barrier = shmem_barrier;
