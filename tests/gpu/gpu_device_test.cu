// The device API in CUDA kernels on the cuda backend: put/get, put_signal + wait_until,
// remote atomics and the device barrier, between PEs that are processes (see gpu_test_env.hpp).
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
  TESSERA_DEVICE void operator()(td::Block blk, td::Context ctx, std::uint32_t* inbox,
                                 const std::uint32_t* mine, std::size_t n, std::uint64_t* arrived,
                                 std::uint64_t epoch) const {
    const int right = (ctx.my_pe + 1) % ctx.n_pes;
    td::put_signal(blk, ctx, td::make_tile(inbox, n), td::make_tile(mine, n), arrived, epoch,
                   td::SignalOp::set, right);
    td::wait_until(blk, ctx, arrived, td::Cmp::ge, epoch);
  }
};

// One thread per PE adds 1 to a counter on every PE.
struct AddEverywhere {
  TESSERA_DEVICE void operator()(td::Block blk, td::Context ctx, std::uint64_t* counter) const {
    if (blk.rank() != 0) return;
    for (int pe = 0; pe < ctx.n_pes; ++pe) td::atomic_add(ctx, counter, std::uint64_t{1}, pe);
  }
};

// Rounds of: write my round number to every PE's slot for me, barrier, check every slot.
struct BarrierRounds {
  TESSERA_DEVICE void operator()(td::Block blk, td::Context ctx, std::uint64_t* slots, int rounds,
                                 std::uint64_t* errors) const {
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

}  // namespace
}  // namespace tessera::gpu_test
