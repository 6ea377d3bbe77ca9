"""The numbers tessera.triton shares with the C++ library: the words of the context tensor
(device/tessera/device/flat_context.hpp), of the control page (Context::kBarrier*, kAbortWord),
of the failure record (failure_record.hpp), and the enums of Cmp, SignalOp and FailureCode.

C++ defines them once; the binding exports them as tessera.TRITON_CONTEXT_WORDS and
tests/triton/test_layout.py holds the dicts below equal to it. Jit code reads the tl.constexpr
copies, which the compiler folds into the kernel."""

import triton.language as tl

# Word index in the context tensor (int64) -> meaning. Pointers are addresses.
CONTEXT_WORDS = {
    "my_pe": 0,
    "n_pes": 1,
    "heap_size": 2,
    "timeout_ns": 3,
    "flags": 4,
    "peer_base": 5,
    "control_page": 6,
    "proxy": 7,
    "allocations": 8,
    "failure_record": 9,
    "control_offset": 10,  # the control page's segment offset (network proxy descriptors)
    "header_words": 16,
    "heap_bases": 16,  # + pe: the heap base of pe as mapped here, 0 where it is not
    # then, at heap_bases + n_pes + pe: the control page of pe as mapped here, 0 where it is not
}

# uint64 word index into a PE's control page. Peers write its first 4096 bytes, found through
# the context's control pages (never at an offset from a heap base: on a GPU's IPC path the
# control area is an allocation of its own); barrier_seen has a word for each of the first
# barrier_seen_pes PEs.
CONTROL_WORDS = {
    "barrier_arrivals": 0,
    "barrier_entered": 8,
    "abort_word": 16,
    "barrier_seen": 24,  # + pe
    "barrier_seen_pes": 488,
    "failure_record": 12800,  # this PE's own failure record (context word failure_record)
}

# Word index in a team tensor (tx.team(rt, team), device/tessera/device/flat_context.hpp
# FlatTeam) -> meaning. Pointers are addresses.
TEAM_WORDS = {"start": 0, "stride": 1, "size": 2, "my_rank": 3, "workspace": 4,
              "workspace_bytes": 5, "barrier_words": 6, "words": 8}

# uint64 word index into a team's barrier words (C++ device::TeamBarrierWords, team.hpp; the
# binding places them, python/src/team.cpp): the arrival counter every member adds to, this PE's
# count of barriers entered, and member r's count of barriers entered at seen + r.
TEAM_BARRIER = {"arrivals": 0, "entered": 8, "seen": 16}

FAILURE_WORDS = {"state": 0, "code": 1, "kind": 2, "op": 3, "pe": 4, "args": 5, "arg_count": 11,
                 "words": 16}
FAILURE_STATES = {"empty": 0, "writing": 1, "complete": 2}
FAILURE_CODES = {"timeout": 0, "invalid_argument": 1, "transport": 2, "peer_lost": 3}
FAILURE_KINDS = {
    "wait_timeout": 1,
    "barrier_timeout": 2,
    "aborted": 3,
    "pe_out_of_range": 4,
    "pe_not_mapped": 5,
    "outside_heap": 6,
    "proxy_timeout": 7,  # the ring waits of _proxy.py
    "proxy_failed": 8,
    "misaligned": 9,  # C++ checked mode's misaligned word (Triton kernels do not check alignment)
    "team_not_member": 10,  # the team barrier
    "team_barrier_timeout": 11,
    "some_timeout": 12,  # wait_until_some: the C++ "none of k awaited signals" text
}
_OPS = ("translate", "load", "store", "put", "get", "atomic_add", "atomic_sub", "atomic_xchg",
        "atomic_cas", "atomic_and", "atomic_or", "atomic_xor", "atomic_min", "atomic_max",
        "signal", "put_signal", "wait_until", "barrier", "fence", "quiet", "test", "test_any",
        "test_all", "wait_until_some", "p", "g", "test_some")
FAILURE_OPS = {name: i for i, name in enumerate(_OPS)}
_ROLES = ("pointer", "destination tile", "source tile", "signal", "signals")
FAILURE_ROLES = {name: i for i, name in enumerate(_ROLES)}

CMP = {"eq": 0, "ne": 1, "gt": 2, "ge": 3, "lt": 4, "le": 5}
SIGNAL_OPS = {"set": 0, "add": 1}
ABORT_REASONS = {"failed": 1, "died": 2}
CONTEXT_FLAGS = {"checked": 1}

# All of it as the binding spells it (tessera.TRITON_CONTEXT_WORDS).
LAYOUT = {
    **CONTEXT_WORDS,
    "control_words": CONTROL_WORDS,
    "team_words": TEAM_WORDS,
    "failure_words": FAILURE_WORDS,
    "failure_states": FAILURE_STATES,
    "failure_codes": FAILURE_CODES,
    "failure_kinds": FAILURE_KINDS,
    "failure_ops": FAILURE_OPS,
    "failure_roles": FAILURE_ROLES,
    "cmp": CMP,
    "signal_ops": SIGNAL_OPS,
    "abort_reasons": ABORT_REASONS,
    "context_flags": CONTEXT_FLAGS,
}

# The same numbers as constexprs, for jit code.
MY_PE = tl.constexpr(CONTEXT_WORDS["my_pe"])
N_PES = tl.constexpr(CONTEXT_WORDS["n_pes"])
HEAP_SIZE = tl.constexpr(CONTEXT_WORDS["heap_size"])
TIMEOUT_NS = tl.constexpr(CONTEXT_WORDS["timeout_ns"])
FLAGS = tl.constexpr(CONTEXT_WORDS["flags"])
CONTROL_PAGE = tl.constexpr(CONTEXT_WORDS["control_page"])
PROXY = tl.constexpr(CONTEXT_WORDS["proxy"])
FAILURE_RECORD = tl.constexpr(CONTEXT_WORDS["failure_record"])
CONTROL_OFFSET = tl.constexpr(CONTEXT_WORDS["control_offset"])
HEAP_BASES = tl.constexpr(CONTEXT_WORDS["heap_bases"])

BARRIER_ARRIVALS = tl.constexpr(CONTROL_WORDS["barrier_arrivals"])
BARRIER_ENTERED = tl.constexpr(CONTROL_WORDS["barrier_entered"])
ABORT_WORD = tl.constexpr(CONTROL_WORDS["abort_word"])
BARRIER_SEEN = tl.constexpr(CONTROL_WORDS["barrier_seen"])
BARRIER_SEEN_PES = tl.constexpr(CONTROL_WORDS["barrier_seen_pes"])

TEAM_START = tl.constexpr(TEAM_WORDS["start"])
TEAM_STRIDE = tl.constexpr(TEAM_WORDS["stride"])
TEAM_SIZE = tl.constexpr(TEAM_WORDS["size"])
TEAM_MY_RANK = tl.constexpr(TEAM_WORDS["my_rank"])
TEAM_BARRIER_WORDS = tl.constexpr(TEAM_WORDS["barrier_words"])
TEAM_BARRIER_ARRIVALS = tl.constexpr(TEAM_BARRIER["arrivals"])
TEAM_BARRIER_ENTERED = tl.constexpr(TEAM_BARRIER["entered"])
TEAM_BARRIER_SEEN = tl.constexpr(TEAM_BARRIER["seen"])

REC_STATE = tl.constexpr(FAILURE_WORDS["state"])
REC_CODE = tl.constexpr(FAILURE_WORDS["code"])
REC_KIND = tl.constexpr(FAILURE_WORDS["kind"])
REC_OP = tl.constexpr(FAILURE_WORDS["op"])
REC_PE = tl.constexpr(FAILURE_WORDS["pe"])
REC_ARGS = tl.constexpr(FAILURE_WORDS["args"])
REC_EMPTY = tl.constexpr(FAILURE_STATES["empty"])
REC_WRITING = tl.constexpr(FAILURE_STATES["writing"])
REC_COMPLETE = tl.constexpr(FAILURE_STATES["complete"])

CODE_TIMEOUT = tl.constexpr(FAILURE_CODES["timeout"])
CODE_INVALID_ARGUMENT = tl.constexpr(FAILURE_CODES["invalid_argument"])
CODE_TRANSPORT = tl.constexpr(FAILURE_CODES["transport"])
CODE_PEER_LOST = tl.constexpr(FAILURE_CODES["peer_lost"])

KIND_WAIT_TIMEOUT = tl.constexpr(FAILURE_KINDS["wait_timeout"])
KIND_BARRIER_TIMEOUT = tl.constexpr(FAILURE_KINDS["barrier_timeout"])
KIND_ABORTED = tl.constexpr(FAILURE_KINDS["aborted"])
KIND_PE_OUT_OF_RANGE = tl.constexpr(FAILURE_KINDS["pe_out_of_range"])
KIND_PE_NOT_MAPPED = tl.constexpr(FAILURE_KINDS["pe_not_mapped"])
KIND_OUTSIDE_HEAP = tl.constexpr(FAILURE_KINDS["outside_heap"])
KIND_PROXY_TIMEOUT = tl.constexpr(FAILURE_KINDS["proxy_timeout"])
KIND_PROXY_FAILED = tl.constexpr(FAILURE_KINDS["proxy_failed"])
KIND_TEAM_NOT_MEMBER = tl.constexpr(FAILURE_KINDS["team_not_member"])
KIND_TEAM_BARRIER_TIMEOUT = tl.constexpr(FAILURE_KINDS["team_barrier_timeout"])
KIND_SOME_TIMEOUT = tl.constexpr(FAILURE_KINDS["some_timeout"])

OP_TRANSLATE = tl.constexpr(FAILURE_OPS["translate"])
OP_LOAD = tl.constexpr(FAILURE_OPS["load"])
OP_STORE = tl.constexpr(FAILURE_OPS["store"])
OP_PUT = tl.constexpr(FAILURE_OPS["put"])
OP_GET = tl.constexpr(FAILURE_OPS["get"])
OP_ATOMIC_ADD = tl.constexpr(FAILURE_OPS["atomic_add"])
OP_ATOMIC_SUB = tl.constexpr(FAILURE_OPS["atomic_sub"])
OP_ATOMIC_XCHG = tl.constexpr(FAILURE_OPS["atomic_xchg"])
OP_ATOMIC_CAS = tl.constexpr(FAILURE_OPS["atomic_cas"])
OP_ATOMIC_AND = tl.constexpr(FAILURE_OPS["atomic_and"])
OP_ATOMIC_OR = tl.constexpr(FAILURE_OPS["atomic_or"])
OP_ATOMIC_XOR = tl.constexpr(FAILURE_OPS["atomic_xor"])
OP_ATOMIC_MIN = tl.constexpr(FAILURE_OPS["atomic_min"])
OP_ATOMIC_MAX = tl.constexpr(FAILURE_OPS["atomic_max"])
OP_SIGNAL = tl.constexpr(FAILURE_OPS["signal"])
OP_PUT_SIGNAL = tl.constexpr(FAILURE_OPS["put_signal"])
OP_WAIT_UNTIL = tl.constexpr(FAILURE_OPS["wait_until"])
OP_BARRIER = tl.constexpr(FAILURE_OPS["barrier"])
OP_FENCE = tl.constexpr(FAILURE_OPS["fence"])
OP_QUIET = tl.constexpr(FAILURE_OPS["quiet"])
OP_TEST = tl.constexpr(FAILURE_OPS["test"])
OP_TEST_ANY = tl.constexpr(FAILURE_OPS["test_any"])
OP_TEST_ALL = tl.constexpr(FAILURE_OPS["test_all"])
OP_WAIT_UNTIL_SOME = tl.constexpr(FAILURE_OPS["wait_until_some"])
OP_P = tl.constexpr(FAILURE_OPS["p"])
OP_G = tl.constexpr(FAILURE_OPS["g"])
OP_TEST_SOME = tl.constexpr(FAILURE_OPS["test_some"])

ROLE_POINTER = tl.constexpr(FAILURE_ROLES["pointer"])
ROLE_DESTINATION_TILE = tl.constexpr(FAILURE_ROLES["destination tile"])
ROLE_SOURCE_TILE = tl.constexpr(FAILURE_ROLES["source tile"])
ROLE_SIGNAL = tl.constexpr(FAILURE_ROLES["signal"])
ROLE_SIGNALS = tl.constexpr(FAILURE_ROLES["signals"])

ABORT_FAILED = tl.constexpr(ABORT_REASONS["failed"])
CHECKED = tl.constexpr(CONTEXT_FLAGS["checked"])

EQ = tl.constexpr(CMP["eq"])
NE = tl.constexpr(CMP["ne"])
GT = tl.constexpr(CMP["gt"])
GE = tl.constexpr(CMP["ge"])
LT = tl.constexpr(CMP["lt"])
LE = tl.constexpr(CMP["le"])
SET = tl.constexpr(SIGNAL_OPS["set"])
ADD = tl.constexpr(SIGNAL_OPS["add"])
