// tessera.Stream and tessera.Graph: the PE's stream as a Python object, and the work captured
// from it (`with rt.capture() as g: ...`, then g.replay()), over tessera::Stream::begin_capture,
// end_capture and Graph::launch.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <optional>
#include <vector>

#include "state.hpp"
#include "tessera/stream.hpp"

namespace tessera::python {

// The runtime's single stream, which every tessera.ops call enqueues on.
struct PyStream {
  std::shared_ptr<RuntimeState> state;
};

// A capture in the making, then its graph. One object goes through the phases in order: fresh
// (made by rt.capture), capturing (inside its `with`), then captured (replayable) or discarded
// (the block raised, or the capture failed to end).
struct PyGraph {
  enum class Phase { fresh, capturing, captured, discarded };
  std::shared_ptr<RuntimeState> state;
  Phase phase = Phase::fresh;
  Graph graph;
  // The arrays the captured calls were given: the graph holds their pointers, so they must live
  // as long as it does (they were pushed on state->in_flight from index `mark` during the
  // capture and move here when it ends).
  std::vector<nb::object> keep;
  std::size_t mark = 0;

  explicit PyGraph(std::shared_ptr<RuntimeState> s) : state(std::move(s)) {}
  PyGraph(PyGraph&&) = default;
  PyGraph(const PyGraph&) = delete;
  PyGraph& operator=(const PyGraph&) = delete;
  // A capture still open (its `with` never exited) is ended and thrown away.
  ~PyGraph();
};

struct PyRuntime;

// rt.capture(stream=None): a fresh graph of this runtime's stream (entering it begins the
// capture). Raises InvalidArgumentError for another runtime's stream or a finalized runtime.
PyGraph make_capture(const PyRuntime& self, std::optional<PyStream> stream);

void bind_graph(nb::module_& m);

}  // namespace tessera::python
