#include "shmem/state.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

namespace tessera::shmem {

void die(const char* routine, const std::string& message) {
  const State* s = current_state();
  std::fflush(stdout);
  if (s != nullptr) {
    std::fprintf(stderr, "tessera shmem: PE %d: %s: %s\n", s->ctx.my_pe, routine, message.c_str());
  } else {
    std::fprintf(stderr, "tessera shmem: %s: %s\n", routine, message.c_str());
  }
  std::fflush(stderr);
  // Not exit(): destructors and atexit handlers would run collective teardown that the other
  // PEs never join. The launcher (mpirun, tessera-run) ends the rest of the job on the status.
  std::_Exit(EXIT_FAILURE);
}

void die_not_initialised(const char* routine) {
  die(routine, "called before shmem_init (or after shmem_finalize)");
}

void die_not_symmetric(const State& s, const char* routine, const void* p, std::size_t bytes,
                       const char* role) {
  char text[512];
  if (s.ctx.in_heap(p, 1)) {
    std::snprintf(text, sizeof(text),
                  "%s %p + %zu bytes runs past the end of the symmetric heap (heap offset %zu of "
                  "%zu bytes)",
                  role, p, bytes, s.ctx.heap_offset(p), s.ctx.heap_size);
  } else {
    std::snprintf(text, sizeof(text),
                  "%s %p is not a symmetric address: Tessera's symmetric objects are heap "
                  "objects only (shmem_malloc, shmem_calloc, shmem_align); static, global, stack "
                  "and malloc'd data are not symmetric",
                  role, p);
  }
  die(routine, text);
}

void die_bad_pe(const State& s, const char* routine, int pe) {
  die(routine, "PE " + std::to_string(pe) + " is outside [0, " + std::to_string(s.ctx.n_pes) + ")");
}

void barrier_all(State& s, const char* routine) {
  guarded(routine, [&] {
    device::quiet(s.ctx);
    s.runtime.barrier();
  });
}

device::Cmp to_cmp(const char* routine, int cmp) {
  switch (cmp) {
    case SHMEM_CMP_EQ:
      return device::Cmp::eq;
    case SHMEM_CMP_NE:
      return device::Cmp::ne;
    case SHMEM_CMP_GT:
      return device::Cmp::gt;
    case SHMEM_CMP_GE:
      return device::Cmp::ge;
    case SHMEM_CMP_LT:
      return device::Cmp::lt;
    case SHMEM_CMP_LE:
      return device::Cmp::le;
    default:
      die(routine, "comparison " + std::to_string(cmp) +
                       " is not one of SHMEM_CMP_EQ, _NE, "
                       "_GT, _GE, _LT, _LE");
  }
}

}  // namespace tessera::shmem
