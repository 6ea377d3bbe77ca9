// The symmetric allocator: first-fit over heap offsets with coalescing. Deterministic: the
// same sequence of calls yields the same offsets, which is what makes the heap symmetric when
// every PE runs the same sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace tessera::detail {

class Allocator {
 public:
  // Manages offsets [begin, end).
  Allocator(std::size_t begin, std::size_t end);

  // Offset of a new block, or nothing when no free range fits. `align` is a power of two.
  std::optional<std::size_t> allocate(std::size_t bytes, std::size_t align);
  // Returns the block at `offset` to the free list; false when no live block starts there.
  bool release(std::size_t offset);
  // Size of the live block at `offset`, or 0.
  std::size_t block_size(std::size_t offset) const;
  // Start offset of the live block containing `offset`, if any.
  std::optional<std::size_t> block_containing(std::size_t offset) const;

  // A live block as diagnostics name it: "allocation #index (offset, bytes)".
  struct Block {
    std::size_t offset;
    std::size_t bytes;
    std::uint64_t index;  // how many blocks were allocated before this one
  };
  // The live blocks in offset order.
  std::vector<Block> blocks() const;

  std::size_t free_bytes() const { return free_bytes_; }
  std::size_t largest_free() const;
  std::size_t live_blocks() const { return used_.size(); }

  // Every block is rounded up to this many bytes, so separate blocks never share a cache line.
  static constexpr std::size_t kGranule = 64;

 private:
  struct Used {
    std::size_t region_begin;  // where the carved range starts (before alignment padding)
    std::size_t region_end;
    std::size_t bytes;  // rounded size the caller can use
    std::uint64_t index;
  };
  void insert_free(std::size_t begin, std::size_t end);

  std::map<std::size_t, std::size_t> free_;  // begin -> end, disjoint and never adjacent
  std::map<std::size_t, Used> used_;         // user offset -> block
  std::size_t free_bytes_ = 0;
  std::uint64_t allocations_ = 0;  // blocks handed out so far
};

}  // namespace tessera::detail
