// Bodies of ops/moe.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tessera/device/atomic.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/device/impl/rma_funcs.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/device/ops/moe.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device::ops {
namespace detail {

TESSERA_HOST_DEVICE inline std::uint64_t moe_to(const MoeLayout& l, const std::uint64_t* records,
                                                std::uint64_t epoch, int s, int q) {
  return moe_record(l, records, epoch, s)[3 + q];
}

TESSERA_HOST_DEVICE inline std::uint64_t moe_expert(const MoeLayout& l,
                                                    const std::uint64_t* records,
                                                    std::uint64_t epoch, int s, int e) {
  return moe_record(l, records, epoch,
                    s)[3 + static_cast<std::size_t>(l.n_pes) + static_cast<std::size_t>(e)];
}

// Where sender s's tokens start in q's staging buffer: the tokens of senders before s.
TESSERA_HOST_DEVICE inline std::uint64_t moe_recv_offset(const MoeLayout& l,
                                                         const std::uint64_t* records,
                                                         std::uint64_t epoch, int q, int s) {
  std::uint64_t off = 0;
  for (int p = 0; p < s; ++p) off += moe_to(l, records, epoch, p, q);
  return off;
}

// Where q's partials for s's tokens land in s's staging buffer (combine): s's tokens for the
// PEs before q.
TESSERA_HOST_DEVICE inline std::uint64_t moe_return_offset(const MoeLayout& l,
                                                           const std::uint64_t* records,
                                                           std::uint64_t epoch, int s, int q) {
  std::uint64_t off = 0;
  for (int p = 0; p < q; ++p) off += moe_to(l, records, epoch, s, p);
  return off;
}

TESSERA_HOST_DEVICE inline std::uint64_t moe_round_up(std::uint64_t n, std::uint64_t a) {
  return a <= 1 ? n : (n + a - 1) / a * a;
}

// Rows the experts of PE q take, padding included.
TESSERA_HOST_DEVICE inline std::uint64_t moe_expert_rows(const MoeLayout& l,
                                                         const std::uint64_t* records,
                                                         std::uint64_t epoch, int q) {
  std::uint64_t rows = 0;
  for (int le = 0; le < l.local_experts; ++le) {
    std::uint64_t n = 0;
    for (int s = 0; s < l.n_pes; ++s)
      n += moe_expert(l, records, epoch, s, q * l.local_experts + le);
    rows += moe_round_up(n, l.alignment);
  }
  return rows;
}

// The distinct PE of slot j of a token, or -1 when slot j is unused or repeats an earlier
// slot's PE.
template <class Idx>
TESSERA_HOST_DEVICE int moe_slot_pe(const MoeLayout& l, const Idx* idx, int j) {
  const auto e = static_cast<std::int64_t>(idx[j]);
  if (e < 0) return -1;
  const int q = static_cast<int>(e / l.local_experts);
  for (int i = 0; i < j; ++i) {
    const auto ei = static_cast<std::int64_t>(idx[i]);
    if (ei >= 0 && static_cast<int>(ei / l.local_experts) == q) return -1;
  }
  return q;
}

// Adds 1 to the local counter and returns true in the block that completes `target`.
template <class G>
TESSERA_KERNEL_CODE bool moe_last_block(G g, const Context& ctx, std::uint64_t* counter,
                                        std::uint64_t target) {
  g.sync();
  bool last = false;
  if (g.rank() == 0) {
    last = atomic_fetch_add<std::uint64_t>(ctx, counter, 1, ctx.my_pe, Sem::acq_rel) + 1 == target;
  }
  return last;
}

template <class T>
TESSERA_HOST_DEVICE inline T moe_from_float(float v) {
  if constexpr (std::is_same_v<T, bf16>) {
    return to_bf16(v);
  } else {
    return v;
  }
}

TESSERA_HOST_DEVICE inline std::uint32_t moe_float_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

TESSERA_HOST_DEVICE inline float moe_bits_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Offset of local expert `le`'s segment on this PE (segments of the experts before it, padded).
TESSERA_HOST_DEVICE inline std::uint64_t moe_segment_offset(const MoeLayout& l,
                                                            const std::uint64_t* records,
                                                            std::uint64_t epoch, int q, int le) {
  std::uint64_t off = 0;
  for (int i = 0; i < le; ++i) {
    std::uint64_t n = 0;
    for (int s = 0; s < l.n_pes; ++s)
      n += moe_expert(l, records, epoch, s, q * l.local_experts + i);
    off += moe_round_up(n, l.alignment);
  }
  return off;
}

// The message of a call that must fail, built identically on every PE from the count matrix;
// false when the call may proceed.
TESSERA_HOST_DEVICE inline bool moe_verdict(const MoeLayout& l, const std::uint64_t* records,
                                            std::uint64_t epoch, device::detail::Message& m) {
  for (int s = 0; s < l.n_pes; ++s) {
    const std::uint64_t* rec = moe_record(l, records, epoch, s);
    if (rec[0] == static_cast<std::uint64_t>(MoeStatus::too_many_tokens)) {
      m << "moe dispatch: PE " << s << " passed " << rec[1]
        << " tokens, more than max_tokens_per_pe = " << static_cast<std::uint64_t>(l.max_tokens);
      return true;
    }
    if (rec[0] == static_cast<std::uint64_t>(MoeStatus::bad_expert)) {
      const std::uint64_t flat = rec[1];
      const auto k = static_cast<std::uint64_t>(l.topk);
      m << "moe dispatch: PE " << s << " topk_idx[" << flat / k << "][" << flat % k
        << "] = " << static_cast<std::int64_t>(rec[2]) << " is not an expert: expected -1 (unused)"
        << " or a value in [0, " << l.num_experts << ")";
      return true;
    }
  }
  for (int q = 0; q < l.n_pes; ++q) {
    std::uint64_t total = 0;
    for (int s = 0; s < l.n_pes; ++s) total += moe_to(l, records, epoch, s, q);
    if (total > l.recv_capacity) {
      m << "moe dispatch: PE " << q << " would receive " << total
        << " tokens, more than its receive capacity of "
        << static_cast<std::uint64_t>(l.recv_capacity) << " tokens (from";
      for (int s = 0; s < l.n_pes && s < 16; ++s) {
        m << " PE " << s << ": " << moe_to(l, records, epoch, s, q) << (s + 1 < l.n_pes ? "," : "");
      }
      m << ")";
      return true;
    }
  }
  for (int q = 0; q < l.n_pes; ++q) {
    const std::uint64_t rows = moe_expert_rows(l, records, epoch, q);
    if (rows > l.expert_capacity) {
      m << "moe dispatch: the experts of PE " << q << " would hold " << rows
        << " rows, more than its expert capacity of "
        << static_cast<std::uint64_t>(l.expert_capacity) << " rows (";
      int listed = 0;
      for (int le = 0; le < l.local_experts && listed < 8; ++le) {
        std::uint64_t n = 0;
        const int e = q * l.local_experts + le;
        for (int s = 0; s < l.n_pes; ++s) n += moe_expert(l, records, epoch, s, e);
        if (n == 0) continue;
        m << (listed > 0 ? ", " : "") << "expert " << e << ": " << n << " tokens";
        ++listed;
      }
      m << ")";
      return true;
    }
  }
  return false;
}

// Builds this PE's count record for `tokens` tokens (one thread).
template <class Idx>
TESSERA_HOST_DEVICE void moe_build_record(const MoeLayout& l, std::uint64_t* rec,
                                          std::size_t tokens, const Idx* topk_idx) {
  for (std::size_t w = 0; w < l.record_words(); ++w) rec[w] = 0;
  if (tokens > l.max_tokens) {
    rec[0] = static_cast<std::uint64_t>(MoeStatus::too_many_tokens);
    rec[1] = tokens;
    return;
  }
  const auto k = static_cast<std::size_t>(l.topk);
  for (std::size_t t = 0; t < tokens; ++t) {
    const Idx* idx = topk_idx + t * k;
    for (std::size_t j = 0; j < k; ++j) {
      const auto e = static_cast<std::int64_t>(idx[j]);
      if (e < -1 || e >= l.num_experts) {
        for (std::size_t w = 0; w < l.record_words(); ++w) rec[w] = 0;
        rec[0] = static_cast<std::uint64_t>(MoeStatus::bad_expert);
        rec[1] = t * k + j;
        rec[2] = static_cast<std::uint64_t>(e);
        return;
      }
      if (e < 0) continue;
      rec[3 + static_cast<std::size_t>(l.n_pes) + static_cast<std::size_t>(e)] += 1;
      const int q = moe_slot_pe(l, idx, static_cast<int>(j));
      if (q >= 0) rec[3 + static_cast<std::size_t>(q)] += 1;
    }
  }
}

}  // namespace detail

template <class Idx, class T>
TESSERA_KERNEL_CODE bool moe_exchange_counts(Block blk, const Context& ctx, const MoeLayout& l,
                                             const MoeWorkspace<T>& ws, std::size_t tokens,
                                             const Idx* topk_idx, std::uint64_t epoch) {
  const int me = ctx.my_pe, n = l.n_pes;
  const std::size_t words = l.record_words();
  std::uint64_t* mine = const_cast<std::uint64_t*>(moe_record(l, ws.records, epoch, me));
  if (blk.block_id() == 0) {
    if (blk.rank() == 0) detail::moe_build_record(l, mine, tokens, topk_idx);
    blk.sync();
    // Right neighbour first, so the PEs do not all write to one PE at once.
    for (int i = 1; i < n; ++i) {
      const int q = (me + i) % n;
      put_signal(blk, ctx, make_tile(mine, words), make_tile<const std::uint64_t>(mine, words),
                 &ws.count_sig[me], epoch, SignalOp::set, q);
    }
    if (blk.rank() == 0) signal(ctx, &ws.count_sig[me], epoch, SignalOp::set, me, Sem::release);
  }
  wait_until_all(blk, ctx, ws.count_sig, static_cast<std::size_t>(n), Cmp::ge, epoch);
  device::detail::Message m;
  if (!detail::moe_verdict(l, ws.records, epoch, m)) return true;
  // Every block still counts itself done, so the host's running block totals stay right.
  detail::moe_last_block(blk, ctx, &ws.blocks_done[0], 0);
  if (blk.block_id() == 0 && blk.rank() == 0) {
    platform::report_failure(FailureCode::invalid_argument, m.c_str());
  }
  return false;
}

template <class Idx, class T>
TESSERA_KERNEL_CODE bool moe_send_tokens(Block blk, const Context& ctx, const MoeLayout& l,
                                         const MoeWorkspace<T>& ws, const T* x, std::size_t tokens,
                                         const Idx* topk_idx, const float* topk_weight,
                                         std::uint64_t epoch, std::uint64_t blocks_target) {
  const int me = ctx.my_pe, n = l.n_pes;
  const auto b = static_cast<std::size_t>(blk.block_id());
  const auto grid = static_cast<std::size_t>(blk.grid_size());
  const auto k = static_cast<std::size_t>(l.topk);
  const std::size_t h = l.hidden, mw = l.meta_words();
  const std::size_t t0 = tokens * b / grid, t1 = tokens * (b + 1) / grid;
  std::uint64_t* cur = ws.cursors + b * l.cursor_words();
  std::uint64_t* row_of = cur + n;  // [E]: the next expert_x row of each expert, on its PE
  // Positions of this block's tokens among this PE's tokens for each PE, and the expert rows
  // they take on their experts' PEs: expert e's segment on its PE, past the rows of senders
  // before this PE and of this PE's tokens before the block's. The expansion on that PE walks
  // the same order (sender, token, slot), so both sides agree on every row.
  if (blk.rank() == 0) {
    for (int q = 0; q < n; ++q) {
      cur[q] = 0;
      std::uint64_t segment = 0;
      for (int le = 0; le < l.local_experts; ++le) {
        const int e = q * l.local_experts + le;
        std::uint64_t before = 0, total = 0;
        for (int s = 0; s < n; ++s) {
          const std::uint64_t c = detail::moe_expert(l, ws.records, epoch, s, e);
          if (s < me) before += c;
          total += c;
        }
        row_of[e] = segment + before;
        segment += detail::moe_round_up(total, l.alignment);
      }
    }
    for (std::size_t t = 0; t < t0; ++t) {
      for (std::size_t j = 0; j < k; ++j) {
        const int q = detail::moe_slot_pe(l, topk_idx + t * k, static_cast<int>(j));
        if (q >= 0) cur[q] += 1;
        const auto e = static_cast<std::int64_t>(topk_idx[t * k + j]);
        if (e >= 0) row_of[e] += 1;
      }
    }
  }
  blk.sync();
  std::uint32_t meta[1 + 2 * kMoeMaxTopk];
  for (std::size_t t = t0; t < t1; ++t) {
    const Idx* idx = topk_idx + t * k;
    std::int32_t* pos_of = ws.send_pos + t * static_cast<std::size_t>(n);
    if (blk.rank() == 0) {
      for (int q = 0; q < n; ++q) pos_of[q] = -1;
    }
    for (std::size_t j = 0; j < k; ++j) {
      const int q = detail::moe_slot_pe(l, idx, static_cast<int>(j));
      if (q < 0) continue;
      const std::uint64_t pos = cur[q];
      const std::uint64_t row = detail::moe_recv_offset(l, ws.records, epoch, q, me) + pos;
      meta[0] = static_cast<std::uint32_t>(t);
      for (std::size_t i = 0; i < k; ++i) {
        const auto e = static_cast<std::int64_t>(idx[i]);
        const bool here = e >= 0 && static_cast<int>(e / l.local_experts) == q;
        meta[1 + i] = here ? static_cast<std::uint32_t>(e % l.local_experts) : 0xffffffffu;
        meta[1 + k + i] = detail::moe_float_bits(topk_weight[t * k + i]);
      }
      // The token goes straight into each of its experts' rows on q (no staging copy to expand
      // there); the staged metadata row tells q which rows they are.
      for (std::size_t i = 0; i < k; ++i) {
        if (meta[1 + i] == 0xffffffffu) continue;
        const auto e = static_cast<std::size_t>(idx[i]);
        put_nbi(blk, ctx, make_tile(ws.expert_x + row_of[e] * h, h), make_tile(x + t * h, h), q);
        blk.sync();
        if (blk.rank() == 0) row_of[e] += 1;
      }
      put(blk, ctx, make_tile(ws.staging_meta + row * mw, mw),
          make_tile<const std::uint32_t>(meta, mw), q);
      if (blk.rank() == 0) {
        pos_of[q] = static_cast<std::int32_t>(pos);
        cur[q] = pos + 1;
      }
      blk.sync();
    }
    // Slots of experts on no PE reached above cannot exist (every valid expert is on some q),
    // so row_of stays in step with the expansion's cursors.
  }
  quiet(blk, ctx);
  const bool last = detail::moe_last_block(blk, ctx, &ws.blocks_done[0], blocks_target);
  if (last) {
    // The counter's acquire makes every block's puts happen before these release signals.
    for (int i = 1; i <= n; ++i) {
      signal(ctx, &ws.data_sig[me], epoch, SignalOp::set, (me + i) % n, Sem::release);
    }
  }
  blk.sync();
  return last;
}

template <class T>
TESSERA_KERNEL_CODE void moe_expand_from(Block blk, const Context& ctx, const MoeLayout& l,
                                         const MoeWorkspace<T>& ws, std::uint64_t epoch, int s) {
  const int me = ctx.my_pe;
  const auto k = static_cast<std::size_t>(l.topk);
  const std::size_t mw = l.meta_words();
  std::uint64_t* cur = ws.cursors + static_cast<std::size_t>(blk.block_id()) * l.cursor_words();
  wait_until(blk, ctx, &ws.data_sig[s], Cmp::ge, epoch);
  if (blk.rank() == 0) {
    // Sender s's rows of expert le follow those of the senders before it.
    for (int le = 0; le < l.local_experts; ++le) {
      std::uint64_t start = detail::moe_segment_offset(l, ws.records, epoch, me, le);
      for (int p = 0; p < s; ++p) {
        start += detail::moe_expert(l, ws.records, epoch, p, me * l.local_experts + le);
      }
      cur[le] = start;
    }
  }
  blk.sync();
  const std::uint64_t r0 = detail::moe_recv_offset(l, ws.records, epoch, me, s);
  const std::uint64_t count = detail::moe_to(l, ws.records, epoch, s, me);
  for (std::uint64_t r = r0; r < r0 + count; ++r) {
    const std::uint32_t* meta = ws.staging_meta + r * mw;
    std::size_t made = 0;
    for (std::size_t j = 0; j < k; ++j) {
      const auto le = static_cast<std::int32_t>(meta[1 + j]);
      if (le < 0) continue;
      const std::uint64_t dest = cur[le];
      // The sender put the token's data into this row already (moe_send_tokens).
      if (blk.rank() == 0) {
        ws.row_src_pe[dest] = s;
        ws.row_src_token[dest] = static_cast<std::int32_t>(meta[0]);
        ws.row_slot[dest] = static_cast<std::int32_t>(j);
        ws.row_weight[dest] = detail::moe_bits_float(meta[1 + k + j]);
        ws.recv_expand[r * k + made] = static_cast<std::int32_t>(dest);
        cur[le] = dest + 1;
      }
      ++made;
      blk.sync();
    }
    if (blk.rank() == 0) {
      for (std::size_t c = made; c < k; ++c) ws.recv_expand[r * k + c] = -1;
    }
  }
  blk.sync();
}

template <class Idx, class T>
TESSERA_KERNEL_CODE void moe_dispatch(Block blk, const Context& ctx, const MoeLayout& l,
                                      const MoeWorkspace<T>& ws, const T* x, std::size_t tokens,
                                      const Idx* topk_idx, const float* topk_weight,
                                      std::uint64_t epoch, std::uint64_t blocks_target) {
  if (!moe_exchange_counts(blk, ctx, l, ws, tokens, topk_idx, epoch)) return;
  const int me = ctx.my_pe;
  if (blk.block_id() == 0 && blk.rank() == 0) {
    // The layout the caller's grouped GEMM follows; padding rows carry source PE -1.
    std::uint64_t off = 0;
    for (int le = 0; le < l.local_experts; ++le) {
      std::uint64_t count = 0;
      for (int s = 0; s < l.n_pes; ++s) {
        count += detail::moe_expert(l, ws.records, epoch, s, me * l.local_experts + le);
      }
      ws.expert_counts[le] = static_cast<std::int64_t>(count);
      ws.expert_offsets[le] = static_cast<std::int64_t>(off);
      const std::uint64_t end = off + detail::moe_round_up(count, l.alignment);
      for (std::uint64_t r = off + count; r < end; ++r) {
        ws.row_src_pe[r] = -1;
        ws.row_src_token[r] = -1;
        ws.row_slot[r] = -1;
        ws.row_weight[r] = 0.0f;
      }
      off = end;
    }
    ws.expert_offsets[l.local_experts] = static_cast<std::int64_t>(off);
    std::uint64_t staged = 0;
    for (int s = 0; s < l.n_pes; ++s) staged += detail::moe_to(l, ws.records, epoch, s, me);
    ws.recv_tokens[0] = static_cast<std::int64_t>(staged);
  }
  const bool signalled =
      moe_send_tokens(blk, ctx, l, ws, x, tokens, topk_idx, topk_weight, epoch, blocks_target);
  for (int s = blk.block_id(); s < l.n_pes; s += blk.grid_size()) {
    moe_expand_from(blk, ctx, l, ws, epoch, s);
  }
  // Through the proxy the data_sig signals may still be in flight here: each PE waits for the
  // others' signals, not for its own to land, so without this quiet the call could end (and its
  // caller's stream be synchronized) with them outstanding. After the expansion, by when they
  // have usually landed.
  if (signalled) quiet(ctx);
}

template <class Idx, class T>
TESSERA_KERNEL_CODE void moe_dispatch(Block blk, const Context& ctx, const MoeLayout& l,
                                      const MoeWorkspace<T>& ws, const T* x, std::size_t tokens,
                                      const Idx* topk_idx, const float* topk_weight,
                                      MoeCounters counters) {
  const std::uint64_t epoch = counters.dispatch.next_in_grid(blk);
  const std::uint64_t target =
      counters.dispatch_blocks.next_in_grid(blk, static_cast<std::uint64_t>(blk.grid_size()));
  moe_dispatch(blk, ctx, l, ws, x, tokens, topk_idx, topk_weight, epoch, target);
}

namespace detail {

// dst[c] = sum_j w[j] * rows[j][c] for c in [0, h), in fp32, rounded to T once: one pass over
// every row and over dst. A host block (one thread) works in column chunks held in a stack
// buffer, which the compiler vectorizes; a GPU block gives each thread its own columns.
template <class G, class T>
TESSERA_KERNEL_CODE void moe_weighted_sum(G g, T* dst, const T* const* rows, const float* w,
                                          int n_rows, std::size_t h) {
  const auto rank = static_cast<std::size_t>(g.rank());
  const auto threads = static_cast<std::size_t>(g.size());
  if (threads == 1) {
    constexpr std::size_t kChunk = 512;
    float acc[kChunk];
    for (std::size_t c0 = 0; c0 < h; c0 += kChunk) {
      const std::size_t len = h - c0 < kChunk ? h - c0 : kChunk;
      for (std::size_t c = 0; c < len; ++c) acc[c] = 0.0f;
      for (int j = 0; j < n_rows; ++j) {
        const T* row = rows[j] + c0;
        const float wj = w[j];
        for (std::size_t c = 0; c < len; ++c) acc[c] += wj * to_float(row[c]);
      }
      for (std::size_t c = 0; c < len; ++c) dst[c0 + c] = moe_from_float<T>(acc[c]);
    }
    return;
  }
  for (std::size_t c = rank; c < h; c += threads) {
    float acc = 0.0f;
    for (int j = 0; j < n_rows; ++j) acc += w[j] * to_float(rows[j][c]);
    dst[c] = moe_from_float<T>(acc);
  }
}

// The expert rows of staged token `r` on this PE (recv_expand) with their routing weights;
// returns how many were added to rows/w at index `at`.
template <class T>
TESSERA_HOST_DEVICE int moe_expert_rows_of(const MoeLayout& l, const MoeWorkspace<T>& ws,
                                           const T* expert_out, std::uint64_t r, const T** rows,
                                           float* w, int at) {
  const auto k = static_cast<std::size_t>(l.topk);
  const std::int32_t* expand = ws.recv_expand + r * k;
  int n = 0;
  for (std::size_t j = 0; j < k && expand[j] >= 0; ++j, ++n) {
    const auto row = static_cast<std::size_t>(expand[j]);
    rows[at + n] = expert_out + row * l.hidden;
    w[at + n] = ws.row_weight[row];
  }
  return n;
}

}  // namespace detail

template <class T>
TESSERA_KERNEL_CODE void moe_combine(Block blk, const Context& ctx, const MoeLayout& l,
                                     const MoeWorkspace<T>& ws, const T* expert_out, T* y,
                                     std::size_t tokens, std::uint64_t epoch, std::uint64_t call,
                                     std::uint64_t blocks_target) {
  const int me = ctx.my_pe, n = l.n_pes;
  const std::size_t h = l.hidden;
  const auto b = static_cast<std::size_t>(blk.block_id());
  const auto grid = static_cast<std::size_t>(blk.grid_size());
  T* out_row = ws.out_row + b * h;
  const T* rows[2 * kMoeMaxTopk];
  float w[2 * kMoeMaxTopk];
  // This PE is done with its staging buffer (dispatch ended): peers may write partials into it.
  if (b == 0 && blk.rank() == 0) {
    for (int i = 1; i < n; ++i) {
      signal(ctx, &ws.combine_ready[me], call, SignalOp::set, (me + i) % n, Sem::release);
    }
  }
  // Expert side, for the other PEs' tokens: one weighted partial per staged token, computed in
  // one pass and stored straight into its source slot in the source PE's staging when that
  // heap is mapped (no local row, no second copy); through a put from a local row otherwise.
  // This PE's own tokens are summed on the source side below, without a round trip.
  for (int s = static_cast<int>(b); s < n; s += static_cast<int>(grid)) {
    if (s == me) continue;
    const std::uint64_t count = detail::moe_to(l, ws.records, epoch, s, me);
    if (count == 0) continue;
    wait_until(blk, ctx, &ws.combine_ready[s], Cmp::ge, call);
    const std::uint64_t r0 = detail::moe_recv_offset(l, ws.records, epoch, me, s);
    const std::uint64_t d0 = detail::moe_return_offset(l, ws.records, epoch, s, me);
    T* mapped = ctx.ptr(ws.staging + d0 * h, s);
    for (std::uint64_t i = 0; i < count; ++i) {
      const int n_rows = detail::moe_expert_rows_of(l, ws, expert_out, r0 + i, rows, w, 0);
      if (mapped != nullptr) {
        detail::moe_weighted_sum(blk, mapped + i * h, rows, w, n_rows, h);
      } else {
        detail::moe_weighted_sum(blk, out_row, rows, w, n_rows, h);
        blk.sync();
        put(blk, ctx, make_tile(ws.staging + (d0 + i) * h, h), make_tile<const T>(out_row, h), s);
      }
    }
  }
  quiet(blk, ctx);
  const bool last = detail::moe_last_block(blk, ctx, &ws.blocks_done[1], blocks_target);
  if (last) {
    // The counter's acquire makes every block's stores and puts happen before these signals.
    for (int i = 1; i < n; ++i) {
      signal(ctx, &ws.combine_sig[me], call, SignalOp::set, (me + i) % n, Sem::release);
    }
  }
  // Source side: y[t] = this PE's own experts' weighted rows + the partial of every other PE
  // that holds one of its experts, summed in one fp32 pass.
  for (int i = 1; i < n; ++i) {
    const int q = (me + i) % n;
    wait_until(blk, ctx, &ws.combine_sig[q], Cmp::ge, call);
  }
  const std::uint64_t self0 = detail::moe_recv_offset(l, ws.records, epoch, me, me);
  const std::size_t t0 = tokens * b / grid, t1 = tokens * (b + 1) / grid;
  for (std::size_t t = t0; t < t1; ++t) {
    const std::int32_t* pos_of = ws.send_pos + t * static_cast<std::size_t>(n);
    int n_rows = 0;
    if (pos_of[me] >= 0) {
      n_rows = detail::moe_expert_rows_of(
          l, ws, expert_out, self0 + static_cast<std::uint64_t>(pos_of[me]), rows, w, 0);
    }
    for (int q = 0; q < n; ++q) {
      if (q == me || pos_of[q] < 0) continue;
      const std::uint64_t row = detail::moe_return_offset(l, ws.records, epoch, me, q) +
                                static_cast<std::uint64_t>(pos_of[q]);
      rows[n_rows] = ws.staging + row * h;
      w[n_rows] = 1.0f;
      ++n_rows;
    }
    detail::moe_weighted_sum(blk, y + t * h, rows, w, n_rows, h);
  }
  blk.sync();
  // As in moe_dispatch: the combine_sig signals may still be in flight through the proxy (the
  // combine_ready ones were quieted above, before them).
  if (last) quiet(ctx);
}

template <class T>
TESSERA_KERNEL_CODE void moe_combine(Block blk, const Context& ctx, const MoeLayout& l,
                                     const MoeWorkspace<T>& ws, const T* expert_out, T* y,
                                     std::size_t tokens, MoeCounters counters) {
  // No kernel writes the dispatch count while this one runs: the stream ran the dispatch before.
  const std::uint64_t epoch =
      platform::atomic_load(counters.dispatch.words, Sem::relaxed, Scope::device);
  const std::uint64_t call = counters.combine.next_in_grid(blk);
  const std::uint64_t target =
      counters.combine_blocks.next_in_grid(blk, static_cast<std::uint64_t>(blk.grid_size()));
  moe_combine(blk, ctx, l, ws, expert_out, y, tokens, epoch, call, target);
}

}  // namespace tessera::device::ops
