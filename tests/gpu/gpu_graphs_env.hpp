// Shared by gpu_graphs_test's two files: device buffers written and read from the host around
// each replay, and the replay count.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "../graphs/replay.hpp"
#include "tessera/tessera.hpp"

namespace tessera::gpu_test {

// A symmetric heap block of `count` T (device memory on the cuda backend) and a host copy of it:
// upload() writes the host copy into the block, download() reads the block into the host copy
// and returns it. Both are synchronous host copies; call them between the stream's calls (after
// Stream::synchronize), never during a capture. Allocation is collective: every PE makes the same
// DeviceArrays in the same order.
template <class T>
struct DeviceArray {
  DeviceArray(Runtime& runtime, std::size_t count)
      : rt(runtime), host(count), block(runtime.alloc<T>(count)) {}

  T* get() const { return block.get(); }
  void upload() { rt.put(block.get(), host.data(), host.size() * sizeof(T), rt.pe()); }
  const T* download() {
    rt.get(host.data(), block.get(), host.size() * sizeof(T), rt.pe());
    return host.data();
  }

  Runtime& rt;
  std::vector<T> host;
  Symmetric<T> block;
};

// Replays per case: TESSERA_GRAPH_REPLAYS (a positive integer), default 1000. One warm-up call
// before the capture (an op's first call makes its host agreement check, which refuses capture).
inline graphs_test::ReplayOptions replay_options() {
  graphs_test::ReplayOptions o;
  o.replays = 1000;
  if (const char* v = std::getenv("TESSERA_GRAPH_REPLAYS"); v != nullptr && *v != '\0') {
    o.replays = std::atoi(v);
  }
  if (o.replays < 1) o.replays = 1;  // at least one replay is checked: no case passes on none
  o.warmup_calls = 1;
  return o;
}

}  // namespace tessera::gpu_test
