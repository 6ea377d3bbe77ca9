// Replay cases of MoE dispatch + combine, all_reduce_rmsnorm and all_gather: one call captured
// into a Graph and replayed (replay.hpp), its inputs rewritten before every replay and every
// result checked against a host reference after it. Header-only, for the gtest program and for
// process programs alike: a wrong result throws ReplayFailure naming the PE and the replay.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "replay.hpp"
#include "tessera/ops/all_gather.hpp"
#include "tessera/ops/all_reduce_rmsnorm.hpp"
#include "tessera/ops/moe.hpp"
#include "tessera/tessera.hpp"

namespace tessera::graphs_test {

// --- MoE ---------------------------------------------------------------------------------------

struct MoeReplayCase {
  std::size_t tokens = 12;  // per PE; above MoeBuffer::kMoeDecodeTokens the prefill grid
  std::size_t hidden = 8;
  int topk = 2;
  int experts_per_pe = 2;
  ops::MoeDtype dtype = ops::MoeDtype::f32;  // bf16 routes with int64 indices
};

// The buffer's config of case `c` on n_pes PEs.
inline ops::MoeConfig moe_config(const MoeReplayCase& c, int n_pes) {
  ops::MoeConfig cfg;
  cfg.max_tokens_per_pe = c.tokens;
  cfg.hidden = c.hidden;
  cfg.topk = c.topk;
  cfg.num_experts = n_pes * c.experts_per_pe;
  cfg.dtype = c.dtype;
  return cfg;
}

namespace moe_detail {

// PE `pe`'s routing of replay r: distinct experts per token, about a quarter of the slots unused
// (-1), weights in {0.25, 0.5, 0.75, 1}; every PE can recompute every other's.
struct Routing {
  std::vector<std::int64_t> idx;
  std::vector<float> w;
};

inline Routing routing(const MoeReplayCase& c, int experts, int pe, int r) {
  const auto k = static_cast<std::size_t>(c.topk);
  Routing out;
  out.idx.assign(c.tokens * k, -1);
  out.w.assign(c.tokens * k, 0.0f);
  for (std::size_t t = 0; t < c.tokens; ++t) {
    const int base = (value(pe, r, 100000 + t) + 8 + static_cast<int>(t)) % experts;
    for (std::size_t j = 0; j < k; ++j) {
      const std::size_t at = t * k + j;
      out.w[at] = 0.25f * static_cast<float>(1 + (value(pe, r, 200000 + at) + 8) % 4);
      if (value(pe, r, 300000 + at) < -4) continue;
      out.idx[at] = (base + static_cast<int>(j)) % experts;
    }
  }
  return out;
}

template <class T>
T from_float(float v) {
  if constexpr (std::is_same_v<T, device::bf16>) {
    return device::to_bf16(v);
  } else {
    return v;
  }
}

template <class T, class Idx>
void replay_moe_typed(Runtime& rt, const MoeReplayCase& c, const ReplayOptions& o) {
  const int me = rt.pe(), n = rt.n_pes();
  const int experts = n * c.experts_per_pe;
  const auto k = static_cast<std::size_t>(c.topk);
  const std::size_t h = c.hidden;
  ops::MoeBuffer buf(rt, moe_config(c, n));
  std::vector<T> x(c.tokens * h), y(c.tokens * h);
  std::vector<Idx> idx(c.tokens * k);
  std::vector<float> w(c.tokens * k);
  Routing mine;
  ops::MoeHandle handle;
  // The expert is the identity: combine reads the dispatched rows themselves, so the captured
  // graph is dispatch then combine, with no host step between them.
  auto call = [&](Stream& s) {
    handle = buf.dispatch(s, x.data(), c.tokens, idx.data(), w.data());
    buf.combine(s, handle, static_cast<const T*>(handle.expert_x), y.data());
  };
  auto write = [&](int r) {
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = from_float<T>(static_cast<float>(value(me, r, i)));
    mine = routing(c, experts, me, r);
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<Idx>(mine.idx[i]);
    w = mine.w;
    for (auto& v : y) v = from_float<T>(1000.0f);  // a stale y cannot pass
  };
  auto check = [&](int r) -> std::string {
    // y_t = x_t * (sum of the weights of the token's used slots): exact in f32 and bf16.
    for (std::size_t t = 0; t < c.tokens; ++t) {
      float scale = 0.0f;
      for (std::size_t j = 0; j < k; ++j) {
        if (mine.idx[t * k + j] >= 0) scale += mine.w[t * k + j];
      }
      for (std::size_t col = 0; col < h; ++col) {
        const float want = static_cast<float>(value(me, r, t * h + col)) * scale;
        const float got = device::to_float(y[t * h + col]);
        if (got != want) {
          return "y[" + std::to_string(t) + "][" + std::to_string(col) + "] is " +
                 std::to_string(got) + ", expected " + std::to_string(want);
        }
      }
    }
    // The dispatch side: tokens received and rows per local expert, from every PE's routing.
    std::vector<std::int64_t> counts(static_cast<std::size_t>(c.experts_per_pe), 0);
    std::int64_t received = 0;
    for (int p = 0; p < n; ++p) {
      const Routing theirs = routing(c, experts, p, r);
      for (std::size_t t = 0; t < c.tokens; ++t) {
        bool here = false;
        for (std::size_t j = 0; j < k; ++j) {
          const std::int64_t e = theirs.idx[t * k + j];
          if (e < 0 || e / c.experts_per_pe != me) continue;
          here = true;
          ++counts[static_cast<std::size_t>(e % c.experts_per_pe)];
        }
        received += here ? 1 : 0;
      }
    }
    if (handle.recv_tokens[0] != received) {
      return "received " + std::to_string(handle.recv_tokens[0]) + " tokens, expected " +
             std::to_string(received);
    }
    for (int le = 0; le < c.experts_per_pe; ++le) {
      if (handle.expert_counts[le] != counts[static_cast<std::size_t>(le)]) {
        return "local expert " + std::to_string(le) + " holds " +
               std::to_string(handle.expert_counts[le]) + " rows, expected " +
               std::to_string(counts[static_cast<std::size_t>(le)]);
      }
    }
    return "";
  };
  capture_and_replay(rt, call, write, check, o);
}

}  // namespace moe_detail

// MoE dispatch and combine captured together and replayed, the routing rewritten every replay.
inline void replay_moe(Runtime& rt, const MoeReplayCase& c, const ReplayOptions& o) {
  if (c.dtype == ops::MoeDtype::f32) {
    moe_detail::replay_moe_typed<float, std::int32_t>(rt, c, o);
  } else {
    moe_detail::replay_moe_typed<device::bf16, std::int64_t>(rt, c, o);
  }
}

// --- all_reduce_rmsnorm -------------------------------------------------------------------------

// One f32 all_reduce_rmsnorm of rows x hidden captured and replayed with `pattern`, x, residual
// and weight rewritten every replay; y is checked against a double reference.
inline void replay_all_reduce_rmsnorm(Runtime& rt, ops::OverlapPattern pattern,
                                      const ReplayOptions& o, std::size_t rows = 5,
                                      std::size_t hidden = 16) {
  const int me = rt.pe(), n = rt.n_pes();
  const float eps = 1e-5f;
  const Team team = team_world(rt);
  std::vector<float> x(rows * hidden), res(rows * hidden), weight(hidden), y(rows * hidden);
  auto call = [&](Stream& s) {
    ops::all_reduce_rmsnorm(rt, s, team, x.data(), res.data(), weight.data(), y.data(), rows,
                            hidden, ops::Dtype::f32, eps, pattern);
  };
  auto write = [&](int r) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(value(me, r, i));
      res[i] = static_cast<float>(value(me, r, 500000 + i));
    }
    for (std::size_t j = 0; j < hidden; ++j) {
      weight[j] = 0.5f * static_cast<float>(value(me, r, 900000 + j));
    }
    for (auto& v : y) v = 1000.0f;
  };
  auto check = [&](int r) -> std::string {
    for (std::size_t row = 0; row < rows; ++row) {
      std::vector<double> v(hidden);
      double sq = 0.0;
      for (std::size_t j = 0; j < hidden; ++j) {
        const std::size_t i = row * hidden + j;
        double sum = value(me, r, 500000 + i);
        for (int p = 0; p < n; ++p) sum += value(p, r, i);
        v[j] = sum;
        sq += sum * sum;
      }
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(hidden) + eps);
      for (std::size_t j = 0; j < hidden; ++j) {
        const double want = v[j] * inv * 0.5 * value(me, r, 900000 + j);
        const double got = y[row * hidden + j];
        if (std::fabs(got - want) > 1e-5 * (1.0 + std::fabs(want))) {
          return "y[" + std::to_string(row) + "][" + std::to_string(j) + "] is " +
                 std::to_string(got) + ", expected " + std::to_string(want);
        }
      }
    }
    return "";
  };
  capture_and_replay(rt, call, write, check, o);
}

// --- all_gather ---------------------------------------------------------------------------------

// One all_gather of `bytes` per PE with `algo` captured and replayed (with more than two PEs and
// up to kAllGatherStagedMax bytes, oneshot is the staged one-shot), the contribution rewritten
// every replay; every PE's slot of recv is checked.
inline void replay_all_gather(Runtime& rt, ops::AllGatherAlgo algo, std::size_t bytes,
                              const ReplayOptions& o) {
  const int me = rt.pe(), n = rt.n_pes();
  auto recv = rt.alloc<std::uint8_t>(static_cast<std::size_t>(n) * bytes);
  std::vector<std::uint8_t> send(bytes);
  auto byte = [](int pe, int r, std::size_t i) {
    return static_cast<std::uint8_t>(value(pe, r, i) + 8 + 17 * static_cast<int>(i % 13));
  };
  auto call = [&](Stream& s) { ops::all_gather(rt, s, send.data(), recv.get(), bytes, algo); };
  auto write = [&](int r) {
    for (std::size_t i = 0; i < bytes; ++i) send[i] = byte(me, r, i);
  };
  auto check = [&](int r) -> std::string {
    for (int p = 0; p < n; ++p) {
      const std::uint8_t* slot = recv.get() + static_cast<std::size_t>(p) * bytes;
      for (std::size_t i = 0; i < bytes; ++i) {
        if (slot[i] != byte(p, r, i)) {
          return "byte " + std::to_string(i) + " of PE " + std::to_string(p) + "'s slot is " +
                 std::to_string(slot[i]) + ", PE " + std::to_string(p) + " sent " +
                 std::to_string(byte(p, r, i));
        }
      }
    }
    return "";
  };
  capture_and_replay(rt, call, write, check, o);
}

}  // namespace tessera::graphs_test
