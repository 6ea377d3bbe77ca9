// Input element types of the fused GEMM ops (ag_gemm, gemm_rs). Outputs are always fp32: the
// ops accumulate in fp32 and hand the sum back unrounded.
#pragma once

namespace tessera::ops {

enum class GemmDtype { f32, bf16 };

// "f32" or "bf16".
constexpr const char* to_string(GemmDtype dtype) {
  return dtype == GemmDtype::f32 ? "f32" : "bf16";
}

}  // namespace tessera::ops
