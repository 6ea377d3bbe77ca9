// ag_gemm_epilogue: a user kernel built from the ag_gemm building block, with its own epilogue.
// Y = GELU(allgather(X_shard) x W + bias): the bias and activation are applied to each C tile by
// the block that computed it, while the tile is still in cache, instead of in a second pass.
//
//   mpirun -np 4 --oversubscribe ./ag_gemm_epilogue
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "tessera/device.hpp"
#include "tessera/device/ops/ag_gemm.hpp"
#include "tessera/launch.hpp"
#include "tessera/tessera.hpp"

namespace td = tessera::device;
namespace tdo = tessera::device::ops;

// tanh approximation of GELU.
TESSERA_HOST_DEVICE inline float gelu(float x) {
  const float u = 0.7978845608f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + std::tanh(u));
}

// The epilogue: c_tile += bias[col]; c_tile = gelu(c_tile). Called once per finished tile.
struct BiasGelu {
  const float* bias;  // n_local values
  template <class G>
  TESSERA_KERNEL_CODE void operator()(G g, td::Tile<float> c, std::size_t, std::size_t col0) const {
    for (std::size_t r = static_cast<std::size_t>(g.rank()); r < c.rows;
         r += static_cast<std::size_t>(g.size())) {
      float* row = c.row(r);
      for (std::size_t j = 0; j < c.cols; ++j) row[j] = gelu(row[j] + bias[col0 + j]);
    }
    g.sync();
  }
};

// Block 0 publishes the shard, the others compute and apply the epilogue.
struct FusedMlpKernel {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx,
                                      tdo::AgGemmArgs<float, float> args, const float* bias) const {
    tdo::ag_gemm(blk, ctx, args, /*comm_blocks=*/1, BiasGelu{bias});
  }
};

int main() {
  try {
    auto rt = tessera::Runtime::init(tessera::Options::from_env());
    const int me = rt.pe(), n_pes = rt.n_pes();
    const std::size_t m_local = 96, k = 128, n_local = 80,
                      m = m_local * static_cast<std::size_t>(n_pes);
    constexpr int kComputeBlocks = 3, kCalls = 3;

    // Workspace of the building block (push): the gathered X and the flag words, all symmetric.
    tdo::AgGemmArgs<float, float> args;
    args.chunk_rows = 32;
    const std::size_t chunks = (m_local + args.chunk_rows - 1) / args.chunk_rows;
    auto gathered = rt.alloc<float>(m * k);
    auto words = rt.alloc<std::uint64_t>(static_cast<std::size_t>(n_pes) * (chunks + 1));
    std::memset(words.get(), 0, words.bytes());
    rt.barrier();  // flags are zero everywhere before anyone signals

    std::vector<float> x(m_local * k), w(k * n_local), bias(n_local), y(m * n_local);
    auto x_value = [](std::size_t row, std::size_t col) {
      return static_cast<float>((row * 3 + col * 7) % 11) / 11.0f - 0.5f;
    };
    for (std::size_t i = 0; i < m_local; ++i)
      for (std::size_t p = 0; p < k; ++p)
        x[i * k + p] = x_value(static_cast<std::size_t>(me) * m_local + i, p);
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t j = 0; j < n_local; ++j)
        w[p * n_local + j] =
            static_cast<float>((p + 2 * j + static_cast<std::size_t>(me)) % 13) / 13.0f - 0.5f;
    for (std::size_t j = 0; j < n_local; ++j) bias[j] = 0.01f * static_cast<float>(j);

    args.a_shard = td::Tile<const float>(x.data(), m_local, k);
    args.b = td::Tile<const float>(w.data(), k, n_local);
    args.c = td::Tile<float>(y.data(), m, n_local);
    args.gathered = gathered.get();
    args.chunk_flags = words.get();
    args.consumed = words.get() + static_cast<std::size_t>(n_pes) * chunks;
    args.algo = tdo::AgGemmAlgo::push;
    args.tile_m = 32;
    args.tile_n = 40;
    args.compute_blocks = kComputeBlocks;
    td::Epoch epoch;
    for (int call = 0; call < kCalls; ++call) {  // epochs: no reset, no barrier between calls
      args.epoch = epoch.next();
      tessera::launch(rt.stream(), 1 + kComputeBlocks, FusedMlpKernel{}, rt.device_context(), args,
                      static_cast<const float*>(bias.data()));
    }
    rt.stream().synchronize();

    double max_err = 0;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n_local; ++j) {
        double acc = 0;
        for (std::size_t p = 0; p < k; ++p) acc += double{x_value(i, p)} * w[p * n_local + j];
        const double want = gelu(static_cast<float>(acc) + bias[j]);
        max_err = std::max(max_err, std::abs(want - y[i * n_local + j]));
      }
    const bool ok = max_err <= 1e-4;
    std::printf("PE %d of %d: GELU(allgather(X) x W + bias), %d calls, max abs error %.1e: %s\n",
                me, n_pes, kCalls, max_err, ok ? "verified" : "WRONG");
    std::fflush(stdout);
    rt.finalize();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ag_gemm_epilogue: %s\n", e.what());
    return 1;
  }
}
