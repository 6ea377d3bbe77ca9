// The device API in CUDA kernels on the cuda backend: put/get, put_signal + wait_until, a
// message-passing litmus, remote atomics and the device barrier, between PEs that are processes
// (see gpu_test_env.hpp).
#include <cstdint>
#include <vector>

#include "gpu_test_env.hpp"
#include "tessera/device/device.hpp"
#include "tessera/launch.hpp"

namespace tessera::gpu_test {
namespace {

namespace td = tessera::device;

// Each PE puts its row into its right neighbour's inbox and signals the epoch; then waits for
// its left neighbour's row.
struct PutSignalRing {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint32_t* inbox,
                                      const std::uint32_t* mine, std::size_t n,
                                      std::uint64_t* arrived, std::uint64_t epoch) const {
    const int right = (ctx.my_pe + 1) % ctx.n_pes;
    td::put_signal(blk, ctx, td::make_tile(inbox, n), td::make_tile(mine, n), arrived, epoch,
                   td::SignalOp::set, right);
    td::wait_until(blk, ctx, arrived, td::Cmp::ge, epoch);
  }
};

// One thread per PE adds 1 to a counter on every PE.
struct AddEverywhere {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx,
                                      std::uint64_t* counter) const {
    if (blk.rank() != 0) return;
    for (int pe = 0; pe < ctx.n_pes; ++pe) td::atomic_add(ctx, counter, std::uint64_t{1}, pe);
  }
};

// Rounds of: write my round number to every PE's slot for me, barrier, check every slot.
struct BarrierRounds {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* slots,
                                      int rounds, std::uint64_t* errors) const {
    for (int r = 1; r <= rounds; ++r) {
      if (blk.rank() == 0) {
        for (int pe = 0; pe < ctx.n_pes; ++pe) {
          td::atomic_store(ctx, slots + ctx.my_pe, static_cast<std::uint64_t>(r), pe,
                           td::Sem::relaxed);
        }
      }
      td::barrier(blk, ctx);
      if (blk.rank() == 0) {
        for (int pe = 0; pe < ctx.n_pes; ++pe) {
          if (td::atomic_load(ctx, slots + pe, ctx.my_pe, td::Sem::relaxed) <
              static_cast<std::uint64_t>(r)) {
            td::atomic_add(ctx, errors, std::uint64_t{1}, ctx.my_pe);
          }
        }
      }
      td::barrier(blk, ctx);
    }
  }
};

// Reads the right neighbour's row into a local buffer with a blocking get.
struct GetFromRight {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint32_t* dst,
                                      const std::uint32_t* src, std::size_t n) const {
    td::get(blk, ctx, td::make_tile(dst, n), td::make_tile(src, n), (ctx.my_pe + 1) % ctx.n_pes);
  }
};

// Message-passing litmus around the ring: round r writes r into every word of the right
// neighbour's inbox and adds 1 to its count (release); the reader waits for count >= r (acquire)
// and must then see no word older than r. A stale word counts as an error.
struct MessagePassingRounds {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, std::uint64_t* inbox,
                                      std::uint64_t* staging, std::size_t n, std::uint64_t* count,
                                      int rounds, std::uint64_t* errors) const {
    const int right = (ctx.my_pe + 1) % ctx.n_pes;
    for (int r = 1; r <= rounds; ++r) {
      const auto round = static_cast<std::uint64_t>(r);
      for (std::size_t i = static_cast<std::size_t>(blk.rank()); i < n;
           i += static_cast<std::size_t>(blk.size()))
        staging[i] = round;
      blk.sync();
      td::put_signal(blk, ctx, td::make_tile(inbox, n),
                     td::make_tile(static_cast<const std::uint64_t*>(staging), n), count,
                     std::uint64_t{1}, td::SignalOp::add, right);
      td::wait_until(blk, ctx, count, td::Cmp::ge, round);
      for (std::size_t i = static_cast<std::size_t>(blk.rank()); i < n;
           i += static_cast<std::size_t>(blk.size())) {
        if (td::atomic_load(ctx, inbox + i, ctx.my_pe, td::Sem::relaxed) < round)
          td::atomic_add(ctx, errors, std::uint64_t{1}, ctx.my_pe);
      }
      blk.sync();
    }
  }
};

TEST(CudaDevice, PutSignalRingDeliversTheWholeRowEveryEpoch) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const int me = rt.pe(), n = rt.n_pes(), left = (me + n - 1) % n;
  constexpr std::size_t kWords = 4096;
  auto inbox = rt.alloc<std::uint32_t>(kWords);
  auto mine = rt.alloc<std::uint32_t>(kWords);
  auto* arrived = static_cast<std::uint64_t*>(rt.calloc(1, sizeof(std::uint64_t)));
  for (std::uint64_t epoch = 1; epoch <= 10; ++epoch) {
    std::vector<std::uint32_t> row(kWords);
    for (std::size_t i = 0; i < kWords; ++i)
      row[i] = static_cast<std::uint32_t>(epoch * 100000 + static_cast<unsigned>(me) * 10000 + i);
    rt.put(mine.get(), row.data(), kWords * 4, me);
    launch(rt.stream(), 1, PutSignalRing{}, rt.device_context(), inbox.get(),
           static_cast<const std::uint32_t*>(mine.get()), kWords, arrived, epoch);
    rt.stream().synchronize();
    rt.get(row.data(), inbox.get(), kWords * 4, me);
    for (std::size_t i = 0; i < kWords; ++i) {
      ASSERT_EQ(row[i], epoch * 100000 + static_cast<unsigned>(left) * 10000 + i)
          << "epoch " << epoch << " word " << i;
    }
    rt.barrier();
  }
  rt.free(arrived);
}

TEST(CudaDevice, RemoteAtomicAddsFromEveryPeArrive) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  auto* counter = static_cast<std::uint64_t*>(rt.calloc(1, sizeof(std::uint64_t)));
  for (int i = 0; i < 5; ++i) launch(rt.stream(), 4, AddEverywhere{}, rt.device_context(), counter);
  rt.stream().synchronize();
  rt.barrier();
  std::uint64_t seen = 0;
  rt.get(&seen, counter, sizeof(seen), rt.pe());
  EXPECT_EQ(seen, 5u * 4u * static_cast<std::uint64_t>(rt.n_pes()));
  rt.free(counter);
}

TEST(CudaDevice, DeviceBarrierOrdersEveryRound) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  auto* slots = static_cast<std::uint64_t*>(rt.calloc(64, sizeof(std::uint64_t)));
  auto* errors = static_cast<std::uint64_t*>(rt.calloc(1, sizeof(std::uint64_t)));
  launch(rt.stream(), 1, BarrierRounds{}, rt.device_context(), slots, 50, errors);
  rt.stream().synchronize();
  std::uint64_t seen = 1;
  rt.get(&seen, errors, sizeof(seen), rt.pe());
  EXPECT_EQ(seen, 0u);
  rt.free(errors);
  rt.free(slots);
}

TEST(CudaDevice, GetReadsTheNeighboursWholeRow) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const int me = rt.pe(), right = (me + 1) % rt.n_pes();
  constexpr std::size_t kWords = 3001;  // not a multiple of the 16-byte piece
  auto mine = rt.alloc<std::uint32_t>(kWords);
  auto dst = rt.alloc<std::uint32_t>(kWords);
  std::vector<std::uint32_t> row(kWords);
  for (std::size_t i = 0; i < kWords; ++i) row[i] = static_cast<std::uint32_t>(me * 100000 + i);
  rt.put(mine.get(), row.data(), kWords * 4, me);
  rt.barrier();
  launch(rt.stream(), 1, GetFromRight{}, rt.device_context(), dst.get(),
         static_cast<const std::uint32_t*>(mine.get()), kWords);
  rt.stream().synchronize();
  rt.get(row.data(), dst.get(), kWords * 4, me);
  for (std::size_t i = 0; i < kWords; ++i)
    ASSERT_EQ(row[i], static_cast<std::uint32_t>(right * 100000 + i)) << "word " << i;
  rt.barrier();
}

TEST(CudaDevice, MessagePassingLitmusNeverSeesStaleData) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  constexpr std::size_t kWords = 1024;
  auto inbox = rt.alloc<std::uint64_t>(kWords);
  auto staging = rt.alloc<std::uint64_t>(kWords);
  auto* count = static_cast<std::uint64_t*>(rt.calloc(1, sizeof(std::uint64_t)));
  auto* errors = static_cast<std::uint64_t*>(rt.calloc(1, sizeof(std::uint64_t)));
  launch(rt.stream(), 1, MessagePassingRounds{}, rt.device_context(), inbox.get(), staging.get(),
         kWords, count, 2000, errors);
  rt.stream().synchronize();
  std::uint64_t seen = 1;
  rt.get(&seen, errors, sizeof(seen), rt.pe());
  EXPECT_EQ(seen, 0u) << "words older than the signalled round were read";
  rt.barrier();
  rt.free(errors);
  rt.free(count);
}

}  // namespace
}  // namespace tessera::gpu_test
