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
                       const char* role, int pe) {
  char text[768];
  const StaticData& statics = s.statics;
  if (s.ctx.in_heap(p, 1)) {
    std::snprintf(text, sizeof(text),
                  "%s %p + %zu bytes runs past the end of the symmetric heap (heap offset %zu of "
                  "%zu bytes)",
                  role, p, bytes, s.ctx.heap_offset(p), s.ctx.heap_size);
  } else if (statics.holds(p, 1) && !statics.holds(p, bytes == 0 ? 1 : bytes)) {
    std::snprintf(text, sizeof(text),
                  "%s %p + %zu bytes runs past the end of the executable's static data (offset "
                  "%zu of %zu bytes)",
                  role, p, bytes, statics.offset(p), statics.context().heap_size);
  } else if (statics.holds(p, 1)) {
    std::snprintf(text, sizeof(text),
                  "%s %p is static data, and PE %d's static data is not mapped here (it is on "
                  "another node, or TESSERA_P2P=0) and no network proxy runs to reach it "
                  "(TESSERA_FABRIC=off, or a build without libfabric)",
                  role, p, pe);
  } else if (!statics.enabled()) {
    std::snprintf(text, sizeof(text),
                  "%s %p is not a symmetric address: it is not in the symmetric heap "
                  "(shmem_malloc, shmem_calloc, shmem_align), and static and global data are "
                  "not symmetric in this job: %s",
                  role, p, statics.why_not().c_str());
  } else {
    std::snprintf(text, sizeof(text),
                  "%s %p is not a symmetric address: symmetric objects are heap objects "
                  "(shmem_malloc, shmem_calloc, shmem_align) and the executable's static and "
                  "global data; stack, malloc'd and shared libraries' data are not symmetric",
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
