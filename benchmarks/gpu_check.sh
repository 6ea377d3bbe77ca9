#!/usr/bin/env bash
# One prepared check of the cuda backend on a machine with an NVIDIA GPU (written for one H200:
# sm_90, x86-64, root, no network; cmake, ninja, g++ and nvcc present, MPI not needed). Builds for
# sm_90 only, runs the GPU tests as 2 and 4 processes sharing the GPU (device API, runtime, and the
# fused ops all_gather / ag_gemm / gemm_rs on device memory), then tessera-bench put and signal on
# the cuda backend. Every log goes to $OUT (default ./gpu-check-out). Under 8 minutes.
#
#   benchmarks/gpu_check.sh            # from the repository root
#   OUT=/somewhere benchmarks/gpu_check.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
OUT="${OUT:-$root/gpu-check-out}"
build="${TESSERA_GPU_BUILD_DIR:-$root/build-gpu-check}"
jobs="$(nproc)"
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"

# 1. What the machine has.
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed (see $OUT/nvidia-smi.txt)"
nvcc --version >"$OUT/nvcc.txt" 2>&1

# 2. Configure and build for sm_90 only (2-3 minutes on 16 cores). No examples, MPI or fabric,
#    and only the targets the checks below run (the host-backend suites are not rebuilt here).
timeout 120 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTESSERA_WERROR=ON -DTESSERA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DTESSERA_ENABLE_MPI=OFF -DTESSERA_ENABLE_FABRIC=OFF -DTESSERA_BUILD_EXAMPLES=OFF \
  >"$OUT/configure.log" 2>&1
timeout 300 cmake --build "$build" -j"$jobs" --target tessera-run tessera-bench \
  gpu_runtime_test gpu_device_test gpu_ops_test backend_select_test >"$OUT/build.log" 2>&1 ||
  { tail -n 40 "$OUT/build.log"; exit 1; }

# 3. The GPU tests: every program as 2 and 4 processes on the one GPU (TESSERA_BACKEND=cuda is
#    set by ctest): gpu_runtime_test (heap, peer mapping), gpu_device_test (device-API kernels),
#    gpu_ops_test (all_gather, ag_gemm push/pull f32/bf16 -- the tensor-core GEMM -- and gemm_rs,
#    checked against a double reference). A skip means the GPU was not visible: the check failed.
timeout 180 ctest --test-dir "$build" -L gpu --output-on-failure -j1 \
  >"$OUT/ctest-gpu.log" 2>&1 || { tail -n 40 "$OUT/ctest-gpu.log"; exit 1; }
if grep -q "Skipped" "$OUT/ctest-gpu.log"; then
  echo "gpu tests were skipped: no CUDA device visible (see $OUT/ctest-gpu.log)"
  exit 1
fi
timeout 60 ctest --test-dir "$build" -R backend_select --output-on-failure \
  >"$OUT/ctest-backend-select.log" 2>&1

# 4. Benchmarks on the cuda backend, 2 PEs on the one GPU (put: limit = cudaMemcpy device to
#    device of the same bytes; signal: limit = a raw one-block atomic ping-pong kernel). A failure
#    is recorded and fails the check at the end, after the other steps have run.
bench_failed=0
for bench in put signal; do
  status=0
  TESSERA_BACKEND=cuda timeout 60 "$build/bin/tessera-run" -np 2 --timeout 50 \
    "$build/bin/tessera-bench" "$bench" --json >"$OUT/bench-$bench-cuda.log" 2>&1 || status=$?
  echo "tessera-bench $bench on cuda: exit $status" | tee -a "$OUT/summary.txt"
  [ "$status" -eq 0 ] || bench_failed=1
done

# 5. The same benchmarks on the host backend of this machine, for comparison.
for bench in put signal; do
  TESSERA_BACKEND=host timeout 60 "$build/bin/tessera-run" -np 2 --timeout 50 \
    "$build/bin/tessera-bench" "$bench" --json >"$OUT/bench-$bench-host.log" 2>&1
done

grep -E "tests passed|Test +#" "$OUT/ctest-gpu.log" | tee -a "$OUT/summary.txt"
echo "gpu check done; logs in $OUT"
exit "$bench_failed"
