// tessera-bench put: PE 0 puts a contiguous tile into PE 1's symmetric buffer from a kernel of
// `grid` blocks, each block putting its 64-byte-aligned slice, then quiet. Each iteration is timed
// separately inside one kernel (a grid barrier before and after the put), so the time is the
// put's own, without the launch.
//   limit: host backend: memcpy of the same bytes by `grid` plain threads in PE 0's process, each
//          copying its slice between two private, warmed-up buffers, timed the same way;
//          GPU backend: cudaMemcpy device-to-device of the same bytes between two private
//          buffers, timed with CUDA events;
//   peer:  MPI_Put + MPI_Win_flush into PE 1's part of an MPI shared-memory window.
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu_limit.hpp"
#include "grid_barrier.hpp"
#include "mpi_peer.hpp"
#include "proxy_pair.hpp"
#include "registry.hpp"
#include "runtime/raw_write_times.hpp"
#include "tessera/device/device.hpp"
#include "tessera/launch.hpp"
#include "timing.hpp"

namespace tessera::bench {
namespace {

namespace td = tessera::device;

constexpr int kDefaultIters = 100;

std::vector<std::size_t> default_sizes() {
  std::vector<std::size_t> sizes = {8, 64, 512};
  for (std::size_t s = 4096; s <= (std::size_t{64} << 20); s *= 4) sizes.push_back(s);
  return sizes;  // 8 B ... 64 MiB
}

struct Slice {
  std::size_t begin, length;
};

// The slice [begin, begin + length) of `bytes` that party `rank` of `parties` copies: equal
// chunks rounded up to 64 bytes, so no two parties write one cache line.
TESSERA_HOST_DEVICE inline Slice slice(std::size_t bytes, int rank, int parties) {
  const auto n = static_cast<std::size_t>(parties);
  const std::size_t chunk = ((bytes + n - 1) / n + 63) / 64 * 64;
  const std::size_t begin = static_cast<std::size_t>(rank) * chunk;
  if (begin >= bytes) return {bytes, 0};
  return {begin, chunk < bytes - begin ? chunk : bytes - begin};
}

// Runs on PE 0: `rounds` puts of `dst` (a symmetric address: the object on PE `pe`), block 0
// recording each put's time in times_us[round]. `barrier_word` and `times_us` are memory the
// kernel can reach (device memory on a GPU).
struct PutKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Tile<std::uint8_t> dst,
                                      td::Tile<const std::uint8_t> src, int pe, int rounds,
                                      std::uint64_t* barrier_word, double* times_us) const {
    const auto [begin, length] = slice(dst.cols, blk.block_id(), blk.grid_size());
    const td::Tile<std::uint8_t> my_dst = dst.sub(0, begin, 1, length);
    const td::Tile<const std::uint8_t> my_src = src.sub(0, begin, 1, length);
    GridBarrier barrier(barrier_word, blk.grid_size());
    for (int r = 0; r < rounds; ++r) {
      barrier.arrive_and_wait(blk);
      const double t0 = now_us();
      if (length != 0) td::put(blk, ctx, my_dst, my_src, pe);
      td::quiet(blk, ctx);
      barrier.arrive_and_wait(blk);
      if (blk.block_id() == 0 && blk.rank() == 0) times_us[r] = now_us() - t0;
    }
  }
};

// The limit: `threads` plain threads copying their slices of `bytes` from src to dst, timed
// exactly as PutKernel times the put.
std::vector<double> memcpy_times(std::size_t bytes, int threads, int rounds,
                                 std::vector<std::uint8_t>& dst,
                                 const std::vector<std::uint8_t>& src) {
  std::vector<double> times(static_cast<std::size_t>(rounds));
  alignas(64) std::uint64_t barrier_word = 0;
  auto body = [&](int rank) {
    const auto [begin, length] = slice(bytes, rank, threads);
    GridBarrier barrier(&barrier_word, threads);
    for (int r = 0; r < rounds; ++r) {
      barrier.arrive_and_wait();
      const double t0 = now_us();
      if (length != 0) std::memcpy(dst.data() + begin, src.data() + begin, length);
      barrier.arrive_and_wait();
      if (rank == 0) times[static_cast<std::size_t>(r)] = now_us() - t0;
    }
  };
  std::vector<std::thread> helpers;
  for (int rank = 1; rank < threads; ++rank) helpers.emplace_back(body, rank);
  body(0);
  for (std::thread& t : helpers) t.join();
  return times;
}

std::vector<std::uint8_t> pattern(std::size_t bytes) {
  std::vector<std::uint8_t> buffer(bytes);
  for (std::size_t i = 0; i < bytes; ++i) buffer[i] = static_cast<std::uint8_t>(i * 131 + 7);
  return buffer;
}

}  // namespace

void run_put(BenchEnv& env) {
  Runtime& rt = env.rt;
  const std::vector<std::size_t> sizes =
      env.options.sizes.empty() ? default_sizes() : env.options.sizes;
  const std::vector<int> grids =
      env.options.blocks.empty() ? std::vector<int>{1, 4} : env.options.blocks;
  const int iters = env.options.iters > 0 ? env.options.iters : kDefaultIters;
  const int warmup = warmup_iters(iters);
  const int rounds = warmup + iters;
  std::size_t max_bytes = 0;
  for (std::size_t s : sizes) max_bytes = std::max(max_bytes, s);

  // PEs 0 and 1 on different nodes (or TESSERA_P2P=0): the put goes through the network proxy,
  // and the limit is a raw fi_write loop on the same provider. Every PE learns it from PE 0.
  const bool proxied = proxy_between_0_and_1(rt);
  if (!proxied && !rt.ptr(rt.heap_base(), 1)) {
    throw Error(ErrorCode::transport, rt.pe(),
                "tessera-bench put: PE 1's heap is neither mapped on PE 0 nor reachable through "
                "the network proxy");
  }

  // On a GPU backend the kernel reaches only device memory: the source tile, the barrier word
  // and the times live in the symmetric heap there, written and read back with rt.put/rt.get.
  const bool gpu = env.stream.native_handle() != nullptr;
  Symmetric<std::uint8_t> inbox = rt.alloc<std::uint8_t>(max_bytes);
  // Zeroing faults PE 1's pages in before anything is timed.
  rt.put(inbox.get(), std::vector<std::uint8_t>(max_bytes).data(), max_bytes, rt.pe());
  Symmetric<std::uint8_t> gpu_src = rt.alloc<std::uint8_t>(gpu ? max_bytes : 0);
  Symmetric<std::uint64_t> barrier_word = rt.alloc<std::uint64_t>(1);
  Symmetric<double> kernel_times = rt.alloc<double>(static_cast<std::size_t>(rounds));
  const std::string peer_reason = peer::unavailable_reason(rt.pe(), rt.n_pes());
  if (env.report) {
    env.report->note("put: PE 0 -> PE 1, " + std::to_string(rt.n_pes()) + " PEs, " +
                     std::to_string(iters) + " timed iterations after " + std::to_string(warmup) +
                     " warm-up; median per put");
    env.report->note(proxied ? "limit = raw fi_write (delivery complete) loop, provider " +
                                   rt.fabric_provider() + " on " + rt.fabric_nic() +
                                   ", same bytes, one write at a time"
                     : gpu ? "limit = cudaMemcpy device-to-device of the same bytes, private "
                             "buffers, CUDA-event timed"
                           : "limit = memcpy by as many plain threads as blocks, private buffers");
    env.report->note("peer  = MPI_Put + MPI_Win_flush on an MPI shared-memory window" +
                     (peer_reason.empty() ? std::string() : " -- " + peer_reason));
  }

  std::vector<std::uint8_t> src;
  std::vector<std::uint8_t> limit_src;
  std::vector<std::uint8_t> limit_dst;
  if (rt.pe() == 0) {
    src = pattern(max_bytes);
    limit_src = pattern(max_bytes);
    limit_dst = pattern(max_bytes);
    if (gpu) rt.put(gpu_src.get(), src.data(), max_bytes, rt.pe());
  }
  env.idle.arrive_and_wait();

  const td::Context ctx = rt.device_context();
  for (const int grid : grids) {
    for (const std::size_t bytes : sizes) {
      Row row;
      row.bench = "put";
      row.variant = (proxied ? "proxy-blocks" : "blocks") + std::to_string(grid);
      row.pes = rt.n_pes();
      row.bytes = bytes;
      row.iters = iters;
      row.extra.push_back({"blocks", std::int64_t{grid}});

      // tessera
      if (rt.pe() == 0) {
        std::vector<double> times(static_cast<std::size_t>(rounds));
        const std::uint64_t zero = 0;
        rt.put(barrier_word.get(), &zero, sizeof(zero), rt.pe());
        const std::uint8_t* from = gpu ? gpu_src.get() : src.data();
        launch(env.stream, grid, PutKernel{}, ctx, td::make_tile(inbox.get(), bytes),
               td::make_tile<const std::uint8_t>(from, bytes), 1, rounds, barrier_word.get(),
               kernel_times.get());
        env.stream.synchronize();
        rt.get(times.data(), kernel_times.get(), times.size() * sizeof(double), rt.pe());
        times.erase(times.begin(), times.begin() + warmup);
        row.time_us = median(times);
      }
      env.idle.arrive_and_wait();

      // limit
      if (proxied) {
        std::vector<double> times =
            tessera::detail::fabric_raw_write_times(rt, 0, 1, bytes, rounds);
        if (rt.pe() == 0) {
          times.erase(times.begin(), times.begin() + warmup);
          row.limit_time_us = median(times);
        }
      } else if (rt.pe() == 0) {
        std::vector<double> times =
            gpu ? gpu::memcpy_d2d_times(rt.pe(), env.stream.native_device(), bytes, rounds)
                : memcpy_times(bytes, grid, rounds, limit_dst, limit_src);
        times.erase(times.begin(), times.begin() + warmup);
        row.limit_time_us = median(times);
      }
      env.idle.arrive_and_wait();

      // peer
      peer::PeerTimes peer_times = peer::put(rt.pe(), rt.n_pes(), bytes, warmup, iters);
      if (!peer_times.us.empty()) row.peer_time_us = median(peer_times.us);
      row.peer_note = peer_times.unavailable;

      if (env.report) env.report->add(row);
    }
  }
  env.idle.arrive_and_wait();
}

}  // namespace tessera::bench
