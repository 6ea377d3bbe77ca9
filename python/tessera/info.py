"""python -m tessera.info: what a job looks like from the inside, the same table as the
tessera-info tool (both print tessera::job_report). Run it under a launcher (tessera-run, mpirun,
torchrun) or alone; every PE takes part, PE 0 prints: PEs, backend, bootstrap and heap size; the
nodes and their PEs; per PE its node, NUMA node, proxy cores, fabric provider and NIC, and how it
reaches every PE."""

from __future__ import annotations

import os
import sys

import tessera


def main() -> int:
    # tessera-info's default heap: the report needs none of it.
    heap = None if os.environ.get("TESSERA_HEAP_SIZE") else "64M"
    with tessera.init(heap_size=heap) as rt:
        report = rt.job_report()
        if report:
            sys.stdout.write(report)
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
