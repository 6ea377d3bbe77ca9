// tessera-bench moe: ops::MoeBuffer dispatch, combine and both, bf16, k = 8, E = 8 * P, random
// routing with a fixed seed, T in {128, 4096} tokens per PE, hidden in {1024, 7168}. PE 0's time
// per call (median; every PE calls, the op is collective).
//   limit: memcpy of the bytes PE 0 must receive (its tokens once per source token, and back in
//          combine one row per token and expert PE), one thread, private buffers;
//   peer:  MPI producing the op's results: permute the tokens by destination PE (once per PE,
//          with their routing there), MPI_Alltoall of counts, MPI_Alltoallv of the records, a
//          copy of each row into each of its local experts' rows; combine: the weighted fp32 sum
//          of each token's local expert rows, MPI_Alltoallv back, an fp32 sum per token.
// Extra fields: tokens, hidden, topk, experts, recv_gbps (received bytes / time). With --graph,
// dispatch + combine captured once and replayed: row "dispatch_combine/graph" with ordinary_us
// (the dispatch_combine row's time) and replay_speedup (ordinary / replay).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mpi_peer.hpp"
#include "registry.hpp"
#include "split.hpp"
#include "tessera/ops/moe.hpp"
#include "timing.hpp"

namespace tessera::bench {
namespace {

namespace td = tessera::device;

constexpr int kTopk = 8;
constexpr int kExpertsPerPe = 8;
// Largest relative difference allowed between the peer's y and the op's: a few bf16 roundings
// (2^-8 each) of sums of up to P partials.
constexpr double kPeerTolerance = 1.0 / 32;

// PE `pe`'s routing: kTopk distinct experts per token, weights in [0.05, 1).
void make_routing(int pe, std::size_t tokens, int experts, std::vector<std::int32_t>& idx,
                  std::vector<float>& weight) {
  std::mt19937 rng(1234u + static_cast<unsigned>(pe) * 7919u);
  std::uniform_real_distribution<float> w(0.05f, 1.0f);
  idx.resize(tokens * kTopk);
  weight.resize(tokens * kTopk);
  std::vector<std::int32_t> perm(static_cast<std::size_t>(experts));
  for (std::size_t t = 0; t < tokens; ++t) {
    for (int e = 0; e < experts; ++e) perm[static_cast<std::size_t>(e)] = e;
    for (int j = 0; j < kTopk; ++j) {  // partial Fisher-Yates: the first kTopk are distinct
      std::uniform_int_distribution<int> pick(j, experts - 1);
      std::swap(perm[static_cast<std::size_t>(j)], perm[static_cast<std::size_t>(pick(rng))]);
      idx[t * kTopk + static_cast<std::size_t>(j)] = perm[static_cast<std::size_t>(j)];
      weight[t * kTopk + static_cast<std::size_t>(j)] = w(rng);
    }
  }
}

// For every destination PE, the tokens of this routing that go there (once per PE).
std::vector<std::vector<int>> tokens_per_pe(const std::vector<std::int32_t>& idx,
                                            std::size_t tokens, int n_pes) {
  std::vector<std::vector<int>> rows(static_cast<std::size_t>(n_pes));
  std::vector<char> seen(static_cast<std::size_t>(n_pes));
  for (std::size_t t = 0; t < tokens; ++t) {
    std::fill(seen.begin(), seen.end(), 0);
    for (int j = 0; j < kTopk; ++j) {
      const int q = idx[t * kTopk + static_cast<std::size_t>(j)] / kExpertsPerPe;
      if (seen[static_cast<std::size_t>(q)]) continue;
      seen[static_cast<std::size_t>(q)] = 1;
      rows[static_cast<std::size_t>(q)].push_back(static_cast<int>(t));
    }
  }
  return rows;
}

std::vector<double> memcpy_times(std::size_t bytes, int rounds) {
  std::vector<unsigned char> src(std::max<std::size_t>(bytes, 1), 7), dst(src.size(), 1);
  std::vector<double> times;
  for (int r = 0; r < rounds; ++r) {
    const double t0 = now_us();
    std::memcpy(dst.data(), src.data(), bytes);
    times.push_back(now_us() - t0);
  }
  return times;
}

}  // namespace

void run_moe(BenchEnv& env) {
  Runtime& rt = env.rt;
  const int n = rt.n_pes(), me = rt.pe();
  const int experts = kExpertsPerPe * n;
  const std::vector<std::size_t> token_counts =
      env.options.sizes.empty() ? std::vector<std::size_t>{128, 4096} : env.options.sizes;
  const std::string peer_reason = peer::unavailable_reason(me, n);
  if (env.report) {
    env.report->note("moe: bf16, k = 8, E = 8 * P = " + std::to_string(experts) +
                     ", random routing (fixed seed); PE 0's median time per call; --sizes sets "
                     "tokens per PE");
    env.report->note(
        "limit = memcpy of the bytes PE 0 receives (dispatch: its tokens once per "
        "source token; combine: one partial per token and expert PE)");
    env.report->note(
        "peer  = MPI: permute by destination PE, MPI_Alltoall of counts, MPI_Alltoallv of "
        "rows + routing, rows copied into expert rows; combine: weighted fp32 sum over local "
        "experts, MPI_Alltoallv back + fp32 sum" +
        (peer_reason.empty() ? std::string() : " -- " + peer_reason));
  }
  for (const std::size_t hidden : {std::size_t{1024}, std::size_t{7168}}) {
    for (const std::size_t tokens : token_counts) {
      const std::size_t work = tokens * hidden;
      int iters = env.options.iters > 0 ? env.options.iters
                                        : (work >= (std::size_t{1} << 24)   ? 3
                                           : work >= (std::size_t{1} << 21) ? 10
                                                                            : 50);
      const int warmup = std::min(2, warmup_iters(iters));
      const std::size_t row_bytes = hidden * sizeof(td::bf16);

      // Every PE's routing, so every PE knows the expert rows each PE will hold.
      std::vector<std::int32_t> idx, scratch_idx;
      std::vector<float> weight, scratch_w;
      std::size_t max_rows = 0, recv_pe0 = 0, back_pe0 = 0;
      std::vector<std::size_t> rows_on(static_cast<std::size_t>(n)), recv_on(rows_on.size());
      for (int p = 0; p < n; ++p) {
        make_routing(p, tokens, experts, scratch_idx, scratch_w);
        for (int e : scratch_idx) rows_on[static_cast<std::size_t>(e / kExpertsPerPe)] += 1;
        const auto per_pe = tokens_per_pe(scratch_idx, tokens, n);
        for (int q = 0; q < n; ++q)
          recv_on[static_cast<std::size_t>(q)] += per_pe[static_cast<std::size_t>(q)].size();
        if (p == 0) {
          for (const auto& r : per_pe) back_pe0 += r.size();
        }
        if (p == me) {
          idx = scratch_idx;
          weight = scratch_w;
        }
      }
      for (std::size_t r : rows_on) max_rows = std::max(max_rows, r);
      recv_pe0 = recv_on[0];

      ops::MoeConfig cfg;
      cfg.max_tokens_per_pe = tokens;
      cfg.hidden = hidden;
      cfg.topk = kTopk;
      cfg.num_experts = experts;
      cfg.dtype = ops::MoeDtype::bf16;
      cfg.expert_capacity = max_rows;  // exactly what this routing needs: keeps the heap small
      ops::MoeBuffer moe(rt, cfg);
      std::vector<td::bf16> x(tokens * hidden), y(tokens * hidden);
      for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = td::bf16{
            static_cast<std::uint16_t>(0x3c00u + (i * 131 + static_cast<std::size_t>(me)) % 512)};
      }
      env.idle.arrive_and_wait();

      const std::size_t bytes_dispatch = recv_pe0 * row_bytes;
      const std::size_t bytes_combine = back_pe0 * row_bytes;
      std::vector<double> t_dispatch, t_combine, t_both;
      // The time split of the timed calls (split.hpp), in the variants' order.
      SplitTally split_of[3];
      ops::MoeHandle handle;
      for (int i = 0; i < warmup + iters; ++i) {
        const bool timed = i >= warmup;
        env.idle.arrive_and_wait();
        split_of[0].begin();
        double t0 = now_us();
        handle = moe.dispatch(env.stream, x.data(), tokens, idx.data(), weight.data());
        env.stream.synchronize();
        const double t_disp = now_us() - t0;
        if (timed) split_of[0].end(t_disp);
        const auto* expert_out = static_cast<const td::bf16*>(handle.expert_x);
        env.idle.arrive_and_wait();
        split_of[1].begin();
        t0 = now_us();
        moe.combine(env.stream, handle, expert_out, y.data());
        env.stream.synchronize();
        const double t_comb = now_us() - t0;
        if (timed) split_of[1].end(t_comb);
        env.idle.arrive_and_wait();
        split_of[2].begin();
        t0 = now_us();
        handle = moe.dispatch(env.stream, x.data(), tokens, idx.data(), weight.data());
        moe.combine(env.stream, handle, static_cast<const td::bf16*>(handle.expert_x), y.data());
        env.stream.synchronize();
        const double t_pair = now_us() - t0;
        if (timed) {
          split_of[2].end(t_pair);
          t_dispatch.push_back(t_disp);
          t_combine.push_back(t_comb);
          t_both.push_back(t_pair);
        }
      }
      env.idle.arrive_and_wait();

      std::vector<double> l_dispatch, l_combine, l_both;
      if (me == 0) {
        l_dispatch = memcpy_times(bytes_dispatch, warmup + iters);
        l_combine = memcpy_times(bytes_combine, warmup + iters);
        l_both = memcpy_times(bytes_dispatch + bytes_combine, warmup + iters);
      }
      env.idle.arrive_and_wait();

      // --graph: dispatch + combine captured once (the calls above made their first calls) and
      // the replay timed like the pair above.
      std::vector<double> t_graph;
      if (env.options.graph) {
        env.stream.begin_capture();
        try {
          handle = moe.dispatch(env.stream, x.data(), tokens, idx.data(), weight.data());
          moe.combine(env.stream, handle, static_cast<const td::bf16*>(handle.expert_x), y.data());
        } catch (...) {
          (void)env.stream.end_capture();
          throw;
        }
        Graph graph = env.stream.end_capture();
        for (int i = 0; i < warmup + iters; ++i) {
          env.idle.arrive_and_wait();
          const double t0 = now_us();
          graph.launch(env.stream);
          env.stream.synchronize();
          if (i >= warmup) t_graph.push_back(now_us() - t0);
        }
        env.idle.arrive_and_wait();
      }

      const auto per_pe = tokens_per_pe(idx, tokens, n);
      const peer::MoePeerTimes peer_times =
          peer::moe(me, n, x.data(), per_pe, {idx.data(), weight.data(), kTopk, kExpertsPerPe},
                    tokens, row_bytes, warmup, iters);

      // The peer must compute what the op computes: y within bf16 rounding of the op's (the op
      // sums a PE's own experts without rounding their partial to bf16 first).
      double max_rel_diff = 0;
      if (peer_times.y.size() == y.size()) {
        for (std::size_t i = 0; i < y.size(); ++i) {
          const double a = static_cast<double>(td::to_float(y[i]));
          const double b = static_cast<double>(td::to_float(td::bf16{peer_times.y[i]}));
          const double scale = std::max(std::abs(a), std::abs(b));
          if (scale > 0) max_rel_diff = std::max(max_rel_diff, std::abs(a - b) / scale);
        }
        if (max_rel_diff > kPeerTolerance) {
          std::fprintf(stderr,
                       "tessera-bench moe: PE %d: the MPI peer's y differs from the op's by %.4g "
                       "(relative) at T=%zu H=%zu: the peer is not doing the op's work\n",
                       me, max_rel_diff, tokens, hidden);
        }
      }

      if (env.report) {
        auto drop = [&](std::vector<double> v) {
          if (static_cast<int>(v.size()) > iters) v.erase(v.begin(), v.begin() + warmup);
          return median(v);
        };
        struct Variant {
          const char* name;
          const std::vector<double>& times;
          const std::vector<double>& limit;
          const peer::PeerTimes& peer;
          std::size_t bytes;
          const SplitTally& split;
        };
        const Variant variants[] = {
            {"dispatch", t_dispatch, l_dispatch, peer_times.dispatch, bytes_dispatch, split_of[0]},
            {"combine", t_combine, l_combine, peer_times.combine, bytes_combine, split_of[1]},
            {"dispatch_combine", t_both, l_both, peer_times.both, bytes_dispatch + bytes_combine,
             split_of[2]},
        };
        for (const Variant& v : variants) {
          Row row;
          row.bench = "moe";
          row.variant = v.name;
          row.pes = n;
          row.bytes = v.bytes;
          row.iters = iters;
          row.time_us = median(v.times);
          row.limit_time_us = drop(v.limit);
          if (!v.peer.us.empty()) row.peer_time_us = median(v.peer.us);
          row.peer_note = v.peer.unavailable;
          row.extra.push_back({"tokens", static_cast<std::int64_t>(tokens)});
          row.extra.push_back({"hidden", static_cast<std::int64_t>(hidden)});
          row.extra.push_back({"topk", std::int64_t{kTopk}});
          row.extra.push_back({"experts", std::int64_t{experts}});
          row.extra.push_back({"recv_gbps", static_cast<double>(v.bytes) / (row.time_us * 1e3)});
          if (!peer_times.y.empty()) row.extra.push_back({"peer_max_rel_diff", max_rel_diff});
          v.split.add_fields(row.extra);
          env.report->add(row);
        }
        if (!t_graph.empty()) {
          Row row;
          row.bench = "moe";
          row.variant = "dispatch_combine/graph";
          row.pes = n;
          row.bytes = bytes_dispatch + bytes_combine;
          row.iters = iters;
          row.time_us = median(t_graph);
          row.limit_time_us = drop(l_both);
          if (!peer_times.both.us.empty()) row.peer_time_us = median(peer_times.both.us);
          row.peer_note = peer_times.both.unavailable;
          row.extra.push_back({"tokens", static_cast<std::int64_t>(tokens)});
          row.extra.push_back({"hidden", static_cast<std::int64_t>(hidden)});
          row.extra.push_back({"topk", std::int64_t{kTopk}});
          row.extra.push_back({"experts", std::int64_t{experts}});
          row.extra.push_back({"recv_gbps", static_cast<double>(row.bytes) / (row.time_us * 1e3)});
          row.extra.push_back({"ordinary_us", median(t_both)});
          if (row.time_us > 0)
            row.extra.push_back({"replay_speedup", median(t_both) / row.time_us});
          env.report->add(row);
        }
      }
      env.idle.arrive_and_wait();
    }
  }
}

}  // namespace tessera::bench
