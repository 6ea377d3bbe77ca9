"""One PE of a job with an injected fault, for tests/python/test_faults.py. Usage:
    fault_job.py never-signalled   PE 0 waits for a signal nobody sends; the others wait in a
                                   device barrier with twice the bound, so PE 0's wait expires first
    fault_job.py die-in-wait       PE 1 SIGKILLs itself while PE 0 waits for its signal
    fault_job.py sigint-in-wait    PE 0 gets SIGINT (from a thread of its own, once PE 1 said it
                                   is waiting and PE 0's wait has SIGINT armed) in a wait nobody
                                   ends; PE 1 waits likewise
Prints "PE p: pid <pid>", then "PE p: <ExceptionClass>: <str(e)>" and exits 3 (TimeoutError),
42 (PeerLostError), 130 (KeyboardInterrupt), 1 otherwise."""

import os
import signal
import sys
import threading
import time

import numpy as np

import tessera
from tessera import _tessera


def say(line):
    """One write per line: the PEs share the launcher's stdout, and print() writes the line and
    its newline apart, so lines of two PEs could run together."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def interrupt_when_waiting(ready):
    """Sends SIGINT to this process once the peer is waiting (it set `ready`) and the main
    thread's wait has armed the handler; gives up after 20 s."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if ready[0] >= 1 and _tessera._sigint_abort_armed():
            os.kill(os.getpid(), signal.SIGINT)
            return
        os.sched_yield()


def main(mode):
    rt = tessera.init()
    try:
        pad = rt.zeros(24, "uint64")  # so the signal is not at offset 0
        sig = rt.zeros(1, "uint64")
        rt.barrier()
        say(f"PE {rt.pe}: armed")
        say(f"PE {rt.pe}: pid {os.getpid()}")
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
        elif mode == "sigint-in-wait":
            ready = rt.zeros(1, "uint64")
            if rt.pe == 0:
                threading.Thread(target=interrupt_when_waiting, args=(np.from_dlpack(ready),),
                                 daemon=True).start()
                try:
                    rt.wait_until(sig, ">=", 1)
                except KeyboardInterrupt as e:
                    say(f"PE {rt.pe}: KeyboardInterrupt: {e}")
                    return 130
            else:
                rt.signal(ready, 1, 0)
                rt.wait_until(sig, ">=", 1)
        say(f"PE {rt.pe}: no error (offset {sig.offset}, pad {pad.offset})")
        return 1
    except tessera.Error as e:
        say(f"PE {rt.pe}: {type(e).__name__}: {e} [e.pe={e.pe}]")
        if isinstance(e, tessera.TimeoutError):
            return 3
        if isinstance(e, tessera.PeerLostError):
            return 42
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
