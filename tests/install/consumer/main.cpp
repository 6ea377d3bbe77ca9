// The installed-package consumer: a host put to the right neighbour, then a device-API kernel
// that passes a tile to the right neighbour with put_signal and waits for the left one's.
// Exits non-zero unless every value arrived.
#include <cstdint>
#include <cstdio>
#include <exception>

#include <tessera/device.hpp>
#include <tessera/tessera.hpp>

namespace td = tessera::device;

namespace {

constexpr std::size_t kRows = 8, kCols = 16;

float value_of(int pe, std::size_t i) {
  return static_cast<float>(pe * 1000 + static_cast<int>(i));
}

struct PassRight {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, td::Tile<float> inbox,
                                      td::Tile<const float> mine, std::uint64_t* arrived) const {
    const int right = (ctx.my_pe + 1) % ctx.n_pes;
    td::put_signal(blk, ctx, inbox, mine, arrived, 1, td::SignalOp::set, right);
    td::wait_until(blk, ctx, arrived, td::Cmp::ge, 1);
  }
};

}  // namespace

int main() {
  try {
    auto rt = tessera::Runtime::init(tessera::Options::from_env());
    const int me = rt.pe(), n = rt.n_pes();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    bool ok = true;

    // Host API: malloc, put, barrier.
    auto* slot = static_cast<int*>(rt.malloc(sizeof(int)));
    *slot = -1;
    rt.barrier();
    rt.put(slot, &me, sizeof me, right);
    rt.barrier();
    if (*slot != left) {
      std::fprintf(stderr, "consumer PE %d: host put: got %d, expected %d\n", me, *slot, left);
      ok = false;
    }
    rt.free(slot);

    // Device API: put_signal / wait_until in a kernel.
    auto mine = rt.alloc<float>(kRows * kCols);
    auto inbox = rt.alloc<float>(kRows * kCols);
    auto arrived = rt.alloc<std::uint64_t>(1);
    for (std::size_t i = 0; i < kRows * kCols; ++i) mine[i] = value_of(me, i);
    arrived[0] = 0;
    rt.barrier();
    tessera::launch(rt.stream(), 1, PassRight{}, rt.device_context(),
                    td::Tile<float>(inbox.get(), kRows, kCols),
                    td::Tile<const float>(mine.get(), kRows, kCols), arrived.get());
    rt.stream().synchronize();
    for (std::size_t i = 0; i < kRows * kCols && ok; ++i) {
      if (inbox[i] != value_of(left, i)) {
        std::fprintf(stderr, "consumer PE %d: put_signal: element %zu is %g, expected %g\n", me, i,
                     static_cast<double>(inbox[i]), static_cast<double>(value_of(left, i)));
        ok = false;
      }
    }
    rt.barrier();
    std::printf("consumer PE %d of %d: %s\n", me, n, ok ? "verified" : "WRONG");
    std::fflush(stdout);
    mine.reset();
    inbox.reset();
    arrived.reset();
    rt.finalize();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}
