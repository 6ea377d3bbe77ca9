// SymmetricHeap: one PE's bookkeeping of its symmetric heap. It owns the allocator (which heap
// offsets are live blocks) and keeps the device-readable copy of that list (AllocationTable, in
// the control area) in step with it, both under one lock. Offsets only: the memory is the
// segment's, and agreeing with the peers on each call is the runtime's job. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "heap/allocator.hpp"
#include "heap/heap_segment.hpp"

namespace tessera::detail {

// Memory for the allocation table's entries (AllocationTable): host code stores to `host`,
// device code reads the same bytes at `device`; `owner` frees them.
struct TableMemory {
  std::uint64_t* host = nullptr;
  std::uint64_t* device = nullptr;
  std::shared_ptr<void> owner;
};
// Makes TableMemory of `bytes` bytes; throws when it cannot.
using TableMemoryMaker = std::function<TableMemory(std::size_t bytes)>;

class SymmetricHeap {
 public:
  // Manages heap offsets [0, bytes). `table` is the AllocationTable header in `segment`'s
  // memory, zeroed (an empty table); `host_memory` says host code may store to it (the host
  // backend), else it is written by the segment's copies. The entries live in memory from
  // `make_entries`, replaced by a larger one as the live blocks grow.
  SymmetricHeap(std::size_t bytes, std::uint64_t* table, HeapSegment& segment, bool host_memory,
                TableMemoryMaker make_entries);
  SymmetricHeap(const SymmetricHeap&) = delete;
  SymmetricHeap& operator=(const SymmetricHeap&) = delete;

  std::size_t bytes() const { return bytes_; }
  // The table device code reads (Context::allocations).
  const std::uint64_t* allocation_table() const { return table_; }
  // The table's header as host code may read it: the current count, and the entries' host
  // address in place of their device address (for diagnostics built on the host, GPU backends).
  std::vector<std::uint64_t> host_table_header() const;

  // Offset of a new block of `bytes` aligned to `align` (a power of two), or nothing when no
  // free range fits; the table shows the block before this returns.
  std::optional<std::size_t> allocate(std::size_t bytes, std::size_t align);
  // Frees the block starting at `offset`; false when no live block starts there.
  bool release(std::size_t offset);

  // Bytes from `offset` to the end of the live block containing it; 0 when no block does.
  std::size_t bytes_left_in_block(std::size_t offset) const;
  // The live block containing `offset`, with its allocation number, for diagnostics.
  std::optional<Allocator::Block> block_containing(std::size_t offset) const;
  std::size_t free_bytes() const;
  std::size_t largest_free() const;

 private:
  // Rewrites the table from the allocator. Call with mu_ held.
  void publish();

  const std::size_t bytes_;
  std::uint64_t* const table_;
  HeapSegment& segment_;
  const bool host_memory_;
  mutable std::mutex mu_;  // the heap is per PE, but guard against misuse from several threads
  Allocator allocator_;
  std::uint64_t version_ = 0;  // the table's seqlock counter
  const TableMemoryMaker make_entries_;
  TableMemory entries_;                // the entry array device code reads now
  std::size_t entry_capacity_ = 0;     // entries it holds
  std::uint64_t published_count_ = 0;  // entries in the table now
  std::vector<TableMemory> retired_;   // earlier arrays: a reader may still be in one
};

}  // namespace tessera::detail
