#include "runtime/proxy_ring.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace tessera::detail {

ProxyRing make_host_proxy_ring(std::size_t bytes) {
  // Cache-line aligned, so descriptors never straddle lines.
  void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  ProxyRing ring;
  ring.host = p;
  ring.device = p;
  ring.bytes = bytes;
  ring.owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  return ring;
}

}  // namespace tessera::detail
