// The Context as a flat array of 64-bit words, for kernels that cannot take a C++ struct: Triton
// kernels (tessera.triton, rt.triton_context()) read it through a pointer. The one definition of
// its layout; the Python package exports the word indices (tessera.TRITON_CONTEXT_WORDS) and a
// test holds tessera.triton's copy of them to it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/context.hpp"

namespace tessera::device {

struct FlatContext {
  // Word indices (pointers as addresses). Never reorder; new words take reserved ones.
  static constexpr std::size_t kMyPe = 0;
  static constexpr std::size_t kNPes = 1;
  static constexpr std::size_t kHeapSize = 2;
  static constexpr std::size_t kTimeoutNs = 3;
  static constexpr std::size_t kFlags = 4;           // ContextFlags
  static constexpr std::size_t kPeerBase = 5;        // address of the heap-base table
  static constexpr std::size_t kControlPage = 6;     // address of Context::control_page
  static constexpr std::size_t kProxy = 7;           // address of the proxy ring, or 0
  static constexpr std::size_t kAllocations = 8;     // address of the allocation table, or 0
  static constexpr std::size_t kFailureRecord = 9;   // address of Context::failure_record()
  static constexpr std::size_t kControlOffset = 10;  // Context::control_offset
  static constexpr std::size_t kHeaderWords = 16;    // words 11..15 are reserved (0)
  static constexpr std::size_t kHeapBases = 16;      // + pe: heap base of pe here, 0: not mapped
  // Then, at kHeapBases + n_pes + pe: the control page of pe here (Context::peer_control), 0
  // where it is not mapped.

  static constexpr const char* kNames[] = {
      "my_pe",        "n_pes", "heap_size",   "timeout_ns",     "flags",          "peer_base",
      "control_page", "proxy", "allocations", "failure_record", "control_offset",
  };
  static constexpr std::size_t kNamedWords = sizeof(kNames) / sizeof(kNames[0]);

  static constexpr std::size_t words(int n_pes) {
    return kHeaderWords + 2 * static_cast<std::size_t>(n_pes);
  }
  static constexpr std::size_t control_bases(int n_pes) {
    return kHeapBases + static_cast<std::size_t>(n_pes);
  }
};

// A Team (team.hpp) as a flat array of 64-bit words, for Triton kernels (tessera.triton's
// barrier(ctx, team)): made on the host from a team and its barrier words (Team.triton_team()).
struct FlatTeam {
  static constexpr std::size_t kStart = 0;
  static constexpr std::size_t kStride = 1;
  static constexpr std::size_t kSize = 2;
  static constexpr std::size_t kMyRank = 3;
  static constexpr std::size_t kWorkspace = 4;  // address of the team's workspace
  static constexpr std::size_t kWorkspaceBytes = 5;
  static constexpr std::size_t kBarrierWords = 6;  // address of its barrier words, or 0
  static constexpr std::size_t kWords = 8;         // word 7 is reserved (0)

  static constexpr const char* kNames[] = {
      "start", "stride", "size", "my_rank", "workspace", "workspace_bytes", "barrier_words"};
  static constexpr std::size_t kNamedWords = sizeof(kNames) / sizeof(kNames[0]);
};

// Writes `ctx` as FlatContext::words(ctx.n_pes) words into `out`. `heap_bases` and
// `control_bases` hold the n_pes heap bases and control pages as host code reads them
// (ctx.peer_base and ctx.peer_control may be device memory).
inline void flatten(const Context& ctx, const std::uint64_t* heap_bases,
                    const std::uint64_t* control_bases, std::int64_t* out) {
  auto addr = [](const void* p) {
    return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p));
  };
  for (std::size_t i = 0; i < FlatContext::words(ctx.n_pes); ++i) out[i] = 0;
  out[FlatContext::kMyPe] = ctx.my_pe;
  out[FlatContext::kNPes] = ctx.n_pes;
  out[FlatContext::kHeapSize] = static_cast<std::int64_t>(ctx.heap_size);
  out[FlatContext::kTimeoutNs] = static_cast<std::int64_t>(ctx.timeout_ns);
  out[FlatContext::kFlags] = static_cast<std::int64_t>(ctx.flags);
  out[FlatContext::kPeerBase] = addr(ctx.peer_base);
  out[FlatContext::kControlPage] = addr(ctx.control_page);
  out[FlatContext::kProxy] = addr(ctx.proxy);
  out[FlatContext::kAllocations] = addr(ctx.allocations);
  out[FlatContext::kFailureRecord] = addr(ctx.failure_record());
  out[FlatContext::kControlOffset] = static_cast<std::int64_t>(ctx.control_offset);
  const std::size_t controls = FlatContext::control_bases(ctx.n_pes);
  for (int pe = 0; pe < ctx.n_pes; ++pe) {
    const auto i = static_cast<std::size_t>(pe);
    out[FlatContext::kHeapBases + i] = static_cast<std::int64_t>(heap_bases[pe]);
    out[controls + i] = static_cast<std::int64_t>(control_bases[pe]);
  }
}

}  // namespace tessera::device
