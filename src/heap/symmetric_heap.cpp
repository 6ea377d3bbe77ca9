#include "heap/symmetric_heap.hpp"

#include <vector>

#include "tessera/device/context.hpp"
#include "tessera/device/platform.hpp"

namespace tessera::detail {

namespace platform = device::platform;
using device::Scope;
using device::Sem;

SymmetricHeap::SymmetricHeap(std::size_t bytes, std::uint64_t* table, HeapSegment& segment,
                             bool host_memory)
    : bytes_(bytes),
      table_(table),
      segment_(segment),
      host_memory_(host_memory),
      allocator_(0, bytes) {}

std::optional<std::size_t> SymmetricHeap::allocate(std::size_t bytes, std::size_t align) {
  std::lock_guard lock(mu_);
  std::optional<std::size_t> offset = allocator_.allocate(bytes, align);
  if (offset) publish();
  return offset;
}

bool SymmetricHeap::release(std::size_t offset) {
  std::lock_guard lock(mu_);
  const bool released = allocator_.release(offset);
  if (released) publish();
  return released;
}

std::size_t SymmetricHeap::bytes_left_in_block(std::size_t offset) const {
  std::lock_guard lock(mu_);
  const auto block = allocator_.block_containing(offset);
  if (!block) return 0;
  return *block + allocator_.block_size(*block) - offset;
}

std::optional<Allocator::Block> SymmetricHeap::block_containing(std::size_t offset) const {
  std::lock_guard lock(mu_);
  const auto block = allocator_.block_containing(offset);
  if (!block) return std::nullopt;
  Allocator::Block found{*block, allocator_.block_size(*block), 0};
  for (const auto& b : allocator_.blocks()) {
    if (b.offset == *block) found.index = b.index;
  }
  return found;
}

std::size_t SymmetricHeap::free_bytes() const {
  std::lock_guard lock(mu_);
  return allocator_.free_bytes();
}

std::size_t SymmetricHeap::largest_free() const {
  std::lock_guard lock(mu_);
  return allocator_.largest_free();
}

void SymmetricHeap::publish() {
  using Table = device::AllocationTable;
  const std::vector<Allocator::Block> blocks = allocator_.blocks();
  const bool fits = blocks.size() <= Table::kCapacity;
  std::vector<std::uint64_t> body(Table::kEntries +
                                  (fits ? blocks.size() * Table::kWordsPerEntry : 0));
  body[Table::kCount] = fits ? blocks.size() : Table::kOverflow;
  if (fits) {
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      std::uint64_t* entry = &body[Table::kEntries + i * Table::kWordsPerEntry];
      entry[0] = blocks[i].offset;
      entry[1] = blocks[i].bytes;
      entry[2] = blocks[i].index;
    }
  }
  // A seqlock: odd while the body changes, so device readers retry instead of trusting a mix.
  const std::uint64_t odd = ++version_;
  const std::uint64_t even = ++version_;
  if (host_memory_) {
    platform::atomic_store(&table_[Table::kVersion], odd, Sem::relaxed, Scope::system);
    platform::fence(Sem::release, Scope::system);
    for (std::size_t i = Table::kCount; i < body.size(); ++i)
      platform::atomic_store(&table_[i], body[i], Sem::relaxed, Scope::system);
    platform::atomic_store(&table_[Table::kVersion], even, Sem::release, Scope::system);
    return;
  }
  segment_.copy(&table_[Table::kVersion], &odd, sizeof(odd));
  segment_.copy(&table_[Table::kCount], &body[Table::kCount],
                (body.size() - Table::kCount) * sizeof(std::uint64_t));
  segment_.copy(&table_[Table::kVersion], &even, sizeof(even));
}

}  // namespace tessera::detail
