// Fused compute-communication ops: host calls (namespace tessera::ops). Each is made of the
// block-level building blocks in <tessera/ops/...> under device/, callable from user kernels.
#pragma once

#include "tessera/ops/ag_gemm.hpp"
#include "tessera/ops/all_gather.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/ops/moe.hpp"
// Issue 16, fused ops and the overlap taxonomy (H-fused).
#include "tessera/ops/all_reduce_rmsnorm.hpp"
#include "tessera/ops/gemm_ar.hpp"
#include "tessera/ops/gemm_as.hpp"
#include "tessera/ops/overlap.hpp"
