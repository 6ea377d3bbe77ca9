// tessera._tessera: the extension module the `tessera` package wraps.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "array.hpp"
#include "device_context.hpp"
#include "graph.hpp"
#include "interrupt.hpp"
#include "runtime.hpp"
#include "team.hpp"

namespace tessera::python {
void bind_errors(nb::module_& m);
void bind_ops(nb::module_& m);
void bind_collectives(nb::module_& m);
void bind_bench(nb::module_& m);
void bind_proxy_wire(nb::module_& m);
}  // namespace tessera::python

NB_MODULE(_tessera, m) {
  namespace tp = tessera::python;
  m.attr("__version__") = TESSERA_VERSION;
  m.attr("DEVICE_CONTEXT_FIELDS") = tp::device_context_fields();
  m.attr("TRITON_CONTEXT_WORDS") = tp::triton_context_layout();
  tp::bind_errors(m);
  tp::bind_array(m);
  tp::bind_team(m);
  tp::bind_graph(m);
  tp::bind_runtime(m);
  nanobind::module_ ops =
      m.def_submodule("ops", "Collectives on teams and fused compute-communication ops.");
  tp::bind_ops(ops);
  tp::bind_collectives(ops);
  tp::bind_bench(m);
  tp::bind_proxy_wire(m);
  m.def(
      "backend_available",
      [](const std::string& name) {
        if (name == "host") return tessera::backend_available(tessera::Backend::host);
        if (name == "cuda") return tessera::backend_available(tessera::Backend::cuda);
        if (name == "hip") return tessera::backend_available(tessera::Backend::hip);
        return tessera::backend_available(tessera::Backend::automatic);
      },
      "True when init(backend=name) could use that backend in this process.");
  m.def("_sigint_abort_armed", &tp::sigint_abort_armed,
        "True while a blocking call has SIGINT armed to abort the job (for tests).");
}
