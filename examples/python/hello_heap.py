"""Every PE allocates one symmetric array, writes its PE number into its right neighbour's copy
through a zero-copy peer view (or put, when the neighbour is on another node), and checks what its
left neighbour wrote.

    tessera-run -np 4 python examples/python/hello_heap.py
    mpirun -np 4 python examples/python/hello_heap.py
"""

import sys

import numpy as np

import tessera


def main():
    with tessera.init(heap_size="16M") as rt:
        right, left = (rt.pe + 1) % rt.n_pes, (rt.pe - 1) % rt.n_pes
        with rt.zeros(8, "int64") as box:  # collective: the same offset on every PE
            mine = np.full(8, rt.pe, np.int64)
            if rt.transport(right) in ("self", "mapped"):
                np.from_dlpack(rt.peer(box, right))[:] = mine  # a store into the peer's heap
            else:
                rt.put(box, mine, right)
            rt.barrier()
            got = np.from_dlpack(box)  # this PE's copy, no copy made
            ok = bool((got == left).all())
            print(f"PE {rt.pe}/{rt.n_pes}: heap offset {box.offset}, got {got[0]} from PE {left}: "
                  f"{'ok' if ok else 'WRONG'}", flush=True)
            rt.barrier()
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
