#!/usr/bin/env bash
# Host test of run_gpu_cases.sh with a stand-in for tessera-run and a fake gtest program: a
# case that aborts (as a __trap would) must not hide the cases after it, every case must run in
# its own job, an all-skipped program must exit 77 with the skip cause, and a hang must be
# reported as a timeout.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# tessera-run stand-in: skips -np N and --timeout S, runs the program once, records the call.
cat >"$tmp/run" <<'RUN'
#!/usr/bin/env bash
shift 2; shift 2
echo "$*" >>"$(dirname "$0")/calls"
exec "$@"
RUN
# A fake gtest program: Dev.Traps aborts, Dev.Passes and Typed/0.Late pass, Dev.Hangs hangs
# when HANG is set; SKIPALL makes every case skip with a message.
cat >"$tmp/prog" <<'PROG'
#!/usr/bin/env bash
case "$1" in
  --gtest_list_tests) [ "$2" = "--gtest_filter=None.*" ] && exit 0
    printf 'Dev.\n  Traps\n  Passes\n  Hangs\nTyped/0.  # TypeParam = int\n  Late\n'; exit 0;;
esac
f="${2#--gtest_filter=}"; [ "$1" = "--gtest_list_tests" ] || f="${1#--gtest_filter=}"
if [ -n "${SKIPALL:-}" ]; then
  printf 'x.cu:1: Skipped\nno CUDA device visible: driver too old\n[  SKIPPED ] %s\n' "$f"; exit 0
fi
case "$f" in
  Dev.Traps) echo "device fault: unspecified launch failure"; kill -ABRT $$;;
  Dev.Hangs) [ -n "${HANG:-}" ] && exec sleep 30; echo "[       OK ] $f";;
  *) echo "[       OK ] $f";;
esac
PROG
chmod +x "$tmp/run" "$tmp/prog"

out="$("$here/run_gpu_cases.sh" "$tmp/run" 2 20 "$tmp/prog")"; rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "a trapping case: exit $rc, expected 1"
grep -q '^FAILED  Dev.Traps .*exit status 134' <<<"$out" || fail "the trap is not reported"
grep -q '| device fault: unspecified launch failure' <<<"$out" || fail "no output of the failed case"
grep -q '^ok      Dev.Passes' <<<"$out" || fail "a case after the trap did not run"
grep -q '^ok      Typed/0.Late' <<<"$out" || fail "the parameterised case did not run"
grep -q ': 3 passed, 1 failed, 0 skipped$' <<<"$out" || fail "summary line"
[ "$(wc -l <"$tmp/calls")" -eq 4 ] || fail "expected 4 jobs, one per case: $(cat "$tmp/calls")"
grep -q -- '--gtest_filter=Typed/0.Late$' "$tmp/calls" || fail "filter of the typed case"

out="$(SKIPALL=1 "$here/run_gpu_cases.sh" "$tmp/run" 2 20 "$tmp/prog")"; rc=$?
[ "$rc" -eq 77 ] || fail "all skipped: exit $rc, expected 77"
grep -q 'every case skipped: no CUDA device visible: driver too old' <<<"$out" ||
  fail "the skip cause is not printed: $out"

out="$(HANG=1 "$here/run_gpu_cases.sh" "$tmp/run" 2 2 "$tmp/prog" 'Dev.Hangs')"; rc=$?
[ "$rc" -eq 1 ] || fail "a hang: exit $rc, expected 1"
grep -q 'FAILED  Dev.Hangs .*timed out after 2s' <<<"$out" || fail "the hang is not a timeout: $out"

out="$("$here/run_gpu_cases.sh" "$tmp/run" 2 2 "$tmp/prog" 'None.*')"; rc=$?
[ "$rc" -eq 2 ] || fail "no case: exit $rc, expected 2"
grep -q 'lists no test case' <<<"$out" || fail "no-case message: $out"
echo "run_gpu_cases_test: ok"
