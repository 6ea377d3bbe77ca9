"""python -m tessera.info: what a job looks like from the inside, like the tessera-info tool. Run
it under a launcher (tessera-run, mpirun, torchrun) or alone; every PE reports, PE 0 prints one
table: PEs, backend, heap size, and per PE its node and how it reaches every PE."""

from __future__ import annotations

import socket
import sys

import tessera

_LETTER = {"self": "s", "mapped": "m", "proxy": "p", "unreachable": "u"}
_RECORD = 256  # bytes per PE: "node|node_pe|transports"


def _gather(rt, text):
    import numpy as np  # only for building the record; the gather itself is the library's

    raw = text.encode()[: _RECORD - 1].ljust(_RECORD, b"\0")
    with rt.zeros((rt.n_pes, _RECORD), "uint8") as table:
        tessera.ops.all_gather(rt, np.frombuffer(raw, np.uint8), table)
        rt.synchronize()
        rows = [bytes(row).rstrip(b"\0").decode() for row in np.from_dlpack(table)]
        rt.barrier()
    return rows


def main() -> int:
    with tessera.init(heap_size="16M") as rt:
        transports = "".join(_LETTER[rt.transport(pe)] for pe in range(rt.n_pes))
        rows = _gather(rt, f"{socket.gethostname()}|{rt.node}|{rt.node_pe}|{transports}")
        if rt.pe != 0:
            return 0
        print(f"tessera {tessera.__version__}: {rt.n_pes} PE(s), backend {rt.backend}, "
              f"heap {rt.heap_size >> 20} MiB per PE, timeout {rt.timeout:g} s")
        print(f"{'PE':>4} {'host':<20} {'node':>4} {'node_pe':>7}  reaches PE 0.. (s=self m=mapped p=proxy u=unreachable)")
        for pe, row in enumerate(rows):
            host, node_index, node_pe, letters = row.split("|")
            print(f"{pe:>4} {host:<20} {node_index:>4} {node_pe:>7}  {letters}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
