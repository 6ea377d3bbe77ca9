#include "state.hpp"

#include "interrupt.hpp"

namespace tessera::python {

void fail(ErrorCode code, int pe, const std::string& message) { throw Error(code, pe, message); }

void RuntimeState::check_alive(const char* what) const {
  if (!alive)
    fail(ErrorCode::invalid_argument, pe, std::string(what) + ": the Runtime was finalized");
}

void RuntimeState::check_not_capturing(const char* what) const {
  if (alive && rt.stream().capturing()) {
    fail(ErrorCode::invalid_argument, pe,
         std::string(what) +
             ": the stream is capturing (inside `with rt.capture()`), so nothing enqueued in the "
             "block has run; leave the block, then g.replay() and rt.synchronize()");
  }
}

void RuntimeState::synchronize(const char* what) {
  check_alive("synchronize");
  check_not_capturing(what);
  struct Release {
    RuntimeState* s;
    ~Release() { s->in_flight.clear(); }
  } release{this};
  interruptible(rt, what, [&] { rt.stream().synchronize(); });
}

void RuntimeState::finalize() {
  if (!alive) return;
  if (rt.stream().capturing()) {
    try {
      (void)rt.stream().end_capture();
    } catch (const Error&) {  // ending it is all that matters: finalize goes on
    }
  }
  alive = false;
  {
    nb::gil_scoped_release unlocked;
    rt.finalize();
  }
  in_flight.clear();
  dropped.clear();
}

}  // namespace tessera::python
