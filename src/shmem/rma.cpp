// Puts and gets: bulk (putmem), typed, sized, strided and single-element, blocking and nbi.
#include "shmem/rma.hpp"

using tessera::shmem::checked_stride;
using tessera::shmem::Direction;
using tessera::shmem::transfer;

extern "C" {

void shmem_putmem(void* dest, const void* source, size_t nelems, int pe) {
  transfer<1>("shmem_putmem", Direction::put, dest, source, nelems, 1, 1, pe, false);
}
void shmem_getmem(void* dest, const void* source, size_t nelems, int pe) {
  transfer<1>("shmem_getmem", Direction::get, dest, source, nelems, 1, 1, pe, false);
}
void shmem_putmem_nbi(void* dest, const void* source, size_t nelems, int pe) {
  transfer<1>("shmem_putmem_nbi", Direction::put, dest, source, nelems, 1, 1, pe, true);
}
void shmem_getmem_nbi(void* dest, const void* source, size_t nelems, int pe) {
  transfer<1>("shmem_getmem_nbi", Direction::get, dest, source, nelems, 1, 1, pe, true);
}

// The typed routines of one TYPENAME.
#define TESSERA_SHMEM_DEFINE_RMA(NAME, TYPE)                                                       \
  void shmem_##NAME##_put(TYPE* dest, const TYPE* source, size_t nelems, int pe) {                 \
    transfer<sizeof(TYPE)>("shmem_" #NAME "_put", Direction::put, dest, source, nelems, 1, 1, pe,  \
                           false);                                                                 \
  }                                                                                                \
  void shmem_##NAME##_get(TYPE* dest, const TYPE* source, size_t nelems, int pe) {                 \
    transfer<sizeof(TYPE)>("shmem_" #NAME "_get", Direction::get, dest, source, nelems, 1, 1, pe,  \
                           false);                                                                 \
  }                                                                                                \
  void shmem_##NAME##_put_nbi(TYPE* dest, const TYPE* source, size_t nelems, int pe) {             \
    transfer<sizeof(TYPE)>("shmem_" #NAME "_put_nbi", Direction::put, dest, source, nelems, 1, 1,  \
                           pe, true);                                                              \
  }                                                                                                \
  void shmem_##NAME##_get_nbi(TYPE* dest, const TYPE* source, size_t nelems, int pe) {             \
    transfer<sizeof(TYPE)>("shmem_" #NAME "_get_nbi", Direction::get, dest, source, nelems, 1, 1,  \
                           pe, true);                                                              \
  }                                                                                                \
  void shmem_##NAME##_iput(TYPE* dest, const TYPE* source, ptrdiff_t dst, ptrdiff_t sst,           \
                           size_t nelems, int pe) {                                                \
    const char* routine = "shmem_" #NAME "_iput";                                                  \
    transfer<sizeof(TYPE)>(routine, Direction::put, dest, source, nelems,                          \
                           checked_stride(routine, dst, "dst"),                                    \
                           checked_stride(routine, sst, "sst"), pe, false);                        \
  }                                                                                                \
  void shmem_##NAME##_iget(TYPE* dest, const TYPE* source, ptrdiff_t dst, ptrdiff_t sst,           \
                           size_t nelems, int pe) {                                                \
    const char* routine = "shmem_" #NAME "_iget";                                                  \
    transfer<sizeof(TYPE)>(routine, Direction::get, dest, source, nelems,                          \
                           checked_stride(routine, dst, "dst"),                                    \
                           checked_stride(routine, sst, "sst"), pe, false);                        \
  }                                                                                                \
  void shmem_##NAME##_p(TYPE* dest, TYPE value, int pe) {                                          \
    transfer<sizeof(TYPE)>("shmem_" #NAME "_p", Direction::put, dest, &value, 1, 1, 1, pe, false); \
  }                                                                                                \
  TYPE shmem_##NAME##_g(const TYPE* source, int pe) {                                              \
    TYPE value{};                                                                                  \
    transfer<sizeof(TYPE)>("shmem_" #NAME "_g", Direction::get, &value, source, 1, 1, 1, pe,       \
                           false);                                                                 \
    return value;                                                                                  \
  }
TESSERA_SHMEM_RMA_TYPES(TESSERA_SHMEM_DEFINE_RMA)
#undef TESSERA_SHMEM_DEFINE_RMA

// The sized routines of one SIZE.
#define TESSERA_SHMEM_DEFINE_SIZED_RMA(BITS, BYTES)                                               \
  void shmem_put##BITS(void* dest, const void* source, size_t nelems, int pe) {                   \
    transfer<BYTES>("shmem_put" #BITS, Direction::put, dest, source, nelems, 1, 1, pe, false);    \
  }                                                                                               \
  void shmem_get##BITS(void* dest, const void* source, size_t nelems, int pe) {                   \
    transfer<BYTES>("shmem_get" #BITS, Direction::get, dest, source, nelems, 1, 1, pe, false);    \
  }                                                                                               \
  void shmem_put##BITS##_nbi(void* dest, const void* source, size_t nelems, int pe) {             \
    transfer<BYTES>("shmem_put" #BITS "_nbi", Direction::put, dest, source, nelems, 1, 1, pe,     \
                    true);                                                                        \
  }                                                                                               \
  void shmem_get##BITS##_nbi(void* dest, const void* source, size_t nelems, int pe) {             \
    transfer<BYTES>("shmem_get" #BITS "_nbi", Direction::get, dest, source, nelems, 1, 1, pe,     \
                    true);                                                                        \
  }                                                                                               \
  void shmem_iput##BITS(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst,             \
                        size_t nelems, int pe) {                                                  \
    const char* routine = "shmem_iput" #BITS;                                                     \
    transfer<BYTES>(routine, Direction::put, dest, source, nelems,                                \
                    checked_stride(routine, dst, "dst"), checked_stride(routine, sst, "sst"), pe, \
                    false);                                                                       \
  }                                                                                               \
  void shmem_iget##BITS(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst,             \
                        size_t nelems, int pe) {                                                  \
    const char* routine = "shmem_iget" #BITS;                                                     \
    transfer<BYTES>(routine, Direction::get, dest, source, nelems,                                \
                    checked_stride(routine, dst, "dst"), checked_stride(routine, sst, "sst"), pe, \
                    false);                                                                       \
  }
TESSERA_SHMEM_RMA_SIZES(TESSERA_SHMEM_DEFINE_SIZED_RMA)
#undef TESSERA_SHMEM_DEFINE_SIZED_RMA

}  // extern "C"
