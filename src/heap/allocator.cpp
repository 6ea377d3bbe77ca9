#include "heap/allocator.hpp"

#include <iterator>

namespace tessera::detail {
namespace {

std::size_t align_up(std::size_t value, std::size_t align) {
  return (value + align - 1) & ~(align - 1);
}

}  // namespace

Allocator::Allocator(std::size_t begin, std::size_t end) {
  if (end > begin) insert_free(begin, end);
}

std::optional<std::size_t> Allocator::allocate(std::size_t bytes, std::size_t align) {
  if (bytes == 0 || bytes > (~std::size_t{0} >> 1)) return std::nullopt;
  if (align < kGranule) align = kGranule;
  const std::size_t rounded = align_up(bytes, kGranule);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const std::size_t begin = it->first;
    const std::size_t end = it->second;
    const std::size_t user = align_up(begin, align);
    if (user < begin || user > end || end - user < rounded) continue;
    // Carve [user, user + rounded); the alignment padding before it stays with the block so a
    // free returns exactly what was taken, and the tail goes back to the free list.
    free_.erase(it);
    const std::size_t tail = user + rounded;
    if (tail < end) free_.emplace(tail, end);
    free_bytes_ -= tail - begin;
    used_.emplace(user, Used{begin, tail, rounded, allocations_++});
    return user;
  }
  return std::nullopt;
}

bool Allocator::release(std::size_t offset) {
  auto it = used_.find(offset);
  if (it == used_.end()) return false;
  const Used block = it->second;
  used_.erase(it);
  insert_free(block.region_begin, block.region_end);
  return true;
}

std::size_t Allocator::block_size(std::size_t offset) const {
  auto it = used_.find(offset);
  return it == used_.end() ? 0 : it->second.bytes;
}

std::optional<std::size_t> Allocator::block_containing(std::size_t offset) const {
  auto it = used_.upper_bound(offset);
  if (it == used_.begin()) return std::nullopt;
  --it;
  if (offset < it->first + it->second.bytes) return it->first;
  return std::nullopt;
}

std::vector<Allocator::Block> Allocator::blocks() const {
  std::vector<Block> out;
  out.reserve(used_.size());
  for (const auto& [offset, used] : used_) out.push_back({offset, used.bytes, used.index});
  return out;
}

std::size_t Allocator::largest_free() const {
  std::size_t best = 0;
  for (const auto& [begin, end] : free_) best = end - begin > best ? end - begin : best;
  return best;
}

void Allocator::insert_free(std::size_t begin, std::size_t end) {
  free_bytes_ += end - begin;
  auto next = free_.lower_bound(begin);
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->second == begin) {  // merge with the range before
      begin = prev->first;
      free_.erase(prev);
    }
  }
  if (next != free_.end() && next->first == end) {  // merge with the range after
    end = next->second;
    free_.erase(next);
  }
  free_.emplace(begin, end);
}

}  // namespace tessera::detail
