"""A proxy ring in a tensor, with a consumer thread standing in for the proxy, and the
descriptor encoding written from device/tessera/device/proxy_wire.hpp: what the tests of the
Triton producer (tessera.triton._proxy) compare its pushes with, next to the C++ encoders
(tessera._tessera._encode_proxy_*).

A ring here is laid out as ProxyChannel: reserve (uint64 word 0), completed (word 8), failure
and n_slots (uint32 at bytes 128, 132), descriptors from byte 512, slot i's seq starting at i.
The consumer serves tickets in order like the proxy engine: it copies each published descriptor,
answers collected ones with a result chosen by the test (seq = t + 2), frees the others
(seq = t + n_slots) and advances `completed`."""

import os
import struct
import threading
import time

import torch

HEADER_BYTES = 512
DESCRIPTOR_BYTES = 64
_LAYOUT = struct.Struct("<QBBBBiQQQQQQ")

OPS = {"put": 1, "get": 2, "put_signal": 3, "signal": 4, "atomic": 5, "fetch_atomic": 6,
       "compare_atomic": 7, "fence": 8}
AMOS = {"add": 0, "and": 1, "or": 2, "xor": 3, "min": 4, "max": 5, "exchange": 6, "load": 7,
        "store": 8}
WORDS = {"i32": 0, "u32": 1, "i64": 2, "u64": 3}
FLAG_COLLECT = 1
FLAG_FENCED = 2


def descriptor(op, amo=0, word=0, flags=0, pe=0, remote_offset=0, local=0, nbytes=0,
               signal_offset=0, value=0, compare=0, seq=0):
    """The 64 bytes of a ProxyDescriptor (little endian)."""
    return _LAYOUT.pack(seq, op, amo, word, flags, pe, remote_offset, local, nbytes,
                        signal_offset, value & (2**64 - 1), compare & (2**64 - 1))


def fields(raw):
    """A descriptor's fields by name (for readable assertion messages)."""
    names = ("seq", "op", "amo", "word", "flags", "pe", "remote_offset", "local", "bytes",
             "signal_offset", "value", "compare")
    return dict(zip(names, _LAYOUT.unpack(raw)))


def _bits(word, v):
    """An operand as the descriptor carries it: 32-bit words zero-extended (proxy_bits)."""
    return v & (2**32 - 1) if word in (WORDS["i32"], WORDS["u32"]) else v & (2**64 - 1)


# --- the encoders of proxy_wire.hpp, one for one ---

def encode_rma(op, pe, remote_offset, local, nbytes):
    return descriptor(op, pe=pe, remote_offset=remote_offset, local=local, nbytes=nbytes)


def encode_put_signal(pe, remote_offset, local, nbytes, signal_offset, value, sig_op):
    return descriptor(OPS["put_signal"], pe=pe, remote_offset=remote_offset, local=local,
                      nbytes=nbytes, signal_offset=signal_offset, value=value, compare=sig_op)


def encode_signal(pe, signal_offset, value, sig_op, fenced):
    return descriptor(OPS["signal"], flags=FLAG_FENCED if fenced else 0, pe=pe,
                      signal_offset=signal_offset, value=value, compare=sig_op)


def encode_atomic(op, amo, word, pe, remote_offset, value, compare, fenced):
    flags = (FLAG_COLLECT if op != OPS["atomic"] else 0) | (FLAG_FENCED if fenced else 0)
    return descriptor(op, amo=amo, word=word, flags=flags, pe=pe, remote_offset=remote_offset,
                      value=_bits(word, value), compare=_bits(word, compare))


def encode_fence(my_pe):
    return descriptor(OPS["fence"], pe=my_pe)


class FakeRing:
    """A ring of `n_slots` descriptors in a CPU tensor. With serve(), a thread plays the proxy:
    `result(ticket, raw)` gives the value a collected descriptor returns."""

    def __init__(self, n_slots):
        self.n_slots = n_slots
        self.words = torch.zeros((HEADER_BYTES + n_slots * DESCRIPTOR_BYTES) // 8,
                                 dtype=torch.int64)
        self.words.view(torch.int32)[33] = n_slots
        for s in range(n_slots):
            self.words[self._slot(s)] = s
        self.seen = []  # descriptors in ticket order, seq as published
        self._stop = threading.Event()
        self._thread = None

    @property
    def address(self):
        return self.words.data_ptr()

    @property
    def reserve(self):
        return int(self.words[0])

    @property
    def completed(self):
        return int(self.words[8])

    def seq(self, ticket):
        return int(self.words[self._slot(ticket)])

    def fail(self, code):
        """Marks the proxy as failed with FailureCode `code`, as the engine does."""
        self.words.view(torch.int32)[32] = code + 1

    def _slot(self, ticket):
        return (HEADER_BYTES + (ticket % self.n_slots) * DESCRIPTOR_BYTES) // 8

    def serve(self, result=lambda ticket, raw: 0):
        def run():
            raw_bytes = self.words.numpy().view("u1")
            t = 0
            while not self._stop.is_set():
                s = self._slot(t)
                if int(self.words[s]) != t + 1:
                    os.sched_yield()  # lets the producer (the interpreter's thread) run
                    continue
                raw = bytes(raw_bytes[s * 8:s * 8 + DESCRIPTOR_BYTES])
                self.seen.append(raw)
                if raw[11] & FLAG_COLLECT:
                    self.words[s + 6] = _signed(result(t, raw))
                    self.words[s] = t + 2
                else:
                    self.words[s] = t + self.n_slots
                self.words[8] = t + 1
                t += 1

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        return self

    def served_all(self, timeout_s=10.0):
        """The descriptors served, once the consumer has caught up with every ticket handed out
        (descriptors that were not waited for may still be in flight when a kernel returns)."""
        deadline = time.monotonic() + timeout_s
        while self.completed < self.reserve:
            assert time.monotonic() < deadline, (
                f"the consumer served {self.completed} of {self.reserve} tickets")
            os.sched_yield()
        return self.seen

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def published(self):
        """Descriptors still in the ring (no consumer): ticket t's slot, for t < reserve."""
        raw_bytes = self.words.numpy().view("u1")
        out = []
        for t in range(self.reserve):
            s = self._slot(t)
            out.append(bytes(raw_bytes[s * 8:s * 8 + DESCRIPTOR_BYTES]))
        return out


def _signed(v):
    """A 64-bit pattern as the int64 a tensor word holds."""
    v &= 2**64 - 1
    return v - 2**64 if v >= 2**63 else v


def without_seq(raw):
    return b"\0" * 8 + raw[8:]
