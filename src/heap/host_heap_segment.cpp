#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "heap/fd_exchange.hpp"
#include "heap/heap_segment.hpp"
#include "heap/memfd.hpp"

namespace tessera::detail {
namespace {

class HostHeapSegment final : public HeapSegment {
 public:
  explicit HostHeapSegment(const SegmentRequest& r)
      : bytes_(r.bytes), pe_(r.pe), hole_offset_(r.hole_offset), hole_bytes_(r.hole_bytes) {
    fd_ = create_heap_memfd(r.bytes, r.pe);
    peer_bases_.assign(static_cast<std::size_t>(r.n_pes), nullptr);
    // This PE's own mapping gets its hole at seal_hole(), once the transport registered it.
    mappings_.push_back(map_heap(fd_.get(), r.bytes, 0, 0, r.pe, r.pe));
    peer_bases_[static_cast<std::size_t>(r.pe)] = mappings_.back().base();
    std::vector<Fd> peer_fds = exchange_node_fds(r.bootstrap, r.node_pes, fd_.get(), r.timeout);
    for (std::size_t i = 0; i < r.node_pes.size(); ++i) {
      if (!peer_fds[i].valid()) continue;
      mappings_.push_back(
          map_heap(peer_fds[i].get(), r.bytes, r.hole_offset, r.hole_bytes, r.pe, r.node_pes[i]));
      peer_bases_[static_cast<std::size_t>(r.node_pes[i])] = mappings_.back().base();
    }
    // Every mapping holds its PE's control area at the same offset past the hole.
    peer_controls_.assign(peer_bases_.size(), nullptr);
    for (std::size_t p = 0; p < peer_bases_.size(); ++p) {
      if (peer_bases_[p] != nullptr)
        peer_controls_[p] = reinterpret_cast<std::uint64_t*>(peer_bases_[p] + r.control_offset());
    }
  }

  char* const* device_peer_table() const override { return peer_bases_.data(); }
  std::uint64_t* const* device_control_table() const override { return peer_controls_.data(); }
  std::size_t bytes() const override { return bytes_; }
  const char* kind() const override { return "memfd"; }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  void zero(void* dst, std::size_t bytes) override {
    if (bytes > 0) std::memset(dst, 0, bytes);
  }
  void seal_hole() override {
    if (!mappings_.empty())
      make_inaccessible(mappings_.front().base() + hole_offset_, hole_bytes_, pe_);
  }
  void release() noexcept override {
    mappings_.clear();
    fd_ = Fd();
    std::fill(peer_bases_.begin(), peer_bases_.end(), nullptr);
    std::fill(peer_controls_.begin(), peer_controls_.end(), nullptr);
  }

 private:
  std::size_t bytes_;
  int pe_;
  std::size_t hole_offset_;
  std::size_t hole_bytes_;
  Fd fd_;
  std::vector<Mapping> mappings_;  // own heap and every mapped peer heap
};

}  // namespace

std::unique_ptr<HeapSegment> make_host_heap_segment(const SegmentRequest& request) {
  return std::make_unique<HostHeapSegment>(request);
}

}  // namespace tessera::detail
