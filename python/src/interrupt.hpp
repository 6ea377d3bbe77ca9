// Ctrl-C during a blocking call. Python runs its SIGINT handler only between bytecodes, and a
// wait spins in C++ with the GIL released, so a plain Ctrl-C would be seen only once the wait
// ended by itself (at TESSERA_TIMEOUT, or never). While a SigintAbort is alive on the main
// thread, SIGINT goes to a handler that only records it and marks the job as aborting through the
// library's abort word, here and on every mapped peer (atomic compare-exchanges, which are
// async-signal-safe): the wait here and the peers' waits then end with peer_lost, as for a PE
// that failed. The binding then hands the signal to Python, whose handler raises
// KeyboardInterrupt.
#pragma once

#include "state.hpp"

namespace tessera::python {

class SigintAbort {
 public:
  // GIL held. Arms the handler unless SIGINT is ignored or left to the default action, or this
  // is not the main thread (Python delivers SIGINT there only).
  SigintAbort(const Runtime& rt, const char* what);
  ~SigintAbort();
  SigintAbort(const SigintAbort&) = delete;
  SigintAbort& operator=(const SigintAbort&) = delete;

  // GIL held, once the call ended (returned or threw). When SIGINT came: runs Python's handler
  // and throws its exception (KeyboardInterrupt naming the PE and the call for the default
  // handler); returns when the handler raised nothing.
  void raise_if_interrupted();

 private:
  bool armed_ = false;
  const char* what_;
  int pe_;
};

// Calls f() with the GIL released under a SigintAbort.
template <class F>
void interruptible(const Runtime& rt, const char* what, F&& f) {
  SigintAbort guard(rt, what);
  try {
    nb::gil_scoped_release unlocked;
    f();
  } catch (...) {
    guard.raise_if_interrupted();
    throw;
  }
  guard.raise_if_interrupted();
}

// True while the handler is armed (tests wait for it before sending SIGINT).
bool sigint_abort_armed();

}  // namespace tessera::python
