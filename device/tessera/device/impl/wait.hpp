// The one bounded wait of the library. Every spin on memory another agent writes (device waits
// on signals and barriers, the proxy producers waiting for ring slots and completions, the
// OpenSHMEM waits, the host draining the proxy ring) goes through SpinPacer, so each paces itself
// the same way (platform::spin_pause: pure spin, then pause, then yield, then short sleeps on
// the host backend),
// ends at once with peer_lost when the job aborts or with the proxy's failure when the proxy
// failed, and ends with its caller's timeout diagnostic once TESSERA_TIMEOUT passed.
#pragma once

#include <cstdint>

#include "tessera/device/context.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/platform.hpp"
#include "tessera/device/proxy_wire.hpp"

namespace tessera::device::detail {

// What a bounded wait watches besides its own condition. Made from a Context (watch_of), or by
// host code that has no Context (the proxy's host producer, the drain).
struct WaitWatch {
  int my_pe = 0;                              // named in diagnostics
  std::uint64_t timeout_ns = 0;               // the bound; 0 waits forever (TESSERA_TIMEOUT)
  const std::uint64_t* abort_word = nullptr;  // the job's abort word (Context::kAbortWord), or null
  const ProxyChannel* proxy = nullptr;        // this PE's proxy ring, or null
};

TESSERA_HOST_DEVICE inline WaitWatch watch_of(const Context& ctx) {
  WaitWatch w;
  w.my_pe = ctx.my_pe;
  w.timeout_ns = ctx.timeout_ns;
  w.abort_word = ctx.control_page != nullptr ? &ctx.control_page[Context::kAbortWord] : nullptr;
  w.proxy = ctx.proxy;
  return w;
}

// The diagnostic of `what` giving up because the abort word reads `word`; shared with the host's
// reading of a failure record (failure_record.hpp).
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_abort(Message& m, int my_pe, const char* what,
                                                            std::uint64_t word) {
  m << what << " on PE " << my_pe << " gave up: PE " << abort_pe(word);
  if (abort_reason(word) == AbortReason::died) {
    m << " is lost (its process ended)";
  } else {
    m << " failed and aborted the job (its own message says why)";
  }
}

// Fails with peer_lost when the job is aborting (the abort word is set): some PE failed and
// left, or died.
TESSERA_HOST_DEVICE inline void check_abort(const WaitWatch& w, const char* what) {
  if (w.abort_word == nullptr) return;
  const std::uint64_t word = platform::atomic_load(w.abort_word, Sem::relaxed, Scope::system);
  if (word == 0) return;
  Message m;
  describe_abort(m, w.my_pe, what, word);
  platform::report_failure(FailureCode::peer_lost, m.c_str());
}

TESSERA_HOST_DEVICE inline void check_abort(const Context& ctx, const char* what) {
  check_abort(watch_of(ctx), what);
}

// Reports the proxy's failure, if there is one.
TESSERA_HOST_DEVICE inline void check_proxy(const ProxyChannel* ch) {
  if (ch == nullptr) return;
  const std::uint32_t f = platform::atomic_load(&ch->failure, Sem::acquire, Scope::system);
  if (f != 0) platform::report_failure(static_cast<FailureCode>(f - 1), ch->message);
}

// Paces a spin and bounds it. Not a point in time (that is the bootstrap's Deadline): it keeps
// the start of the wait and, every 256 turns (the clock is not free), checks the proxy, the
// job's abort word and the bound.
class SpinPacer {
 public:
  TESSERA_HOST_DEVICE SpinPacer(const WaitWatch& watch, const char* what)
      : watch_(watch),
        what_(what),
        start_ns_(watch.timeout_ns != 0 ? platform::clock_ns() : 0),
        probe_(platform::SplitPart::wait) {}
  TESSERA_HOST_DEVICE explicit SpinPacer(const Context& ctx, const char* what = "a wait")
      : SpinPacer(watch_of(ctx), what) {}

  // Pauses for turn `spins` and returns true once the bound has passed. Reports (does not
  // return) when the proxy failed or the job is aborting.
  TESSERA_HOST_DEVICE bool pause_and_check(std::uint32_t spins) {
    platform::spin_pause(spins);
    if ((spins & 255u) != 255u) return false;
    check_proxy(watch_.proxy);
    check_abort(watch_, what_);
    if (watch_.timeout_ns == 0) return false;
    return platform::clock_ns() - start_ns_ > watch_.timeout_ns;
  }

 private:
  WaitWatch watch_;
  const char* what_;
  std::uint64_t start_ns_;
  platform::SplitProbe probe_;  // a wait's time, in a -DTESSERA_PROFILE_SPLIT=ON build
};

// Spins until ready() returns true. Once the bound passed and ready() still is false, calls
// on_timeout(), which reports the caller's diagnostic and does not return (the wait ends if it
// does). `what` names the waiting operation in the peer_lost diagnostic.
template <class Ready, class OnTimeout>
TESSERA_HOST_DEVICE void bounded_wait(const WaitWatch& watch, const char* what, Ready&& ready,
                                      OnTimeout&& on_timeout) {
  SpinPacer pacer(watch, what);
  for (std::uint32_t spins = 0;; ++spins) {
    if (ready()) return;
    if (pacer.pause_and_check(spins)) {
      if (ready()) return;
      on_timeout();
      return;
    }
  }
}

}  // namespace tessera::device::detail
