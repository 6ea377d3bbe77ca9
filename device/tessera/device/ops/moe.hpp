// MoE dispatch / combine building blocks (DESIGN §7). Tokens x[T, H] are routed by topk_idx[T, k]
// (-1: unused slot) to E experts split evenly over the PEs (PE q owns experts [q*El, (q+1)*El)).
//
// Dispatch, for every PE at once (call n = epoch n, nothing reset between calls):
//  1. layout: each PE counts its tokens per PE (a token once per PE, however many of its experts
//     live there) and per expert into a count record;
//  2. count exchange: the record is put into slot [n & 1][me] of every PE's record table, with
//     count_sig[me] = n (release); every PE waits for all P records, so every PE sees the same
//     P x (P + E) count matrix and derives the same offsets and the same capacity verdict;
//  3. send: each token's row is put straight into the expert_x row of each of its experts on
//     the PE that owns it (the row follows from the count matrix: the expert's segment, the
//     rows of earlier senders, this sender's earlier tokens), and one metadata row (source
//     token, local expert and weight per slot) per destination PE into that PE's staging
//     metadata; after the last row data_sig[me] = n on that PE (release);
//  4. expand: each PE fills, from the staged metadata, the per-row source PE, source token,
//     top-k slot and weight of its expert rows (the data is in place already: one copy per row
//     in all of dispatch).
// Combine: every PE sums, per token another PE staged here, w * expert_out over the token's
// local experts in fp32, in one pass per row, and stores the partial straight into the source
// PE's staging buffer (which dispatch no longer needs) at the token's source slot when that
// heap is mapped (a put from a local row otherwise). The source then sums, per token, its own
// experts' weighted rows and the other PEs' partials in one fp32 pass into y. A PE writes into
// another's staging or expert rows only after that PE has published the record of the same
// dispatch (dispatch) or entered the same combine (combine_ready), so nothing a PE still
// reads is overwritten.
//
// Capacity: a PE receives at most recv_capacity tokens (each counted once per PE) and holds at
// most expert_capacity expert rows (padding included). A call whose count matrix exceeds either
// fails on every PE, before any token moves, with a message naming the PE, the expert and the
// counts: never a silent drop, never an out-of-bounds write.
//
// Every function is called by all blocks of a grid (Block's block_id/grid_size split the work);
// the caller passes the same epoch to all of them and the same sequence on every PE.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device/atomic.hpp"
#include "tessera/device/context.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/device/tile.hpp"

namespace tessera::device::ops {

// Largest top-k the building blocks accept (a metadata row is built on the stack).
inline constexpr int kMoeMaxTopk = 32;

// Status word of a count record: what a PE found wrong with its own input, so that every PE
// reports it instead of waiting for that PE forever.
enum class MoeStatus : std::uint64_t { ok = 0, bad_expert = 1, too_many_tokens = 2 };

// The geometry of one MoE buffer: the same on every PE.
struct MoeLayout {
  int n_pes = 1;
  int num_experts = 1;
  int local_experts = 1;  // num_experts / n_pes
  int topk = 1;
  std::size_t hidden = 0;
  std::size_t max_tokens = 0;       // tokens per PE per call, at most
  std::size_t recv_capacity = 0;    // tokens a PE may receive per call (once per PE)
  std::size_t staging_rows = 0;     // max(recv_capacity, max_tokens * min(topk, n_pes))
  std::size_t expert_capacity = 0;  // expert rows a PE may hold per call, padding included
  std::size_t alignment = 1;        // each expert segment starts at a multiple of this row
  int max_blocks = 1;               // grid size the scratch arrays are sized for

  // Words of one count record: status, two detail words, tokens per PE, tokens per expert.
  TESSERA_HOST_DEVICE std::size_t record_words() const {
    return 3 + static_cast<std::size_t>(n_pes) + static_cast<std::size_t>(num_experts);
  }
  // 32-bit words of one staged token's metadata: source token, local expert per slot (-1: not
  // on this PE), weight per slot (float bits).
  TESSERA_HOST_DEVICE std::size_t meta_words() const {
    return 1 + 2 * static_cast<std::size_t>(topk);
  }
  // Per-block scratch cursors: one per PE, then one per expert (send), or one per local expert
  // (expand).
  TESSERA_HOST_DEVICE std::size_t cursor_words() const {
    return static_cast<std::size_t>(n_pes) + static_cast<std::size_t>(num_experts);
  }
};

static_assert(std::is_trivially_copyable_v<MoeLayout>, "passed to kernels by value");

// Where a buffer's state lives: symmetric words and arrays (same offsets on every PE, zero
// before the first call, never reset) and this PE's results and scratch. T is float or bf16.
template <class T>
struct MoeWorkspace {
  std::uint64_t* records = nullptr;        // [2][P][record_words], symmetric
  std::uint64_t* count_sig = nullptr;      // [P] count_sig[s] = last epoch whose record s put
  std::uint64_t* data_sig = nullptr;       // [P] data_sig[s] = last epoch whose tokens s put
  std::uint64_t* combine_ready = nullptr;  // [P] combine_ready[q] = last combine q entered
  std::uint64_t* combine_sig = nullptr;    // [P] combine_sig[q] = last combine whose partials q put
  std::uint64_t* blocks_done = nullptr;    // [2] local: blocks done sending (dispatch, combine)
  T* staging = nullptr;                    // [staging_rows][hidden], symmetric
  std::uint32_t* staging_meta = nullptr;   // [staging_rows][meta_words], symmetric
  // Results of the latest dispatch (the handle), local.
  T* expert_x = nullptr;               // [expert_capacity][hidden], grouped by local expert
  std::int32_t* row_src_pe = nullptr;  // [expert_capacity], -1 on padding rows
  std::int32_t* row_src_token = nullptr;
  std::int32_t* row_slot = nullptr;
  float* row_weight = nullptr;
  std::int32_t* recv_expand = nullptr;     // [staging_rows][topk] expert rows of a staged token
  std::int32_t* send_pos = nullptr;        // [max_tokens][P] index among tokens sent to q, or -1
  std::int64_t* expert_counts = nullptr;   // [local_experts]
  std::int64_t* expert_offsets = nullptr;  // [local_experts + 1]
  std::int64_t* recv_tokens = nullptr;     // [1] tokens staged on this PE
  // Scratch, per block.
  std::uint64_t* cursors = nullptr;  // [max_blocks][cursor_words]
  float* acc = nullptr;              // [max_blocks][hidden]
  T* out_row = nullptr;              // [max_blocks][hidden]
};

static_assert(std::is_trivially_copyable_v<MoeWorkspace<float>>, "passed to kernels by value");

// A buffer's call counts in device memory (DeviceEpoch, signal.hpp; local words, zero before the
// first call, never reset), for the kernels that take their numbers on the device: a launch
// captured once into a Graph and replayed takes new numbers on every replay. Every block of a
// grid calls each count once (next_in_grid), so all of them agree on the call's numbers.
struct MoeCounters {
  DeviceEpoch dispatch;         // dispatch epochs; its count is the latest dispatch's epoch
  DeviceEpoch dispatch_blocks;  // total grid sizes of all dispatches (blocks_done[0]'s target)
  DeviceEpoch combine;          // combine calls
  DeviceEpoch combine_blocks;   // total grid sizes of all combines (blocks_done[1]'s target)

  // Words of the four counts, carved out of consecutive words by from_words.
  static constexpr std::size_t kWords = 4 * DeviceEpoch::kWords;
  TESSERA_HOST_DEVICE static MoeCounters from_words(std::uint64_t* words) {
    return MoeCounters{DeviceEpoch{words}, DeviceEpoch{words + DeviceEpoch::kWords},
                       DeviceEpoch{words + 2 * DeviceEpoch::kWords},
                       DeviceEpoch{words + 3 * DeviceEpoch::kWords}};
  }
};

static_assert(std::is_trivially_copyable_v<MoeCounters>, "passed to kernels by value");

// --- building blocks -------------------------------------------------------------------------

// The record of PE s for `epoch`, as held on this PE.
TESSERA_HOST_DEVICE inline const std::uint64_t* moe_record(const MoeLayout& l,
                                                           const std::uint64_t* records,
                                                           std::uint64_t epoch, int s) {
  return records + ((epoch & 1) * static_cast<std::size_t>(l.n_pes) + static_cast<std::size_t>(s)) *
                       l.record_words();
}

// Layout pass + count exchange (steps 1-2): block 0 of the grid builds this PE's record from
// topk_idx (validating expert ids and the token count) and puts it to every PE with
// count_sig[me] = epoch. Every block then waits for all P records and checks the capacities;
// returns false in every block when the call must fail (block 0 has then reported the failure).
template <class Idx, class T>
TESSERA_KERNEL_CODE bool moe_exchange_counts(Block blk, const Context& ctx, const MoeLayout& l,
                                             const MoeWorkspace<T>& ws, std::size_t tokens,
                                             const Idx* topk_idx, std::uint64_t epoch);

// Step 3: each block puts its share of the tokens into their experts' rows on the experts' PEs
// (once per expert row) and their metadata into those PEs' staging (once per PE), and records
// send_pos; the last block to finish signals
// data_sig[me] = epoch on every PE (release). `blocks_target` is the total of grid sizes of all
// dispatch calls so far, this one included (blocks_done[0] counts finished blocks). Returns true
// in the one thread that sent those signals: through the proxy they may still be in flight, so
// that thread quiets them before its kernel ends (moe_dispatch does, after the expansion).
template <class Idx, class T>
TESSERA_KERNEL_CODE bool moe_send_tokens(Block blk, const Context& ctx, const MoeLayout& l,
                                         const MoeWorkspace<T>& ws, const T* x, std::size_t tokens,
                                         const Idx* topk_idx, const float* topk_weight,
                                         std::uint64_t epoch, std::uint64_t blocks_target);

// Step 4 for sender s: waits until s's tokens of `epoch` are here (in their expert rows), then
// fills the per-row metadata from the staged metadata rows. Any block may take any sender;
// moe_dispatch gives sender s to block s % grid_size, so a user kernel can start on an expert's
// rows as soon as its senders are expanded.
template <class T>
TESSERA_KERNEL_CODE void moe_expand_from(Block blk, const Context& ctx, const MoeLayout& l,
                                         const MoeWorkspace<T>& ws, std::uint64_t epoch, int s);

// Steps 1-4 in one kernel (the decode path runs it as a single block: layout, send and count
// signalling in one launch, two signal hops of latency).
template <class Idx, class T>
TESSERA_KERNEL_CODE void moe_dispatch(Block blk, const Context& ctx, const MoeLayout& l,
                                      const MoeWorkspace<T>& ws, const T* x, std::size_t tokens,
                                      const Idx* topk_idx, const float* topk_weight,
                                      std::uint64_t epoch, std::uint64_t blocks_target);

// moe_dispatch with the epoch and the block total taken on the device from `counters` (every block
// of the grid calls it): the form a captured launch replays correctly.
template <class Idx, class T>
TESSERA_KERNEL_CODE void moe_dispatch(Block blk, const Context& ctx, const MoeLayout& l,
                                      const MoeWorkspace<T>& ws, const T* x, std::size_t tokens,
                                      const Idx* topk_idx, const float* topk_weight,
                                      MoeCounters counters);

// Combine call `call` of the dispatch of `epoch`: y[t] = sum_k w[t,k] * expert_out[row(t,k)],
// fp32 accumulation, `tokens` the count that dispatch sent. expert_out is laid out as expert_x.
// `blocks_target` as for moe_send_tokens (blocks_done[1]).
template <class T>
TESSERA_KERNEL_CODE void moe_combine(Block blk, const Context& ctx, const MoeLayout& l,
                                     const MoeWorkspace<T>& ws, const T* expert_out, T* y,
                                     std::size_t tokens, std::uint64_t epoch, std::uint64_t call,
                                     std::uint64_t blocks_target);

// moe_combine of the latest dispatch made through `counters` (its epoch read from
// counters.dispatch, which the stream's earlier dispatch kernel advanced), with the call number
// and the block total taken on the device (every block of the grid calls it).
template <class T>
TESSERA_KERNEL_CODE void moe_combine(Block blk, const Context& ctx, const MoeLayout& l,
                                     const MoeWorkspace<T>& ws, const T* expert_out, T* y,
                                     std::size_t tokens, MoeCounters counters);

}  // namespace tessera::device::ops

#include "tessera/device/ops/impl/moe_funcs.hpp"
