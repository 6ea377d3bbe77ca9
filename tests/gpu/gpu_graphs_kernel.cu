// gpu_graphs_test's user-kernel case (nvcc-compiled): the device-API pattern under capture and
// replay on the cuda backend. Each PE puts its tile to the next PE with a signal carrying the
// call's epoch, waits for its own tile, copies it out and leaves through a barrier; the epoch is
// counted in device memory (DeviceEpoch), so a replayed launch waits for that replay's tile and
// not for the tile of the captured call.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_graphs_env.hpp"
#include "gpu_test_env.hpp"
#include "tessera/device.hpp"
#include "tessera/launch.hpp"

namespace tessera::gpu_test {
namespace {

namespace td = tessera::device;

constexpr std::size_t kTile = 256;

struct RingShift {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::DeviceEpoch count,
                                      int* box, std::uint64_t* sig, const int* in, int* out) const {
    const std::uint64_t epoch = count.next(blk);
    const int next = (ctx.my_pe + 1) % ctx.n_pes;
    td::put_signal(blk, ctx, box, in, kTile, sig, epoch, td::SignalOp::set, next);
    td::wait_until(blk, ctx, sig, td::Cmp::ge, epoch);
    for (std::size_t i = static_cast<std::size_t>(blk.rank()); i < kTile;
         i += static_cast<std::size_t>(blk.size())) {
      out[i] = box[i];
    }
    td::barrier(blk, ctx);
  }
};

TEST(CudaGraphs, UserKernelWithADeviceEpochReplaysWithFreshInputs) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  DeviceArray<int> box(rt, kTile), in(rt, kTile), out(rt, kTile);
  DeviceArray<std::uint64_t> sig(rt, 1), count(rt, td::DeviceEpoch::kWords);
  sig.upload();  // zeros
  count.upload();
  box.upload();
  rt.barrier();  // no PE signals a peer before the peer's words are zero
  const int prev = (rt.pe() + rt.n_pes() - 1) % rt.n_pes();
  const std::size_t nodes = graphs_test::capture_and_replay(
      rt,
      [&](Stream& s) {
        launch(s, 1, RingShift{}, rt.device_context(), td::DeviceEpoch{count.get()}, box.get(),
               sig.get(), static_cast<const int*>(in.get()), out.get());
      },
      [&](int r) {
        for (std::size_t i = 0; i < kTile; ++i) in.host[i] = graphs_test::value(rt.pe(), r, i);
        in.upload();
        std::fill(out.host.begin(), out.host.end(), -1000);
        out.upload();
      },
      [&](int r) -> std::string {
        const int* got = out.download();
        for (std::size_t i = 0; i < kTile; ++i) {
          if (got[i] != graphs_test::value(prev, r, i)) {
            return "element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", PE " +
                   std::to_string(prev) + " sent " + std::to_string(graphs_test::value(prev, r, i));
          }
        }
        return "";
      },
      replay_options());
  EXPECT_EQ(nodes, 1u) << "one launch captured";
  rt.barrier();
}

}  // namespace
}  // namespace tessera::gpu_test
