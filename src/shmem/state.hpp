// The process-wide default runtime behind the OpenSHMEM C API, and the checks every routine
// shares. OpenSHMEM has no error returns, so a failed check prints "tessera shmem: ..." and ends
// the job (die); C++ exceptions never cross the C boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/log.hpp"
#include "shmem/static_data.hpp"
#include "tessera/device/device.hpp"
#include "tessera/runtime.hpp"
#include "tessera/shmem.h"

// A team handle's object: the strided set of world PEs the device API's Team describes (team PE
// i is world PE team.pe(i); team.my_rank is this PE's team number, -1 when not a member), so a
// team handle and a device Team answer pe / rank_of / translate the same way. Its Team has no
// workspace: shmem_team_sync runs on the counters shmem_init allocated.
struct tessera_shmem_team {
  tessera::device::Team team;
  shmem_team_config_t config{};
  bool predefined = false;  // SHMEM_TEAM_WORLD or SHMEM_TEAM_SHARED: never destroyed
};

namespace tessera::shmem {

struct State {
  Runtime runtime;
  device::Context ctx{};
  // TESSERA_DEBUG's logger for this PE (allocation failures are logged at INFO).
  detail::Logger log;
  // The thread level shmem_init (SINGLE) or shmem_init_thread (the level asked for) granted.
  int thread_level = SHMEM_THREAD_SINGLE;
  // Bytes of every live block from shmem_malloc & co., for shmem_realloc; guarded by
  // blocks_mutex, since under SHMEM_THREAD_MULTIPLE threads may allocate (on distinct teams'
  // schedules) while others look blocks up.
  std::mutex blocks_mutex;
  std::map<const void*, std::size_t> block_bytes;
  // shmem_team_sync's counters: word p of this PE's array counts the sync signals PE p sent
  // here (symmetric, allocated by shmem_init), and sync_consumed[p] how many this PE has waited
  // for. Never reset, so nothing needs clearing between syncs.
  std::uint64_t* sync_counters = nullptr;
  std::vector<std::uint64_t> sync_consumed;
  // The executable's static and global data as symmetric memory (static_data.hpp): remapped
  // before the runtime starts, connected to the node's PEs after.
  StaticData statics;
  // shmem_collect's symmetric word: a member stores its nelems here before the opening sync and
  // the others read it before the closing one (symmetric, allocated by shmem_init).
  std::uint64_t* collect_count = nullptr;
};

// The default runtime, or null outside shmem_init .. shmem_finalize (set by setup.cpp; read
// inline on every call, which the message rate of small puts depends on).
extern State* g_state;
inline State* current_state() noexcept { return g_state; }

// Prints "tessera shmem: PE p: routine: message" to stderr and ends the job with status 1.
[[noreturn]] void die(const char* routine, const std::string& message);

// The default runtime; ends the job when shmem_init has not run (or shmem_finalize has).
[[noreturn]] void die_not_initialised(const char* routine);
inline State& state(const char* routine) {
  State* s = current_state();
  if (s == nullptr) [[unlikely]]
    die_not_initialised(routine);
  return *s;
}

// Ends the job: [p, p + bytes) is neither in this PE's symmetric heap nor in its static data, or
// is static data and `pe` (>= 0) is a PE whose static data is not mapped here. `role` names the
// argument ("destination", "source", "signal").
[[noreturn]] void die_not_symmetric(const State& s, const char* routine, const void* p,
                                    std::size_t bytes, const char* role, int pe);

// The Context that addresses the symmetric object [p, p + bytes): the heap's, or the static
// data's (static_data.hpp), whose "heap" is the executable's data segment. `pe` is the PE the
// call reaches (-1 for none: a wait on a local variable). Ends the job (die_not_symmetric) when
// neither holds the range, or when it is static data that `pe` cannot reach (not mapped, and no
// network proxy runs).
inline const device::Context& symmetric_ctx(const State& s, const char* routine, const void* p,
                                            std::size_t bytes, const char* role, int pe = -1) {
  const std::size_t n = bytes == 0 ? 1 : bytes;
  if (s.ctx.in_heap(p, n)) [[likely]]
    return s.ctx;
  if (s.statics.holds(p, n) && (pe < 0 || s.statics.reaches(pe))) return s.statics.context();
  die_not_symmetric(s, routine, p, bytes, role, pe);
}

// The Context of a local address already checked by symmetric_ctx (or of a local buffer: the
// heap's): the static data's when it holds p, else the heap's.
inline const device::Context& ctx_of(const State& s, const void* p) {
  return s.statics.holds(p, 1) ? s.statics.context() : s.ctx;
}

// "0x..." for diagnostics.
std::string ptr_text(const void* p);

// The world PE that `pe` names in context `ctx` (its team's numbering); ends the job for an
// invalid or destroyed context or a PE outside its team (context.cpp).
int ctx_world_pe(const char* routine, shmem_ctx_t ctx, int pe);
// Frees every context object (shmem_finalize).
void release_contexts();

// Ends the job unless 0 <= pe < n_pes.
[[noreturn]] void die_bad_pe(const State& s, const char* routine, int pe);
inline void require_pe(const State& s, const char* routine, int pe) {
  if (pe >= 0 && pe < s.ctx.n_pes) [[likely]]
    return;
  die_bad_pe(s, routine, pe);
}

// Runs `body`, turning a device-API failure or a runtime error into die(routine, ...).
template <class Body>
auto guarded(const char* routine, Body&& body) noexcept -> decltype(body()) {
  try {
    return body();
  } catch (const device::Failure& f) {
    die(routine, f.what());
  } catch (const Error& e) {
    die(routine, e.message());
  } catch (const std::exception& e) {
    die(routine, e.what());
  }
}

// Completes this PE's outstanding operations and meets every PE (shmem_barrier_all).
void barrier_all(State& s, const char* routine);

// The device-API comparison for a SHMEM_CMP_* value; ends the job on any other value.
device::Cmp to_cmp(const char* routine, int cmp);

// The integer word of the same size (and signedness) as T: what the device API's atomics and
// single-element copies operate on.
template <std::size_t kBytes, bool kSigned>
struct WordOf;
template <>
struct WordOf<1, false> {
  using type = std::uint8_t;
};
template <>
struct WordOf<2, false> {
  using type = std::uint16_t;
};
template <>
struct WordOf<4, false> {
  using type = std::uint32_t;
};
template <>
struct WordOf<8, false> {
  using type = std::uint64_t;
};
template <>
struct WordOf<4, true> {
  using type = std::int32_t;
};
template <>
struct WordOf<8, true> {
  using type = std::int64_t;
};
template <class T>
using word_t = typename WordOf<sizeof(T), std::is_integral_v<T> && std::is_signed_v<T>>::type;

}  // namespace tessera::shmem
