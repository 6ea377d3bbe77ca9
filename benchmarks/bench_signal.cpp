// tessera-bench signal: one-way latency of a put_signal -> wait_until ping-pong between PE 0 and
// PE 1 (round trip / 2). Each PE's mailbox is one symmetric block: the signal word at offset 0
// and the data right after it, so up to 56 bytes travel in the signal's own cache line. Every
// round uses the next epoch value, so nothing is reset between rounds or sizes.
//   limit: the same ping-pong with raw platform atomics on the same layout (copy of the data into
//          the peer's mailbox, release store of the epoch, pure spin on an acquire load): by the
//          two processes' main threads on the host backend, by a one-block kernel on each GPU;
//   peer:  MPI_Send/MPI_Recv ping-pong of the same bytes.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

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
namespace platform = td::platform;

constexpr int kDefaultIters = 2000;
constexpr std::size_t kDataOffset = sizeof(std::uint64_t);

std::vector<std::size_t> default_sizes() { return {8, 64, 512, 4096, 32768, 65536}; }

// A mailbox: the signal word, then the data.
struct Mailbox {
  std::uint64_t* sig;
  std::uint8_t* data;
};

Mailbox mailbox(std::uint8_t* block) {
  return {reinterpret_cast<std::uint64_t*>(block), block + kDataOffset};
}

// Runs on PE 0 and PE 1 (grid 1). PE 0 starts each round and records round trip / 2.
struct PingPongKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* sig,
                                      td::Tile<std::uint8_t> inbox,
                                      td::Tile<const std::uint8_t> src, std::uint64_t first_epoch,
                                      int rounds, double* times_us) const {
    const int other = 1 - ctx.my_pe;
    for (int r = 0; r < rounds; ++r) {
      const std::uint64_t epoch = first_epoch + static_cast<std::uint64_t>(r);
      if (ctx.my_pe == 0) {
        const double t0 = now_us();
        td::put_signal(blk, ctx, inbox, src, sig, epoch, td::SignalOp::set, other);
        td::wait_until(blk, ctx, sig, td::Cmp::ge, epoch);
        if (blk.rank() == 0) times_us[r] = (now_us() - t0) / 2;
      } else {
        td::wait_until(blk, ctx, sig, td::Cmp::ge, epoch);
        td::put_signal(blk, ctx, inbox, src, sig, epoch, td::SignalOp::set, other);
      }
    }
  }
};

// The GPU limit (grid 1 on PE 0 and PE 1): the block's threads copy the data straight into the
// peer's mapped mailbox, then thread 0 publishes the epoch with a release store and spins on its
// own word with acquire loads; no checks, no proxy, no device-API call.
struct RawPingPongKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, Mailbox mine, Mailbox theirs,
                                      const std::uint8_t* src, std::size_t bytes,
                                      std::uint64_t first_epoch, int rounds,
                                      double* times_us) const {
    using td::Scope;
    using td::Sem;
    const td::Tile<std::uint8_t> dst = td::make_tile(theirs.data, bytes);
    const td::Tile<const std::uint8_t> from = td::make_tile(src, bytes);
    auto wait_for = [&](std::uint64_t epoch) {
      if (blk.rank() == 0) {
        while (platform::atomic_load(mine.sig, Sem::acquire, Scope::system) < epoch) {
        }
      }
      blk.sync();
    };
    auto send = [&](std::uint64_t epoch) {
      td::detail::copy_tile(blk, dst, from);
      blk.sync();
      if (blk.rank() == 0) platform::atomic_store(theirs.sig, epoch, Sem::release, Scope::system);
    };
    for (int r = 0; r < rounds; ++r) {
      const std::uint64_t epoch = first_epoch + static_cast<std::uint64_t>(r);
      if (ctx.my_pe == 0) {
        const double t0 = now_us();
        send(epoch);
        wait_for(epoch);
        if (blk.rank() == 0) times_us[r] = (now_us() - t0) / 2;
      } else {
        wait_for(epoch);
        send(epoch);
      }
    }
  }
};

// The host limit, on the calling (main) thread of PE 0 and PE 1.
std::vector<double> raw_pingpong(int pe, Mailbox mine, Mailbox theirs, const std::uint8_t* src,
                                 std::size_t bytes, std::uint64_t first_epoch, int rounds) {
  using td::Scope;
  using td::Sem;
  std::vector<double> times;
  auto wait_for = [&](std::uint64_t epoch) {
    while (platform::atomic_load(mine.sig, Sem::acquire, Scope::system) < epoch) {
      platform::spin_pause(0);
    }
  };
  auto send = [&](std::uint64_t epoch) {
    std::memcpy(theirs.data, src, bytes);
    platform::atomic_store(theirs.sig, epoch, Sem::release, Scope::system);
  };
  for (int r = 0; r < rounds; ++r) {
    const std::uint64_t epoch = first_epoch + static_cast<std::uint64_t>(r);
    if (pe == 0) {
      const double t0 = now_us();
      send(epoch);
      wait_for(epoch);
      times.push_back((now_us() - t0) / 2);
    } else {
      wait_for(epoch);
      send(epoch);
    }
  }
  return times;
}

}  // namespace

void run_signal(BenchEnv& env) {
  Runtime& rt = env.rt;
  const std::vector<std::size_t> sizes =
      env.options.sizes.empty() ? default_sizes() : env.options.sizes;
  const int iters = env.options.iters > 0 ? env.options.iters : kDefaultIters;
  const int warmup = warmup_iters(iters);
  const int rounds = warmup + iters;
  std::size_t max_bytes = 0;
  for (std::size_t s : sizes) max_bytes = std::max(max_bytes, s);

  const int partner = rt.pe() == 0 ? 1 : 0;
  // PEs 0 and 1 on different nodes: the ping-pong goes through the network proxy, and the
  // limit is half a raw fi_write round trip (delivery complete) of the same bytes.
  const bool proxied = proxy_between_0_and_1(rt);
  if (!proxied && rt.pe() < 2 && !rt.ptr(rt.heap_base(), partner)) {
    throw Error(ErrorCode::transport, rt.pe(),
                "tessera-bench signal: PEs 0 and 1 neither map each other's heaps nor reach each "
                "other through the network proxy");
  }

  const std::size_t block_bytes = kDataOffset + max_bytes;
  // On a GPU backend kernels reach only device memory: the source and the times live in the
  // symmetric heap there, written and read back with rt.put/rt.get.
  const bool gpu = env.stream.native_handle() != nullptr;
  Symmetric<std::uint8_t> tessera_box = rt.alloc<std::uint8_t>(block_bytes, 64);
  Symmetric<std::uint8_t> raw_box = rt.alloc<std::uint8_t>(block_bytes, 64);
  const std::vector<std::uint8_t> zeros(block_bytes);
  rt.put(tessera_box.get(), zeros.data(), block_bytes, rt.pe());
  rt.put(raw_box.get(), zeros.data(), block_bytes, rt.pe());
  std::vector<std::uint8_t> src(max_bytes);
  for (std::size_t i = 0; i < max_bytes; ++i) src[i] = static_cast<std::uint8_t>(i * 131 + 7);
  Symmetric<std::uint8_t> gpu_src = rt.alloc<std::uint8_t>(gpu ? max_bytes : 0);
  if (gpu) rt.put(gpu_src.get(), src.data(), max_bytes, rt.pe());
  const std::uint8_t* kernel_src = gpu ? gpu_src.get() : src.data();
  Symmetric<double> kernel_times = rt.alloc<double>(static_cast<std::size_t>(rounds));

  const std::string peer_reason = peer::unavailable_reason(rt.pe(), rt.n_pes());
  if (env.report) {
    env.report->note("signal: PE 0 <-> PE 1 ping-pong, " + std::to_string(rt.n_pes()) + " PEs, " +
                     std::to_string(iters) + " timed round trips after " + std::to_string(warmup) +
                     " warm-up; median one-way time (round trip / 2)");
    env.report->note(
        proxied ? "limit = half the completion time of a raw fi_write (delivery complete) of "
                  "signal + data, provider " +
                      rt.fabric_provider() + " on " + rt.fabric_nic()
                : std::string(gpu ? "limit = raw atomic ping-pong by a one-block kernel per GPU "
                                    "(block copy + release store, pure spin) on the same layout"
                                  : "limit = raw atomic ping-pong (memcpy + release store, pure "
                                    "spin) on the same layout"));
    env.report->note("peer  = MPI_Send/MPI_Recv ping-pong" +
                     (peer_reason.empty() ? std::string() : " -- " + peer_reason));
  }
  env.idle.arrive_and_wait();

  const td::Context ctx = rt.device_context();
  const bool in_pair = rt.pe() < 2;
  std::uint64_t tessera_epoch = 0;
  std::uint64_t raw_epoch = 0;
  for (const std::size_t bytes : sizes) {
    Row row;
    row.bench = "signal";
    row.variant = proxied ? "proxy-pingpong" : "pingpong";
    row.pes = rt.n_pes();
    row.bytes = bytes;
    row.iters = iters;

    // tessera
    std::vector<double> times(static_cast<std::size_t>(rounds));
    if (in_pair) {
      const Mailbox box = mailbox(tessera_box.get());
      launch(env.stream, 1, PingPongKernel{}, ctx, box.sig, td::make_tile(box.data, bytes),
             td::make_tile<const std::uint8_t>(kernel_src, bytes), tessera_epoch + 1, rounds,
             kernel_times.get());
      env.stream.synchronize();
      rt.get(times.data(), kernel_times.get(), times.size() * sizeof(double), rt.pe());
    }
    tessera_epoch += static_cast<std::uint64_t>(rounds);
    env.idle.arrive_and_wait();
    if (rt.pe() == 0) {
      times.erase(times.begin(), times.begin() + warmup);
      row.time_us = median(times);
    }

    // limit
    if (proxied) {
      std::vector<double> raw =
          tessera::detail::fabric_raw_write_times(rt, 0, 1, kDataOffset + bytes, rounds);
      if (rt.pe() == 0) {
        raw.erase(raw.begin(), raw.begin() + warmup);
        row.limit_time_us = median(raw) / 2;
      }
    } else if (in_pair) {
      const Mailbox mine = mailbox(raw_box.get());
      const Mailbox theirs = mailbox(static_cast<std::uint8_t*>(rt.ptr(raw_box.get(), partner)));
      std::vector<double> raw(static_cast<std::size_t>(rounds));
      if (gpu) {
        launch(env.stream, 1, RawPingPongKernel{}, ctx, mine, theirs, kernel_src, bytes,
               raw_epoch + 1, rounds, kernel_times.get());
        env.stream.synchronize();
        rt.get(raw.data(), kernel_times.get(), raw.size() * sizeof(double), rt.pe());
      } else {
        raw = raw_pingpong(rt.pe(), mine, theirs, src.data(), bytes, raw_epoch + 1, rounds);
      }
      if (rt.pe() == 0) {
        raw.erase(raw.begin(), raw.begin() + warmup);
        row.limit_time_us = median(raw);
      }
    }
    raw_epoch += static_cast<std::uint64_t>(rounds);
    env.idle.arrive_and_wait();

    // peer
    peer::PeerTimes peer_times = peer::pingpong(rt.pe(), rt.n_pes(), bytes, warmup, iters);
    if (!peer_times.us.empty()) row.peer_time_us = median(peer_times.us);
    row.peer_note = peer_times.unavailable;

    if (env.report) env.report->add(row);
  }
  env.idle.arrive_and_wait();
}

}  // namespace tessera::bench
