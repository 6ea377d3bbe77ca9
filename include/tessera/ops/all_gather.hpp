// tessera::ops::all_gather: every PE contributes `bytes_per_pe` bytes and every PE receives all
// P contributions, PE p's at offset p * bytes_per_pe of a symmetric buffer. The block-level
// building blocks it runs (one-shot push and ring) live in <tessera/device/ops/all_gather.hpp>
// (namespace tessera::device::ops) for use inside user kernels.
#pragma once

#include <cstddef>

#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::ops {

enum class AllGatherAlgo {
  automatic,  // TESSERA_ALLGATHER_ALGO if set, else one-shot below kAllGatherRingThreshold
  oneshot,    // every PE pushes its chunk to every peer: one hop, lowest latency (above two PEs
              // staged through a symmetric buffer up to kAllGatherStagedMax: no handshake)
  ring,       // chunks forwarded around the ring: each PE talks to one neighbour only
};

// "automatic", "oneshot", "ring".
const char* to_string(AllGatherAlgo algo) noexcept;

// Bytes per PE from which `automatic` picks the ring (when TESSERA_ALLGATHER_ALGO is unset).
inline constexpr std::size_t kAllGatherRingThreshold = std::size_t{32} << 20;
// Chunk the ring pipelines with: small enough that P - 1 hops overlap, large enough that a
// signal per chunk costs nothing.
inline constexpr std::size_t kAllGatherRingChunk = std::size_t{256} << 10;

// With more than two PEs, contributions up to this size take the staged one-shot: pushed into a
// symmetric staging area (2 * n_pes * bytes_per_pe per recv buffer, allocated at its first call),
// copied out by the receiver; above it, and at every size with two PEs, one-shot writes straight
// into the peers' recv after they signal entry.
inline constexpr std::size_t kAllGatherStagedMax = std::size_t{64} << 10;

// The algorithm `automatic` resolves to on this PE for `bytes_per_pe` (reads
// TESSERA_ALLGATHER_ALGO=oneshot|ring; throws Error(invalid_argument) on another value).
AllGatherAlgo resolve_all_gather_algo(std::size_t bytes_per_pe, AllGatherAlgo algo);

// Collective over all PEs, stream-ordered: enqueues on `stream` an all-gather of `bytes_per_pe`
// bytes from `send` (this PE's memory, any kind; may be recv + pe * bytes_per_pe) into `recv`
// (a symmetric heap block of at least n_pes * bytes_per_pe bytes). Once the stream reaches the
// end of the call, recv holds every PE's contribution and send is reusable; until then both
// must stay valid. No PE writes into this PE's recv for the next call on the same buffer before
// this PE's stream has entered it, so recv may be read freely between calls.
//
// Every PE makes the same sequence of calls with the same recv offset, bytes and algorithm. The
// first call on a (recv, bytes_per_pe) pair is collective on the host too: it checks that all
// PEs agree and allocates the pair's signal words from the symmetric heap (3 * n_pes + 2 words,
// freed at finalize; plus the staging area of small contributions); later calls only enqueue
// work. Calls never reset anything, and calls on
// different buffers use different signals.
//
// Capture (Stream::begin_capture): a later call on a pair is captured and replays correctly (its
// kernel numbers the call on the device, from a count kept with the pair's signal words; the
// algorithm, pointers and bytes are those of the captured call). The first call on a pair cannot
// be captured: during a capture it throws Error(invalid_argument) ("all_gather: cannot be
// captured: ... make the same call once before begin_capture ...") and enqueues nothing.
//
// Throws Error(invalid_argument) when bytes_per_pe is 0, send is null, recv is not inside a live
// symmetric heap block, the block is smaller than n_pes * bytes_per_pe from recv, or (first call
// on a pair) the PEs disagree on recv's heap offset or on bytes_per_pe.
void all_gather(Runtime& rt, Stream& stream, const void* send, void* recv, std::size_t bytes_per_pe,
                AllGatherAlgo algo = AllGatherAlgo::automatic);

}  // namespace tessera::ops
