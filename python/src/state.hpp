// What the Python objects of one tessera.Runtime share: the C++ Runtime, whether it is still
// alive, and the objects that must outlive work still queued on its stream.
#pragma once

#include <nanobind/nanobind.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tessera/runtime.hpp"
#include "tessera/team.hpp"

namespace tessera::python {

namespace nb = nanobind;

struct RuntimeState {
  Runtime rt;
  bool alive = true;
  int pe = -1;
  // Arguments of work enqueued on rt.stream() (NumPy arrays, tensors): released at synchronize
  // or finalize, so Python cannot free a buffer the stream is still reading.
  std::vector<nb::object> in_flight;
  // Op objects Python dropped without free(): destroying them at once would be a collective free
  // in garbage-collector order, which differs between PEs. They go after finalize, when freeing
  // is a no-op.
  std::vector<std::shared_ptr<void>> dropped;
  // The teams made so far, in the order they were made (the same on every PE, since making one
  // is collective): each holds heap workspace until finalize, so the same call returns the same
  // team. world_team / node_team are indices into teams, or -1 before the first such call.
  std::vector<Team> teams;
  int world_team = -1;
  int node_team = -1;
  std::map<std::tuple<int, int, int, int>, int> split_teams;  // (parent, start, stride, size)

  // Throws Error(invalid_argument) once finalize ran.
  void check_alive(const char* what) const;
  // Throws Error(invalid_argument) while the stream is capturing (`with rt.capture()`): for the
  // calls that wait for the stream, whose waiting would see nothing run.
  void check_not_capturing(const char* what) const;
  // Blocks (GIL released) until the stream's work is done, then lets go of its arguments.
  // Ctrl-C during it aborts the job (interrupt.hpp); `what` names the call in the message.
  // During a capture it raises (check_not_capturing) and keeps the arguments, which the graph
  // takes when the capture ends.
  void synchronize(const char* what = "synchronize");
  // Collective; safe to call twice. A capture still open is ended and its work dropped.
  void finalize();
};

// A heap block and whether it is still allocated: arrays and the views made of them share it, so
// a view of a freed block, or of a finalized runtime's heap, refuses to be used.
struct Lifetime {
  std::shared_ptr<RuntimeState> state;
  bool live = true;
  bool usable() const { return live && state && state->alive; }
};

// Throws tessera::Error(code, pe, message), the exception every binding check raises.
[[noreturn]] void fail(ErrorCode code, int pe, const std::string& message);

}  // namespace tessera::python
