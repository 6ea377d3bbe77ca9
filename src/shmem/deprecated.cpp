// The deprecated names of OpenSHMEM 1.5's Annex (pre-1.4 AMOs, active-set collectives,
// start_pes & co.), each a thin call of the 1.5 routine that replaced it; the active-set
// collectives run the team collectives on a team object of the set's PEs (pSync and pWrk are
// not needed: team syncs use the counters shmem_init allocated).
#include <cstring>
#include <vector>

#include "shmem/collectives.hpp"

namespace ts = tessera::shmem;

namespace {

// The active set of a deprecated collective as a team value (ends the job for a bad set).
tessera_shmem_team set_of(const char* routine, int start, int log_stride, int size) {
  return ts::active_set(ts::state(routine), routine, start, log_stride, size);
}

// The deprecated broadcasts leave the root's dest unchanged (the team broadcast writes it): the
// root keeps a copy and restores it once the broadcast is done (peers read its source, never
// its dest).
void old_broadcast(const char* routine, void* dest, const void* source, std::size_t bytes, int root,
                   int start, int log_stride, int size) {
  tessera_shmem_team set = set_of(routine, start, log_stride, size);
  if (root < 0 || root >= size) {
    ts::die(routine, "PE_root " + std::to_string(root) + " is outside the active set of " +
                         std::to_string(size) + " PEs");
  }
  std::vector<char> kept;
  const bool is_root = set.team.my_rank == root;
  if (is_root) kept.assign(static_cast<char*>(dest), static_cast<char*>(dest) + bytes);
  shmem_broadcastmem(&set, dest, source, bytes, root);
  if (is_root && bytes != 0) std::memcpy(dest, kept.data(), bytes);
}

}  // namespace

extern "C" {

void start_pes(int npes) {
  static_cast<void>(npes);
  shmem_init();
}
int _my_pe(void) { return shmem_my_pe(); }
int _num_pes(void) { return shmem_n_pes(); }
void* shmalloc(size_t size) { return shmem_malloc(size); }
void shfree(void* ptr) { shmem_free(ptr); }
void* shrealloc(void* ptr, size_t size) { return shmem_realloc(ptr, size); }
void* shmemalign(size_t alignment, size_t size) { return shmem_align(alignment, size); }
// Host memory is coherent: there is no cache to invalidate or flush.
void shmem_clear_cache_inv(void) {}
void shmem_set_cache_inv(void) {}
void shmem_clear_cache_line_inv(void* dest) { static_cast<void>(dest); }
void shmem_set_cache_line_inv(void* dest) { static_cast<void>(dest); }
void shmem_udcflush(void) {}
void shmem_udcflush_line(void* dest) { static_cast<void>(dest); }

#define TESSERA_SHMEM_DEFINE_OLD_EXTENDED_AMO(NAME, TYPE)    \
  TYPE shmem_##NAME##_fetch(const TYPE* source, int pe) {    \
    return shmem_##NAME##_atomic_fetch(source, pe);          \
  }                                                          \
  void shmem_##NAME##_set(TYPE* dest, TYPE value, int pe) {  \
    shmem_##NAME##_atomic_set(dest, value, pe);              \
  }                                                          \
  TYPE shmem_##NAME##_swap(TYPE* dest, TYPE value, int pe) { \
    return shmem_##NAME##_atomic_swap(dest, value, pe);      \
  }
#define TESSERA_SHMEM_DEFINE_OLD_STANDARD_AMO(NAME, TYPE)                              \
  TESSERA_SHMEM_DEFINE_OLD_EXTENDED_AMO(NAME, TYPE)                                    \
  TYPE shmem_##NAME##_cswap(TYPE* dest, TYPE cond, TYPE value, int pe) {               \
    return shmem_##NAME##_atomic_compare_swap(dest, cond, value, pe);                  \
  }                                                                                    \
  TYPE shmem_##NAME##_finc(TYPE* dest, int pe) {                                       \
    return shmem_##NAME##_atomic_fetch_inc(dest, pe);                                  \
  }                                                                                    \
  void shmem_##NAME##_inc(TYPE* dest, int pe) { shmem_##NAME##_atomic_inc(dest, pe); } \
  TYPE shmem_##NAME##_fadd(TYPE* dest, TYPE value, int pe) {                           \
    return shmem_##NAME##_atomic_fetch_add(dest, value, pe);                           \
  }                                                                                    \
  void shmem_##NAME##_add(TYPE* dest, TYPE value, int pe) {                            \
    shmem_##NAME##_atomic_add(dest, value, pe);                                        \
  }
TESSERA_SHMEM_OLD_STANDARD_AMO_TYPES(TESSERA_SHMEM_DEFINE_OLD_STANDARD_AMO)
TESSERA_SHMEM_FLOAT_AMO_TYPES(TESSERA_SHMEM_DEFINE_OLD_EXTENDED_AMO)
#undef TESSERA_SHMEM_DEFINE_OLD_EXTENDED_AMO
#undef TESSERA_SHMEM_DEFINE_OLD_STANDARD_AMO

#define TESSERA_SHMEM_DEFINE_OLD_WAIT(NAME, TYPE)             \
  void shmem_##NAME##_wait(TYPE* ivar, TYPE cmp_value) {      \
    shmem_##NAME##_wait_until(ivar, SHMEM_CMP_NE, cmp_value); \
  }
TESSERA_SHMEM_DEFINE_OLD_WAIT(short, short)
TESSERA_SHMEM_DEFINE_OLD_WAIT(int, int)
TESSERA_SHMEM_DEFINE_OLD_WAIT(long, long)
TESSERA_SHMEM_DEFINE_OLD_WAIT(longlong, long long)
#undef TESSERA_SHMEM_DEFINE_OLD_WAIT
void shmem_wait(long* ivar, long cmp_value) {
  shmem_long_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

void shmem_broadcast32(void* dest, const void* source, size_t nelems, int PE_root, int PE_start,
                       int logPE_stride, int PE_size, long* pSync) {
  static_cast<void>(pSync);
  old_broadcast("shmem_broadcast32", dest, source, nelems * 4, PE_root, PE_start, logPE_stride,
                PE_size);
}
void shmem_broadcast64(void* dest, const void* source, size_t nelems, int PE_root, int PE_start,
                       int logPE_stride, int PE_size, long* pSync) {
  static_cast<void>(pSync);
  old_broadcast("shmem_broadcast64", dest, source, nelems * 8, PE_root, PE_start, logPE_stride,
                PE_size);
}

// collect, fcollect, alltoall(s) of 32- and 64-bit elements.
#define TESSERA_SHMEM_DEFINE_OLD_COLLECTIVES(BITS, TYPENAME)                                  \
  void shmem_collect##BITS(void* dest, const void* source, size_t nelems, int PE_start,       \
                           int logPE_stride, int PE_size, long* pSync) {                      \
    static_cast<void>(pSync);                                                                 \
    tessera_shmem_team set = set_of("shmem_collect" #BITS, PE_start, logPE_stride, PE_size);  \
    shmem_##TYPENAME##_collect(&set, static_cast<TYPENAME##_t*>(dest),                        \
                               static_cast<const TYPENAME##_t*>(source), nelems);             \
  }                                                                                           \
  void shmem_fcollect##BITS(void* dest, const void* source, size_t nelems, int PE_start,      \
                            int logPE_stride, int PE_size, long* pSync) {                     \
    static_cast<void>(pSync);                                                                 \
    tessera_shmem_team set = set_of("shmem_fcollect" #BITS, PE_start, logPE_stride, PE_size); \
    shmem_##TYPENAME##_fcollect(&set, static_cast<TYPENAME##_t*>(dest),                       \
                                static_cast<const TYPENAME##_t*>(source), nelems);            \
  }                                                                                           \
  void shmem_alltoall##BITS(void* dest, const void* source, size_t nelems, int PE_start,      \
                            int logPE_stride, int PE_size, long* pSync) {                     \
    static_cast<void>(pSync);                                                                 \
    tessera_shmem_team set = set_of("shmem_alltoall" #BITS, PE_start, logPE_stride, PE_size); \
    shmem_##TYPENAME##_alltoall(&set, static_cast<TYPENAME##_t*>(dest),                       \
                                static_cast<const TYPENAME##_t*>(source), nelems);            \
  }                                                                                           \
  void shmem_alltoalls##BITS(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst,    \
                             size_t nelems, int PE_start, int logPE_stride, int PE_size,      \
                             long* pSync) {                                                   \
    static_cast<void>(pSync);                                                                 \
    const char* routine = "shmem_alltoalls" #BITS;                                            \
    tessera_shmem_team set = set_of(routine, PE_start, logPE_stride, PE_size);                \
    if (shmem_##TYPENAME##_alltoalls(&set, static_cast<TYPENAME##_t*>(dest),                  \
                                     static_cast<const TYPENAME##_t*>(source), dst, sst,      \
                                     nelems) != 0) {                                          \
      ts::die(routine, "dst and sst must be >= 1, got " + std::to_string(dst) + " and " +     \
                           std::to_string(sst));                                              \
    }                                                                                         \
  }
TESSERA_SHMEM_DEFINE_OLD_COLLECTIVES(32, int32)
TESSERA_SHMEM_DEFINE_OLD_COLLECTIVES(64, int64)
#undef TESSERA_SHMEM_DEFINE_OLD_COLLECTIVES

// shmem_TYPENAME_OP_to_all: the 1.5 reduction REDUCENAME_OP_reduce over the set, on the same
// bits (and/or/xor of the signed types run as the unsigned type of their size, the bitwise
// reductions 1.5 has).
#define TESSERA_SHMEM_DEFINE_TO_ALL(NAME, TYPE, OP, REDUCENAME, REDUCETYPE)                    \
  void shmem_##NAME##_##OP##_to_all(TYPE* dest, const TYPE* source, int nreduce, int PE_start, \
                                    int logPE_stride, int PE_size, TYPE* pWrk, long* pSync) {  \
    static_cast<void>(pWrk);                                                                   \
    static_cast<void>(pSync);                                                                  \
    const char* routine = "shmem_" #NAME "_" #OP "_to_all";                                    \
    if (nreduce < 0) ts::die(routine, "nreduce is " + std::to_string(nreduce));                \
    tessera_shmem_team set = set_of(routine, PE_start, logPE_stride, PE_size);                 \
    shmem_##REDUCENAME##_##OP##_reduce(&set, reinterpret_cast<REDUCETYPE*>(dest),              \
                                       reinterpret_cast<const REDUCETYPE*>(source),            \
                                       static_cast<size_t>(nreduce));                          \
  }
#define TESSERA_SHMEM_DEFINE_OLD_BITWISE(NAME, TYPE, UNAME, UTYPE) \
  TESSERA_SHMEM_DEFINE_TO_ALL(NAME, TYPE, and, UNAME, UTYPE)       \
  TESSERA_SHMEM_DEFINE_TO_ALL(NAME, TYPE, or, UNAME, UTYPE)        \
  TESSERA_SHMEM_DEFINE_TO_ALL(NAME, TYPE, xor, UNAME, UTYPE)
#define TESSERA_SHMEM_DEFINE_OLD_ORDERED(NAME, TYPE)       \
  TESSERA_SHMEM_DEFINE_TO_ALL(NAME, TYPE, max, NAME, TYPE) \
  TESSERA_SHMEM_DEFINE_TO_ALL(NAME, TYPE, min, NAME, TYPE) \
  TESSERA_SHMEM_DEFINE_TO_ALL(NAME, TYPE, sum, NAME, TYPE) \
  TESSERA_SHMEM_DEFINE_TO_ALL(NAME, TYPE, prod, NAME, TYPE)
#define TESSERA_SHMEM_DEFINE_OLD_COMPLEX(NAME, TYPE)       \
  TESSERA_SHMEM_DEFINE_TO_ALL(NAME, TYPE, sum, NAME, TYPE) \
  TESSERA_SHMEM_DEFINE_TO_ALL(NAME, TYPE, prod, NAME, TYPE)
TESSERA_SHMEM_DEFINE_OLD_BITWISE(short, short, ushort, unsigned short)
TESSERA_SHMEM_DEFINE_OLD_BITWISE(int, int, uint, unsigned int)
TESSERA_SHMEM_DEFINE_OLD_BITWISE(long, long, ulong, unsigned long)
TESSERA_SHMEM_DEFINE_OLD_BITWISE(longlong, long long, ulonglong, unsigned long long)
TESSERA_SHMEM_OLD_ORDERED_TYPES(TESSERA_SHMEM_DEFINE_OLD_ORDERED)
TESSERA_SHMEM_COMPLEX_REDUCE_TYPES(TESSERA_SHMEM_DEFINE_OLD_COMPLEX)
#undef TESSERA_SHMEM_DEFINE_TO_ALL
#undef TESSERA_SHMEM_DEFINE_OLD_BITWISE
#undef TESSERA_SHMEM_DEFINE_OLD_ORDERED
#undef TESSERA_SHMEM_DEFINE_OLD_COMPLEX

}  // extern "C"
