// tessera-bench shmem_put_rate: the message rate of small OpenSHMEM puts (issue 20). PE 0 issues
// a window of `kWindow` puts of `bytes` each to PE 1, every put into its own slot of a symmetric
// buffer, then shmem_quiet; a sample is one window, and the reported time is per put (the
// window's time over kWindow), so messages/s = 1 / time.
//   variants: putmem   shmem_putmem(dest, source, bytes, 1)
//             long_put shmem_long_put(dest, source, bytes / 8, 1)
//   limit:    memcpy of the same bytes into the same slots of PE 1's buffer through shmem_ptr
//             (plain stores into the peer's mapping), then a release fence, timed the same way;
//   peer:     MPI_Put of the same window into PE 1's part of an MPI shared-memory window
//             (MPI_Win_lock_all once, then kWindow MPI_Put + one MPI_Win_flush per sample).
// Runs over the OpenSHMEM default runtime (Benchmark::shmem: tessera-bench calls shmem_init),
// and needs PE 1 on PE 0's node: the rate measured is the load/store path.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_peer.hpp"
#include "registry.hpp"
#include "tessera/shmem.h"
#include "timing.hpp"

namespace tessera::bench {
namespace {

constexpr int kDefaultIters = 1000;
constexpr int kWindow = 64;  // puts per sample, as in the usual message-rate benchmarks

std::vector<std::size_t> default_sizes() { return {8, 16, 32, 64, 128, 256, 512}; }

enum class Variant { putmem, long_put };

// One window of puts of `bytes` from `src` into slots of `dst` (the symmetric buffer, PE 1's
// copy), then quiet; returns its time in microseconds.
double put_window(Variant variant, unsigned char* dst, const unsigned char* src,
                  std::size_t bytes) {
  const double t0 = now_us();
  if (variant == Variant::putmem) {
    for (int i = 0; i < kWindow; ++i) {
      shmem_putmem(dst + static_cast<std::size_t>(i) * bytes, src, bytes, 1);
    }
  } else {
    const std::size_t n = bytes / sizeof(long);
    for (int i = 0; i < kWindow; ++i) {
      shmem_long_put(reinterpret_cast<long*>(dst + static_cast<std::size_t>(i) * bytes),
                     reinterpret_cast<const long*>(src), n, 1);
    }
  }
  shmem_quiet();
  return now_us() - t0;
}

// The limit: the same window as plain memcpys into PE 1's mapping of the buffer.
double memcpy_window(unsigned char* mapped, const unsigned char* src, std::size_t bytes) {
  const double t0 = now_us();
  for (int i = 0; i < kWindow; ++i) {
    std::memcpy(mapped + static_cast<std::size_t>(i) * bytes, src, bytes);
  }
  std::atomic_thread_fence(std::memory_order_release);
  return now_us() - t0;
}

}  // namespace

void run_shmem_put_rate(BenchEnv& env) {
  Runtime& rt = env.rt;
  const std::vector<std::size_t> sizes =
      env.options.sizes.empty() ? default_sizes() : env.options.sizes;
  const int iters = env.options.iters > 0 ? env.options.iters : kDefaultIters;
  const int warmup = warmup_iters(iters);
  std::size_t max_bytes = 0;
  for (const std::size_t s : sizes) {
    if (s == 0 || s % sizeof(long) != 0) {
      throw Error(ErrorCode::invalid_argument, rt.pe(),
                  "tessera-bench shmem_put_rate: --sizes must be positive multiples of " +
                      std::to_string(sizeof(long)) + " bytes (shmem_long_put moves longs), got " +
                      std::to_string(s));
    }
    max_bytes = std::max(max_bytes, s);
  }

  const std::size_t buffer_bytes = max_bytes * kWindow;
  auto* inbox = static_cast<unsigned char*>(shmem_malloc(buffer_bytes));
  if (inbox == nullptr) {
    throw Error(ErrorCode::out_of_memory, rt.pe(),
                "tessera-bench shmem_put_rate: shmem_malloc(" + std::to_string(buffer_bytes) +
                    ") returned NULL");
  }
  std::memset(inbox, 0, buffer_bytes);  // faults this PE's pages in before anything is timed
  // The load/store path is the one measured: PE 1 must be mapped here (every PE learns it from
  // PE 0, so all of them fail alike).
  auto* mapped = static_cast<unsigned char*>(shmem_ptr(inbox, 1));
  std::vector<std::uint32_t> reachable(static_cast<std::size_t>(rt.n_pes()), 0);
  reachable[static_cast<std::size_t>(rt.pe())] = mapped != nullptr ? 1 : 0;
  rt.bootstrap().allgather(reachable.data(), sizeof(std::uint32_t));
  if (reachable[0] == 0) {
    shmem_free(inbox);
    throw Error(ErrorCode::transport, rt.pe(),
                "tessera-bench shmem_put_rate: PE 1 is not on PE 0's node (shmem_ptr is NULL); "
                "the benchmark measures the node-local put");
  }
  const std::string peer_reason = peer::unavailable_reason(rt.pe(), rt.n_pes());
  if (env.report) {
    env.report->note("shmem_put_rate: PE 0 -> PE 1, " + std::to_string(rt.n_pes()) + " PEs, " +
                     std::to_string(kWindow) + " puts per window then shmem_quiet, " +
                     std::to_string(iters) + " timed windows after " + std::to_string(warmup) +
                     " warm-up; median per put");
    env.report->note("limit = memcpy into PE 1's mapping (shmem_ptr), same window, then a fence");
    env.report->note("peer  = MPI_Put x window + MPI_Win_flush on an MPI shared-memory window" +
                     (peer_reason.empty() ? std::string() : " -- " + peer_reason));
  }

  std::vector<unsigned char> src(max_bytes);
  for (std::size_t i = 0; i < max_bytes; ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  shmem_barrier_all();

  for (const Variant variant : {Variant::putmem, Variant::long_put}) {
    for (const std::size_t bytes : sizes) {
      Row row;
      row.bench = "shmem_put_rate";
      row.variant = variant == Variant::putmem ? "putmem" : "long_put";
      row.pes = rt.n_pes();
      row.bytes = bytes;
      row.iters = iters;

      // tessera
      if (rt.pe() == 0) {
        std::vector<double> times;
        for (int r = 0; r < warmup + iters; ++r) {
          const double t = put_window(variant, inbox, src.data(), bytes);
          if (r >= warmup) times.push_back(t / kWindow);
        }
        row.time_us = median(times);
        // limit
        times.clear();
        for (int r = 0; r < warmup + iters; ++r) {
          const double t = memcpy_window(mapped, src.data(), bytes);
          if (r >= warmup) times.push_back(t / kWindow);
        }
        row.limit_time_us = median(times);
      }
      env.idle.arrive_and_wait();

      // peer
      peer::PeerTimes peer_times =
          peer::put_rate(rt.pe(), rt.n_pes(), bytes, kWindow, warmup, iters);
      if (!peer_times.us.empty()) row.peer_time_us = median(peer_times.us) / kWindow;
      row.peer_note = peer_times.unavailable;

      row.extra.push_back({"window", std::int64_t{kWindow}});
      row.extra.push_back({"ns_per_call", row.time_us * 1e3});
      row.extra.push_back({"msgs_per_s", row.time_us > 0 ? 1e6 / row.time_us : 0.0});
      if (env.report) env.report->add(row);
    }
  }

  // The puts landed: PE 1's first slot holds the pattern's first bytes of the last size (a
  // benchmark that moved nothing must not report a rate).
  shmem_barrier_all();
  if (rt.pe() == 1 && std::memcmp(inbox, src.data(), sizes.back()) != 0) {
    throw Error(ErrorCode::internal, rt.pe(),
                "tessera-bench shmem_put_rate: PE 1's buffer does not hold what PE 0 put");
  }
  shmem_barrier_all();
  shmem_free(inbox);
}

}  // namespace tessera::bench
