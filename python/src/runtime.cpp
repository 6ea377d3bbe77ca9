#include "runtime.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "array.hpp"
#include "device_context.hpp"
#include "dtype.hpp"
#include "fill.hpp"
#include "graph.hpp"
#include "team.hpp"
#include "tessera/job_report.hpp"
#include "tessera/stream_rma.hpp"

namespace tessera::python {

using namespace nb::literals;

namespace {

Backend backend_from(const std::string& name) {
  if (name == "host") return Backend::host;
  if (name == "cuda") return Backend::cuda;
  if (name == "hip") return Backend::hip;
  if (name == "auto" || name == "automatic") return Backend::automatic;
  fail(ErrorCode::invalid_argument, -1,
       "backend must be 'host', 'cuda', 'hip' or 'auto', not '" + name + "'");
}

PyRuntime init(std::optional<nb::object> heap_size, std::optional<double> timeout,
               std::optional<std::string> backend, std::optional<bool> checked) {
  Options options = Options::from_env();
  if (heap_size) {
    options.heap_size = nb::isinstance<nb::str>(*heap_size)
                            ? parse_size(nb::cast<std::string>(*heap_size))
                            : nb::cast<std::size_t>(*heap_size);
  }
  if (timeout) {
    if (!(*timeout >= 0)) fail(ErrorCode::invalid_argument, -1, "timeout must be >= 0 seconds");
    options.timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(*timeout * 1000)));
  }
  if (backend) options.backend = backend_from(*backend);
  if (checked) options.checked = *checked;
  auto state = std::make_shared<RuntimeState>();
  {
    nb::gil_scoped_release unlocked;
    state->rt = Runtime::init(options);
  }
  state->pe = state->rt.pe();
  return PyRuntime{std::move(state)};
}

std::vector<std::size_t> shape_from(nb::handle shape) {
  std::vector<std::size_t> dims;
  if (nb::isinstance<nb::int_>(shape)) {
    dims.push_back(nb::cast<std::size_t>(shape));
  } else {
    for (nb::handle d : shape) dims.push_back(nb::cast<std::size_t>(d));
  }
  return dims;
}

// Collective, like Runtime::malloc (zeroed like calloc when `zero`).
Array allocate(const PyRuntime& self, nb::handle shape, nb::handle dtype, std::size_t align,
               bool zero) {
  Runtime& rt = self.rt();
  Array a;
  a.shape = shape_from(shape);
  a.dtype = dtype_from(dtype);
  a.pe = rt.pe();
  a.lifetime = std::make_shared<Lifetime>(Lifetime{self.state, true});
  const std::size_t bytes = a.nbytes();
  nb::gil_scoped_release unlocked;
  a.data = zero ? rt.calloc(bytes, 1, align) : rt.malloc(bytes, align);
  if (a.data != nullptr) a.offset = rt.heap_offset(a.data);
  return a;
}

Array peer(const PyRuntime& self, const Array& a, int pe) {
  Runtime& rt = self.rt();
  a.check_usable("peer");
  if (pe < 0 || pe >= rt.n_pes()) {
    fail(ErrorCode::invalid_argument, rt.pe(),
         "peer: PE " + std::to_string(pe) + " is outside the job (0.." +
             std::to_string(rt.n_pes() - 1) + ")");
  }
  void* p = rt.ptr(a.data, pe);
  if (p == nullptr) {
    fail(ErrorCode::transport, rt.pe(),
         "peer: PE " + std::to_string(pe) + "'s heap is not mapped here (transport " +
             to_string(rt.transport(pe)) +
             ": another node, or TESSERA_P2P=0); use Runtime.get/put");
  }
  Array v = a;
  v.data = p;
  v.pe = pe;
  v.owner = false;
  return v;
}

void check_same_bytes(const Buffer& dst, const Buffer& src, const char* what, int pe) {
  if (dst.nbytes != src.nbytes) {
    fail(ErrorCode::invalid_argument, pe,
         std::string(what) + ": dst is " + dst.describe() + " (" + std::to_string(dst.nbytes) +
             " bytes) but src is " + src.describe() + " (" + std::to_string(src.nbytes) +
             " bytes)");
  }
}

// rt.put (dst symmetric on `pe`, src local) or rt.get (src symmetric on `pe`, dst local) of two
// arrays of equal size, without the GIL; complete on return.
void host_copy(Runtime& rt, nb::handle dst, nb::handle src, int pe, bool is_get) {
  const char* call = is_get ? "get" : "put";
  Buffer d = buffer_of(dst, is_get, is_get ? "get (dst)" : "put (dst)", rt.pe());
  Buffer v = buffer_of(src, false, is_get ? "get (src)" : "put (src)", rt.pe());
  check_same_bytes(d, v, call, rt.pe());
  nb::gil_scoped_release unlocked;
  if (is_get) {
    rt.get(d.data, v.data, v.nbytes, pe);
  } else {
    rt.put(d.data, v.data, v.nbytes, pe);
  }
}

std::uint64_t* signal_word(const Buffer& sig, const char* what, int pe) {
  if (sig.dtype.dl.code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt) ||
      sig.dtype.dl.bits != 64 || sig.nbytes < 8) {
    fail(ErrorCode::invalid_argument, pe,
         std::string(what) +
             ": the signal must be a uint64 array (its first element is the word), got " +
             sig.describe());
  }
  return static_cast<std::uint64_t*>(sig.data);
}

device::Cmp cmp_from(const std::string& c) {
  if (c == "eq" || c == "==") return device::Cmp::eq;
  if (c == "ne" || c == "!=") return device::Cmp::ne;
  if (c == "gt" || c == ">") return device::Cmp::gt;
  if (c == "ge" || c == ">=") return device::Cmp::ge;
  if (c == "lt" || c == "<") return device::Cmp::lt;
  if (c == "le" || c == "<=") return device::Cmp::le;
  fail(ErrorCode::invalid_argument, -1,
       "cmp must be one of eq ne gt ge lt le (or == != > >= < <=), not '" + c + "'");
}

device::Context context_with(const Runtime& rt, std::optional<double> timeout) {
  device::Context ctx = rt.device_context();
  if (timeout) ctx.timeout_ns = static_cast<std::uint64_t>(std::llround(*timeout * 1e9));
  return ctx;
}

const char* backend_name(Backend b) { return to_string(b); }

}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<PyRuntime>(m, "Runtime",
                        "One PE's runtime: its symmetric heap, the peers' mapped heaps and the "
                        "bootstrap. Made by tessera.init(); finalize() (or leaving a `with` block) "
                        "ends it collectively.")
      .def_prop_ro("pe", [](const PyRuntime& s) { return s.rt().pe(); })
      .def_prop_ro("n_pes", [](const PyRuntime& s) { return s.rt().n_pes(); })
      .def_prop_ro(
          "node_pe", [](const PyRuntime& s) { return s.rt().node_pe(); },
          "This PE's index among the PEs of its node.")
      .def_prop_ro("node_size", [](const PyRuntime& s) { return s.rt().node_size(); })
      .def_prop_ro("node", [](const PyRuntime& s) { return s.rt().node(); })
      .def_prop_ro("backend",
                   [](const PyRuntime& s) { return std::string(backend_name(s.rt().backend())); })
      .def_prop_ro("heap_size", [](const PyRuntime& s) { return s.rt().heap_size(); })
      .def_prop_ro("heap_free_bytes", [](const PyRuntime& s) { return s.rt().heap_free_bytes(); })
      .def_prop_ro("heap_largest_free",
                   [](const PyRuntime& s) { return s.rt().heap_largest_free(); })
      .def_prop_ro(
          "timeout",
          [](const PyRuntime& s) {
            return static_cast<double>(s.rt().options().timeout.count()) / 1000.0;
          },
          "Bound of every wait in seconds (TESSERA_TIMEOUT); 0 waits forever.")
      .def_prop_ro("valid", [](const PyRuntime& s) { return s.state->alive; })
      .def(
          "transport",
          [](const PyRuntime& s, int pe) { return std::string(to_string(s.rt().transport(pe))); },
          "How this PE reaches `pe`: 'self', 'mapped', 'proxy' or 'unreachable'.")
      .def(
          "job_report",
          [](const PyRuntime& s) {
            Runtime& rt = s.rt();
            nb::gil_scoped_release unlocked;
            return job_report(rt);
          },
          "Collective: the table tessera-info prints (PEs, nodes, placement, fabric, transports) "
          "on PE 0; an empty string on the other PEs.")
      .def(
          "barrier",
          [](const PyRuntime& s) {
            Runtime& rt = s.rt();
            nb::gil_scoped_release unlocked;
            rt.barrier();
          },
          "Collective: returns once every PE called it; heap writes before it are visible after "
          "it.")
      .def(
          "synchronize", [](const PyRuntime& s) { s.state->synchronize(); },
          "Waits for the work enqueued on this PE's stream (ops, graph replays); raises its first "
          "failure. Inside `with rt.capture()` it raises InvalidArgumentError (nothing there "
          "has run).")
      .def_prop_ro(
          "stream", [](const PyRuntime& s) { return PyStream{s.state}; },
          "This PE's stream: every tessera.ops call enqueues on it, in call order; "
          "rt.synchronize() waits for it. rt.capture(rt.stream) records it.")
      .def("capture", &make_capture, "stream"_a.none() = nb::none(),
           "A context manager: `with rt.capture() as g:` records the tessera.ops calls made "
           "on `stream` (default, and only choice: rt.stream) in the block instead of running "
           "them; leaving the block ends the capture and g.replay() runs the calls again. An "
           "exception in the block ends the capture, discards the graph and goes on. "
           "rt.synchronize() and the calls that wait for the stream raise InvalidArgumentError "
           "inside the block, as does an op's first call for a new shape or team (it agrees "
           "with the other PEs on the host: make that call once before the capture).")
      .def(
          "finalize", [](const PyRuntime& s) { s.state->finalize(); },
          "Collective: ends the runtime; its arrays become unusable. Safe to call twice.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](const PyRuntime& s, nb::args) { s.state->finalize(); })
      .def("__repr__",
           [](const PyRuntime& s) {
             if (!s.state->alive) return std::string("tessera.Runtime(finalized)");
             return "tessera.Runtime(pe=" + std::to_string(s.state->rt.pe()) +
                    ", n_pes=" + std::to_string(s.state->rt.n_pes()) +
                    ", backend=" + backend_name(s.state->rt.backend()) + ")";
           })
      .def(
          "empty",
          [](const PyRuntime& s, nb::handle shape, nb::handle dtype, std::size_t align) {
            return allocate(s, shape, dtype, align, false);
          },
          "shape"_a, "dtype"_a = "float32", "align"_a = 64,
          "Collective: an uninitialised symmetric array (same offset on every PE). Raises "
          "InvalidArgumentError when PEs disagree on the size, OutOfMemoryError when the heap is "
          "full.")
      .def(
          "zeros",
          [](const PyRuntime& s, nb::handle shape, nb::handle dtype, std::size_t align) {
            return allocate(s, shape, dtype, align, true);
          },
          "shape"_a, "dtype"_a = "float32", "align"_a = 64,
          "Collective: like empty(), zero-filled.")
      .def(
          "full",
          [](const PyRuntime& s, nb::handle shape, nb::handle value, nb::handle dtype,
             std::size_t align) {
            Array a = allocate(s, shape, dtype, align, false);
            const bool integral = nb::isinstance<nb::int_>(value);
            const double v = nb::cast<double>(value);
            const std::int64_t exact =
                integral ? nb::cast<std::int64_t>(value) : static_cast<std::int64_t>(v);
            if (a.data != nullptr) fill(a.data, a.size(), a.dtype, v, exact);
            // Like calloc: no peer writes into the block before this PE has filled it.
            nb::gil_scoped_release unlocked;
            s.rt().barrier();
            return a;
          },
          "shape"_a, "fill_value"_a, "dtype"_a = "float32", "align"_a = 64,
          "Collective: like empty(), every element set to fill_value.")
      .def("peer", &peer, "array"_a, "pe"_a,
           "A zero-copy view of `array` as PE `pe` holds it (a node-local peer's mapped heap). "
           "Raises TransportError for a peer whose heap is not mapped here.")
      .def(
          "put",
          [](const PyRuntime& s, nb::handle dst, nb::handle src, int pe) {
            host_copy(s.rt(), dst, src, pe, /*is_get=*/false);
          },
          "dst"_a, "src"_a, "pe"_a,
          "Copies src (local memory) into the symmetric dst on `pe`; complete on return.")
      .def(
          "get",
          [](const PyRuntime& s, nb::handle dst, nb::handle src, int pe) {
            host_copy(s.rt(), dst, src, pe, /*is_get=*/true);
          },
          "dst"_a, "src"_a, "pe"_a,
          "Copies the symmetric src as held by `pe` into local dst; complete on return.")
      .def(
          "signal",
          [](const PyRuntime& s, nb::handle sig, std::uint64_t value, int pe,
             const std::string& op) {
            Runtime& rt = s.rt();
            s.state->check_not_capturing("signal");
            Buffer b = buffer_of(sig, true, "signal", rt.pe());
            if (op != "set" && op != "add")
              fail(ErrorCode::invalid_argument, rt.pe(), "signal: op must be 'set' or 'add'");
            signal_on_stream(rt.stream(), rt.device_context(), signal_word(b, "signal", rt.pe()),
                             value, op == "set" ? device::SignalOp::set : device::SignalOp::add,
                             pe);
            s.state->in_flight.push_back(b.keep);
            s.state->synchronize();
          },
          "sig"_a, "value"_a, "pe"_a, "op"_a = "set",
          "Sets (or adds to) the uint64 signal word `sig` on `pe` with release; complete on "
          "return.")
      .def(
          "wait_until",
          [](const PyRuntime& s, nb::handle sig, const std::string& cmp, std::uint64_t value,
             std::optional<double> timeout) {
            Runtime& rt = s.rt();
            s.state->check_not_capturing("wait_until");
            Buffer b = buffer_of(sig, false, "wait_until", rt.pe());
            // The value the wait saw, written by the stream's work: held like its other
            // arguments, so an interrupted synchronize cannot leave the wait writing freed memory.
            auto* seen = new std::uint64_t(0);
            nb::capsule keep_seen(seen,
                                  [](void* p) noexcept { delete static_cast<std::uint64_t*>(p); });
            wait_until_on_stream(rt.stream(), context_with(rt, timeout),
                                 signal_word(b, "wait_until", rt.pe()), cmp_from(cmp), value, seen);
            s.state->in_flight.push_back(b.keep);
            s.state->in_flight.push_back(keep_seen);
            s.state->synchronize("wait_until");
            return *seen;
          },
          "sig"_a, "cmp"_a, "value"_a, "timeout"_a = nb::none(),
          "Blocks until the local signal word `sig` CMP value (acquire) and returns the value that "
          "satisfied the comparison (as the device wait_until does; the word may change again "
          "after). Bounded by timeout (seconds; default the runtime's): raises TimeoutError "
          "naming the PE and offset.")
      .def(
          "device_barrier",
          [](const PyRuntime& s, std::optional<double> timeout) {
            Runtime& rt = s.rt();
            s.state->check_not_capturing("device_barrier");
            barrier_on_stream(rt.stream(), context_with(rt, timeout));
            s.state->synchronize("device_barrier");
          },
          "timeout"_a = nb::none(),
          "The device-side barrier over all PEs, run on the stream; ends with PeerLostError when a "
          "peer failed or died.")
      .def(
          "heap_bases", [](const PyRuntime& s) { return heap_bases(s.rt()); },
          "uint64 array [n_pes]: each PE's heap base as mapped in this process (0: not mapped).")
      .def(
          "device_context", [](const PyRuntime& s) { return device_context_array(s.rt()); },
          "int64 array of the kernel Context's fields, laid out as tessera.DEVICE_CONTEXT_FIELDS.")
      .def(
          "_triton_context_words", [](const PyRuntime& s) { return triton_context_words(s.rt()); },
          "The flat context's words (tessera.TRITON_CONTEXT_WORDS); rt.triton_context() makes "
          "the tensor.")
      .def("team_world", &team_world,
           "Every PE of the job, ranked by world PE. Collective the first time (it allocates the "
           "team's ~2 MiB workspace from the heap, held until finalize); later calls return the "
           "same team.")
      .def("team_node", &team_node,
           "The PEs of this PE's node. Collective over every PE the first time, like "
           "team_world; raises InvalidArgumentError when a node's PEs are not evenly spaced.")
      .def("team_split_strided", &team_split_strided, "parent"_a, "start"_a, "stride"_a, "size"_a,
           "The members of `parent` of ranks start, start + stride, ... (size of them), as "
           "OpenSHMEM's shmem_team_split_strided. Collective over every PE (members or not, same "
           "arguments everywhere) the first time for these arguments; later calls return the "
           "same team. A non-member gets a team with my_rank == -1. Raises InvalidArgumentError "
           "when size < 1, start < 0, stride < 1 or the last rank lies outside the parent.")
      .def("team_over_block", &team_over_block, "start"_a, "stride"_a, "size"_a, "block"_a,
           "Members only, for teams made after the fact: world PEs start, start + stride, ... "
           "(size of them) over `block`, a uint8 heap array of team_workspace_size bytes that a "
           "collective allocation reserved earlier (the same offset on every member) and no "
           "other team uses. Zeroes this PE's copy: the members must synchronize after every "
           "one has made it, before any runs a collective on it. Raises InvalidArgumentError "
           "when the PEs lie outside the job, this PE is not one, or the block does not fit.")
      .def_prop_ro(
          "team_workspace_size",
          [](const PyRuntime& s) { return tessera::team_workspace_size(s.rt()); },
          "The bytes of a team's workspace (what team_world and the other makers allocate).")
      .def(
          "check_device",
          [](const PyRuntime& s) {
            nb::gil_scoped_release unlocked;
            s.rt().check_device_failure();
          },
          "Raises the failure a Triton kernel (tessera.triton) recorded on this PE, as the C++ "
          "device API would have raised it (same message), and clears it; raises PeerLostError "
          "when another PE aborted the job. Returns None when neither.");

  m.def(
      "init", &init, "heap_size"_a = nb::none(), "timeout"_a = nb::none(), "backend"_a = nb::none(),
      "checked"_a = nb::none(),
      "Collective: starts this PE's runtime from the TESSERA_* environment (as set by "
      "tessera-run, mpirun or torchrun); keyword arguments override it: heap_size (bytes or "
      "'64M'), timeout (seconds, 0 = forever), backend ('host', 'cuda', 'hip', 'auto'), checked.");
}

}  // namespace tessera::python
