"""python -m tessera.bench, run (as a child of each pytest) by every PE of a tessera-run job with tiny sizes: PE 0 prints one
JSON row a point with tessera-bench's fields (timings are not checked)."""

import json
import subprocess
import sys

FIELDS = ["bench", "variant", "pes", "bytes", "iters", "time_us", "limit_time_us", "peer_time_us",
          "fraction_of_limit", "speedup_vs_peer"]


def test_bench_rows_carry_the_tessera_bench_fields():
    out = subprocess.run([sys.executable, "-m", "tessera.bench", "all", "--sizes", "4K",
                          "--iters", "2", "--json"], check=True, stdout=subprocess.PIPE,
                         text=True, timeout=240).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if not rows:  # PE != 0 prints nothing
        return
    benches = {(r["bench"], r["variant"]) for r in rows}
    assert {("python_overhead", "barrier"), ("python_overhead", "all_gather"),
            ("python_all_gather", "numpy"), ("python_all_to_all", "put_exchange"),
            ("python_all_to_all", "ops")} <= benches
    try:
        import torch  # noqa: F401  (the c10d rows need torch and gloo)
    except ImportError:
        torch = None
    if torch is not None and rows[0]["pes"] > 1:
        assert {("python_all_reduce", "c10d_float32"), ("python_all_reduce", "symmetric_bfloat16"),
                ("python_ddp_step", "mlp_10m")} <= benches, benches
    for r in rows:
        assert list(r)[: len(FIELDS)] == FIELDS, r
        assert r["time_us"] > 0 and r["iters"] == 2 and r["pes"] >= 1, r
        if r["bench"] == "python_all_reduce":  # DeepSpeed beside gloo, or why not
            assert ("deepspeed_time_us" in r and r["speedup_vs_deepspeed"] > 0) or r["deepspeed_note"], r
        if r["bench"] == "python_overhead":
            assert r["peer_time_us"] > 0 and "added_us" in r, r
        elif r["peer_time_us"] is None:
            assert "peer_note" in r, r
        else:
            assert r["speedup_vs_peer"] > 0, r
