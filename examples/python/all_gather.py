"""tessera.ops.all_gather on NumPy arrays, checked against the NumPy reference.

    mpirun -np 2 python examples/python/all_gather.py [elements per PE]
"""

import sys

import numpy as np

import tessera


def main(count):
    with tessera.init(heap_size="256M") as rt:
        contribution = lambda pe: (np.arange(count, dtype=np.float32) * (pe + 1)) % 1000
        send = contribution(rt.pe)
        with rt.empty((rt.n_pes, count), "float32") as recv:  # symmetric: every PE writes into it
            tessera.ops.all_gather(rt, send, recv)
            rt.synchronize()
            expected = np.stack([contribution(pe) for pe in range(rt.n_pes)])
            ok = np.array_equal(np.from_dlpack(recv), expected)
            rt.barrier()
        print(f"PE {rt.pe}: all_gather of {count} float32 per PE over {rt.n_pes} PEs: "
              f"{'ok' if ok else 'WRONG'}", flush=True)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 16))
