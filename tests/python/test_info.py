"""python -m tessera.info under tessera-run: PE 0 prints tessera-info's table."""

import os
import subprocess
import sys

import pytest


def test_info_two_pretend_nodes():
    launcher = os.environ.get("TESSERA_RUN")
    if not launcher:
        pytest.skip("TESSERA_RUN (the tessera-run binary) is not set; ctest sets it")
    out = subprocess.run([launcher, "-np", "2", "--node-ids", "a,b", sys.executable, "-m", "tessera.info"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120, check=True).stdout
    assert "tessera-info: 2 PEs, backend host" in out, out
    assert "node 1 'b': PEs 1" in out, out
    rows = [line.split() for line in out.splitlines() if line.startswith(("0 ", "1 "))]
    assert [r[-1] for r in rows] == ["self,proxy", "proxy,self"], out
