/* The OpenSHMEM 1.5 host C API over Tessera's host backend: one default runtime per process,
 * started by shmem_init from the TESSERA_* environment and the launcher (mpirun, tessera-run).
 * Valid C (C99 and later) and C++; link tessera::shmem, or compile with tessera-shmemcc.
 *
 * Symmetric objects: memory from shmem_malloc, shmem_calloc, shmem_align and shmem_realloc, and
 * the executable's static and global variables (shmem_init moves its data segment onto shared
 * memory; PEs of other nodes reach it through the network proxy; docs/shmem.md). The stack,
 * malloc'd memory and shared libraries' variables are NOT. Passing such an address where the
 * specification asks for a symmetric address prints "tessera shmem: ..." and ends the job;
 * shmem_addr_accessible returns 0 for it.
 *
 * OpenSHMEM has no error returns for communication, so every routine that meets an error it
 * cannot report (a PE outside the job, a non-symmetric address, a wait past TESSERA_TIMEOUT, a
 * call before shmem_init) prints one line starting with "tessera shmem:" to stderr and ends
 * the job with a non-zero status, as shmem_global_exit would.
 *
 * Routines on typed data are generated from the type tables below (TYPENAME, TYPE pairs, as the
 * specification names them); each family comment lists the names it generates. See
 * docs/shmem.md for what is supported and how to build and run. */
#ifndef TESSERA_SHMEM_H
#define TESSERA_SHMEM_H

#include <stddef.h>
#include <stdint.h>

/* The complex types of the sum and product reductions: C's _Complex types, and in C++ the
 * std::complex types, which have the same layout. */
#ifdef __cplusplus
#include <complex>
#define TESSERA_SHMEM_COMPLEXD std::complex<double>
#define TESSERA_SHMEM_COMPLEXF std::complex<float>
#elif !defined(__STDC_NO_COMPLEX__)
#define TESSERA_SHMEM_COMPLEXD double _Complex
#define TESSERA_SHMEM_COMPLEXF float _Complex
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- library constants ------------------------------------------------------------------- */

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN 256
#define SHMEM_VENDOR_STRING "Tessera"

/* Comparison operators of the point-to-point synchronization routines: *ivar CMP cmp_value. */
enum {
  SHMEM_CMP_EQ = 0,
  SHMEM_CMP_NE = 1,
  SHMEM_CMP_GT = 2,
  SHMEM_CMP_GE = 3,
  SHMEM_CMP_LT = 4,
  SHMEM_CMP_LE = 5
};

/* How the signalling routines update the signal word: overwrite it, or add to it atomically. */
enum { SHMEM_SIGNAL_SET = 0, SHMEM_SIGNAL_ADD = 1 };

/* Thread levels. Every level is provided: the library is thread-safe (SHMEM_THREAD_MULTIPLE);
 * shmem_init gives SHMEM_THREAD_SINGLE, shmem_init_thread the level requested. */
enum {
  SHMEM_THREAD_SINGLE = 0,
  SHMEM_THREAD_FUNNELED = 1,
  SHMEM_THREAD_SERIALIZED = 2,
  SHMEM_THREAD_MULTIPLE = 3
};

/* ---- teams ------------------------------------------------------------------------------- */

/* A team handle: opaque, local to the PE that holds it. */
typedef struct tessera_shmem_team* shmem_team_t;

/* Team configuration: num_contexts is recorded (contexts need no per-team resources). */
typedef struct {
  int num_contexts;
} shmem_team_config_t;

/* Bit of shmem_team_split_strided's config_mask saying config->num_contexts is set. */
#define SHMEM_TEAM_NUM_CONTEXTS 1L

/* The handle of no team: what a PE outside a newly split team receives. */
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)

/* Every PE of the job, numbered as shmem_my_pe. Valid from shmem_init to shmem_finalize. */
extern shmem_team_t const SHMEM_TEAM_WORLD;
/* The PEs whose heaps this PE reaches by load/store (this node's PEs; only this PE when
 * TESSERA_P2P=0). Valid from shmem_init to shmem_finalize. */
extern shmem_team_t const SHMEM_TEAM_SHARED;

/* ---- type tables --------------------------------------------------------------------------- */

/* The types of each family of typed routines, TYPENAME as the specification names it:
 *   TESSERA_SHMEM_{FAMILY}_TYPES(X) calls X(TYPENAME, TYPE) for each (X-macros a program can
 *     reuse, though not nested: one table's X may not expand another table);
 *   TESSERA_SHMEM_{FAMILY}_TYPES_WITH(X, A) calls X(TYPENAME, TYPE, A), passing A on;
 *   TESSERA_SHMEM_{FAMILY}_C_TYPES(X, A) is the part of it that the C11 generic names select by:
 *     distinct C types. The typedefs after them (int32_t, size_t, ...) are each one of those
 *     types, so they have routines of their own names but no generic selection.
 * The tables are built from the groups below, keeping the specification's order. */
/* clang-format off */
#define TESSERA_SHMEM_EACH(NAME, TYPE, X) X(NAME, TYPE)
#define TESSERA_SHMEM_REAL_TYPES(X, A) \
  X(float, float, A) X(double, double, A) X(longdouble, long double, A)
#define TESSERA_SHMEM_INT_TYPES(X, A) \
  X(int, int, A) X(long, long, A) X(longlong, long long, A)
#define TESSERA_SHMEM_UINT_TYPES(X, A) \
  X(uint, unsigned int, A) X(ulong, unsigned long, A) X(ulonglong, unsigned long long, A)
/* char and the signed integer types; the unsigned ones. */
#define TESSERA_SHMEM_SIGNED_TYPES(X, A) \
  X(char, char, A) X(schar, signed char, A) X(short, short, A) TESSERA_SHMEM_INT_TYPES(X, A)
#define TESSERA_SHMEM_UNSIGNED_TYPES(X, A) \
  X(uchar, unsigned char, A) X(ushort, unsigned short, A) TESSERA_SHMEM_UINT_TYPES(X, A)
/* The exact-width typedefs; the 32- and 64-bit ones of the AMO and wait routines. */
#define TESSERA_SHMEM_INT_N_TYPES(X, A) \
  X(int8, int8_t, A) X(int16, int16_t, A) X(int32, int32_t, A) X(int64, int64_t, A)
#define TESSERA_SHMEM_UINT_N_TYPES(X, A) \
  X(uint8, uint8_t, A) X(uint16, uint16_t, A) X(uint32, uint32_t, A) X(uint64, uint64_t, A)
#define TESSERA_SHMEM_WORD_TYPES(X, A) \
  X(int32, int32_t, A) X(int64, int64_t, A) X(uint32, uint32_t, A) X(uint64, uint64_t, A)
#define TESSERA_SHMEM_SIZE_TYPES(X, A) X(size, size_t, A) X(ptrdiff, ptrdiff_t, A)

/* The standard RMA types (and the collectives'). */
#define TESSERA_SHMEM_RMA_C_TYPES(X, A) \
  TESSERA_SHMEM_REAL_TYPES(X, A) TESSERA_SHMEM_SIGNED_TYPES(X, A) TESSERA_SHMEM_UNSIGNED_TYPES(X, A)
#define TESSERA_SHMEM_RMA_TYPES_WITH(X, A)                                 \
  TESSERA_SHMEM_RMA_C_TYPES(X, A) TESSERA_SHMEM_INT_N_TYPES(X, A)          \
  TESSERA_SHMEM_UINT_N_TYPES(X, A) TESSERA_SHMEM_SIZE_TYPES(X, A)
#define TESSERA_SHMEM_RMA_TYPES(X) TESSERA_SHMEM_RMA_TYPES_WITH(TESSERA_SHMEM_EACH, X)

/* The sized RMA routines: X(SIZE in bits, bytes) (_WITH: X(SIZE, bytes, A)). */
#define TESSERA_SHMEM_RMA_SIZES_WITH(X, A) \
  X(8, 1, A) X(16, 2, A) X(32, 4, A) X(64, 8, A) X(128, 16, A)
#define TESSERA_SHMEM_RMA_SIZES(X) TESSERA_SHMEM_RMA_SIZES_WITH(TESSERA_SHMEM_EACH, X)

/* The standard AMO types (fetch, set, compare_swap, swap, fetch_inc, inc, fetch_add, add). */
#define TESSERA_SHMEM_STANDARD_AMO_C_TYPES(X, A) \
  TESSERA_SHMEM_INT_TYPES(X, A) TESSERA_SHMEM_UINT_TYPES(X, A)
#define TESSERA_SHMEM_STANDARD_AMO_TYPES_WITH(X, A)                     \
  TESSERA_SHMEM_STANDARD_AMO_C_TYPES(X, A) TESSERA_SHMEM_WORD_TYPES(X, A) \
  TESSERA_SHMEM_SIZE_TYPES(X, A)
#define TESSERA_SHMEM_STANDARD_AMO_TYPES(X) \
  TESSERA_SHMEM_STANDARD_AMO_TYPES_WITH(TESSERA_SHMEM_EACH, X)

/* The extended AMO types beyond the standard ones (fetch, set, swap only); the extended
 * routines select among those and the standard ones. */
#define TESSERA_SHMEM_FLOAT_AMO_TYPES_WITH(X, A) X(float, float, A) X(double, double, A)
#define TESSERA_SHMEM_FLOAT_AMO_TYPES(X) TESSERA_SHMEM_FLOAT_AMO_TYPES_WITH(TESSERA_SHMEM_EACH, X)
#define TESSERA_SHMEM_EXTENDED_AMO_C_TYPES(X, A) \
  TESSERA_SHMEM_FLOAT_AMO_TYPES_WITH(X, A) TESSERA_SHMEM_STANDARD_AMO_C_TYPES(X, A)

/* The bitwise AMO types (fetch_and, and, fetch_or, or, fetch_xor, xor). */
#define TESSERA_SHMEM_BITWISE_AMO_C_TYPES(X, A) \
  TESSERA_SHMEM_UINT_TYPES(X, A) X(int32, int32_t, A) X(int64, int64_t, A)
#define TESSERA_SHMEM_BITWISE_AMO_TYPES_WITH(X, A) \
  TESSERA_SHMEM_BITWISE_AMO_C_TYPES(X, A) X(uint32, uint32_t, A) X(uint64, uint64_t, A)
#define TESSERA_SHMEM_BITWISE_AMO_TYPES(X) \
  TESSERA_SHMEM_BITWISE_AMO_TYPES_WITH(TESSERA_SHMEM_EACH, X)

/* The point-to-point synchronization types (wait_until and test families). */
#define TESSERA_SHMEM_SYNC_C_TYPES(X, A)             \
  X(short, short, A) TESSERA_SHMEM_INT_TYPES(X, A) \
  X(ushort, unsigned short, A) TESSERA_SHMEM_UINT_TYPES(X, A)
#define TESSERA_SHMEM_SYNC_TYPES_WITH(X, A) \
  TESSERA_SHMEM_SYNC_C_TYPES(X, A) TESSERA_SHMEM_WORD_TYPES(X, A) TESSERA_SHMEM_SIZE_TYPES(X, A)
#define TESSERA_SHMEM_SYNC_TYPES(X) TESSERA_SHMEM_SYNC_TYPES_WITH(TESSERA_SHMEM_EACH, X)

/* The reduction types of the team-based reductions, by the operations they support. Bitwise
 * (and, or, xor): */
#define TESSERA_SHMEM_BITWISE_REDUCE_C_TYPES(X, A) \
  TESSERA_SHMEM_UNSIGNED_TYPES(X, A) TESSERA_SHMEM_INT_N_TYPES(X, A)
#define TESSERA_SHMEM_BITWISE_REDUCE_TYPES_WITH(X, A) \
  TESSERA_SHMEM_BITWISE_REDUCE_C_TYPES(X, A) TESSERA_SHMEM_UINT_N_TYPES(X, A) X(size, size_t, A)
#define TESSERA_SHMEM_BITWISE_REDUCE_TYPES(X) \
  TESSERA_SHMEM_BITWISE_REDUCE_TYPES_WITH(TESSERA_SHMEM_EACH, X)
/* Ordered (max, min, and sum, prod): every integer type and the real types (the RMA types). */
#define TESSERA_SHMEM_ORDERED_REDUCE_C_TYPES(X, A) TESSERA_SHMEM_RMA_C_TYPES(X, A)
#define TESSERA_SHMEM_ORDERED_REDUCE_TYPES_WITH(X, A)                            \
  TESSERA_SHMEM_SIGNED_TYPES(X, A) X(ptrdiff, ptrdiff_t, A)                     \
  TESSERA_SHMEM_BITWISE_REDUCE_TYPES_WITH(X, A) TESSERA_SHMEM_REAL_TYPES(X, A)
#define TESSERA_SHMEM_ORDERED_REDUCE_TYPES(X) \
  TESSERA_SHMEM_ORDERED_REDUCE_TYPES_WITH(TESSERA_SHMEM_EACH, X)
/* Complex (sum, prod only); empty where C has no complex types (__STDC_NO_COMPLEX__). Sum and
 * product select among the ordered and the complex types. */
#ifdef TESSERA_SHMEM_COMPLEXD
#define TESSERA_SHMEM_COMPLEX_REDUCE_TYPES_WITH(X, A) \
  X(complexd, TESSERA_SHMEM_COMPLEXD, A) X(complexf, TESSERA_SHMEM_COMPLEXF, A)
#else
#define TESSERA_SHMEM_COMPLEX_REDUCE_TYPES_WITH(X, A)
#endif
#define TESSERA_SHMEM_COMPLEX_REDUCE_TYPES(X) \
  TESSERA_SHMEM_COMPLEX_REDUCE_TYPES_WITH(TESSERA_SHMEM_EACH, X)
#define TESSERA_SHMEM_ARITHMETIC_REDUCE_C_TYPES(X, A) \
  TESSERA_SHMEM_ORDERED_REDUCE_C_TYPES(X, A) TESSERA_SHMEM_COMPLEX_REDUCE_TYPES_WITH(X, A)

/* The deprecated API's types: the pre-1.4 AMOs (int, long, long long; fetch, set and swap also
 * float and double), and the waits and bitwise _to_all reductions (short too), whose ordered
 * ones also take the real types. */
#define TESSERA_SHMEM_OLD_STANDARD_AMO_C_TYPES(X, A) TESSERA_SHMEM_INT_TYPES(X, A)
#define TESSERA_SHMEM_OLD_STANDARD_AMO_TYPES(X) \
  TESSERA_SHMEM_OLD_STANDARD_AMO_C_TYPES(TESSERA_SHMEM_EACH, X)
#define TESSERA_SHMEM_OLD_EXTENDED_AMO_C_TYPES(X, A) \
  TESSERA_SHMEM_INT_TYPES(X, A) TESSERA_SHMEM_FLOAT_AMO_TYPES_WITH(X, A)
#define TESSERA_SHMEM_OLD_BITWISE_TYPES_WITH(X, A) X(short, short, A) TESSERA_SHMEM_INT_TYPES(X, A)
#define TESSERA_SHMEM_OLD_BITWISE_TYPES(X) \
  TESSERA_SHMEM_OLD_BITWISE_TYPES_WITH(TESSERA_SHMEM_EACH, X)
#define TESSERA_SHMEM_OLD_ORDERED_TYPES_WITH(X, A) \
  TESSERA_SHMEM_OLD_BITWISE_TYPES_WITH(X, A) TESSERA_SHMEM_REAL_TYPES(X, A)
#define TESSERA_SHMEM_OLD_ORDERED_TYPES(X) \
  TESSERA_SHMEM_OLD_ORDERED_TYPES_WITH(TESSERA_SHMEM_EACH, X)
/* clang-format on */

/* ---- setup, exit, query -------------------------------------------------------------------- */

/* Collective: starts this PE's default runtime (TESSERA_* variables; bootstrap from the
 * launcher: mpirun -> MPI, tessera-run -> tcp, none -> one PE) on the host backend. A second
 * call before shmem_finalize does nothing. Ends the job with a message when the job cannot form. */
void shmem_init(void);
/* shmem_init, then *provided = `requested` (SHMEM_THREAD_MULTIPLE for a level above it);
 * returns 0, or nonzero for a level below SHMEM_THREAD_SINGLE. */
int shmem_init_thread(int requested, int* provided);
/* Sets *provided to the thread level shmem_init or shmem_init_thread gave. */
void shmem_query_thread(int* provided);
/* Collective: completes this PE's outstanding operations, waits for every PE, then releases the
 * heap and the runtime. Symmetric addresses are invalid afterwards; shmem_init may start again. */
void shmem_finalize(void);
/* Ends every PE of the job with `status` (stdout and stderr flushed first); does not return.
 * The job's exit status is `status` under tessera-run, mpirun (MPI_Abort with it) and alone. */
void shmem_global_exit(int status);
/* This PE's number in SHMEM_TEAM_WORLD, and the number of PEs. */
int shmem_my_pe(void);
int shmem_n_pes(void);
/* 1 when `pe` is a PE of the job this PE can reach with RMA and AMOs, else 0. */
int shmem_pe_accessible(int pe);
/* 1 when `addr` is a symmetric object of this PE (heap, or the executable's static and global
 * data) and `pe` can reach it, else 0: stack and malloc'd addresses give 0. */
int shmem_addr_accessible(const void* addr, int pe);
/* The address at which this PE can load/store the object `dest` names on `pe`, or NULL when
 * `pe`'s memory is not mapped here (another node) or `dest` is not a symmetric address. */
void* shmem_ptr(const void* dest, int pe);
/* The specification version this library implements (1.5) and the vendor string. */
void shmem_info_get_version(int* major, int* minor);
void shmem_info_get_name(char* name);

/* ---- memory management (collective: every PE calls with the same arguments) --------------- */

/* Allocate `size` bytes of the symmetric heap (64-byte aligned); the same call sequence yields
 * the same object on every PE. Returns NULL for size 0 or when the heap cannot hold it
 * (TESSERA_HEAP_SIZE); TESSERA_DEBUG=INFO logs why. Ends with a barrier, so peers may access the
 * object on return. */
void* shmem_malloc(size_t size);
/* shmem_malloc, with `hints` (SHMEM_MALLOC_* bits) accepted and ignored. */
void* shmem_malloc_with_hints(size_t size, long hints);
/* shmem_malloc of count * size bytes, every byte zero on every PE before any PE returns. */
void* shmem_calloc(size_t count, size_t size);
/* shmem_malloc aligned to `alignment`: any power of two the heap can satisfy (NULL, logged at
 * TESSERA_DEBUG=INFO, for another value or when the heap has no such aligned room). */
void* shmem_align(size_t alignment, size_t size);
/* Resizes a symmetric object, keeping min(old, new) bytes of its contents; NULL `ptr` allocates,
 * size 0 frees (and returns NULL). The result may move; the old address is then invalid. */
void* shmem_realloc(void* ptr, size_t size);
/* Completes this PE's outstanding operations and waits for every PE (so no PE still accesses
 * the object), then frees it. NULL does nothing but the barrier. */
void shmem_free(void* ptr);

#define SHMEM_MALLOC_ATOMICS_REMOTE 1L
#define SHMEM_MALLOC_SIGNAL_REMOTE 2L

/* ---- the two forms of the typed routines ------------------------------------------------ */

/* Every typed RMA, AMO and put-with-signal routine comes in two forms, declared from one list of
 * its family's routines, TESSERA_SHMEM_{FAMILY}_ROUTINES(NAME, TYPE, F), the X of a type table:
 * F(NAME) is a routine's name and the macro named F with _ARGS appended gives its parameter list,
 * for F = TESSERA_SHMEM_FORM_PLAIN (shmem_NAME(args)) and F = TESSERA_SHMEM_FORM_CTX
 * (shmem_ctx_NAME(shmem_ctx_t ctx, args), section "communication contexts"). */
#define TESSERA_SHMEM_FORM_PLAIN(NAME) shmem_##NAME
#define TESSERA_SHMEM_FORM_PLAIN_ARGS(...) (__VA_ARGS__)
#define TESSERA_SHMEM_FORM_CTX(NAME) shmem_ctx_##NAME
#define TESSERA_SHMEM_FORM_CTX_ARGS(...) (shmem_ctx_t ctx, __VA_ARGS__)

/* ---- RMA --------------------------------------------------------------------------------- */

/* Blocking: on return `source` may be reused (put) / `dest` holds the data (get). Delivery of a
 * put to `pe` is guaranteed by shmem_quiet or a barrier; shmem_fence orders puts per target. */
void shmem_putmem(void* dest, const void* source, size_t nelems, int pe);
void shmem_getmem(void* dest, const void* source, size_t nelems, int pe);
/* Non-blocking: complete (source reusable, dest filled) after shmem_quiet or a barrier. */
void shmem_putmem_nbi(void* dest, const void* source, size_t nelems, int pe);
void shmem_getmem_nbi(void* dest, const void* source, size_t nelems, int pe);

/* Typed RMA on nelems elements, for every TYPENAME of TESSERA_SHMEM_RMA_TYPES:
 *   shmem_TYPENAME_put, _get, _put_nbi, _get_nbi: contiguous elements, as putmem/getmem;
 *   shmem_TYPENAME_iput, _iget: element i moves between source[i * sst] and dest[i * dst]
 *     (strides in elements, >= 1);
 *   shmem_TYPENAME_p: one element to `pe`; elements of up to 8 bytes are written as a single
 *     store (a peer polling it with a wait routine sees the old or the new value, never a mix);
 *   shmem_TYPENAME_g: one element from `pe`.
 * And for every SIZE of TESSERA_SHMEM_RMA_SIZES: shmem_putSIZE, _getSIZE, _putSIZE_nbi,
 * _getSIZE_nbi, _iputSIZE, _igetSIZE on elements of SIZE bits. */
#define TESSERA_SHMEM_RMA_ROUTINES(NAME, TYPE, F)                                            \
  void F(NAME##_put) F##_ARGS(TYPE* dest, const TYPE* source, size_t nelems, int pe);        \
  void F(NAME##_get) F##_ARGS(TYPE* dest, const TYPE* source, size_t nelems, int pe);        \
  void F(NAME##_put_nbi) F##_ARGS(TYPE* dest, const TYPE* source, size_t nelems, int pe);    \
  void F(NAME##_get_nbi) F##_ARGS(TYPE* dest, const TYPE* source, size_t nelems, int pe);    \
  void F(NAME##_iput) F##_ARGS(TYPE* dest, const TYPE* source, ptrdiff_t dst, ptrdiff_t sst, \
                               size_t nelems, int pe);                                       \
  void F(NAME##_iget) F##_ARGS(TYPE* dest, const TYPE* source, ptrdiff_t dst, ptrdiff_t sst, \
                               size_t nelems, int pe);                                       \
  void F(NAME##_p) F##_ARGS(TYPE* dest, TYPE value, int pe);                                 \
  TYPE F(NAME##_g) F##_ARGS(const TYPE* source, int pe);
#define TESSERA_SHMEM_SIZED_RMA_ROUTINES(BITS, BYTES, F)                                    \
  void F(put##BITS) F##_ARGS(void* dest, const void* source, size_t nelems, int pe);        \
  void F(get##BITS) F##_ARGS(void* dest, const void* source, size_t nelems, int pe);        \
  void F(put##BITS##_nbi) F##_ARGS(void* dest, const void* source, size_t nelems, int pe);  \
  void F(get##BITS##_nbi) F##_ARGS(void* dest, const void* source, size_t nelems, int pe);  \
  void F(iput##BITS) F##_ARGS(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, \
                              size_t nelems, int pe);                                       \
  void F(iget##BITS) F##_ARGS(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, \
                              size_t nelems, int pe);
TESSERA_SHMEM_RMA_TYPES_WITH(TESSERA_SHMEM_RMA_ROUTINES, TESSERA_SHMEM_FORM_PLAIN)
TESSERA_SHMEM_RMA_SIZES_WITH(TESSERA_SHMEM_SIZED_RMA_ROUTINES, TESSERA_SHMEM_FORM_PLAIN)

/* ---- signals ------------------------------------------------------------------------------ */

/* Puts nelems bytes to `pe`, then updates the 64-bit signal word `sig_addr` on `pe`
 * (SHMEM_SIGNAL_SET: store `signal`; SHMEM_SIGNAL_ADD: add it atomically). A PE that sees the
 * new signal value (shmem_signal_fetch, shmem_signal_wait_until, a uint64 wait routine) also
 * sees the whole put. Blocking: `source` is reusable on return; _nbi: after shmem_quiet. */
void shmem_putmem_signal(void* dest, const void* source, size_t nelems, uint64_t* sig_addr,
                         uint64_t signal, int sig_op, int pe);
void shmem_putmem_signal_nbi(void* dest, const void* source, size_t nelems, uint64_t* sig_addr,
                             uint64_t signal, int sig_op, int pe);
/* Typed and sized forms: shmem_TYPENAME_put_signal(_nbi) for TESSERA_SHMEM_RMA_TYPES and
 * shmem_putSIZE_signal(_nbi) for TESSERA_SHMEM_RMA_SIZES, nelems counting elements. */
#define TESSERA_SHMEM_PUT_SIGNAL_ROUTINES(NAME, TYPE, F)                                       \
  void F(NAME##_put_signal) F##_ARGS(TYPE* dest, const TYPE* source, size_t nelems,            \
                                     uint64_t* sig_addr, uint64_t signal, int sig_op, int pe); \
  void F(NAME##_put_signal_nbi) F##_ARGS(TYPE* dest, const TYPE* source, size_t nelems,        \
                                         uint64_t* sig_addr, uint64_t signal, int sig_op, int pe);
#define TESSERA_SHMEM_SIZED_PUT_SIGNAL_ROUTINES(BITS, BYTES, F)                                    \
  void F(put##BITS##_signal) F##_ARGS(void* dest, const void* source, size_t nelems,               \
                                      uint64_t* sig_addr, uint64_t signal, int sig_op, int pe);    \
  void F(put##BITS##_signal_nbi)                                                                   \
      F##_ARGS(void* dest, const void* source, size_t nelems, uint64_t* sig_addr, uint64_t signal, \
               int sig_op, int pe);
TESSERA_SHMEM_RMA_TYPES_WITH(TESSERA_SHMEM_PUT_SIGNAL_ROUTINES, TESSERA_SHMEM_FORM_PLAIN)
TESSERA_SHMEM_RMA_SIZES_WITH(TESSERA_SHMEM_SIZED_PUT_SIGNAL_ROUTINES, TESSERA_SHMEM_FORM_PLAIN)

/* The current value of this PE's signal word, read atomically with acquire. */
uint64_t shmem_signal_fetch(const uint64_t* sig_addr);
/* Waits until this PE's signal word CMP cmp_value holds and returns the value that satisfied
 * it; the caller then sees the data put before that signal. Bounded by TESSERA_TIMEOUT. */
uint64_t shmem_signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t cmp_value);

/* ---- ordering and completion, barriers ----------------------------------------------------- */

/* Puts, AMOs and put-with-signal issued before the fence reach each target PE before those
 * issued after it. */
void shmem_fence(void);
/* Every put, get, AMO and put-with-signal this PE issued (blocking or _nbi) is complete and
 * visible to every PE. */
void shmem_quiet(void);
/* Collective over all PEs: shmem_quiet, then returns once every PE has entered. Every PE then
 * sees every PE's earlier puts, AMOs and local stores to symmetric memory. */
void shmem_barrier_all(void);
/* Collective over all PEs: returns once every PE has entered; local stores before it are
 * visible after it. Outstanding _nbi operations are not completed (use shmem_quiet). */
void shmem_sync_all(void);

/* ---- atomic memory operations -------------------------------------------------------------- */

/* Each AMO is one indivisible access to the word on `pe`, atomic with respect to every other
 * AMO on it from any PE, and returns only once it is done (fetching forms return the value
 * before the operation). For every TYPENAME of TESSERA_SHMEM_STANDARD_AMO_TYPES:
 *   shmem_TYPENAME_atomic_fetch, _set, _compare_swap, _swap, _fetch_inc, _inc, _fetch_add, _add,
 *   and the _nbi forms of the fetching ones (result stored to *fetch; complete on return);
 * for float and double: _fetch, _set, _swap (+ _fetch_nbi, _swap_nbi);
 * for TESSERA_SHMEM_BITWISE_AMO_TYPES: _fetch_and, _and, _fetch_or, _or, _fetch_xor, _xor
 *   (+ _fetch_and_nbi, _fetch_or_nbi, _fetch_xor_nbi). */
#define TESSERA_SHMEM_EXTENDED_AMO_ROUTINES(NAME, TYPE, F)                           \
  TYPE F(NAME##_atomic_fetch) F##_ARGS(const TYPE* source, int pe);                  \
  void F(NAME##_atomic_set) F##_ARGS(TYPE* dest, TYPE value, int pe);                \
  TYPE F(NAME##_atomic_swap) F##_ARGS(TYPE* dest, TYPE value, int pe);               \
  void F(NAME##_atomic_fetch_nbi) F##_ARGS(TYPE* fetch, const TYPE* source, int pe); \
  void F(NAME##_atomic_swap_nbi) F##_ARGS(TYPE* fetch, TYPE* dest, TYPE value, int pe);
#define TESSERA_SHMEM_STANDARD_AMO_ROUTINES(NAME, TYPE, F)                                \
  TESSERA_SHMEM_EXTENDED_AMO_ROUTINES(NAME, TYPE, F)                                      \
  TYPE F(NAME##_atomic_compare_swap) F##_ARGS(TYPE* dest, TYPE cond, TYPE value, int pe); \
  TYPE F(NAME##_atomic_fetch_inc) F##_ARGS(TYPE* dest, int pe);                           \
  void F(NAME##_atomic_inc) F##_ARGS(TYPE* dest, int pe);                                 \
  TYPE F(NAME##_atomic_fetch_add) F##_ARGS(TYPE* dest, TYPE value, int pe);               \
  void F(NAME##_atomic_add) F##_ARGS(TYPE* dest, TYPE value, int pe);                     \
  void F(NAME##_atomic_compare_swap_nbi)                                                  \
      F##_ARGS(TYPE* fetch, TYPE* dest, TYPE cond, TYPE value, int pe);                   \
  void F(NAME##_atomic_fetch_inc_nbi) F##_ARGS(TYPE* fetch, TYPE* dest, int pe);          \
  void F(NAME##_atomic_fetch_add_nbi) F##_ARGS(TYPE* fetch, TYPE* dest, TYPE value, int pe);
#define TESSERA_SHMEM_BITWISE_AMO_ROUTINES(NAME, TYPE, F)                                    \
  TYPE F(NAME##_atomic_fetch_and) F##_ARGS(TYPE* dest, TYPE value, int pe);                  \
  void F(NAME##_atomic_and) F##_ARGS(TYPE* dest, TYPE value, int pe);                        \
  TYPE F(NAME##_atomic_fetch_or) F##_ARGS(TYPE* dest, TYPE value, int pe);                   \
  void F(NAME##_atomic_or) F##_ARGS(TYPE* dest, TYPE value, int pe);                         \
  TYPE F(NAME##_atomic_fetch_xor) F##_ARGS(TYPE* dest, TYPE value, int pe);                  \
  void F(NAME##_atomic_xor) F##_ARGS(TYPE* dest, TYPE value, int pe);                        \
  void F(NAME##_atomic_fetch_and_nbi) F##_ARGS(TYPE* fetch, TYPE* dest, TYPE value, int pe); \
  void F(NAME##_atomic_fetch_or_nbi) F##_ARGS(TYPE* fetch, TYPE* dest, TYPE value, int pe);  \
  void F(NAME##_atomic_fetch_xor_nbi) F##_ARGS(TYPE* fetch, TYPE* dest, TYPE value, int pe);
TESSERA_SHMEM_STANDARD_AMO_TYPES_WITH(TESSERA_SHMEM_STANDARD_AMO_ROUTINES, TESSERA_SHMEM_FORM_PLAIN)
TESSERA_SHMEM_FLOAT_AMO_TYPES_WITH(TESSERA_SHMEM_EXTENDED_AMO_ROUTINES, TESSERA_SHMEM_FORM_PLAIN)
TESSERA_SHMEM_BITWISE_AMO_TYPES_WITH(TESSERA_SHMEM_BITWISE_AMO_ROUTINES, TESSERA_SHMEM_FORM_PLAIN)

/* ---- point-to-point synchronization ----------------------------------------------------- */

/* Waits on this PE's symmetric variables, which other PEs update with puts, p or AMOs; every
 * wait is bounded by TESSERA_TIMEOUT and ends the job with a message past it. Once a wait
 * returns (or a test returns nonzero), the caller sees what the updating PE wrote before its
 * update. For every TYPENAME of TESSERA_SHMEM_SYNC_TYPES:
 *   shmem_TYPENAME_wait_until(ivar, cmp, value): until *ivar CMP value;
 *   shmem_TYPENAME_test(ivar, cmp, value): 1 if it holds now, else 0;
 *   _wait_until_all / _test_all: every ivars[i] whose status[i] is 0 (status may be NULL);
 *   _wait_until_any / _test_any: one such i (returned), or SIZE_MAX when none can be waited on
 *     (test: none holds);
 *   _wait_until_some / _test_some: writes the satisfied indices to indices[], returns how many;
 *   the _vector forms compare ivars[i] with cmp_values[i]. */
#define TESSERA_SHMEM_DECLARE_SYNC(NAME, TYPE)                                                    \
  void shmem_##NAME##_wait_until(TYPE* ivar, int cmp, TYPE cmp_value);                            \
  int shmem_##NAME##_test(TYPE* ivar, int cmp, TYPE cmp_value);                                   \
  void shmem_##NAME##_wait_until_all(TYPE* ivars, size_t nelems, const int* status, int cmp,      \
                                     TYPE cmp_value);                                             \
  size_t shmem_##NAME##_wait_until_any(TYPE* ivars, size_t nelems, const int* status, int cmp,    \
                                       TYPE cmp_value);                                           \
  size_t shmem_##NAME##_wait_until_some(TYPE* ivars, size_t nelems, size_t* indices,              \
                                        const int* status, int cmp, TYPE cmp_value);              \
  int shmem_##NAME##_test_all(TYPE* ivars, size_t nelems, const int* status, int cmp,             \
                              TYPE cmp_value);                                                    \
  size_t shmem_##NAME##_test_any(TYPE* ivars, size_t nelems, const int* status, int cmp,          \
                                 TYPE cmp_value);                                                 \
  size_t shmem_##NAME##_test_some(TYPE* ivars, size_t nelems, size_t* indices, const int* status, \
                                  int cmp, TYPE cmp_value);                                       \
  void shmem_##NAME##_wait_until_all_vector(TYPE* ivars, size_t nelems, const int* status,        \
                                            int cmp, TYPE* cmp_values);                           \
  size_t shmem_##NAME##_wait_until_any_vector(TYPE* ivars, size_t nelems, const int* status,      \
                                              int cmp, TYPE* cmp_values);                         \
  size_t shmem_##NAME##_wait_until_some_vector(TYPE* ivars, size_t nelems, size_t* indices,       \
                                               const int* status, int cmp, TYPE* cmp_values);     \
  int shmem_##NAME##_test_all_vector(TYPE* ivars, size_t nelems, const int* status, int cmp,      \
                                     TYPE* cmp_values);                                           \
  size_t shmem_##NAME##_test_any_vector(TYPE* ivars, size_t nelems, const int* status, int cmp,   \
                                        TYPE* cmp_values);                                        \
  size_t shmem_##NAME##_test_some_vector(TYPE* ivars, size_t nelems, size_t* indices,             \
                                         const int* status, int cmp, TYPE* cmp_values);
TESSERA_SHMEM_SYNC_TYPES(TESSERA_SHMEM_DECLARE_SYNC)
#undef TESSERA_SHMEM_DECLARE_SYNC

/* ---- teams -------------------------------------------------------------------------------- */

/* This PE's number in `team`, or -1 when it is not a member or the team is invalid. */
int shmem_team_my_pe(shmem_team_t team);
/* The number of PEs in `team`, or -1 for SHMEM_TEAM_INVALID. */
int shmem_team_n_pes(shmem_team_t team);
/* The number in `dest_team` of the PE numbered `src_pe` in `src_team`, or -1 when that PE is not
 * in dest_team or an argument is invalid. */
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
/* Collective over `parent_team` (every member calls, in the same order): the new team holds the
 * parent's PEs start, start + stride, ..., size of them (stride >= 1, or any when size is 1),
 * numbered in that order. Members get a handle in *new_team, other PEs SHMEM_TEAM_INVALID.
 * Returns 0, or nonzero (and SHMEM_TEAM_INVALID) for an invalid parent or a set outside it. */
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t* config, long config_mask,
                             shmem_team_t* new_team);
/* Collective over `team`: returns once every member has called it; a member's stores to
 * symmetric memory before it are visible to every member after it (RMA still outstanding is not
 * completed: use shmem_quiet first). Returns 0, or nonzero for SHMEM_TEAM_INVALID. */
int shmem_team_sync(shmem_team_t team);
/* The configuration `team` was created with (only the fields config_mask names are written);
 * returns 0, or nonzero for SHMEM_TEAM_INVALID. */
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t* config);
/* Releases a team made by shmem_team_split_strided; SHMEM_TEAM_INVALID is ignored; destroying
 * SHMEM_TEAM_WORLD or SHMEM_TEAM_SHARED ends the job with a message. */
void shmem_team_destroy(shmem_team_t team);

/* ---- collectives -------------------------------------------------------------------------- */

/* Every collective is over the members of a team (team-relative PE numbers), called by every
 * member in the same order with the same symmetric `dest` and `source` objects and the same
 * counts (collect: counts may differ). They are blocking: on return this PE's `dest` holds the
 * result and its `source` may be reused; peers may still be inside the call. Each opens with a
 * shmem_team_sync (so every member's earlier stores to `source` are seen) and closes with one
 * (so no member still reads this PE's `source`); outstanding RMA is not completed (shmem_quiet).
 * `dest` and `source` may overlap (in place): the result is assembled privately and copied to
 * `dest` after the closing sync. Returns 0, or nonzero without communicating when `team` is
 * SHMEM_TEAM_INVALID (or a handle this PE does not belong to), PE_root is outside the team, or
 * a stride is below 1. A `dest` or `source` outside the symmetric heap ends the job. */

/* Deprecated active-set forms of shmem_team_sync and shmem_barrier: the PEs PE_start,
 * PE_start + 2^logPE_stride, ... (PE_size of them). pSync is not used (any array, symmetric or
 * not, is accepted). shmem_barrier completes this PE's outstanding operations first. A set that
 * leaves the job or does not hold this PE ends the job. */
#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 1
#define SHMEM_BARRIER_SYNC_SIZE 1
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long* pSync);
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long* pSync);

/* `source` (nelems bytes) of team PE PE_root to `dest` on every member, the root included. */
int shmem_broadcastmem(shmem_team_t team, void* dest, const void* source, size_t nelems,
                       int PE_root);
/* The concatenation of every member's `source` in team order to `dest` on every member:
 * collect: nelems (bytes) may differ per member; fcollect: the same on every member. */
int shmem_collectmem(shmem_team_t team, void* dest, const void* source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void* dest, const void* source, size_t nelems);
/* Block l (nelems bytes) of team PE k's `source` goes to block k of team PE l's `dest`. */
int shmem_alltoallmem(shmem_team_t team, void* dest, const void* source, size_t nelems);
/* alltoallmem on strided bytes: element j of the block for team PE l is source[sst * (l * nelems
 * + j)] and lands at dest[dst * (k * nelems + j)] on PE l (strides >= 1). */
int shmem_alltoallsmem(shmem_team_t team, void* dest, const void* source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems);

/* Typed forms for every TYPENAME of TESSERA_SHMEM_RMA_TYPES, nelems counting elements:
 * shmem_TYPENAME_broadcast, _collect, _fcollect, _alltoall, _alltoalls. */
#define TESSERA_SHMEM_DECLARE_COLLECTIVES(NAME, TYPE)                                            \
  int shmem_##NAME##_broadcast(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems, \
                               int PE_root);                                                     \
  int shmem_##NAME##_collect(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems);  \
  int shmem_##NAME##_fcollect(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems); \
  int shmem_##NAME##_alltoall(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nelems); \
  int shmem_##NAME##_alltoalls(shmem_team_t team, TYPE* dest, const TYPE* source, ptrdiff_t dst, \
                               ptrdiff_t sst, size_t nelems);
TESSERA_SHMEM_RMA_TYPES(TESSERA_SHMEM_DECLARE_COLLECTIVES)
#undef TESSERA_SHMEM_DECLARE_COLLECTIVES

/* Reductions: dest[i] = source[i] of team PE 0 OP that of PE 1 OP ... for i < nreduce, combined
 * in team order in the element type (integers wrap; every member computes the same bits), on
 * every member. dest == source is the in-place form. Generated names:
 *   shmem_TYPENAME_and_reduce, _or_reduce, _xor_reduce for TESSERA_SHMEM_BITWISE_REDUCE_TYPES;
 *   shmem_TYPENAME_max_reduce, _min_reduce, _sum_reduce, _prod_reduce for
 *     TESSERA_SHMEM_ORDERED_REDUCE_TYPES;
 *   shmem_TYPENAME_sum_reduce, _prod_reduce for TESSERA_SHMEM_COMPLEX_REDUCE_TYPES. */
/* The operations of each kind of reduction (a type table's X): R(NAME, TYPE, OP) for each OP,
 * where R declares one routine (here the team-based one, in the deprecated API the _to_all). */
#define TESSERA_SHMEM_BITWISE_OPS(NAME, TYPE, R) \
  R(NAME, TYPE, and) R(NAME, TYPE, or) R(NAME, TYPE, xor)
#define TESSERA_SHMEM_ORDERED_OPS(NAME, TYPE, R) R(NAME, TYPE, max) R(NAME, TYPE, min)
#define TESSERA_SHMEM_ARITHMETIC_OPS(NAME, TYPE, R) R(NAME, TYPE, sum) R(NAME, TYPE, prod)
#define TESSERA_SHMEM_DECLARE_REDUCE(NAME, TYPE, OP)                                  \
  int shmem_##NAME##_##OP##_reduce(shmem_team_t team, TYPE* dest, const TYPE* source, \
                                   size_t nreduce);
TESSERA_SHMEM_BITWISE_REDUCE_TYPES_WITH(TESSERA_SHMEM_BITWISE_OPS, TESSERA_SHMEM_DECLARE_REDUCE)
TESSERA_SHMEM_ORDERED_REDUCE_TYPES_WITH(TESSERA_SHMEM_ORDERED_OPS, TESSERA_SHMEM_DECLARE_REDUCE)
TESSERA_SHMEM_ORDERED_REDUCE_TYPES_WITH(TESSERA_SHMEM_ARITHMETIC_OPS, TESSERA_SHMEM_DECLARE_REDUCE)
TESSERA_SHMEM_COMPLEX_REDUCE_TYPES_WITH(TESSERA_SHMEM_ARITHMETIC_OPS, TESSERA_SHMEM_DECLARE_REDUCE)
#undef TESSERA_SHMEM_DECLARE_REDUCE

/* ---- communication contexts ---------------------------------------------------------------- */

/* A context handle: an ordering and completion domain of this PE's RMA, AMOs and signals. Every
 * non-ctx routine is the same routine on SHMEM_CTX_DEFAULT. A context made from a team with
 * shmem_team_create_ctx numbers its target PEs in that team (a PE outside [0, team size) ends
 * the job). On a node every operation is complete when its call returns. Operations that take
 * the network proxy share this PE's one proxy ring: a created context's shmem_ctx_quiet waits for
 * the ones its own calls issued, and its shmem_ctx_fence is that quiet; SHMEM_CTX_DEFAULT's quiet
 * completes every operation of the PE. Using a destroyed context ends the job with
 * "tessera shmem: ...: context ... was destroyed". */
typedef struct tessera_shmem_ctx* shmem_ctx_t;

/* Options of shmem_ctx_create and shmem_team_create_ctx: accepted (every context is safe to use
 * from any thread, so SERIALIZED and PRIVATE only promise what Tessera does not need). */
#define SHMEM_CTX_SERIALIZED 1L
#define SHMEM_CTX_PRIVATE 2L
#define SHMEM_CTX_NOSTORE 4L

/* The context of the non-ctx routines (its team is SHMEM_TEAM_WORLD), and the handle of no
 * context: what a failed create returns. */
extern shmem_ctx_t const SHMEM_CTX_DEFAULT;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

/* Makes a context over SHMEM_TEAM_WORLD (ctx_create) or `team` (team_create_ctx). Returns 0, or
 * nonzero with *ctx = SHMEM_CTX_INVALID for unknown option bits or an invalid team. */
int shmem_ctx_create(long options, shmem_ctx_t* ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t* ctx);
/* Completes the context's operations (a shmem_ctx_quiet), then releases it. SHMEM_CTX_INVALID is
 * ignored; SHMEM_CTX_DEFAULT ends the job. */
void shmem_ctx_destroy(shmem_ctx_t ctx);
/* The team the context was made from (SHMEM_TEAM_WORLD for ctx_create and the default); returns
 * 0, or nonzero and *team = SHMEM_TEAM_INVALID for SHMEM_CTX_INVALID. */
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t* team);
/* shmem_fence and shmem_quiet of one context; on SHMEM_CTX_INVALID they perform no operation
 * (OpenSHMEM 1.5), so PEs outside a team may call them on the context shmem_team_create_ctx
 * gave them. */
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_ctx_quiet(shmem_ctx_t ctx);

/* The context forms of every RMA, AMO and put-with-signal routine above: shmem_ctx_X(ctx, ...)
 * for every shmem_X, with the same arguments after ctx:
 *   shmem_ctx_putmem, _getmem, _putmem_nbi, _getmem_nbi, _putmem_signal, _putmem_signal_nbi;
 *   shmem_ctx_TYPENAME_put, _get, _put_nbi, _get_nbi, _iput, _iget, _p, _g, _put_signal,
 *     _put_signal_nbi for TESSERA_SHMEM_RMA_TYPES;
 *   shmem_ctx_putSIZE, _getSIZE, _putSIZE_nbi, _getSIZE_nbi, _iputSIZE, _igetSIZE,
 *     _putSIZE_signal, _putSIZE_signal_nbi for TESSERA_SHMEM_RMA_SIZES;
 *   shmem_ctx_TYPENAME_atomic_* for every AMO name and type above. */
void shmem_ctx_putmem(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems, int pe);
void shmem_ctx_getmem(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems, int pe);
void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems, int pe);
void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems, int pe);
void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems,
                             uint64_t* sig_addr, uint64_t signal, int sig_op, int pe);
void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems,
                                 uint64_t* sig_addr, uint64_t signal, int sig_op, int pe);
/* The same routine lists as the plain forms above, in the TESSERA_SHMEM_FORM_CTX form: RMA and
 * put-with-signal, */
TESSERA_SHMEM_RMA_TYPES_WITH(TESSERA_SHMEM_RMA_ROUTINES, TESSERA_SHMEM_FORM_CTX)
TESSERA_SHMEM_RMA_SIZES_WITH(TESSERA_SHMEM_SIZED_RMA_ROUTINES, TESSERA_SHMEM_FORM_CTX)
TESSERA_SHMEM_RMA_TYPES_WITH(TESSERA_SHMEM_PUT_SIGNAL_ROUTINES, TESSERA_SHMEM_FORM_CTX)
TESSERA_SHMEM_RMA_SIZES_WITH(TESSERA_SHMEM_SIZED_PUT_SIGNAL_ROUTINES, TESSERA_SHMEM_FORM_CTX)
/* and the AMOs. */
TESSERA_SHMEM_STANDARD_AMO_TYPES_WITH(TESSERA_SHMEM_STANDARD_AMO_ROUTINES, TESSERA_SHMEM_FORM_CTX)
TESSERA_SHMEM_FLOAT_AMO_TYPES_WITH(TESSERA_SHMEM_EXTENDED_AMO_ROUTINES, TESSERA_SHMEM_FORM_CTX)
TESSERA_SHMEM_BITWISE_AMO_TYPES_WITH(TESSERA_SHMEM_BITWISE_AMO_ROUTINES, TESSERA_SHMEM_FORM_CTX)

/* ---- distributed locks ----------------------------------------------------------------------- */

/* `lock` is a symmetric long, zero on every PE before its first use (shmem_calloc, or stored 0
 * before a barrier); only PE 0's copy is used. A ticket lock: shmem_set_lock takes the next
 * ticket and waits (bounded by TESSERA_TIMEOUT) until it is served, so PEs acquire it in the
 * order they asked (none starves); the holder then sees every store and RMA the previous holder
 * made before its shmem_clear_lock. shmem_test_lock takes the lock only if it is free: returns
 * 0 when taken, 1 when another PE holds it. shmem_clear_lock completes this PE's outstanding
 * operations (shmem_quiet), then hands the lock to the next ticket. */
void shmem_set_lock(long* lock);
int shmem_test_lock(long* lock);
void shmem_clear_lock(long* lock);

/* ---- more of 1.5: 2-D team split, team_ptr, pcontrol -------------------------------------- */

/* Collective over parent_team: splits it into rows of xrange PEs (the x-axis teams: parent PEs
 * k * xrange .. k * xrange + xrange - 1, the last row possibly shorter) and columns (the y-axis
 * teams: parent PEs j, j + xrange, ...). This PE's row and column handles go to *xaxis_team and
 * *yaxis_team, numbered along the axis. xrange above the parent's size is the parent's size.
 * Returns 0, or nonzero (both handles SHMEM_TEAM_INVALID) for an invalid parent or xrange < 1. */
int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t* xaxis_config, long xaxis_mask,
                        shmem_team_t* xaxis_team, const shmem_team_config_t* yaxis_config,
                        long yaxis_mask, shmem_team_t* yaxis_team);
/* shmem_ptr for the PE numbered `pe` in `team`: NULL when that PE's heap is not mapped here,
 * `dest` is not symmetric, or pe is outside the team. */
void* shmem_team_ptr(shmem_team_t team, const void* dest, int pe);
/* Profiling control: levels are recorded (Tessera's own profiling does not depend on them). */
void shmem_pcontrol(const int level, ...);

/* ---- deprecated API (OpenSHMEM 1.5, Annex "Deprecated API") --------------------------------- */

/* Kept for the programs and benchmark suites that still use them; each is the 1.5 routine named
 * beside it. start_pes(n) = shmem_init (n ignored); _my_pe = shmem_my_pe; _num_pes =
 * shmem_n_pes; shmalloc/shfree/shrealloc/shmemalign = shmem_malloc/free/realloc/align;
 * shmem_clear_cache_inv, shmem_set_cache_inv, shmem_clear_cache_line_inv,
 * shmem_set_cache_line_inv, shmem_udcflush, shmem_udcflush_line do nothing (Tessera's host
 * memory is coherent). */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);
void* shmalloc(size_t size);
void shfree(void* ptr);
void* shrealloc(void* ptr, size_t size);
void* shmemalign(size_t alignment, size_t size);
void shmem_clear_cache_inv(void);
void shmem_set_cache_inv(void);
void shmem_clear_cache_line_inv(void* dest);
void shmem_set_cache_line_inv(void* dest);
void shmem_udcflush(void);
void shmem_udcflush_line(void* dest);

/* The pre-1.4 AMO names, each the shmem_TYPENAME_atomic_* routine:
 *   shmem_TYPENAME_fetch, _set, _swap (int, long, longlong, float, double);
 *   shmem_TYPENAME_cswap, _finc, _inc, _fadd, _add (int, long, longlong). */
#define TESSERA_SHMEM_DECLARE_OLD_EXTENDED_AMO(NAME, TYPE) \
  TYPE shmem_##NAME##_fetch(const TYPE* source, int pe);   \
  void shmem_##NAME##_set(TYPE* dest, TYPE value, int pe); \
  TYPE shmem_##NAME##_swap(TYPE* dest, TYPE value, int pe);
#define TESSERA_SHMEM_DECLARE_OLD_STANDARD_AMO(NAME, TYPE)              \
  TESSERA_SHMEM_DECLARE_OLD_EXTENDED_AMO(NAME, TYPE)                    \
  TYPE shmem_##NAME##_cswap(TYPE* dest, TYPE cond, TYPE value, int pe); \
  TYPE shmem_##NAME##_finc(TYPE* dest, int pe);                         \
  void shmem_##NAME##_inc(TYPE* dest, int pe);                          \
  TYPE shmem_##NAME##_fadd(TYPE* dest, TYPE value, int pe);             \
  void shmem_##NAME##_add(TYPE* dest, TYPE value, int pe);
TESSERA_SHMEM_OLD_STANDARD_AMO_TYPES(TESSERA_SHMEM_DECLARE_OLD_STANDARD_AMO)
TESSERA_SHMEM_FLOAT_AMO_TYPES(TESSERA_SHMEM_DECLARE_OLD_EXTENDED_AMO)
#undef TESSERA_SHMEM_DECLARE_OLD_EXTENDED_AMO
#undef TESSERA_SHMEM_DECLARE_OLD_STANDARD_AMO

/* The pre-1.4 waits: shmem_TYPENAME_wait(ivar, value) is shmem_TYPENAME_wait_until(ivar,
 * SHMEM_CMP_NE, value) for short, int, long, longlong; shmem_wait is shmem_long_wait. */
#define TESSERA_SHMEM_DECLARE_OLD_WAIT(NAME, TYPE) \
  void shmem_##NAME##_wait(TYPE* ivar, TYPE cmp_value);
TESSERA_SHMEM_OLD_BITWISE_TYPES(TESSERA_SHMEM_DECLARE_OLD_WAIT)
#undef TESSERA_SHMEM_DECLARE_OLD_WAIT
void shmem_wait(long* ivar, long cmp_value);

/* The active-set collectives: over the PEs PE_start + i * 2^logPE_stride, i < PE_size, called by
 * exactly those PEs; pSync and pWrk are not used (any array is accepted, so the sizes below are
 * 1). PE_root of the broadcasts is relative to the set; as the specification says, a broadcast
 * leaves the root's dest unchanged. nelems counts 32- or 64-bit elements (alltoall: per PE).
 * Each is the team collective on a team of the set's PEs; a set that leaves the job or does not
 * hold this PE ends the job. The _to_all reductions are the TYPENAME_OP_reduce routines of 1.5:
 * and/or/xor for short, int, long, longlong; max/min/sum/prod for those and float, double,
 * longdouble; sum/prod for complexd and complexf. */
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define SHMEM_BCAST_SYNC_SIZE 1
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define SHMEM_COLLECT_SYNC_SIZE 1
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define SHMEM_REDUCE_SYNC_SIZE 1
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define SHMEM_ALLTOALL_SYNC_SIZE 1
#define SHMEM_ALLTOALLS_SYNC_SIZE 1
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE
/* shmem_broadcastBITS, _collectBITS, _fcollectBITS, _alltoallBITS, _alltoallsBITS for BITS 32
 * and 64. */
#define TESSERA_SHMEM_DECLARE_ACTIVE_SET(BITS)                                             \
  void shmem_broadcast##BITS(void* dest, const void* source, size_t nelems, int PE_root,   \
                             int PE_start, int logPE_stride, int PE_size, long* pSync);    \
  void shmem_collect##BITS(void* dest, const void* source, size_t nelems, int PE_start,    \
                           int logPE_stride, int PE_size, long* pSync);                    \
  void shmem_fcollect##BITS(void* dest, const void* source, size_t nelems, int PE_start,   \
                            int logPE_stride, int PE_size, long* pSync);                   \
  void shmem_alltoall##BITS(void* dest, const void* source, size_t nelems, int PE_start,   \
                            int logPE_stride, int PE_size, long* pSync);                   \
  void shmem_alltoalls##BITS(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, \
                             size_t nelems, int PE_start, int logPE_stride, int PE_size,   \
                             long* pSync);
TESSERA_SHMEM_DECLARE_ACTIVE_SET(32)
TESSERA_SHMEM_DECLARE_ACTIVE_SET(64)
#undef TESSERA_SHMEM_DECLARE_ACTIVE_SET
#define TESSERA_SHMEM_DECLARE_TO_ALL(NAME, TYPE, OP)                                           \
  void shmem_##NAME##_##OP##_to_all(TYPE* dest, const TYPE* source, int nreduce, int PE_start, \
                                    int logPE_stride, int PE_size, TYPE* pWrk, long* pSync);
TESSERA_SHMEM_OLD_BITWISE_TYPES_WITH(TESSERA_SHMEM_BITWISE_OPS, TESSERA_SHMEM_DECLARE_TO_ALL)
TESSERA_SHMEM_OLD_ORDERED_TYPES_WITH(TESSERA_SHMEM_ORDERED_OPS, TESSERA_SHMEM_DECLARE_TO_ALL)
TESSERA_SHMEM_OLD_ORDERED_TYPES_WITH(TESSERA_SHMEM_ARITHMETIC_OPS, TESSERA_SHMEM_DECLARE_TO_ALL)
TESSERA_SHMEM_COMPLEX_REDUCE_TYPES_WITH(TESSERA_SHMEM_ARITHMETIC_OPS, TESSERA_SHMEM_DECLARE_TO_ALL)
#undef TESSERA_SHMEM_DECLARE_TO_ALL

/* ---- C11 type-generic names -------------------------------------------------------------- */

/* In C11 and later, the specification's generic names pick the typed routine from the type the
 * first pointer argument points to (its base type: int32_t selects the int routine where int32_t
 * is int): shmem_put(dest, source, nelems, pe) is shmem_int_put for an int* dest. The RMA, AMO
 * and put-with-signal names also take a context first, as the typed routines do:
 * shmem_put(ctx, dest, source, nelems, pe) is shmem_ctx_int_put for a shmem_ctx_t ctx and an int*
 * dest (1.5 has no context forms of the wait and test routines). Each family selects among its
 * C types (TESSERA_SHMEM_{FAMILY}_C_TYPES, the type tables above). */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

/* The routine whose TYPE is the type of expression X among the C types of the table TYPES:
 * shmem_TYPENAME##OP for CASE TESSERA_SHMEM_CASE, shmem_ctx_TYPENAME##OP for
 * TESSERA_SHMEM_CTX_CASE. OP is the routine's suffix with its underscore (_put): each generic name
 * pastes it at once, so no macro of the program named like the routine (put, test) expands it.
 * Each generated association ends in a comma, so the list closes with one for a type no argument
 * has. */
/* clang-format off */
struct tessera_shmem_generic_end;
#define TESSERA_SHMEM_CASE(NAME, TYPE, OP) TYPE: shmem_##NAME##OP,
#define TESSERA_SHMEM_CTX_CASE(NAME, TYPE, OP) TYPE: shmem_ctx_##NAME##OP,
#define TESSERA_SHMEM_GENERIC(TYPES, CASE, OP, X) \
  _Generic((X), TYPES(CASE, OP) struct tessera_shmem_generic_end*: 0)

/* The first and second of a macro's arguments (a trailing 0 keeps `...` non-empty, as C11
 * requires). */
#define TESSERA_SHMEM_ARG1(...) TESSERA_SHMEM_ARG1_(__VA_ARGS__, 0)
#define TESSERA_SHMEM_ARG1_(a, ...) a
#define TESSERA_SHMEM_ARG2(...) TESSERA_SHMEM_ARG2_(__VA_ARGS__, 0)
#define TESSERA_SHMEM_ARG2_(a, b, ...) b

/* What a generic name's pointer argument points to, for _Generic to inspect (never evaluated).
 * Both forms are type-checked whichever is called, so each maps what the other form has in that
 * position to an int (which every family has): TARGET1 the context of a ctx form's first
 * argument, TARGET2 the value, PE or comparison a non-ctx form may have second (any arithmetic
 * type, and a void* source). */
#define TESSERA_SHMEM_TO_INT(NAME, TYPE, A) TYPE: (int*)0,
#define TESSERA_SHMEM_TARGET1(X) (*_Generic((X), shmem_ctx_t: (int*)0, default: (X)))
#define TESSERA_SHMEM_TARGET2(X)                                              \
  (*_Generic((X),                                                            \
    _Bool: (int*)0,                                                          \
    TESSERA_SHMEM_RMA_C_TYPES(TESSERA_SHMEM_TO_INT, _)                       \
    void*: (int*)0,                                                          \
    const void*: (int*)0,                                                    \
    default: (X)))

/* The routine a generic name of suffix OP among the C types TYPES calls with these arguments:
 * shmem_ctx_TYPENAME_OP when the first is a shmem_ctx_t (TYPENAME from what the second points
 * to), else shmem_TYPENAME_OP (from what the first points to). */
#define TESSERA_SHMEM_CTX_GENERIC(TYPES, OP, ...)                                              \
  _Generic((TESSERA_SHMEM_ARG1(__VA_ARGS__)),                                                   \
    shmem_ctx_t: TESSERA_SHMEM_GENERIC(TYPES, TESSERA_SHMEM_CTX_CASE, OP,                       \
                                       TESSERA_SHMEM_TARGET2(TESSERA_SHMEM_ARG2(__VA_ARGS__))), \
    default: TESSERA_SHMEM_GENERIC(TYPES, TESSERA_SHMEM_CASE, OP,                               \
                                   TESSERA_SHMEM_TARGET1(TESSERA_SHMEM_ARG1(__VA_ARGS__))))
/* clang-format on */

/* RMA and put-with-signal, with or without a context. */
#define TESSERA_SHMEM_RMA(OP, ...) \
  TESSERA_SHMEM_CTX_GENERIC(TESSERA_SHMEM_RMA_C_TYPES, _##OP, __VA_ARGS__)(__VA_ARGS__)
#define shmem_put(...) TESSERA_SHMEM_RMA(put, __VA_ARGS__)
#define shmem_get(...) TESSERA_SHMEM_RMA(get, __VA_ARGS__)
#define shmem_put_nbi(...) TESSERA_SHMEM_RMA(put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...) TESSERA_SHMEM_RMA(get_nbi, __VA_ARGS__)
#define shmem_iput(...) TESSERA_SHMEM_RMA(iput, __VA_ARGS__)
#define shmem_iget(...) TESSERA_SHMEM_RMA(iget, __VA_ARGS__)
#define shmem_p(...) TESSERA_SHMEM_RMA(p, __VA_ARGS__)
#define shmem_g(...) TESSERA_SHMEM_RMA(g, __VA_ARGS__)
#define shmem_put_signal(...) TESSERA_SHMEM_RMA(put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) TESSERA_SHMEM_RMA(put_signal_nbi, __VA_ARGS__)

/* AMOs, with or without a context; the _nbi forms select by the type `fetch` points to. */
#define TESSERA_SHMEM_AMO(FAMILY, OP, ...) \
  TESSERA_SHMEM_CTX_GENERIC(TESSERA_SHMEM_##FAMILY##_AMO_C_TYPES, _##OP, __VA_ARGS__)(__VA_ARGS__)
#define shmem_atomic_fetch(...) TESSERA_SHMEM_AMO(EXTENDED, atomic_fetch, __VA_ARGS__)
#define shmem_atomic_set(...) TESSERA_SHMEM_AMO(EXTENDED, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...) TESSERA_SHMEM_AMO(EXTENDED, atomic_swap, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) TESSERA_SHMEM_AMO(STANDARD, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) TESSERA_SHMEM_AMO(STANDARD, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...) TESSERA_SHMEM_AMO(STANDARD, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) TESSERA_SHMEM_AMO(STANDARD, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...) TESSERA_SHMEM_AMO(STANDARD, atomic_add, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) TESSERA_SHMEM_AMO(BITWISE, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_and(...) TESSERA_SHMEM_AMO(BITWISE, atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_or(...) TESSERA_SHMEM_AMO(BITWISE, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_or(...) TESSERA_SHMEM_AMO(BITWISE, atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) TESSERA_SHMEM_AMO(BITWISE, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_xor(...) TESSERA_SHMEM_AMO(BITWISE, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) TESSERA_SHMEM_AMO(EXTENDED, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...) TESSERA_SHMEM_AMO(EXTENDED, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) \
  TESSERA_SHMEM_AMO(STANDARD, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) \
  TESSERA_SHMEM_AMO(STANDARD, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) \
  TESSERA_SHMEM_AMO(STANDARD, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) \
  TESSERA_SHMEM_AMO(BITWISE, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...) TESSERA_SHMEM_AMO(BITWISE, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) \
  TESSERA_SHMEM_AMO(BITWISE, atomic_fetch_xor_nbi, __VA_ARGS__)

/* The names below have no context forms: each selects by what its pointer argument P points
 * to, among the C types TYPES, and calls that routine of suffix OP with the arguments after P. */
#define TESSERA_SHMEM_BY_TARGET(TYPES, OP, P, ...) \
  TESSERA_SHMEM_GENERIC(TYPES, TESSERA_SHMEM_CASE, OP, *(P))(__VA_ARGS__)

/* Point-to-point synchronization. */
#define TESSERA_SHMEM_SYNC(OP, ivars, ...) \
  TESSERA_SHMEM_BY_TARGET(TESSERA_SHMEM_SYNC_C_TYPES, _##OP, ivars, ivars, __VA_ARGS__)
#define shmem_wait_until(ivars, ...) TESSERA_SHMEM_SYNC(wait_until, ivars, __VA_ARGS__)
#define shmem_test(ivars, ...) TESSERA_SHMEM_SYNC(test, ivars, __VA_ARGS__)
#define shmem_wait_until_all(ivars, ...) TESSERA_SHMEM_SYNC(wait_until_all, ivars, __VA_ARGS__)
#define shmem_wait_until_any(ivars, ...) TESSERA_SHMEM_SYNC(wait_until_any, ivars, __VA_ARGS__)
#define shmem_wait_until_some(ivars, ...) TESSERA_SHMEM_SYNC(wait_until_some, ivars, __VA_ARGS__)
#define shmem_test_all(ivars, ...) TESSERA_SHMEM_SYNC(test_all, ivars, __VA_ARGS__)
#define shmem_test_any(ivars, ...) TESSERA_SHMEM_SYNC(test_any, ivars, __VA_ARGS__)
#define shmem_test_some(ivars, ...) TESSERA_SHMEM_SYNC(test_some, ivars, __VA_ARGS__)
#define shmem_wait_until_all_vector(ivars, ...) \
  TESSERA_SHMEM_SYNC(wait_until_all_vector, ivars, __VA_ARGS__)
#define shmem_wait_until_any_vector(ivars, ...) \
  TESSERA_SHMEM_SYNC(wait_until_any_vector, ivars, __VA_ARGS__)
#define shmem_wait_until_some_vector(ivars, ...) \
  TESSERA_SHMEM_SYNC(wait_until_some_vector, ivars, __VA_ARGS__)
#define shmem_test_all_vector(ivars, ...) TESSERA_SHMEM_SYNC(test_all_vector, ivars, __VA_ARGS__)
#define shmem_test_any_vector(ivars, ...) TESSERA_SHMEM_SYNC(test_any_vector, ivars, __VA_ARGS__)
#define shmem_test_some_vector(ivars, ...) TESSERA_SHMEM_SYNC(test_some_vector, ivars, __VA_ARGS__)

/* The deprecated generic AMO names of OpenSHMEM 1.3 (1.5 Annex "Deprecated API"), each the
 * pre-1.4 typed name picked by what the first argument points to: shmem_fetch, shmem_set and
 * shmem_swap for int, long, long long, float, double; shmem_cswap, shmem_finc, shmem_inc,
 * shmem_fadd and shmem_add for int, long, long long. No context forms, as in 1.3. */
#define TESSERA_SHMEM_OLD_AMO(FAMILY, OP, dest, ...) \
  TESSERA_SHMEM_BY_TARGET(TESSERA_SHMEM_OLD_##FAMILY##_AMO_C_TYPES, _##OP, dest, dest, __VA_ARGS__)
#define shmem_fetch(source, ...) TESSERA_SHMEM_OLD_AMO(EXTENDED, fetch, source, __VA_ARGS__)
#define shmem_set(dest, ...) TESSERA_SHMEM_OLD_AMO(EXTENDED, set, dest, __VA_ARGS__)
#define shmem_swap(dest, ...) TESSERA_SHMEM_OLD_AMO(EXTENDED, swap, dest, __VA_ARGS__)
#define shmem_cswap(dest, ...) TESSERA_SHMEM_OLD_AMO(STANDARD, cswap, dest, __VA_ARGS__)
#define shmem_finc(dest, ...) TESSERA_SHMEM_OLD_AMO(STANDARD, finc, dest, __VA_ARGS__)
#define shmem_inc(dest, ...) TESSERA_SHMEM_OLD_AMO(STANDARD, inc, dest, __VA_ARGS__)
#define shmem_fadd(dest, ...) TESSERA_SHMEM_OLD_AMO(STANDARD, fadd, dest, __VA_ARGS__)
#define shmem_add(dest, ...) TESSERA_SHMEM_OLD_AMO(STANDARD, add, dest, __VA_ARGS__)

/* Collectives select by the type `dest` points to (team first, as the typed forms); the
 * reductions among their operation's types (bitwise, ordered, arithmetic). */
#define TESSERA_SHMEM_COLLECTIVE(FAMILY, OP, team, dest, ...) \
  TESSERA_SHMEM_BY_TARGET(TESSERA_SHMEM_##FAMILY##_C_TYPES, _##OP, dest, team, dest, __VA_ARGS__)
#define shmem_broadcast(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(RMA, broadcast, team, dest, __VA_ARGS__)
#define shmem_collect(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(RMA, collect, team, dest, __VA_ARGS__)
#define shmem_fcollect(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(RMA, fcollect, team, dest, __VA_ARGS__)
#define shmem_alltoall(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(RMA, alltoall, team, dest, __VA_ARGS__)
#define shmem_alltoalls(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(RMA, alltoalls, team, dest, __VA_ARGS__)
#define shmem_and_reduce(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(BITWISE_REDUCE, and_reduce, team, dest, __VA_ARGS__)
#define shmem_or_reduce(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(BITWISE_REDUCE, or_reduce, team, dest, __VA_ARGS__)
#define shmem_xor_reduce(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(BITWISE_REDUCE, xor_reduce, team, dest, __VA_ARGS__)
#define shmem_max_reduce(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(ORDERED_REDUCE, max_reduce, team, dest, __VA_ARGS__)
#define shmem_min_reduce(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(ORDERED_REDUCE, min_reduce, team, dest, __VA_ARGS__)
#define shmem_sum_reduce(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(ARITHMETIC_REDUCE, sum_reduce, team, dest, __VA_ARGS__)
#define shmem_prod_reduce(team, dest, ...) \
  TESSERA_SHMEM_COLLECTIVE(ARITHMETIC_REDUCE, prod_reduce, team, dest, __VA_ARGS__)

/* shmem_sync(team) is shmem_team_sync; shmem_sync(PE_start, logPE_stride, PE_size, pSync) the
 * deprecated active-set routine (picked by the number of arguments). */
#define TESSERA_SHMEM_SYNC_FORM(a1, a2, a3, a4, NAME, ...) NAME
#define shmem_sync(...)                                                                        \
  TESSERA_SHMEM_SYNC_FORM(__VA_ARGS__, shmem_sync, shmem_sync, shmem_sync, shmem_team_sync, 0) \
  (__VA_ARGS__)

#endif /* C11 */

#ifdef __cplusplus
} /* extern "C" */

/* From C++ the complex reductions also take C's complex types, as code shared with C (or written
 * against another OpenSHMEM) passes them: `double _Complex*` and `float _Complex*`, a GNU
 * extension in C++ that g++ and clang accept, forwarded to the std::complex routines (the same
 * layout: two T, real first). They are templates that only C's complex type of their routine
 * instantiates, so a call with std::complex pointers, or NULL, still means the routine above. */
#if defined(__GNUC__)
__extension__ typedef double _Complex tessera_shmem_c_complexd;
__extension__ typedef float _Complex tessera_shmem_c_complexf;
/* tessera_shmem_if_c<T, C>::type is R when T is C (else no member: the overload drops out). */
template <class T, class C, class R>
struct tessera_shmem_if_c {};
template <class C, class R>
struct tessera_shmem_if_c<C, C, R> {
  typedef R type;
};

#define TESSERA_SHMEM_C_COMPLEX_REDUCE(NAME, OP)                                                \
  template <class T>                                                                            \
  inline typename tessera_shmem_if_c<T, tessera_shmem_c_##NAME, int>::type shmem_##NAME##_##OP( \
      shmem_team_t team, T* dest, const T* source, size_t nreduce) {                            \
    return shmem_##NAME##_##OP(team, reinterpret_cast<TESSERA_SHMEM_##NAME##_CXX*>(dest),       \
                               reinterpret_cast<const TESSERA_SHMEM_##NAME##_CXX*>(source),     \
                               nreduce);                                                        \
  }
/* pWrk is not used (see the active-set collectives): any pointer or NULL. */
#define TESSERA_SHMEM_C_COMPLEX_TO_ALL(NAME, OP)                                              \
  template <class T>                                                                          \
  inline typename tessera_shmem_if_c<T, tessera_shmem_c_##NAME, void>::type                   \
      shmem_##NAME##_##OP##_to_all(T* dest, const T* source, int nreduce, int PE_start,       \
                                   int logPE_stride, int PE_size, void* pWrk, long* pSync) {  \
    shmem_##NAME##_##OP##_to_all(reinterpret_cast<TESSERA_SHMEM_##NAME##_CXX*>(dest),         \
                                 reinterpret_cast<const TESSERA_SHMEM_##NAME##_CXX*>(source), \
                                 nreduce, PE_start, logPE_stride, PE_size,                    \
                                 static_cast<TESSERA_SHMEM_##NAME##_CXX*>(pWrk), pSync);      \
  }
#define TESSERA_SHMEM_complexd_CXX TESSERA_SHMEM_COMPLEXD
#define TESSERA_SHMEM_complexf_CXX TESSERA_SHMEM_COMPLEXF
TESSERA_SHMEM_C_COMPLEX_REDUCE(complexd, sum_reduce)
TESSERA_SHMEM_C_COMPLEX_REDUCE(complexd, prod_reduce)
TESSERA_SHMEM_C_COMPLEX_REDUCE(complexf, sum_reduce)
TESSERA_SHMEM_C_COMPLEX_REDUCE(complexf, prod_reduce)
TESSERA_SHMEM_C_COMPLEX_TO_ALL(complexd, sum)
TESSERA_SHMEM_C_COMPLEX_TO_ALL(complexd, prod)
TESSERA_SHMEM_C_COMPLEX_TO_ALL(complexf, sum)
TESSERA_SHMEM_C_COMPLEX_TO_ALL(complexf, prod)
#undef TESSERA_SHMEM_complexd_CXX
#undef TESSERA_SHMEM_complexf_CXX
#undef TESSERA_SHMEM_C_COMPLEX_REDUCE
#undef TESSERA_SHMEM_C_COMPLEX_TO_ALL
#endif /* __GNUC__ */
#endif /* __cplusplus */

#endif /* TESSERA_SHMEM_H */
