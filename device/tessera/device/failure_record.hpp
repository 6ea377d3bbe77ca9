// The failure record: how kernels that can neither throw nor format a message (Triton kernels
// written with tessera.triton) report a failure. The kernel fills the record of its PE (in the
// control area, Context::failure_record()) with the failure's kind and operands and raises the
// job's abort; the host reads it after the kernel (Runtime::check_device_failure) and reports
// the diagnostic the C++ device API reports for the same failure, built by the same
// describe_* functions (impl/failure_record_funcs.hpp).
//
// Protocol: word kState goes 0 -> kWriting by compare-exchange (the first failure of the PE
// wins; later ones write nothing), the writer fills the other words, then stores kComplete
// with release. The host clears the record once it has reported it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::device {

struct FailureRecord {
  // Word indices.
  static constexpr std::size_t kState = 0;
  static constexpr std::size_t kCode = 1;       // FailureCode
  static constexpr std::size_t kKind = 2;       // FailureKind
  static constexpr std::size_t kOp = 3;         // index into kFailureOps: the failing call
  static constexpr std::size_t kPe = 4;         // the PE that failed (this PE)
  static constexpr std::size_t kArgs = 5;       // kArgCount operands; their meaning is the kind's
  static constexpr std::size_t kArgCount = 11;  // up to the record's end
  static constexpr std::size_t kWords = 16;

  // Values of word kState.
  static constexpr std::uint64_t kEmpty = 0;
  static constexpr std::uint64_t kWriting = 1;
  static constexpr std::uint64_t kComplete = 2;
};

// What failed, and the operands (args[0..]) each kind carries.
enum class FailureKind : std::uint64_t {
  wait_timeout = 1,     // signal address, Cmp, value awaited, value seen, writer PE or -1
  barrier_timeout = 2,  // barrier number, arrival counter seen
  aborted = 3,          // the abort word a wait saw (another PE failed or died): peer_lost
  pe_out_of_range = 4,  // the PE
  pe_not_mapped = 5,    // the PE (its heap is on another node and no proxy runs)
  outside_heap = 6,     // address, bytes, role (index into kFailureRoles); checked mode
  proxy_timeout = 7,    // ticket state seen, value awaited: the proxy ring did not answer
  proxy_failed = 8,     // (none): the proxy failed; word kCode is its code, its ring the message
  misaligned = 9,       // address, alignment needed, role (index into kFailureRoles); checked mode
  // Team barriers (tessera.triton barrier(ctx, team)).
  team_not_member = 10,       // team start, stride, size, my_rank, whether it has barrier words
  team_barrier_timeout = 11,  // barrier number, arrivals seen, team start, stride, size, words
  // A wait on several signals (tessera.triton wait_until_some) that nothing satisfied: address
  // of the first signal, n | awaited << 32, Cmp | shown << 8 (shown <= 4), value awaited, then
  // the first `shown` awaited signals' indices (two per word: low 32 bits first) and values
  // (args[6 + j]).
  some_timeout = 12,
};

// The calls a record names, by index (word kOp). New calls are appended, so a record's index
// keeps its meaning (the last row: tessera.triton's tests, wait_until_some and scalar forms).
inline constexpr const char* kFailureOps[] = {
    "translate",  "load",        "store",      "put",        "get",        "atomic_add",
    "atomic_sub", "atomic_xchg", "atomic_cas", "atomic_and", "atomic_or",  "atomic_xor",
    "atomic_min", "atomic_max",  "signal",     "put_signal", "wait_until", "barrier",
    "fence",      "quiet",       "test",       "test_any",   "test_all",   "wait_until_some",
    "p",          "g",           "test_some",
};
inline constexpr std::size_t kFailureOpCount = sizeof(kFailureOps) / sizeof(kFailureOps[0]);

// What the bad range of an outside_heap record, or the misaligned word of a misaligned record,
// was (args[2]).
inline constexpr const char* kFailureRoles[] = {"pointer", "destination tile", "source tile",
                                                "signal", "signals"};
inline constexpr std::size_t kFailureRoleCount = sizeof(kFailureRoles) / sizeof(kFailureRoles[0]);

}  // namespace tessera::device
