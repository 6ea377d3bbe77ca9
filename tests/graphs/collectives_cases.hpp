// The team collectives captured once and replayed (tests/graphs/replay.hpp): all_reduce (every
// algorithm), reduce_scatter (both), all_to_all, all_to_all_v and broadcast, each on a team
// given by the caller, inputs rewritten before and every element checked after each replay.
// Shared by the gtest program (PEs as threads) and graphs_proc (PEs as processes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "replay.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "tessera/ops/all_to_all.hpp"
#include "tessera/ops/broadcast.hpp"
#include "tessera/ops/reduce_scatter.hpp"
#include "tessera/team.hpp"

namespace tessera::graphs_test {

// "" when got[i] == want(i) for i < n, else the first difference, named `what`.
template <class T, class Want>
std::string first_difference(const char* what, const T* got, std::size_t n, Want&& want) {
  for (std::size_t i = 0; i < n; ++i) {
    const double w = static_cast<double>(want(i));
    if (static_cast<double>(got[i]) != w) {
      return std::string(what) + ": element " + std::to_string(i) + " is " +
             std::to_string(static_cast<double>(got[i])) + ", expected " + std::to_string(w);
    }
  }
  return "";
}

inline void replay_all_reduce(Runtime& rt, const Team& team, ops::AllReduceAlgo algo,
                              const ReplayOptions& opts = {}, std::size_t count = 1000) {
  std::vector<float> send(count);
  auto recv = rt.alloc<float>(count);
  capture_and_replay(
      rt,
      [&](Stream& s) {
        ops::all_reduce(rt, s, team, send.data(), recv.get(), count, ops::Dtype::f32,
                        ops::ReduceOp::sum, algo);
      },
      [&](int r) {
        for (std::size_t i = 0; i < count; ++i) send[i] = static_cast<float>(value(rt.pe(), r, i));
      },
      [&](int r) {
        return first_difference("all_reduce", recv.get(), count, [&](std::size_t i) {
          int sum = 0;
          for (int j = 0; j < team.size; ++j) sum += value(team.pe(j), r, i);
          return sum;
        });
      },
      opts);
}

inline void replay_reduce_scatter(Runtime& rt, const Team& team, ops::ReduceScatterAlgo algo,
                                  const ReplayOptions& opts = {}, std::size_t count = 300) {
  const auto m = static_cast<std::size_t>(team.size);
  const auto rank = static_cast<std::size_t>(team.my_rank);
  std::vector<float> send(m * count);
  auto recv = rt.alloc<float>(count);
  capture_and_replay(
      rt,
      [&](Stream& s) {
        ops::reduce_scatter(rt, s, team, send.data(), recv.get(), count, ops::Dtype::f32,
                            ops::ReduceOp::sum, algo);
      },
      [&](int r) {
        for (std::size_t i = 0; i < send.size(); ++i) {
          send[i] = static_cast<float>(value(rt.pe(), r, i));
        }
      },
      [&](int r) {
        return first_difference("reduce_scatter", recv.get(), count, [&](std::size_t i) {
          int sum = 0;
          for (int j = 0; j < team.size; ++j) sum += value(team.pe(j), r, rank * count + i);
          return sum;
        });
      },
      opts);
}

inline void replay_all_to_all(Runtime& rt, const Team& team, const ReplayOptions& opts = {},
                              std::size_t count = 200) {
  const auto m = static_cast<std::size_t>(team.size);
  const auto rank = static_cast<std::size_t>(team.my_rank);
  std::vector<std::int32_t> send(m * count);
  auto recv = rt.alloc<std::int32_t>(m * count);
  capture_and_replay(
      rt,
      [&](Stream& s) {
        ops::all_to_all(rt, s, team, send.data(), recv.get(), count, ops::Dtype::i32);
      },
      [&](int r) {
        for (std::size_t i = 0; i < send.size(); ++i) send[i] = value(rt.pe(), r, i);
      },
      [&](int r) {
        return first_difference("all_to_all", recv.get(), m * count, [&](std::size_t i) {
          const std::size_t from = i / count;
          return value(team.pe(static_cast<int>(from)), r, rank * count + i % count);
        });
      },
      opts);
}

// all_to_all_v's counts change every replay (they are read on the stream): rank d gets
// 1 + (pe + d + r) % kMaxBlock elements from world PE `pe` in replay r.
inline constexpr std::size_t kMaxBlock = 5;
inline std::size_t block_count(int pe, std::size_t to_rank, int r) {
  return 1 + (static_cast<std::size_t>(pe) + to_rank + static_cast<std::size_t>(r)) % kMaxBlock;
}

// Arguments and buffers of one PE's all_to_all_v calls.
struct AllToAllV {
  Runtime& rt;
  const Team& team;
  std::size_t m = static_cast<std::size_t>(team.size);
  std::vector<std::int32_t> send = std::vector<std::int32_t>(m * kMaxBlock);
  std::vector<std::size_t> send_counts = std::vector<std::size_t>(m);
  std::vector<std::size_t> recv_counts = std::vector<std::size_t>(m);
  std::vector<std::size_t> recv_offsets = std::vector<std::size_t>(m);
  Symmetric<std::int32_t> recv = rt.alloc<std::int32_t>(m * kMaxBlock);

  void call(Stream& s) {
    ops::all_to_all_v(rt, s, team, send.data(), send_counts.data(), recv.get(), m * kMaxBlock,
                      recv_counts.data(), recv_offsets.data(), ops::Dtype::i32);
  }
  void write(int r) {
    std::size_t at = 0;
    for (std::size_t d = 0; d < m; ++d) {
      send_counts[d] = block_count(rt.pe(), d, r);
      for (std::size_t i = 0; i < send_counts[d]; ++i) {
        send[at++] = value(rt.pe(), r, d * 100 + i);
      }
    }
  }
  std::string check(int r) const {
    const auto me = static_cast<std::size_t>(team.my_rank);
    for (std::size_t s = 0; s < m; ++s) {
      const int from = team.pe(static_cast<int>(s));
      const std::size_t want = block_count(from, me, r);
      if (recv_counts[s] != want) {
        return "all_to_all_v: recv_counts[" + std::to_string(s) + "] is " +
               std::to_string(recv_counts[s]) + ", expected " + std::to_string(want);
      }
      std::string wrong =
          first_difference("all_to_all_v", recv.get() + recv_offsets[s], want,
                           [&](std::size_t i) { return value(from, r, me * 100 + i); });
      if (!wrong.empty()) return wrong + " (block from rank " + std::to_string(s) + ")";
    }
    return "";
  }
};

inline void replay_all_to_all_v(Runtime& rt, const Team& team, const ReplayOptions& opts = {}) {
  AllToAllV a{rt, team};
  capture_and_replay(
      rt, [&](Stream& s) { a.call(s); }, [&](int r) { a.write(r); },
      [&](int r) { return a.check(r); }, opts);
}

inline void replay_broadcast(Runtime& rt, const Team& team, const ReplayOptions& opts = {},
                             std::size_t count = 1000) {
  const int root = team.size > 1 ? 1 : 0;
  std::vector<float> send(count);
  auto recv = rt.alloc<float>(count);
  capture_and_replay(
      rt,
      [&](Stream& s) {
        ops::broadcast(rt, s, team, send.data(), recv.get(), count, ops::Dtype::f32, root);
      },
      [&](int r) {
        for (std::size_t i = 0; i < count; ++i) send[i] = static_cast<float>(value(rt.pe(), r, i));
      },
      [&](int r) {
        return first_difference("broadcast", recv.get(), count,
                                [&](std::size_t i) { return value(team.pe(root), r, i); });
      },
      opts);
}

// Every collective case above on `team`, `replays` replays each.
inline void replay_every_collective(Runtime& rt, const Team& team, const ReplayOptions& opts) {
  for (auto algo : {ops::AllReduceAlgo::one_shot, ops::AllReduceAlgo::two_shot,
                    ops::AllReduceAlgo::ring, ops::AllReduceAlgo::atomic}) {
    replay_all_reduce(rt, team, algo, opts);
  }
  for (auto algo : {ops::ReduceScatterAlgo::one_shot, ops::ReduceScatterAlgo::ring}) {
    replay_reduce_scatter(rt, team, algo, opts);
  }
  replay_all_to_all(rt, team, opts);
  replay_all_to_all_v(rt, team, opts);
  replay_broadcast(rt, team, opts);
}

// all_reduce (sum), reduce_scatter (max) and broadcast (from the last PE) on the world team,
// captured into one graph and replayed: each op's result checked after every replay.
inline void replay_three_collectives(Runtime& rt, const ReplayOptions& opts) {
  const Team team = team_world(rt);
  constexpr std::size_t kCount = 256;
  const auto m = static_cast<std::size_t>(team.size);
  const auto me = static_cast<std::size_t>(rt.pe());
  const int root = rt.n_pes() - 1;
  std::vector<float> a(kCount), b(m * kCount), c(kCount);
  auto a_out = rt.alloc<float>(kCount);
  auto b_out = rt.alloc<float>(kCount);
  auto c_out = rt.alloc<float>(kCount);
  capture_and_replay(
      rt,
      [&](Stream& s) {
        ops::all_reduce(rt, s, team, a.data(), a_out.get(), kCount, ops::Dtype::f32,
                        ops::ReduceOp::sum);
        ops::reduce_scatter(rt, s, team, b.data(), b_out.get(), kCount, ops::Dtype::f32,
                            ops::ReduceOp::max);
        ops::broadcast(rt, s, team, c.data(), c_out.get(), kCount, ops::Dtype::f32, root);
      },
      [&](int r) {
        for (std::size_t i = 0; i < kCount; ++i) {
          a[i] = static_cast<float>(value(rt.pe(), r, i));
          c[i] = static_cast<float>(value(rt.pe(), r, i + 7));
        }
        for (std::size_t i = 0; i < b.size(); ++i)
          b[i] = static_cast<float>(value(rt.pe(), r, i + 3));
      },
      [&](int r) {
        std::string wrong = first_difference("all_reduce", a_out.get(), kCount, [&](auto i) {
          int sum = 0;
          for (int p = 0; p < rt.n_pes(); ++p) sum += value(p, r, i);
          return sum;
        });
        if (wrong.empty()) {
          wrong = first_difference("reduce_scatter", b_out.get(), kCount, [&](auto i) {
            int most = -100;
            for (int p = 0; p < rt.n_pes(); ++p) {
              most = std::max(most, value(p, r, me * kCount + i + 3));
            }
            return most;
          });
        }
        if (wrong.empty()) {
          wrong = first_difference("broadcast", c_out.get(), kCount,
                                   [&](auto i) { return value(root, r, i + 7); });
        }
        return wrong;
      },
      opts);
}

}  // namespace tessera::graphs_test
