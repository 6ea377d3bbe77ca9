// Helpers shared by the device-API tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>

#include "element_bytes.hpp"
#include "harness/expect_error.hpp"
#include "harness/run_pes.hpp"
#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/stream.hpp"
#include "tessera/stream_rma.hpp"

namespace tessera::device_test {

namespace td = tessera::device;

using harness::expect_error;

// The group of type G inside a host block.
template <class G>
G group_in(td::Block blk) {
  if constexpr (std::is_same_v<G, td::Block>) {
    return blk;
  } else {
    return G{};
  }
}

// Runs fn(G) as a one-block kernel on the PE's default stream and waits for it.
template <class G, class Fn>
void run_kernel(Runtime& rt, Fn fn) {
  launch(rt.stream(), 1, [fn](td::Block blk) { fn(group_in<G>(blk)); });
  rt.stream().synchronize();
}

using element_bytes::bits_of;
using element_bytes::element;

template <class T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// True when the environment variable `name` is "1": a test program's switch to run as processes
// (TESSERA_SUITES_AS_PROCESSES).
inline bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == "1";
}

// A test program's one PE when it runs as processes (one PE per process, under tessera-run):
// made at the first get(), finalized after a closing barrier once the program's tests ran.
class ProcessPe : public ::testing::Environment {
 public:
  static Runtime& get() {
    if (!rt_) {
      auto options = Options::from_env();
      if (std::getenv("TESSERA_HEAP_SIZE") == nullptr) options.heap_size = std::size_t{64} << 20;
      rt_.emplace(Runtime::init(options));
    }
    return *rt_;
  }
  void TearDown() override {
    if (rt_) {
      rt_->barrier();
      rt_->finalize();
      rt_.reset();
    }
  }

 private:
  static inline std::optional<Runtime> rt_;
};

// Registers ProcessPe with gtest when the variable `name` is "1" (env_flag); null otherwise.
inline ::testing::Environment* process_pe_environment(const char* name) {
  return env_flag(name) ? ::testing::AddGlobalTestEnvironment(new ProcessPe) : nullptr;
}

}  // namespace tessera::device_test
