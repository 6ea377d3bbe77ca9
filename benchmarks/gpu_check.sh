#!/usr/bin/env bash
# One prepared check of the cuda backend, sized for a 10-minute slot on a lent GPU machine
# (written for one H200: sm_90, x86-64, 16 cores, root, no network; cmake, g++ and nvcc present;
# ninja used when present; MPI not needed). What each step proves: docs/gpu.md, "Checking on a
# GPU machine".
#
#   benchmarks/gpu_check.sh                      # from anywhere; logs in ./gpu-check-out
#   OUT=/somewhere benchmarks/gpu_check.sh
#   TESSERA_GPU_CHECK_BUDGET_S=600               # the slot (default 600 s)
#
# Steps: machine facts and MPS -> configure + build for sm_90 only, all cores, only the targets
# below (build time printed) -> preflight (tessera-info --gpu) -> every GPU test program with 2
# and 4 PEs on the one GPU, each gtest case its own job (tests/gpu/run_gpu_cases.sh), each
# program under its own timeout, per-program times; gpu_graphs_test is the capture-and-replay
# program (CUDA graphs, 1000 replays per case with MPS, 200 without) -> tessera-bench put,
# signal, all_gather --graph, all_reduce --graph, ag_gemm on cuda (--graph: each call also
# captured once and timed as replays). A failing step never stops the later ones; a step that
# would overrun the slot is skipped and says so. At most 8 files in $OUT; the last line printed (and the last
# line of $OUT/summary.txt) is the summary. Exit status 0 only when every step passed.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 2
OUT="${OUT:-$root/gpu-check-out}"
build="${TESSERA_GPU_BUILD_DIR:-$root/build-gpu-check}"
budget="${TESSERA_GPU_CHECK_BUDGET_S:-600}"
jobs="$(nproc)"
start_s=$SECONDS
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
summary="$OUT/summary.txt"
: >"$summary"
failed_steps=()

# The logs ($OUT holds these 7 files and nothing else).
machine_log="$OUT/machine.txt"  # nvidia-smi, nvcc, MPS
build_log="$OUT/build.log"      # configure + build
preflight_log="$OUT/preflight.log"
tests_np2_log="$OUT/tests-np2.log"
tests_np4_log="$OUT/tests-np4.log"
bench_log="$OUT/bench.log"

note() { echo "$*" | tee -a "$summary"; }
# Seconds left in the slot, keeping `reserve` for what must still run after.
left() { echo $((budget - (SECONDS - start_s) - ${1:-0})); }
# step NAME CAP_S RESERVE_S LOG CMD...: runs CMD under timeout min(CAP, time left - RESERVE),
# its output appended to LOG; records ok / FAILED (status) / skipped (no time left, or its
# program was not built) in the summary; never stops the script.
step() {
  local name="$1" cap="$2" reserve="$3" log="$4"
  shift 4
  local prog="$1"
  # A test program run through run_gpu_cases.sh (bash SCRIPT RUNNER NP LIMIT PROGRAM FILTER):
  # PROGRAM, not the filter after it.
  [ "$prog" = bash ] && prog="${6:-}"
  if [[ "$prog" == */* && ! -x "$prog" ]]; then
    note "step $name: FAILED, not built ($prog missing)"
    failed_steps+=("$name")
    return 1
  fi
  local limit
  limit="$(left "$reserve")"
  [ "$limit" -gt "$cap" ] && limit="$cap"
  if [ "$limit" -lt 5 ]; then
    note "step $name: skipped, no time left in the ${budget}s slot"
    failed_steps+=("$name(no time)")
    return 1
  fi
  local t0=$SECONDS rc=0
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1 </dev/null || rc=$?
  local took=$((SECONDS - t0))
  if [ "$rc" -eq 0 ]; then
    note "step $name: ok (${took}s)"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    note "step $name: FAILED, timed out after ${limit}s"
    failed_steps+=("$name")
  else
    note "step $name: FAILED, exit status $rc (${took}s)"
    failed_steps+=("$name")
  fi
  return "$rc"
}

# 1. What the machine has, and MPS. Without MPS the PEs' processes time-slice the GPU: kernels
#    of different PEs never run at once and every cross-PE handshake waits for a context
#    switch. The tests' round counts finish either way; MPS makes them faster and concurrent.
{
  echo "== nvidia-smi"
  nvidia-smi 2>&1 || echo "nvidia-smi failed or is missing"
  echo "== nvidia-smi -q (compute mode, MIG)"
  nvidia-smi -q 2>&1 | grep -Ei "compute mode|mig mode|current *:|pending *:" | head -n 10
  echo "== nvcc"
  nvcc --version 2>&1 || echo "nvcc missing"
  echo "== cores: $jobs"
} >"$machine_log" 2>&1
mps="not started"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  mps="not started: no GPU visible to nvidia-smi"
elif ! command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
  mps="not started: nvidia-cuda-mps-control not installed"
elif [ "$(id -u)" -ne 0 ]; then
  mps="not started: not root"
elif echo get_server_list | nvidia-cuda-mps-control >/dev/null 2>&1; then
  mps="already running"
elif nvidia-cuda-mps-control -d >>"$machine_log" 2>&1; then
  mps="started (nvidia-cuda-mps-control -d)"
else
  mps="not started: nvidia-cuda-mps-control -d failed (see machine.txt)"
fi
echo "== MPS: $mps" >>"$machine_log"
note "MPS: $mps"

# 2. Configure and build for sm_90 only, with every core; only what the later steps run (no
#    examples, MPI, fabric or Python; the host-backend suites are not built).
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
gpu_tests=(gpu_runtime_test gpu_ops_test gpu_litmus_test gpu_stress_test gpu_device_suites_test
  gpu_graphs_test)
# The cases each program runs here. The typed suites have 64 cases (a job each, processes
# starting on a GPU shared by 2-4 of them): their 32 Block, atomic and one-thread calls cases are
# what fits the slot; the Thread and Warp cases of the same kernels run in a longer session
# (run_gpu_cases.sh without a filter, or ctest -L gpu).
cases_of() {
  case "$1" in
    gpu_device_suites_test)
      echo '*_Block_*:*Atomic_*:*Calls_ScalarPAndG*:*Calls_Tests*:*Calls_Epoch*:*Calls_Float*' ;;
    gpu_graphs_test) echo 'CudaGraphs.*' ;;  # all 12 cases
    *) echo '*' ;;
  esac
}
# gpu_graphs_test's replays per case (TESSERA_GRAPH_REPLAYS, the program's default 1000): each
# replay is a graph launch, a stream synchronize and host copies in and out, and without MPS each
# of its cross-PE handshakes waits for a context switch, so 200 there.
if [[ "$mps" == "not started"* ]]; then
  export TESSERA_GRAPH_REPLAYS="${TESSERA_GRAPH_REPLAYS:-200}"
else
  export TESSERA_GRAPH_REPLAYS="${TESSERA_GRAPH_REPLAYS:-1000}"
fi
note "gpu_graphs_test: $TESSERA_GRAPH_REPLAYS replays per case"
build_t0=$SECONDS
: >"$build_log"
step configure 90 300 "$build_log" cmake -S . -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_WERROR=ON -DTESSERA_ENABLE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTESSERA_ENABLE_MPI=OFF -DTESSERA_ENABLE_FABRIC=OFF \
  -DTESSERA_BUILD_EXAMPLES=OFF -DTESSERA_BUILD_PYTHON=OFF
# The build may take what leaves 5 minutes for the rest.
step build 300 300 "$build_log" cmake --build "$build" -j"$jobs" --target tessera-run \
  tessera-bench tessera-info "${gpu_tests[@]}" || tail -n 30 "$build_log"
note "build time: $((SECONDS - build_t0))s; $(left)s of the slot left"
bin="$build/bin"

# 3. Preflight: every fact a first run depends on, failing with the cause.
: >"$preflight_log"
step preflight 30 200 "$preflight_log" "$bin/tessera-info" --gpu || tail -n 20 "$preflight_log"

# 4. The GPU test programs, 2 and 4 PEs sharing the GPU. Each gtest case is its own job, so a
#    device fault in one cannot hide the rest; a program's cases share its timeout. A program
#    whose every case skipped (exit 77: no device visible) counts as failed here.
for np in 2 4; do
  log="$tests_np2_log"
  [ "$np" -eq 4 ] && log="$tests_np4_log"
  : >"$log"
  for t in "${gpu_tests[@]}"; do
    echo "== $t, $np PEs" >>"$log"
    TESSERA_BACKEND=cuda step "$t-np$np" 60 60 "$log" bash "$root/tests/gpu/run_gpu_cases.sh" \
      "$bin/tessera-run" "$np" 30 "$bin/$t" "$(cases_of "$t")"
    grep -E "^gpu cases of|^every case skipped" "$log" | tail -n 1 | tee -a "$summary"
  done
done

# 5. Benchmarks on the cuda backend, 2 PEs on the one GPU. --graph: the collectives' calls are
#    also captured once and replayed (rows <variant>/graph, with ordinary_us and replay_speedup);
#    all_reduce at 3 sizes only (5 algorithms, twice each), to stay within its 45 s.
: >"$bench_log"
benches=("put" "signal" "all_gather --graph" "all_reduce --graph --sizes 4096,262144,4194304"
  "ag_gemm")
for b in "${benches[@]}"; do
  read -r -a args <<<"$b"
  echo "== tessera-bench $b on cuda, 2 PEs" >>"$bench_log"
  TESSERA_BACKEND=cuda step "bench-${args[0]}" 45 0 "$bench_log" "$bin/tessera-run" -np 2 \
    --timeout 40 "$bin/tessera-bench" "${args[@]}" --json
done

total=$((SECONDS - start_s))
if [ "${#failed_steps[@]}" -eq 0 ]; then
  note "gpu check: PASSED, every step ok, ${total}s of ${budget}s; MPS $mps; logs in $OUT"
  exit 0
fi
note "gpu check: FAILED ${#failed_steps[@]} step(s): ${failed_steps[*]}; ${total}s of ${budget}s; MPS $mps; logs in $OUT"
exit 1
