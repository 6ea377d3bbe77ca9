#include "team.hpp"

#include <nanobind/stl/string.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "array.hpp"
#include "tessera/device/flat_context.hpp"
#include "tessera/device/team.hpp"

namespace tessera::python {

using namespace nb::literals;

namespace {

// Runs a collective team maker without the GIL (it waits on the other PEs) and records its team.
template <class Make>
int make_team(RuntimeState& state, Make&& make) {
  Team t;
  {
    nb::gil_scoped_release unlocked;
    t = make();
  }
  state.teams.push_back(t);
  return static_cast<int>(state.teams.size()) - 1;
}

std::int64_t address(const void* p) {
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p));
}

// The team as device::FlatTeam words; barrier_words is 0 when its workspace cannot hold them.
std::vector<std::int64_t> flat_team(const Team& t) {
  using device::FlatTeam;
  std::vector<std::int64_t> w(FlatTeam::kWords, 0);
  w[FlatTeam::kStart] = t.start;
  w[FlatTeam::kStride] = t.stride;
  w[FlatTeam::kSize] = t.size;
  w[FlatTeam::kMyRank] = t.my_rank;
  w[FlatTeam::kWorkspace] = address(t.workspace);
  w[FlatTeam::kWorkspaceBytes] = static_cast<std::int64_t>(t.workspace_bytes);
  // The C++ device team barrier's words (device::TeamBarrierWords): Triton's barrier uses them.
  w[FlatTeam::kBarrierWords] = address(device::TeamBarrierWords::words(t));
  return w;
}

std::string describe(const Team& t) {
  return "tessera.Team(start=" + std::to_string(t.start) + ", stride=" + std::to_string(t.stride) +
         ", size=" + std::to_string(t.size) + ", my_rank=" + std::to_string(t.my_rank) + ")";
}

}  // namespace

const Team& PyTeam::get(const char* what) const {
  state->check_alive(what);
  return state->teams.at(static_cast<std::size_t>(id));
}

PyTeam team_world(const PyRuntime& s) {
  Runtime& rt = s.rt();
  if (s.state->world_team < 0)
    s.state->world_team = make_team(*s.state, [&] { return tessera::team_world(rt); });
  return PyTeam{s.state, s.state->world_team};
}

PyTeam team_node(const PyRuntime& s) {
  Runtime& rt = s.rt();
  if (s.state->node_team < 0)
    s.state->node_team = make_team(*s.state, [&] { return tessera::team_node(rt); });
  return PyTeam{s.state, s.state->node_team};
}

PyTeam team_split_strided(const PyRuntime& s, const PyTeam& parent, int start, int stride,
                          int size) {
  Runtime& rt = s.rt();
  if (parent.state != s.state) {
    fail(ErrorCode::invalid_argument, rt.pe(),
         "team_split_strided: the parent team belongs to another Runtime");
  }
  const Team p = parent.get("team_split_strided");
  const auto key = std::make_tuple(parent.id, start, stride, size);
  auto it = s.state->split_teams.find(key);
  if (it != s.state->split_teams.end()) return PyTeam{s.state, it->second};
  const int id =
      make_team(*s.state, [&] { return tessera::team_split_strided(rt, p, start, stride, size); });
  s.state->split_teams.emplace(key, id);
  return PyTeam{s.state, id};
}

PyTeam team_over_block(const PyRuntime& s, int start, int stride, int size, nb::handle block) {
  Runtime& rt = s.rt();
  const Buffer b = buffer_of(block, true, "team_over_block (block)", rt.pe());
  const int id = make_team(*s.state, [&] {
    return tessera::team_over_block(rt, start, stride, size, b.data, b.nbytes);
  });
  return PyTeam{s.state, id};
}

Team team_or_world(const PyRuntime& s, const PyTeam* team, const char* what) {
  if (team == nullptr) return team_world(s).get(what);
  if (team->state != s.state) {
    fail(ErrorCode::invalid_argument, s.state->pe,
         std::string(what) + ": the team belongs to another Runtime");
  }
  return team->get(what);
}

void bind_team(nb::module_& m) {
  nb::class_<PyTeam>(m, "Team",
                     "A strided set of world PEs (OpenSHMEM style) that collectives run over: team "
                     "rank i is world PE start + i * stride. Made by rt.team_world(), "
                     "rt.team_node() and rt.team_split_strided(); valid until finalize.")
      .def_prop_ro(
          "start", [](const PyTeam& t) { return t.get("Team").start; }, "World PE of team rank 0.")
      .def_prop_ro(
          "stride", [](const PyTeam& t) { return t.get("Team").stride; },
          "World-PE distance between consecutive ranks.")
      .def_prop_ro(
          "size", [](const PyTeam& t) { return t.get("Team").size; }, "Number of members.")
      .def_prop_ro(
          "n_pes", [](const PyTeam& t) { return t.get("Team").n_pes(); },
          "Number of members (like size).")
      .def_prop_ro(
          "my_rank", [](const PyTeam& t) { return t.get("Team").my_rank; },
          "This PE's rank in the team; -1 when it is not a member.")
      .def_prop_ro(
          "is_member", [](const PyTeam& t) { return t.get("Team").is_member(); },
          "True when this PE belongs to the team.")
      .def(
          "pe",
          [](const PyTeam& t, int rank) {
            const Team& team = t.get("Team.pe");
            if (rank < 0 || rank >= team.size) {
              fail(ErrorCode::invalid_argument, t.state->pe,
                   "Team.pe: rank " + std::to_string(rank) + " is outside the team (0.." +
                       std::to_string(team.size - 1) + ")");
            }
            return team.pe(rank);
          },
          "rank"_a, "The world PE of team rank `rank`.")
      .def(
          "rank_of", [](const PyTeam& t, int pe) { return t.get("Team.rank_of").rank_of(pe); },
          "pe"_a, "The team rank of world PE `pe`, or -1 when it is not a member.")
      .def(
          "_triton_team_words",
          [](const PyTeam& t) {
            nb::list l;
            for (std::int64_t w : flat_team(t.get("Team.triton_team"))) l.append(w);
            return l;
          },
          "The team as tessera.triton's barrier takes it (tessera.TRITON_CONTEXT_WORDS"
          "['team_words']); Team.triton_team() makes the tensor.")
      .def("__len__", [](const PyTeam& t) { return t.get("Team").size; })
      .def("__eq__",
           [](const PyTeam& a, nb::handle b) {
             if (!nb::isinstance<PyTeam>(b)) return false;
             const auto& o = nb::cast<const PyTeam&>(b);
             return a.state == o.state && a.id == o.id;
           })
      .def("__hash__", [](const PyTeam& t) { return t.id; })
      .def("__repr__", [](const PyTeam& t) {
        if (!t.state->alive) return std::string("tessera.Team(finalized)");
        return describe(t.get("Team"));
      });
}

}  // namespace tessera::python
