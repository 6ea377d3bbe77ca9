#include "heap/symmetric_heap.hpp"

#include <vector>

#include "tessera/device/context.hpp"
#include "tessera/device/platform.hpp"

namespace tessera::detail {

namespace platform = device::platform;
using device::Scope;
using device::Sem;

SymmetricHeap::SymmetricHeap(std::size_t bytes, std::uint64_t* table, HeapSegment& segment,
                             bool host_memory, TableMemoryMaker make_entries)
    : bytes_(bytes),
      table_(table),
      segment_(segment),
      host_memory_(host_memory),
      allocator_(0, bytes),
      make_entries_(std::move(make_entries)) {}

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

std::vector<std::uint64_t> SymmetricHeap::host_table_header() const {
  using Table = device::AllocationTable;
  std::lock_guard lock(mu_);
  std::vector<std::uint64_t> header(Table::kHeaderWords, 0);
  header[Table::kCount] = published_count_;
  header[Table::kEntries] = reinterpret_cast<std::uintptr_t>(entries_.host);
  return header;
}

void SymmetricHeap::publish() {
  using Table = device::AllocationTable;
  const std::vector<Allocator::Block> blocks = allocator_.blocks();
  // Grow by doubling, so rewriting the table stays amortised O(live blocks) per call. The old
  // array stays allocated: a device reader that read its address before the switch may still
  // be searching it (it then sees the version change and retries).
  if (blocks.size() > entry_capacity_) {
    std::size_t capacity = entry_capacity_ == 0 ? 1024 : entry_capacity_;
    while (capacity < blocks.size()) capacity *= 2;
    TableMemory grown = make_entries_(capacity * Table::kWordsPerEntry * sizeof(std::uint64_t));
    if (entries_.owner) retired_.push_back(std::move(entries_));
    entries_ = std::move(grown);
    entry_capacity_ = capacity;
  }
  const std::uint64_t header[Table::kHeaderWords] = {
      0, blocks.size(),
      static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(entries_.device))};
  // A seqlock: odd while the body changes, so device readers retry instead of trusting a mix.
  const std::uint64_t odd = ++version_;
  const std::uint64_t even = ++version_;
  if (host_memory_) {
    platform::atomic_store(&table_[Table::kVersion], odd, Sem::relaxed, Scope::system);
  } else {
    segment_.copy(&table_[Table::kVersion], &odd, sizeof(odd));
  }
  platform::fence(Sem::release, Scope::system);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    std::uint64_t* entry = &entries_.host[i * Table::kWordsPerEntry];
    platform::atomic_store(&entry[0], std::uint64_t{blocks[i].offset}, Sem::relaxed, Scope::system);
    platform::atomic_store(&entry[1], std::uint64_t{blocks[i].bytes}, Sem::relaxed, Scope::system);
    platform::atomic_store(&entry[2], std::uint64_t{blocks[i].index}, Sem::relaxed, Scope::system);
  }
  if (host_memory_) {
    for (std::size_t i = Table::kCount; i < Table::kHeaderWords; ++i)
      platform::atomic_store(&table_[i], header[i], Sem::relaxed, Scope::system);
    platform::atomic_store(&table_[Table::kVersion], even, Sem::release, Scope::system);
  } else {
    // The entries' stores (pinned host memory) are done before the copies that publish them.
    platform::fence(Sem::acq_rel, Scope::system);
    segment_.copy(&table_[Table::kCount], &header[Table::kCount],
                  (Table::kHeaderWords - Table::kCount) * sizeof(std::uint64_t));
    segment_.copy(&table_[Table::kVersion], &even, sizeof(even));
  }
  published_count_ = blocks.size();
}

}  // namespace tessera::detail
