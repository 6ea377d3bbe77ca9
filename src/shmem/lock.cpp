// Distributed locks: shmem_set_lock, shmem_test_lock, shmem_clear_lock. The lock is PE 0's copy
// of the caller's symmetric long, used as a ticket lock: its high 32 bits are the next ticket to
// hand out, its low 32 bits the ticket being served. Tickets are served in the order they were
// taken, so under contention every PE gets the lock in turn (none starves), and the lock word is
// only ever changed by AMOs, which are atomic with respect to every PE's.
#include <cstdint>

#include "shmem/wait.hpp"

namespace tessera::shmem {
namespace {

constexpr int kLockPe = 0;
constexpr std::uint64_t kTicket = std::uint64_t{1} << 32;
constexpr std::uint64_t kServingMask = kTicket - 1;

std::uint64_t* lock_word(const char* routine, long* lock) {
  static_assert(sizeof(long) == sizeof(std::uint64_t), "the lock word is a 64-bit long");
  State& s = state(routine);
  if (lock == nullptr) die(routine, "lock is NULL");
  symmetric_ctx(s, routine, lock, sizeof(long), "lock", kLockPe);
  return reinterpret_cast<std::uint64_t*>(lock);
}

std::uint64_t fetch_word(const State& s, std::uint64_t* word) {
  return device::atomic_load(ctx_of(s, word), word, kLockPe);
}

// After taking the lock: the previous holder's stores and RMA (completed by its clear_lock) are
// visible to this PE's later loads.
void acquired() { device::platform::fence(device::Sem::acquire, device::Scope::system); }

}  // namespace
}  // namespace tessera::shmem

namespace ts = tessera::shmem;

extern "C" {

void shmem_set_lock(long* lock) {
  const char* routine = "shmem_set_lock";
  std::uint64_t* word = ts::lock_word(routine, lock);
  ts::State& s = ts::state(routine);
  const std::uint64_t ticket = ts::guarded(routine, [&] {
    return (tessera::device::atomic_fetch_add(ts::ctx_of(s, word), word, ts::kTicket,
                                              ts::kLockPe) >>
            32) &
           ts::kServingMask;
  });
  std::uint64_t seen = 0;
  ts::spin_until(
      s, routine,
      [&] {
        seen = ts::fetch_word(s, word);
        return (seen & ts::kServingMask) == ticket;
      },
      [&] {
        return "waiting for ticket " + std::to_string(ticket) + " of the lock at " +
               ts::where(s, lock) + " on PE 0, which serves ticket " +
               std::to_string(seen & ts::kServingMask) +
               " (is the holder stuck, or was the lock "
               "not zero before its first use?)";
      });
  ts::acquired();
}

int shmem_test_lock(long* lock) {
  const char* routine = "shmem_test_lock";
  std::uint64_t* word = ts::lock_word(routine, lock);
  ts::State& s = ts::state(routine);
  return ts::guarded(routine, [&] {
    const std::uint64_t seen = ts::fetch_word(s, word);
    // Free only when no ticket is outstanding: the next ticket is the one being served.
    if (((seen >> 32) & ts::kServingMask) != (seen & ts::kServingMask)) return 1;
    const std::uint64_t before = tessera::device::atomic_compare_exchange(
        ts::ctx_of(s, word), word, seen, seen + ts::kTicket, ts::kLockPe);
    if (before != seen) return 1;  // another PE took a ticket first
    ts::acquired();
    return 0;
  });
}

void shmem_clear_lock(long* lock) {
  const char* routine = "shmem_clear_lock";
  std::uint64_t* word = ts::lock_word(routine, lock);
  ts::State& s = ts::state(routine);
  ts::guarded(routine, [&] {
    // The holder's puts and AMOs are complete before the next holder can see the lock.
    tessera::device::quiet(s.ctx);
    // Serve the next ticket: only the holder changes the low half, but other PEs add tickets to
    // the high half meanwhile, and the low half must wrap without carrying into it.
    std::uint64_t seen = ts::fetch_word(s, word);
    for (;;) {
      const std::uint64_t next = (seen & ~ts::kServingMask) | ((seen + 1) & ts::kServingMask);
      const std::uint64_t before = tessera::device::atomic_compare_exchange(
          ts::ctx_of(s, word), word, seen, next, ts::kLockPe);
      if (before == seen) return;
      seen = before;
    }
  });
}

}  // extern "C"
