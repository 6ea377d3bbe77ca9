#include "state.hpp"

#include "interrupt.hpp"

namespace tessera::python {

void fail(ErrorCode code, int pe, const std::string& message) { throw Error(code, pe, message); }

void RuntimeState::check_alive(const char* what) const {
  if (!alive)
    fail(ErrorCode::invalid_argument, pe, std::string(what) + ": the Runtime was finalized");
}

void RuntimeState::synchronize(const char* what) {
  check_alive("synchronize");
  struct Release {
    RuntimeState* s;
    ~Release() { s->in_flight.clear(); }
  } release{this};
  interruptible(rt, what, [&] { rt.stream().synchronize(); });
}

void RuntimeState::finalize() {
  if (!alive) return;
  alive = false;
  {
    nb::gil_scoped_release unlocked;
    rt.finalize();
  }
  in_flight.clear();
  dropped.clear();
}

}  // namespace tessera::python
