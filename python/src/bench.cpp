// tessera._tessera._cpp_loop_us: the C++ side of `python -m tessera.bench overhead`. It runs the
// same call the Python loop makes, n times, from C++ with the GIL released, so the difference
// between the two loops is what the binding adds per call.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <chrono>
#include <string>

#include "array.hpp"
#include "runtime.hpp"
#include "tessera/ops.hpp"

namespace tessera::python {

using namespace nb::literals;

void bind_bench(nb::module_& m) {
  m.def(
      "_cpp_loop_us",
      [](const PyRuntime& s, const std::string& op, int iters, nb::handle send, nb::handle recv) {
        Runtime& rt = s.rt();
        if (iters <= 0) fail(ErrorCode::invalid_argument, rt.pe(), "iters must be > 0");
        Buffer src, dst;
        if (op == "all_gather") {
          src = buffer_of(send, false, "_cpp_loop_us (send)", rt.pe());
          dst = buffer_of(recv, true, "_cpp_loop_us (recv)", rt.pe());
        } else if (op != "barrier") {
          fail(ErrorCode::invalid_argument, rt.pe(), "op must be 'barrier' or 'all_gather'");
        }
        nb::gil_scoped_release unlocked;
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i) {
          if (op == "barrier") {
            rt.barrier();
          } else {
            ops::all_gather(rt, rt.stream(), src.data, dst.data, src.nbytes);
            rt.stream().synchronize();
          }
        }
        const std::chrono::duration<double, std::micro> took =
            std::chrono::steady_clock::now() - start;
        return took.count() / iters;
      },
      "rt"_a, "op"_a, "iters"_a, "send"_a = nb::none(), "recv"_a = nb::none(),
      "Microseconds per call of `iters` back-to-back calls of op ('barrier', or 'all_gather' of "
      "send into recv followed by a stream synchronize) made from C++ (collective).");
}

}  // namespace tessera::python
