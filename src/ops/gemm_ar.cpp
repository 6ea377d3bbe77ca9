// gemm_ar on the fused GEMM skeleton (ops/fused_gemm.hpp): the row-owned reduction with every PE
// receiving all of C (ops/row_reduce.hpp).
#include "tessera/ops/gemm_ar.hpp"

#include <memory>

#include "ops/fused_gemm.hpp"
#include "ops/row_reduce.hpp"

namespace tessera::ops {
namespace {

class GemmArState final : public detail::FusedGemmSchedule<GemmArState> {
 public:
  static constexpr detail::FusedGemmSpec kSpec{"gemm_ar", OpKind::gemm_ar, "n", "k_local", "a",
                                               false};
  using FusedGemmSchedule::FusedGemmSchedule;

  void prepare(const GemmArOptions&) {
    resolve_options();
    const auto n_pes = static_cast<std::size_t>(rt.n_pes());
    reduce_.allocate(*this, (m + n_pes - 1) / n_pes, true);  // shards of ceil(m / n_pes) rows
  }

  template <class T>
  void enqueue(Stream& stream, const T* a, const T* b, float* c) {
    reduce_.enqueue(*this, stream, a, b, c);
  }

 private:
  detail::RowReduce reduce_;
};

}  // namespace

GemmAr::GemmAr(Runtime& rt, std::size_t m, std::size_t n, std::size_t k_local, GemmDtype dtype,
               const GemmArOptions& options)
    : FusedGemm(detail::make_fused_gemm<GemmArState>(rt, m, n, k_local, dtype, options)) {}

}  // namespace tessera::ops
