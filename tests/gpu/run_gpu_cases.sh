#!/usr/bin/env bash
# Runs every gtest case of one GPU test program in its own job: `tessera-run -np NP PROGRAM
# --gtest_filter=CASE`, each under its own time limit. A device fault (__trap) poisons the
# CUDA/HIP context of the process it happens in, so with all cases in one process the first
# fault would fail every later case with the same error and hide their own outcome; here each
# case starts fresh processes and a fresh context.
#
#   run_gpu_cases.sh TESSERA_RUN NP CASE_TIMEOUT_S PROGRAM [GTEST_FILTER]
#
# Prints one line per case (ok / FAILED / skipped, seconds) and the output of each failed case,
# then a summary line. Exit status: 0 when no case failed and at least one passed; 77 (ctest's
# SKIP_RETURN_CODE) when every case skipped, after printing the skip message gtest gave (the
# true cause, e.g. "no CUDA device visible"); 1 when any case failed or timed out; 2 on a usage
# error or when the program lists no case.
set -u
if [ "$#" -lt 4 ]; then
  echo "usage: run_gpu_cases.sh TESSERA_RUN NP CASE_TIMEOUT_S PROGRAM [GTEST_FILTER]" >&2
  exit 2
fi
runner="$1" np="$2" limit="$3" program="$4" filter="${5:-*}"

# gtest's listing: "Suite." lines, then "  Case" lines (a "  # GetParam() = ..." tail dropped).
mapfile -t cases < <("$program" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | awk '
  /^[^ ]/ { suite = $1; next }
  /^  [^ ]/ { print suite $1 }')
if [ "${#cases[@]}" -eq 0 ]; then
  echo "run_gpu_cases: $program lists no test case (filter '$filter')"
  exit 2
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
passed=0 failed=0 skipped=0 cause=""
for c in "${cases[@]}"; do
  start=$SECONDS
  # In a subshell, so the shell's own "Aborted" report of a killed case lands in its log too.
  (
    timeout --kill-after=10 "$limit" "$runner" -np "$np" --timeout "$limit" "$program" \
      --gtest_filter="$c" </dev/null
    exit $?
  ) >"$log" 2>&1
  rc=$?
  secs=$((SECONDS - start))
  if [ "$rc" -eq 0 ] && grep -q '^\[  SKIPPED \]' "$log" && ! grep -q '^\[       OK \]' "$log"; then
    skipped=$((skipped + 1))
    # gtest prints "file:line: Skipped" and the message on the next line.
    why="$(grep -A1 ': Skipped$' "$log" | grep -v ': Skipped$' | grep -v '^--$' | head -n 1)"
    [ -n "$why" ] && cause="$why"
    echo "skipped $c (${secs}s): ${why:-no message}"
  elif [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "ok      $c (${secs}s)"
  else
    failed=$((failed + 1))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      echo "FAILED  $c (${secs}s): timed out after ${limit}s"
    else
      echo "FAILED  $c (${secs}s): exit status $rc"
    fi
    tail -n 40 "$log" | sed 's/^/    | /'
  fi
done

echo "gpu cases of $(basename "$program") with $np PEs: $passed passed, $failed failed, $skipped skipped"
if [ "$failed" -gt 0 ]; then exit 1; fi
if [ "$passed" -eq 0 ]; then
  echo "every case skipped: ${cause:-no skip message}"
  exit 77
fi
exit 0
