// A network proxy ring (tessera/device/proxy_wire.hpp) in ordinary memory, for tests that play
// the producer or the proxy by hand: zeroed, every slot free for its first ticket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "tessera/device/proxy_wire.hpp"

namespace tessera::harness {

class RingMemory {
 public:
  explicit RingMemory(std::uint32_t n_slots) {
    const std::size_t bytes =
        device::ProxyChannel::kHeaderBytes + n_slots * sizeof(device::ProxyDescriptor);
    memory_.reset(static_cast<char*>(std::aligned_alloc(64, bytes)));
    std::memset(memory_.get(), 0, bytes);
    ring_ = reinterpret_cast<device::ProxyChannel*>(memory_.get());
    ring_->n_slots = n_slots;
    for (std::uint32_t i = 0; i < n_slots; ++i) ring_->slots()[i].seq = device::proxy_slot_free(i);
  }

  device::ProxyChannel* get() const { return ring_; }

 private:
  struct FreeDeleter {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, FreeDeleter> memory_;
  device::ProxyChannel* ring_ = nullptr;
};

}  // namespace tessera::harness
