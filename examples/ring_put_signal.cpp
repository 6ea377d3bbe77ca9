// Passes a tile around the ring of PEs with put_signal / wait_until and epoch signals (the
// RingStep kernel of DESIGN §4), verifies every arrival, and prints one line per PE. Mismatches
// are counted with an atomic add on a word in this PE's symmetric heap, memory the kernel's
// threads reach on every backend (a host stack pointer would not be, on a GPU).
//   mpirun -np 4 ring_put_signal [steps]     or, as one PE:   ring_put_signal [steps]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace td = tessera::device;

// One step: my tile goes into my right neighbour's inbox, and my inbox fills from the left.
// `inbox`, `arrived`, `consumed` and `errors` are symmetric; `errors` counts this PE's mismatches.
struct RingStep {
  template <class Block>
  TESSERA_KERNEL_CODE void operator()(Block blk, td::Context ctx, td::Tile<const float> mine,
                                      td::Tile<float> inbox, std::uint64_t* arrived,
                                      std::uint64_t* consumed, std::uint64_t epoch,
                                      std::uint64_t* errors) const {
    const int right = (ctx.my_pe + 1) % ctx.n_pes;
    const int left = (ctx.my_pe + ctx.n_pes - 1) % ctx.n_pes;
    // My right neighbour has read the previous step out of its inbox (epoch - 1 acknowledged).
    td::wait_until(blk, ctx, consumed, td::Cmp::ge, epoch - 1);
    // Inbox on `right` receives my tile; its `arrived` becomes `epoch` only after the tile.
    td::put_signal(blk, ctx, inbox, mine, arrived, epoch, td::SignalOp::set, right);
    // My own inbox is complete once my left neighbour's signal reaches this epoch.
    td::wait_until(blk, ctx, arrived, td::Cmp::ge, epoch);
    std::uint64_t wrong = 0;  // this thread's rows
    for (std::size_t r = static_cast<std::size_t>(blk.rank()); r < inbox.rows;
         r += static_cast<std::size_t>(blk.size())) {
      for (std::size_t c = 0; c < inbox.cols; ++c) {
        if (inbox(r, c) != static_cast<float>(left * 100000 + static_cast<int>(r * inbox.cols + c)))
          ++wrong;
      }
    }
    // Threads of the block (and blocks of other launches) add concurrently: one atomic each.
    if (wrong != 0) td::atomic_add(ctx, errors, wrong, ctx.my_pe, td::Sem::relaxed);
    blk.sync();
    // Tell the left neighbour its tile has been read, so it may send the next one.
    if (blk.rank() == 0) td::signal(ctx, consumed, epoch, td::SignalOp::set, left);
  }
};

int main(int argc, char** argv) {
  const std::uint64_t steps = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000;
  try {
    auto options = tessera::Options::from_env();
    if (std::getenv("TESSERA_HEAP_SIZE") == nullptr) options.heap_size = std::size_t{64} << 20;
    auto rt = tessera::Runtime::init(options);
    constexpr std::size_t kRows = 64, kCols = 64;
    auto src = rt.alloc<float>(kRows * kCols);
    auto inbox = rt.alloc<float>(kRows * kCols);
    // arrived, consumed and the error count, each on its own cache line
    auto signals = rt.alloc<std::uint64_t>(24);
    for (std::size_t i = 0; i < kRows * kCols; ++i)
      src[i] = static_cast<float>(rt.pe() * 100000 + static_cast<int>(i));
    signals[0] = signals[8] = signals[16] = 0;
    rt.barrier();

    td::Epoch epoch;
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t s = 0; s < steps; ++s) {
      tessera::launch(rt.stream(), /*grid=*/1, RingStep{}, rt.device_context(),
                      td::Tile<const float>(src.get(), kRows, kCols),
                      td::Tile<float>(inbox.get(), kRows, kCols), &signals[0], &signals[8],
                      epoch.next(), &signals[16]);
    }
    rt.stream().synchronize();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rt.barrier();
    const std::uint64_t errors = td::signal_fetch(&signals[16]);

    const double bytes = static_cast<double>(steps * kRows * kCols * sizeof(float));
    std::printf(
        "ring_put_signal PE %d/%d: %llu steps of a %zux%zu float tile in %.3f s: "
        "%.2f us/step, %.2f GB/s out, %llu errors\n",
        rt.pe(), rt.n_pes(), static_cast<unsigned long long>(steps), kRows, kCols, seconds,
        seconds * 1e6 / static_cast<double>(steps), bytes / seconds / 1e9,
        static_cast<unsigned long long>(errors));
    std::fflush(stdout);
    rt.finalize();
    return errors == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ring_put_signal: %s\n", e.what());
    return 1;
  }
}
