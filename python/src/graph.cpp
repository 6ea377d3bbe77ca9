#include "graph.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "array.hpp"
#include "runtime.hpp"

namespace tessera::python {

using namespace nb::literals;

namespace {

const char* phase_name(PyGraph::Phase p) {
  switch (p) {
    case PyGraph::Phase::fresh:
      return "fresh";
    case PyGraph::Phase::capturing:
      return "capturing";
    case PyGraph::Phase::captured:
      return "captured";
    case PyGraph::Phase::discarded:
      return "discarded";
  }
  return "?";
}

// The arguments pushed on in_flight since the capture began now belong to the graph: the
// stream ran none of them, and a replay reads them again.
void take_arguments(PyGraph& g) {
  auto& f = g.state->in_flight;
  const std::size_t from = std::min(g.mark, f.size());
  for (std::size_t i = from; i < f.size(); ++i) g.keep.push_back(std::move(f[i]));
  f.resize(from);
}

void begin(PyGraph& g) {
  RuntimeState& s = *g.state;
  s.check_alive("capture");
  if (g.phase != PyGraph::Phase::fresh) {
    fail(ErrorCode::invalid_argument, s.pe,
         std::string("capture: this graph is ") + phase_name(g.phase) +
             "; each rt.capture() is entered once (make a new one to capture again)");
  }
  if (s.rt.stream().capturing()) {
    fail(ErrorCode::invalid_argument, s.pe,
         "capture: the stream is capturing already (a `with rt.capture()` inside another); "
         "end the outer capture first");
  }
  s.rt.stream().begin_capture();
  g.mark = s.in_flight.size();
  g.phase = PyGraph::Phase::capturing;
}

// Ends the capture; keeps the graph unless `discard` (the block raised).
void end(PyGraph& g, bool discard) {
  RuntimeState& s = *g.state;
  if (g.phase != PyGraph::Phase::capturing) {
    fail(ErrorCode::invalid_argument, s.pe,
         std::string("capture: the graph is ") + phase_name(g.phase) + ", not capturing");
  }
  g.phase = PyGraph::Phase::discarded;
  if (!s.alive) {
    if (discard) return;
    fail(ErrorCode::invalid_argument, s.pe,
         "capture: the Runtime was finalized inside the capture; nothing was captured");
  }
  Graph graph = s.rt.stream().end_capture();
  take_arguments(g);
  if (discard) {
    g.keep.clear();
    return;
  }
  g.graph = std::move(graph);
  g.phase = PyGraph::Phase::captured;
}

void replay(nb::handle self) {
  PyGraph& g = nb::cast<PyGraph&>(self);
  RuntimeState& s = *g.state;
  s.check_alive("Graph.replay");
  switch (g.phase) {
    case PyGraph::Phase::fresh:
      fail(ErrorCode::invalid_argument, s.pe,
           "Graph.replay: nothing was captured yet (use `with rt.capture() as g:`, then "
           "g.replay() after the block)");
    case PyGraph::Phase::capturing:
      fail(ErrorCode::invalid_argument, s.pe,
           "Graph.replay: the capture has not ended; replay after the `with rt.capture()` "
           "block");
    case PyGraph::Phase::discarded:
      fail(ErrorCode::invalid_argument, s.pe,
           "Graph.replay: the capture was discarded (its block raised); capture again");
    case PyGraph::Phase::captured:
      break;
  }
  // A freed heap array would be written through a dangling pointer: refuse instead.
  for (const nb::object& o : g.keep) {
    if (nb::isinstance<Array>(o)) nb::cast<const Array&>(o).check_usable("Graph.replay");
  }
  {
    nb::gil_scoped_release unlocked;
    g.graph.launch(s.rt.stream());
  }
  // The replay runs after this returns: the graph (and the arrays it holds) stay alive until
  // rt.synchronize(), or belong to the outer graph when this replay is itself captured.
  s.in_flight.push_back(nb::borrow(self));
}

}  // namespace

PyGraph::~PyGraph() {
  if (phase != Phase::capturing || !state || !state->alive) return;
  try {
    (void)state->rt.stream().end_capture();
  } catch (...) {  // a destructor reports nothing; the capture is gone either way
  }
}

void bind_graph(nb::module_& m) {
  nb::class_<PyStream>(m, "Stream",
                       "This PE's stream (rt.stream): the one stream every tessera.ops call "
                       "enqueues on, in call order. rt.capture(stream) records it.")
      .def_prop_ro("pe", [](const PyStream& s) { return s.state->pe; })
      .def_prop_ro(
          "capturing",
          [](const PyStream& s) { return s.state->alive && s.state->rt.stream().capturing(); },
          "True inside a `with rt.capture()` block: calls enqueued now are recorded, not run.")
      .def(
          "synchronize", [](const PyStream& s) { s.state->synchronize(); },
          "As rt.synchronize(): waits for the stream's work and raises its first failure.")
      .def("__eq__",
           [](const PyStream& a, nb::handle b) {
             return nb::isinstance<PyStream>(b) && nb::cast<const PyStream&>(b).state == a.state;
           })
      .def("__hash__", [](const PyStream& s) { return std::hash<const void*>()(s.state.get()); })
      .def("__repr__", [](const PyStream& s) {
        return "tessera.Stream(pe=" + std::to_string(s.state->pe) +
               (s.state->alive ? std::string(")") : std::string(", finalized)"));
      });

  nb::class_<PyGraph>(
      m, "Graph",
      "Work captured from a PE's stream: `with rt.capture() as g:` records the ops called in the "
      "block (they do not run), g.replay() enqueues all of them again. The graph holds the "
      "arrays' pointers, not their values: rewrite an input between replays and the next replay "
      "reads the new values.")
      .def("__enter__",
           [](nb::handle self) {
             begin(nb::cast<PyGraph&>(self));
             return nb::borrow(self);
           })
      .def(
          "__exit__",
          [](PyGraph& g, nb::handle exc_type, nb::handle, nb::handle) {
            end(g, !exc_type.is_none());
            return false;  // an exception of the block goes on
          },
          "exc_type"_a.none(), "exc"_a.none(), "tb"_a.none())
      .def("replay", &replay,
           "Enqueues the captured work on the stream once more, after the work already there, "
           "and returns without waiting (like an op): rt.synchronize() waits and raises the "
           "first failure. Collective as the captured calls were: every PE of their teams must "
           "replay its own graph of the same calls. Raises InvalidArgumentError before the "
           "capture ended, after it was discarded, after the Runtime was finalized, or when an "
           "array it uses was freed.")
      .def_prop_ro(
          "size", [](const PyGraph& g) { return g.graph.size(); },
          "The work items captured (0 until the capture ended; a collective is one or more).")
      .def("__len__", [](const PyGraph& g) { return g.graph.size(); })
      .def_prop_ro(
          "captured", [](const PyGraph& g) { return g.phase == PyGraph::Phase::captured; },
          "True once the `with` block ended without an exception: replay() may be called.")
      .def_prop_ro(
          "stream", [](const PyGraph& g) { return PyStream{g.state}; },
          "The stream it captures and replays on.")
      .def("__repr__", [](const PyGraph& g) {
        return std::string("tessera.Graph(") + phase_name(g.phase) +
               ", size=" + std::to_string(g.graph.size()) + ")";
      });
}

PyGraph make_capture(const PyRuntime& self, std::optional<PyStream> stream) {
  self.state->check_alive("capture");
  if (stream && stream->state != self.state) {
    fail(ErrorCode::invalid_argument, self.state->pe,
         "capture: the stream belongs to another Runtime; pass rt.stream of this one");
  }
  return PyGraph(self.state);
}

}  // namespace tessera::python
