// Bounded spinning on local symmetric variables, shared by the wait_until/test family and the
// signal routines.
#pragma once

#include <cstdint>
#include <string>

#include "shmem/state.hpp"
#include "tessera/device/impl/wait.hpp"

namespace tessera::shmem {

// `seen CMP value` in T's own arithmetic (signed types compare as signed).
template <class T>
bool holds(device::Cmp cmp, T seen, T value) {
  switch (cmp) {
    case device::Cmp::eq:
      return seen == value;
    case device::Cmp::ne:
      return seen != value;
    case device::Cmp::gt:
      return seen > value;
    case device::Cmp::ge:
      return seen >= value;
    case device::Cmp::lt:
      return seen < value;
    case device::Cmp::le:
      return seen <= value;
  }
  return false;
}

// An atomic acquire load of a local variable that peers update: after it, the caller sees what
// the updating PE wrote before its release.
template <class T>
T load_acquire(const T* p) {
  return device::platform::atomic_load(p, device::Sem::acquire, device::Scope::system);
}

// Spins until ready() returns true, through the library's one bounded wait: ends the job at
// once (peer_lost) when a PE failed or died, and past TESSERA_TIMEOUT (ctx.timeout_ns; 0 waits
// forever) with describe()'s account of what was waited for and what was seen.
template <class Ready, class Describe>
void spin_until(const State& s, const char* routine, Ready ready, Describe describe) {
  guarded(routine, [&] {
    device::detail::bounded_wait(device::detail::watch_of(s.ctx), routine, ready, [&] {
      die(routine, "timed out after " + std::to_string(s.ctx.timeout_ns / 1000000) +
                       " ms (TESSERA_TIMEOUT): " + describe());
    });
  });
}

// "heap offset N" (or "static data offset N") of a local symmetric address, for diagnostics.
inline std::string where(const State& s, const void* p) {
  if (s.statics.holds(p, 1)) return "static data offset " + std::to_string(s.statics.offset(p));
  return "heap offset " + std::to_string(s.ctx.heap_offset(p));
}

}  // namespace tessera::shmem
