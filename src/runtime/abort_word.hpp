// The job's abort word, as the host side of a PE reads and writes it: one word of this PE's
// control page (Context::kAbortWord), non-zero once the job is aborting (encode_abort: which PE,
// and whether it failed or died). Device waits poll the same word; host collectives check it
// first, so an aborting job ends them with PeerLost instead of a hang. Internal.
#pragma once

#include <cstdint>

#include "heap/heap_segment.hpp"

namespace tessera::detail {

class AbortWord {
 public:
  // No control page yet (or none any more): the job never reads as aborting.
  AbortWord() = default;
  // `word` is in `segment`'s memory; `host_memory` says host code may load and store it (the
  // host backend), else it is reached by the segment's copies.
  AbortWord(std::uint64_t* word, HeapSegment* segment, bool host_memory)
      : word_(word), segment_(segment), host_memory_(host_memory) {}

  // 0 while the job is not aborting.
  std::uint64_t load() const;
  // Throws Error(peer_lost) on PE `pe`, "<what>: the job is aborting: PE p is lost ...", when the
  // word is set.
  void check_not_aborting(int pe, const char* what) const;
  // PE `pe`'s process ended: sets the word to say so, unless the job already aborts.
  void mark_died(int pe);
  // PE `pe` (this one) gives up on its own work: sets the word to say it failed, unless the job
  // already aborts.
  void mark_failed(int pe);

 private:
  // Sets the word to `value` unless it is set already.
  void mark(std::uint64_t value);

  std::uint64_t* word_ = nullptr;
  HeapSegment* segment_ = nullptr;
  bool host_memory_ = true;
};

}  // namespace tessera::detail
