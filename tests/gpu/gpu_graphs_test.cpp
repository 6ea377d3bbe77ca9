// Capture and replay (issue 34) on the cuda backend, on real PEs (processes sharing the GPU):
// each op is called once, one call is captured on the runtime's stream into a CUDA graph, and
// the graph is replayed TESSERA_GRAPH_REPLAYS times (default 1000). Before each replay the inputs
// are rewritten in device memory (Runtime::put from the host, outside the graph); after it every
// element of the result is copied back (Runtime::get) and checked. The harness is the host
// backend's (tests/graphs/replay.hpp); the buffers here are symmetric heap blocks, which are
// device memory on this backend. The user-kernel case is in gpu_graphs_kernel.cu (nvcc); this
// file is host code, the ops' kernels coming from libtessera.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "../graphs/collectives_cases.hpp"
#include "../graphs/fused_cases.hpp"
#include "gpu_graphs_env.hpp"
#include "gpu_test_env.hpp"
#include "tessera/ops/all_gather.hpp"

namespace tessera::gpu_test {
namespace {

using graphs_test::capture_and_replay;
using graphs_test::first_difference;
using graphs_test::value;

TEST(CudaGraphs, AllReduceEveryAlgorithmReplaysWithFreshInputs) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const Team team = team_world(rt);
  const auto opts = replay_options();
  constexpr std::size_t kCount = 1000;
  for (const auto algo : {ops::AllReduceAlgo::one_shot, ops::AllReduceAlgo::two_shot,
                          ops::AllReduceAlgo::ring, ops::AllReduceAlgo::atomic}) {
    SCOPED_TRACE(ops::to_string(algo));
    DeviceArray<float> send(rt, kCount), recv(rt, kCount);
    const std::size_t nodes = capture_and_replay(
        rt,
        [&](Stream& s) {
          ops::all_reduce(rt, s, team, send.get(), recv.get(), kCount, ops::Dtype::f32,
                          ops::ReduceOp::sum, algo);
        },
        [&](int r) {
          for (std::size_t i = 0; i < kCount; ++i) {
            send.host[i] = static_cast<float>(value(rt.pe(), r, i));
          }
          send.upload();
        },
        [&](int r) {
          return first_difference("all_reduce", recv.download(), kCount, [&](std::size_t i) {
            int sum = 0;
            for (int p = 0; p < rt.n_pes(); ++p) sum += value(p, r, i);
            return sum;
          });
        },
        opts);
    EXPECT_GT(nodes, 0u) << "the capture recorded nothing";
    rt.barrier();  // every PE done with the buffers before they are freed
  }
}

// One PE starts each replay late, so the others run ahead into the op's waits: each replay must
// still wait for that replay's data (the epochs are counted on the device).
TEST(CudaGraphs, AllReduceReplaysWithOnePeDelayed) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const Team team = team_world(rt);
  graphs_test::ReplayOptions opts = replay_options();
  opts.replays = std::min(opts.replays, 100);
  opts.delayed_pe = rt.n_pes() - 1;
  opts.delay = std::chrono::microseconds(500);
  constexpr std::size_t kCount = 4096;
  for (const auto algo : {ops::AllReduceAlgo::one_shot, ops::AllReduceAlgo::ring}) {
    SCOPED_TRACE(ops::to_string(algo));
    DeviceArray<float> send(rt, kCount), recv(rt, kCount);
    capture_and_replay(
        rt,
        [&](Stream& s) {
          ops::all_reduce(rt, s, team, send.get(), recv.get(), kCount, ops::Dtype::f32,
                          ops::ReduceOp::sum, algo);
        },
        [&](int r) {
          for (std::size_t i = 0; i < kCount; ++i) {
            send.host[i] = static_cast<float>(value(rt.pe(), r, i));
          }
          send.upload();
        },
        [&](int r) {
          return first_difference("all_reduce", recv.download(), kCount, [&](std::size_t i) {
            int sum = 0;
            for (int p = 0; p < rt.n_pes(); ++p) sum += value(p, r, i);
            return sum;
          });
        },
        opts);
    rt.barrier();
  }
}

TEST(CudaGraphs, ReduceScatterBothAlgorithmsReplayWithFreshInputs) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const Team team = team_world(rt);
  const auto opts = replay_options();
  constexpr std::size_t kCount = 300;
  const auto m = static_cast<std::size_t>(team.size);
  const auto rank = static_cast<std::size_t>(team.my_rank);
  for (const auto algo : {ops::ReduceScatterAlgo::one_shot, ops::ReduceScatterAlgo::ring}) {
    SCOPED_TRACE(ops::to_string(algo));
    DeviceArray<float> send(rt, m * kCount), recv(rt, kCount);
    const std::size_t nodes = capture_and_replay(
        rt,
        [&](Stream& s) {
          ops::reduce_scatter(rt, s, team, send.get(), recv.get(), kCount, ops::Dtype::f32,
                              ops::ReduceOp::sum, algo);
        },
        [&](int r) {
          for (std::size_t i = 0; i < send.host.size(); ++i) {
            send.host[i] = static_cast<float>(value(rt.pe(), r, i));
          }
          send.upload();
        },
        [&](int r) {
          return first_difference("reduce_scatter", recv.download(), kCount, [&](std::size_t i) {
            int sum = 0;
            for (int j = 0; j < team.size; ++j) sum += value(team.pe(j), r, rank * kCount + i);
            return sum;
          });
        },
        opts);
    EXPECT_GT(nodes, 0u) << "the capture recorded nothing";
    rt.barrier();  // every PE done with the buffers before they are freed
  }
}

TEST(CudaGraphs, AllToAllReplaysWithFreshInputs) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const Team team = team_world(rt);
  constexpr std::size_t kCount = 200;
  const auto m = static_cast<std::size_t>(team.size);
  const auto rank = static_cast<std::size_t>(team.my_rank);
  DeviceArray<std::int32_t> send(rt, m * kCount), recv(rt, m * kCount);
  const std::size_t nodes = capture_and_replay(
      rt,
      [&](Stream& s) {
        ops::all_to_all(rt, s, team, send.get(), recv.get(), kCount, ops::Dtype::i32);
      },
      [&](int r) {
        for (std::size_t i = 0; i < send.host.size(); ++i) send.host[i] = value(rt.pe(), r, i);
        send.upload();
      },
      [&](int r) {
        return first_difference("all_to_all", recv.download(), m * kCount, [&](std::size_t i) {
          return value(team.pe(static_cast<int>(i / kCount)), r, rank * kCount + i % kCount);
        });
      },
      replay_options());
  EXPECT_GT(nodes, 0u) << "the capture recorded nothing";
  rt.barrier();
}

// The counts change every replay; send_counts is read, recv_counts and recv_offsets written, on
// the stream, so all three are device memory here too.
TEST(CudaGraphs, AllToAllVReplaysWithCountsChangingEveryReplay) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const Team team = team_world(rt);
  using graphs_test::block_count;
  using graphs_test::kMaxBlock;
  const auto m = static_cast<std::size_t>(team.size);
  const auto me = static_cast<std::size_t>(team.my_rank);
  DeviceArray<std::int32_t> send(rt, m * kMaxBlock), recv(rt, m * kMaxBlock);
  DeviceArray<std::size_t> send_counts(rt, m), recv_counts(rt, m), recv_offsets(rt, m);
  const std::size_t nodes = capture_and_replay(
      rt,
      [&](Stream& s) {
        ops::all_to_all_v(rt, s, team, send.get(), send_counts.get(), recv.get(), m * kMaxBlock,
                          recv_counts.get(), recv_offsets.get(), ops::Dtype::i32);
      },
      [&](int r) {
        std::size_t at = 0;
        for (std::size_t d = 0; d < m; ++d) {
          send_counts.host[d] = block_count(rt.pe(), d, r);
          for (std::size_t i = 0; i < send_counts.host[d]; ++i) {
            send.host[at++] = value(rt.pe(), r, d * 100 + i);
          }
        }
        send.upload();
        send_counts.upload();
      },
      [&](int r) -> std::string {
        const std::size_t* counts = recv_counts.download();
        const std::size_t* offsets = recv_offsets.download();
        const std::int32_t* got = recv.download();
        for (std::size_t s = 0; s < m; ++s) {
          const int from = team.pe(static_cast<int>(s));
          const std::size_t want = block_count(from, me, r);
          if (counts[s] != want) {
            return "all_to_all_v: recv_counts[" + std::to_string(s) + "] is " +
                   std::to_string(counts[s]) + ", expected " + std::to_string(want);
          }
          if (offsets[s] + want > m * kMaxBlock) {
            return "all_to_all_v: recv_offsets[" + std::to_string(s) + "] is " +
                   std::to_string(offsets[s]) + ", past the buffer";
          }
          std::string wrong =
              first_difference("all_to_all_v", got + offsets[s], want,
                               [&](std::size_t i) { return value(from, r, me * 100 + i); });
          if (!wrong.empty()) return wrong + " (block from rank " + std::to_string(s) + ")";
        }
        return "";
      },
      replay_options());
  EXPECT_GT(nodes, 0u) << "the capture recorded nothing";
  rt.barrier();
}

TEST(CudaGraphs, BroadcastReplaysWithFreshInputs) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const Team team = team_world(rt);
  constexpr std::size_t kCount = 1000;
  const int root = 1;
  DeviceArray<float> send(rt, kCount), recv(rt, kCount);
  const std::size_t nodes = capture_and_replay(
      rt,
      [&](Stream& s) {
        ops::broadcast(rt, s, team, send.get(), recv.get(), kCount, ops::Dtype::f32, root);
      },
      [&](int r) {
        for (std::size_t i = 0; i < kCount; ++i) {
          send.host[i] = static_cast<float>(value(rt.pe(), r, i));
        }
        send.upload();
      },
      [&](int r) {
        return first_difference("broadcast", recv.download(), kCount,
                                [&](std::size_t i) { return value(team.pe(root), r, i); });
      },
      replay_options());
  EXPECT_GT(nodes, 0u) << "the capture recorded nothing";
  rt.barrier();
}

// Both algorithms; with more than two PEs the small contribution takes the staged one-shot, the
// large one the direct one-shot.
TEST(CudaGraphs, AllGatherBothAlgorithmsReplayWithFreshInputs) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const auto opts = replay_options();
  const auto n = static_cast<std::size_t>(rt.n_pes());
  for (const std::size_t count : {std::size_t{1000}, std::size_t{32} << 10}) {
    for (const auto algo : {ops::AllGatherAlgo::oneshot, ops::AllGatherAlgo::ring}) {
      SCOPED_TRACE(std::string(ops::to_string(algo)) + ", " + std::to_string(count * 4) +
                   " bytes per PE");
      DeviceArray<std::int32_t> send(rt, count), recv(rt, n * count);
      const std::size_t nodes = capture_and_replay(
          rt,
          [&](Stream& s) {
            ops::all_gather(rt, s, send.get(), recv.get(), count * sizeof(std::int32_t), algo);
          },
          [&](int r) {
            for (std::size_t i = 0; i < count; ++i) send.host[i] = value(rt.pe(), r, i);
            send.upload();
          },
          [&](int r) {
            return first_difference("all_gather", recv.download(), n * count, [&](std::size_t i) {
              return value(static_cast<int>(i / count), r, i % count);
            });
          },
          opts);
      EXPECT_GT(nodes, 0u) << "the capture recorded nothing";
      rt.barrier();
    }
  }
}

// Three different collectives captured into one graph, each with its own inputs and result.
TEST(CudaGraphs, ThreeCollectivesInOneGraphReplay) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const Team team = team_world(rt);
  constexpr std::size_t kCount = 256;
  const auto m = static_cast<std::size_t>(team.size);
  const auto me = static_cast<std::size_t>(rt.pe());
  const int root = rt.n_pes() - 1;
  DeviceArray<float> a(rt, kCount), b(rt, m * kCount), c(rt, kCount);
  DeviceArray<float> a_out(rt, kCount), b_out(rt, kCount), c_out(rt, kCount);
  const std::size_t nodes = capture_and_replay(
      rt,
      [&](Stream& s) {
        ops::all_reduce(rt, s, team, a.get(), a_out.get(), kCount, ops::Dtype::f32,
                        ops::ReduceOp::sum);
        ops::reduce_scatter(rt, s, team, b.get(), b_out.get(), kCount, ops::Dtype::f32,
                            ops::ReduceOp::max);
        ops::broadcast(rt, s, team, c.get(), c_out.get(), kCount, ops::Dtype::f32, root);
      },
      [&](int r) {
        for (std::size_t i = 0; i < kCount; ++i) {
          a.host[i] = static_cast<float>(value(rt.pe(), r, i));
          c.host[i] = static_cast<float>(value(rt.pe(), r, i + 7));
        }
        for (std::size_t i = 0; i < b.host.size(); ++i) {
          b.host[i] = static_cast<float>(value(rt.pe(), r, i + 3));
        }
        a.upload();
        b.upload();
        c.upload();
      },
      [&](int r) {
        std::string wrong = first_difference("all_reduce", a_out.download(), kCount, [&](auto i) {
          int sum = 0;
          for (int p = 0; p < rt.n_pes(); ++p) sum += value(p, r, i);
          return sum;
        });
        if (wrong.empty()) {
          wrong = first_difference("reduce_scatter", b_out.download(), kCount, [&](auto i) {
            int most = -100;
            for (int p = 0; p < rt.n_pes(); ++p) {
              most = std::max(most, value(p, r, me * kCount + i + 3));
            }
            return most;
          });
        }
        if (wrong.empty()) {
          wrong = first_difference("broadcast", c_out.download(), kCount,
                                   [&](auto i) { return value(root, r, i + 7); });
        }
        return wrong;
      },
      replay_options());
  EXPECT_GE(nodes, 3u) << "three ops captured into fewer than three graph nodes";
  rt.barrier();
}

// The fused GEMM ops with their default options (the pattern each picks), fp32, small integer
// inputs (exact), every element of C checked after each replay; C is overwritten with a filler
// before each replay, so a replay that writes nothing cannot pass on the last one's result.
namespace fd = graphs_test::fused_detail;

TEST(CudaGraphs, AgGemmReplaysWithFreshInputs) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m_local = 24, n_local = 40, k = 36;
  const std::size_t m = m_local * static_cast<std::size_t>(n_pes);
  ops::AgGemm op(rt, m, n_local, k, ops::GemmDtype::f32);
  DeviceArray<float> a(rt, m_local * k), b(rt, k * n_local), c(rt, m * n_local);
  const std::size_t nodes = capture_and_replay(
      rt, [&](Stream& s) { op.run(s, a.get(), b.get(), c.get()); },
      [&](int r) {
        fd::fill(a.host, me, r, 0);
        fd::fill(b.host, me, r, 1);
        std::fill(c.host.begin(), c.host.end(), fd::kUnwritten);
        a.upload();
        b.upload();
        c.upload();
      },
      [&](int r) {
        std::vector<float> scratch(m_local * k), scratch_b(k * n_local);
        std::vector<float> a_ref, shard_ref, b_ref;
        for (int q = 0; q < n_pes; ++q) {
          fd::fill(scratch, q, r, 0, &shard_ref);
          a_ref.insert(a_ref.end(), shard_ref.begin(), shard_ref.end());
        }
        fd::fill(scratch_b, me, r, 1, &b_ref);
        std::vector<double> want(m * n_local, 0.0);
        fd::gemm_add(want.data(), n_local, a_ref.data(), k, b_ref.data(), n_local, m, n_local, k);
        c.download();
        return fd::compare(c.host, want, n_local);
      },
      replay_options());
  EXPECT_GT(nodes, 0u) << "the capture recorded nothing";
  rt.barrier();
}

TEST(CudaGraphs, GemmRsReplaysWithFreshInputs) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m_local = 16, n = 48, k = 20;
  const std::size_t m = m_local * static_cast<std::size_t>(n_pes);
  ops::GemmRs op(rt, m, n, k, ops::GemmDtype::f32);
  DeviceArray<float> a(rt, m * k), b(rt, k * n), c(rt, m_local * n);
  const std::size_t nodes = capture_and_replay(
      rt, [&](Stream& s) { op.run(s, a.get(), b.get(), c.get()); },
      [&](int r) {
        fd::fill(a.host, me, r, 2);
        fd::fill(b.host, me, r, 3);
        std::fill(c.host.begin(), c.host.end(), fd::kUnwritten);
        a.upload();
        b.upload();
        c.upload();
      },
      [&](int r) {
        std::vector<float> scratch_a(m * k), scratch_b(k * n), a_ref, b_ref;
        std::vector<double> want(m_local * n, 0.0);
        for (int p = 0; p < n_pes; ++p) {
          fd::fill(scratch_a, p, r, 2, &a_ref);
          fd::fill(scratch_b, p, r, 3, &b_ref);
          fd::gemm_add(want.data(), n, a_ref.data() + static_cast<std::size_t>(me) * m_local * k, k,
                       b_ref.data(), n, m_local, n, k);
        }
        c.download();
        return fd::compare(c.host, want, n);
      },
      replay_options());
  EXPECT_GT(nodes, 0u) << "the capture recorded nothing";
  rt.barrier();
}

TEST(CudaGraphs, GemmArReplaysWithFreshInputs) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m = 30, n = 36, k = 20;  // shards of ceil(m / n_pes) rows, the last short
  ops::GemmAr op(rt, m, n, k, ops::GemmDtype::f32);
  DeviceArray<float> a(rt, m * k), b(rt, k * n), c(rt, m * n);
  const std::size_t nodes = capture_and_replay(
      rt, [&](Stream& s) { op.run(s, a.get(), b.get(), c.get()); },
      [&](int r) {
        fd::fill(a.host, me, r, 0);
        fd::fill(b.host, me, r, 2);
        std::fill(c.host.begin(), c.host.end(), fd::kUnwritten);
        a.upload();
        b.upload();
        c.upload();
      },
      [&](int r) {
        std::vector<float> scratch_a(m * k), scratch_b(k * n), a_ref, b_ref;
        std::vector<double> want(m * n, 0.0);
        for (int p = 0; p < n_pes; ++p) {
          fd::fill(scratch_a, p, r, 0, &a_ref);
          fd::fill(scratch_b, p, r, 2, &b_ref);
          fd::gemm_add(want.data(), n, a_ref.data(), k, b_ref.data(), n, m, n, k);
        }
        c.download();
        return fd::compare(c.host, want, n);
      },
      replay_options());
  EXPECT_GT(nodes, 0u) << "the capture recorded nothing";
  rt.barrier();
}

TEST(CudaGraphs, GemmAsReplaysWithFreshInputs) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const int me = rt.pe(), n_pes = rt.n_pes();
  const std::size_t m = 24, n_local = 20, k = 16;
  const std::size_t n = n_local * static_cast<std::size_t>(n_pes);
  ops::GemmAs op(rt, m, n_local, k, ops::GemmDtype::f32);
  DeviceArray<float> a(rt, m * k), b(rt, k * n_local), c(rt, m * n);
  const std::size_t nodes = capture_and_replay(
      rt, [&](Stream& s) { op.run(s, a.get(), b.get(), c.get()); },
      [&](int r) {
        fd::fill(a.host, me, r, 1);
        fd::fill(b.host, me, r, 3);
        std::fill(c.host.begin(), c.host.end(), fd::kUnwritten);
        a.upload();
        b.upload();
        c.upload();
      },
      [&](int r) {
        std::vector<float> scratch_a(m * k), scratch_b(k * n_local), a_ref, b_ref;
        std::vector<double> want(m * n, 0.0);
        for (int p = 0; p < n_pes; ++p) {
          fd::fill(scratch_a, p, r, 1, &a_ref);
          fd::fill(scratch_b, p, r, 3, &b_ref);
          fd::gemm_add(want.data() + static_cast<std::size_t>(p) * n_local, n, a_ref.data(), k,
                       b_ref.data(), n_local, m, n_local, k);
        }
        c.download();
        return fd::compare(c.host, want, n);
      },
      replay_options());
  EXPECT_GT(nodes, 0u) << "the capture recorded nothing";
  rt.barrier();
}

}  // namespace
}  // namespace tessera::gpu_test
