#include "interrupt.hpp"

#include <pythread.h>
#include <signal.h>

#include <atomic>
#include <string>

#include "tessera/device/device.hpp"

namespace tessera::python {

namespace {

// The handler reads g_context only after seeing g_armed, which is set after g_context is
// written (and cleared before it changes).
device::Context g_context{};
std::atomic<bool> g_armed{false};
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used in a signal handler");
// Under the GIL: nested guards (a wait inside another on one thread) arm once.
int g_depth = 0;
struct sigaction g_previous {};

void on_sigint(int) {
  g_interrupted.store(true);
  if (g_armed.load(std::memory_order_acquire)) device::detail::broadcast_abort(g_context);
}

unsigned long main_thread_ident() {
  static const unsigned long ident = nb::cast<unsigned long>(
      nb::module_::import_("threading").attr("main_thread")().attr("ident"));
  return ident;
}

}  // namespace

SigintAbort::SigintAbort(const Runtime& rt, const char* what) : what_(what), pe_(rt.pe()) {
  if (g_depth > 0) {
    ++g_depth;
    return;
  }
  if (PyThread_get_thread_ident() != main_thread_ident()) return;
  struct sigaction current {};
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) == 0 &&
      (current.sa_handler == SIG_IGN || current.sa_handler == SIG_DFL))
    return;
  g_context = rt.device_context();
  g_interrupted.store(false);
  g_armed.store(true, std::memory_order_release);
  struct sigaction ours {};
  ours.sa_handler = on_sigint;
  sigemptyset(&ours.sa_mask);
  // The waits spin, so no call needs EINTR to notice the signal.
  ours.sa_flags = SA_RESTART;
  if (sigaction(SIGINT, &ours, &g_previous) != 0) {
    g_armed.store(false);
    return;
  }
  armed_ = true;
  g_depth = 1;
}

SigintAbort::~SigintAbort() {
  if (g_depth == 0 || (--g_depth > 0)) return;
  if (!armed_) return;
  sigaction(SIGINT, &g_previous, nullptr);
  g_armed.store(false);
}

void SigintAbort::raise_if_interrupted() {
  if (!armed_ || !g_interrupted.exchange(false)) return;
  // Python's own handler decides what a SIGINT means (the default raises KeyboardInterrupt).
  PyErr_SetInterrupt();
  if (PyErr_CheckSignals() == 0) return;
  if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
    PyErr_Clear();
    const std::string message = "tessera [PE " + std::to_string(pe_) + "] " + what_ +
                                " interrupted (SIGINT): this PE aborted the job; its peers see "
                                "PeerLostError";
    PyErr_SetString(PyExc_KeyboardInterrupt, message.c_str());
  }
  throw nb::python_error();
}

bool sigint_abort_armed() { return g_armed.load(); }

}  // namespace tessera::python
