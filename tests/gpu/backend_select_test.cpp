// Backend selection at init, on whatever this machine has: asking for a GPU backend that cannot
// run here is a clear Error(backend); automatic falls back to host.
#include <gtest/gtest.h>

#include <string>

#include "tessera/tessera.hpp"

namespace tessera {
namespace {

Options single_pe(Backend backend) {
  Options o;
  o.backend = backend;
  o.bootstrap_kind = BootstrapKind::single;
  o.heap_size = std::size_t{4} << 20;
  return o;
}

TEST(BackendSelect, AskingForCudaWithoutADeviceThrowsABackendError) {
  if (backend_available(Backend::cuda)) GTEST_SKIP() << "a CUDA device is visible here";
  try {
    auto rt = Runtime::init(single_pe(Backend::cuda));
    FAIL() << "init on the cuda backend succeeded without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::backend);
    EXPECT_NE(e.message().find("'cuda' was asked for"), std::string::npos) << e.message();
  }
}

TEST(BackendSelect, AskingForHipWithoutADeviceThrowsABackendError) {
  if (backend_available(Backend::hip)) GTEST_SKIP() << "a HIP device is visible here";
  try {
    auto rt = Runtime::init(single_pe(Backend::hip));
    FAIL() << "init on the hip backend succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::backend);
    EXPECT_NE(e.message().find("'hip' was asked for"), std::string::npos) << e.message();
  }
}

TEST(BackendSelect, AutomaticPicksAGpuBackendWhenADeviceIsVisibleElseHost) {
  auto rt = Runtime::init(single_pe(Backend::automatic));
  const Backend expected = backend_available(Backend::cuda)  ? Backend::cuda
                           : backend_available(Backend::hip) ? Backend::hip
                                                             : Backend::host;
  EXPECT_EQ(rt.backend(), expected);
}

TEST(BackendSelect, HostIsAlwaysAvailable) {
  EXPECT_TRUE(backend_available(Backend::host));
  auto rt = Runtime::init(single_pe(Backend::host));
  EXPECT_EQ(rt.backend(), Backend::host);
  EXPECT_EQ(rt.stream().native_handle(), nullptr);
}

}  // namespace
}  // namespace tessera
