"""One PE of a job with an injected fault, for tests/python/test_faults.py. Usage:
    fault_job.py never-signalled   PE 0 waits for a signal nobody sends; the others wait in a
                                   device barrier with twice the bound, so PE 0's wait expires first
    fault_job.py die-in-wait       PE 1 SIGKILLs itself while PE 0 waits for its signal
Prints "PE p: <ExceptionClass>: <str(e)>" and exits 3 (TimeoutError), 42 (PeerLostError), 1
otherwise."""

import os
import signal
import sys

import tessera


def main(mode):
    rt = tessera.init()
    try:
        pad = rt.zeros(24, "uint64")  # so the signal is not at offset 0
        sig = rt.zeros(1, "uint64")
        rt.barrier()
        print(f"PE {rt.pe}: armed", flush=True)
        if mode == "never-signalled":
            if rt.pe == 0:
                rt.wait_until(sig, ">=", 1)
            else:
                rt.device_barrier(timeout=2 * rt.timeout)
        elif mode == "die-in-wait":
            if rt.pe == 1:
                os.kill(os.getpid(), signal.SIGKILL)
            if rt.pe == 0:
                rt.wait_until(sig, ">=", 1)
            else:
                rt.device_barrier(timeout=2 * rt.timeout)
        print(f"PE {rt.pe}: no error (offset {sig.offset}, pad {pad.offset})", flush=True)
        return 1
    except tessera.Error as e:
        print(f"PE {rt.pe}: {type(e).__name__}: {e} [e.pe={e.pe}]", flush=True)
        if isinstance(e, tessera.TimeoutError):
            return 3
        if isinstance(e, tessera.PeerLostError):
            return 42
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
