// Collectives and fused compute-communication ops: host calls (namespace tessera::ops). Each is
// made of the block-level building blocks in <tessera/device/ops/...> under device/, callable
// from user kernels.
#pragma once

#include "tessera/ops/ag_gemm.hpp"
#include "tessera/ops/all_gather.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "tessera/ops/all_reduce_rmsnorm.hpp"
#include "tessera/ops/all_to_all.hpp"
#include "tessera/ops/broadcast.hpp"
#include "tessera/ops/fused_gemm.hpp"
#include "tessera/ops/gemm_ar.hpp"
#include "tessera/ops/gemm_as.hpp"
#include "tessera/ops/gemm_rs.hpp"
#include "tessera/ops/moe.hpp"
#include "tessera/ops/overlap.hpp"
#include "tessera/ops/reduce_scatter.hpp"
