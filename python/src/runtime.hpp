// tessera.Runtime and tessera.init: the PE's runtime, its heap's arrays and host-side RMA.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>

#include "state.hpp"

namespace tessera::python {

struct PyRuntime {
  std::shared_ptr<RuntimeState> state;
  Runtime& rt() const {
    state->check_alive("Runtime");
    return state->rt;
  }
};

void bind_runtime(nb::module_& m);

}  // namespace tessera::python
