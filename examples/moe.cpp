// moe: a mixture-of-experts layer on every PE. Each PE routes its tokens to the top-k of E
// experts (E/P per PE), tessera::ops::MoeBuffer::dispatch sends each token once to every PE that
// owns one of its experts, a kernel runs every local expert's linear layer (out = x * W_e, the
// gemm_tile engine, reading the expert counts on the stream: no host synchronisation) and combine
// sums y_t = sum_k w_tk * out_tk back on the token's PE. Each PE checks y against the same layer
// computed locally, for 20 calls on one buffer.
//
//   mpirun -np 4 --oversubscribe ./moe      (MPI bootstrap)
//   ./moe                                   (one PE)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <random>
#include <vector>

#include "tessera/device/ops/gemm_tile.hpp"  // the tile GEMM engine
#include "tessera/launch.hpp"
#include "tessera/ops/moe.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace td = tessera::device;

constexpr std::size_t kHidden = 64;
constexpr int kTopk = 2;
constexpr int kExpertsPerPe = 2;
constexpr std::size_t kTokens = 96;

// Expert e's weights W_e[kHidden, kHidden]: any PE can compute any expert's.
std::vector<float> expert_weights(int e) {
  std::mt19937 rng(static_cast<unsigned>(e) * 7919u + 1);
  std::uniform_real_distribution<float> value(-0.1f, 0.1f);
  std::vector<float> w(kHidden * kHidden);
  for (float& v : w) v = value(rng);
  return w;
}

// Runs every local expert's linear layer on its segment of the dispatched rows.
struct ExpertLayers {
  void operator()(td::Block blk, const float* x, float* out, const float* weights,
                  const std::int64_t* counts, const std::int64_t* offsets, int experts) const {
    for (int le = blk.block_id(); le < experts; le += blk.grid_size()) {
      const auto off = static_cast<std::size_t>(offsets[le]);
      const auto rows = static_cast<std::size_t>(counts[le]);
      if (rows == 0) continue;
      td::ops::gemm_tile(blk, td::make_tile(out + off * kHidden, rows, kHidden),
                         td::make_tile(x + off * kHidden, rows, kHidden),
                         td::make_tile(weights + static_cast<std::size_t>(le) * kHidden * kHidden,
                                       kHidden, kHidden),
                         false);
    }
  }
};

}  // namespace

int main() {
  try {
    auto rt = tessera::Runtime::init(tessera::Options::from_env());
    const int me = rt.pe(), n = rt.n_pes();
    const int experts = n * kExpertsPerPe;
    tessera::ops::MoeConfig cfg;
    cfg.max_tokens_per_pe = kTokens;
    cfg.hidden = kHidden;
    cfg.topk = kTopk;
    cfg.num_experts = experts;
    cfg.dtype = tessera::ops::MoeDtype::f32;
    tessera::ops::MoeBuffer moe(rt, cfg);

    std::vector<float> local_weights;
    for (int le = 0; le < kExpertsPerPe; ++le) {
      const auto w = expert_weights(me * kExpertsPerPe + le);
      local_weights.insert(local_weights.end(), w.begin(), w.end());
    }
    std::vector<std::vector<float>> all_weights;
    for (int e = 0; e < experts; ++e) all_weights.push_back(expert_weights(e));
    std::vector<float> expert_out(moe.config().expert_capacity * kHidden);

    std::mt19937 rng(static_cast<unsigned>(me) + 17);
    double worst = 0;
    for (int call = 0; call < 20; ++call) {
      std::vector<float> x(kTokens * kHidden), w(kTokens * kTopk), y(kTokens * kHidden);
      std::vector<std::int32_t> idx(kTokens * kTopk);
      std::uniform_real_distribution<float> value(-1.0f, 1.0f);
      for (float& v : x) v = value(rng);
      std::vector<int> perm(static_cast<std::size_t>(experts));
      for (std::size_t t = 0; t < kTokens; ++t) {
        for (int e = 0; e < experts; ++e) perm[static_cast<std::size_t>(e)] = e;
        std::shuffle(perm.begin(), perm.end(), rng);
        for (int j = 0; j < kTopk; ++j) {
          idx[t * kTopk + static_cast<std::size_t>(j)] = perm[static_cast<std::size_t>(j)];
          w[t * kTopk + static_cast<std::size_t>(j)] = 0.5f;
        }
      }
      const auto handle = moe.dispatch(rt.stream(), x.data(), kTokens, idx.data(), w.data());
      tessera::launch(rt.stream(), 2, ExpertLayers{}, static_cast<const float*>(handle.expert_x),
                      expert_out.data(), local_weights.data(), handle.expert_counts,
                      handle.expert_offsets, kExpertsPerPe);
      moe.combine(rt.stream(), handle, expert_out.data(), y.data());
      rt.stream().synchronize();

      double max_err = 0, max_ref = 0;
      for (std::size_t t = 0; t < kTokens; ++t) {
        for (std::size_t c = 0; c < kHidden; ++c) {
          double ref = 0;
          for (int j = 0; j < kTopk; ++j) {
            const auto e = static_cast<std::size_t>(idx[t * kTopk + static_cast<std::size_t>(j)]);
            double dot = 0;
            for (std::size_t i = 0; i < kHidden; ++i) {
              dot += static_cast<double>(x[t * kHidden + i]) * all_weights[e][i * kHidden + c];
            }
            ref += w[t * kTopk + static_cast<std::size_t>(j)] * dot;
          }
          max_ref = std::max(max_ref, std::abs(ref));
          max_err = std::max(max_err, std::abs(ref - y[t * kHidden + c]));
        }
      }
      worst = std::max(worst, max_err / max_ref);
    }
    const bool ok = worst <= 1e-5;
    std::printf(
        "PE %d of %d: moe dispatch -> expert linear layers -> combine, 20 calls: "
        "max relative error %.2e, %s\n",
        me, n, worst, ok ? "verified" : "WRONG");
    std::fflush(stdout);
    rt.finalize();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "moe: %s\n", e.what());
    return 1;
  }
}
