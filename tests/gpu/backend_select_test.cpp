// Backend selection at init, on whatever this machine has: asking for a GPU backend that cannot
// run here is a clear Error(backend) with the true cause; automatic falls back to host. And the
// GPU backends' decisions (src/gpu/gpu_checks.hpp) fed fake inputs: version causes, PEs as
// threads sharing a GPU, peers without native atomics.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "gpu/gpu_checks.hpp"
#include "tessera/detail/gpu_kernel_record.hpp"
#include "tessera/device/platform.hpp"
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
#if !defined(TESSERA_HAVE_CUDA)
    EXPECT_NE(e.message().find("has no CUDA backend"), std::string::npos) << e.message();
#endif
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

// Waits (bounded) on the host executor for `flag` to read 1, then copies `payload` into `done`:
// work queued on the PE's stream that a host copy must neither wait for nor be reordered after.
struct WaitForFlagThenCopy {
  void operator()(device::Block, const std::uint64_t* flag, const std::uint64_t* payload,
                  std::uint64_t* done) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (device::platform::atomic_load(flag, device::Sem::acquire, device::Scope::system) != 1) {
      if (std::chrono::steady_clock::now() > deadline) return;  // done stays 0: the test fails
    }
    *done = *payload;
  }
};

// Host copies are synchronous and not ordered after the PE's stream (the contract every backend
// keeps; GPU backends run them on a copy stream of their own): a put while a kernel waits returns
// with its bytes in place (the host raises the kernel's flag only after the put returned), the
// kernel sees them, and a get after synchronize() sees the kernel's store.
TEST(HostCopies, APutReturnsWhileQueuedStreamWorkWaitsForItsBytes) {
  auto rt = Runtime::init(single_pe(Backend::host));
  auto words = rt.alloc<std::uint64_t>(3);
  const std::uint64_t zero[3] = {0, 0, 0};
  rt.put(words.get(), zero, sizeof(zero), 0);
  std::uint64_t* flag = words.get();
  launch(rt.stream(), 1, WaitForFlagThenCopy{}, flag, words.get() + 1, words.get() + 2);
  const std::uint64_t payload = 42;
  rt.put(words.get() + 1, &payload, sizeof(payload), 0);
  device::platform::atomic_store(flag, std::uint64_t{1}, device::Sem::release,
                                 device::Scope::system);
  rt.stream().synchronize();
  std::uint64_t seen[3] = {};
  rt.get(seen, words.get(), sizeof(seen), 0);
  EXPECT_EQ(seen[1], 42u);
  EXPECT_EQ(seen[2], 42u) << "the queued kernel did not see the put's bytes";
}

using detail::DeviceCountResult;

TEST(GpuProbeCause, ADriverOlderThanTheRuntimesMajorIsNamedNotNoDevice) {
  // A static CUDA 13 runtime on a CUDA 12.4 driver: the device count says "no device".
  const std::string cause = detail::probe_cause("CUDA", DeviceCountResult::no_device, 0, 12040,
                                                13000, 12050, "no CUDA-capable device is detected");
  EXPECT_NE(cause.find("driver is too old"), std::string::npos) << cause;
  EXPECT_NE(cause.find("CUDA 12.4"), std::string::npos) << cause;
  EXPECT_NE(cause.find("runtime is CUDA 13.0"), std::string::npos) << cause;
}

TEST(GpuProbeCause, InsufficientDriverIsNamedAsSuch) {
  const std::string cause =
      detail::probe_cause("CUDA", DeviceCountResult::insufficient_driver, 0, 12020, 12080, 12050,
                          "driver version is insufficient");
  EXPECT_NE(cause.find("driver is too old"), std::string::npos) << cause;
}

// A machine with no driver installed: the runtime says "insufficient driver" and the driver
// version is 0 (what CI's machine answers): the cause is the missing driver.
TEST(GpuProbeCause, InsufficientDriverWithNoDriverVersionIsNoDriver) {
  const std::string cause = detail::probe_cause("CUDA", DeviceCountResult::insufficient_driver, 0,
                                                0, 13000, 12050, "insufficient driver");
  EXPECT_NE(cause.find("no CUDA driver is loaded"), std::string::npos) << cause;
  EXPECT_EQ(cause.find("too old"), std::string::npos) << cause;
}

TEST(GpuProbeCause, ARuntimeOlderThanTheMinimumIsNamed) {
  const std::string cause =
      detail::probe_cause("CUDA", DeviceCountResult::ok, 1, 12080, 12020, 12050, "");
  EXPECT_NE(cause.find("the CUDA runtime is too old: this build's runtime is CUDA 12.2, Tessera "
                       "needs CUDA 12.5 or newer"),
            std::string::npos)
      << cause;
}

TEST(GpuProbeCause, NoDriverAndNoDeviceAreTold) {
  EXPECT_NE(detail::probe_cause("HIP", DeviceCountResult::no_driver, 0, 0, 5020, 5020, "no driver")
                .find("no HIP driver is loaded (no driver)"),
            std::string::npos);
  EXPECT_NE(
      detail::probe_cause("CUDA", DeviceCountResult::no_device, 0, 12080, 12080, 12050, "none")
          .find("the CUDA driver 12.8 sees no device"),
      std::string::npos);
  EXPECT_EQ(detail::probe_cause("CUDA", DeviceCountResult::ok, 2, 12080, 12060, 12050, ""), "");
  EXPECT_NE(
      detail::probe_cause("CUDA", DeviceCountResult::other_error, 0, 12080, 12080, 12050, "boom")
          .find("device count query failed: boom"),
      std::string::npos);
}

detail::PeDevice pe_on(int pe, std::uint64_t pid, unsigned char device) {
  detail::PeDevice d;
  d.pe = pe;
  d.pid = pid;
  d.uuid[0] = device;
  return d;
}

TEST(GpuSharing, ThreadsOfOneProcessOnOneGpuAreRefusedNamingBoth) {
  const std::string problem =
      detail::same_process_device_sharing({pe_on(0, 100, 1), pe_on(1, 100, 1)});
  EXPECT_NE(problem.find("PEs 0 and 1 are threads of one process on the same GPU"),
            std::string::npos)
      << problem;
}

TEST(GpuSharing, ProcessesSharingAGpuOrThreadsOnTheirOwnGpusAreAllowed) {
  EXPECT_EQ(detail::same_process_device_sharing({pe_on(0, 100, 1), pe_on(1, 101, 1)}), "");
  EXPECT_EQ(detail::same_process_device_sharing({pe_on(0, 100, 1), pe_on(1, 100, 2)}), "");
  EXPECT_EQ(detail::same_process_device_sharing({pe_on(3, 100, 1)}), "");
}

TEST(GpuPeerLink, APeerWithoutNativeAtomicsIsLeftToTheProxyPathWithANote) {
  std::string note;
  EXPECT_TRUE(detail::map_peer_over_link(true, true, 0, 1, note));
  EXPECT_TRUE(note.empty());
  EXPECT_FALSE(detail::map_peer_over_link(false, true, 0, 1, note));
  EXPECT_TRUE(note.empty());
  EXPECT_FALSE(detail::map_peer_over_link(true, false, 0, 3, note));
  EXPECT_NE(note.find("PE 0 reaches PE 3's GPU by P2P but without native atomics"),
            std::string::npos)
      << note;
}

// Issue 17 item 1: the VMM path's layout of a segment of a 6 MiB heap, the 2 MiB hole and a
// control area of 5 pages, with 2 MiB granularity: two allocations, and the hole plus a granule
// before the heap and after the control area left unmapped.
TEST(GpuVmmLayout, TheControlAreaIsItsOwnAllocationWithTheHoleAndBothEndsUnmapped) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  const detail::VmmLayout l = detail::vmm_layout(8 * kMiB + 5 * 4096, 6 * kMiB, 2 * kMiB, 2 * kMiB);
  ASSERT_TRUE(l.split()) << l.why_whole;
  EXPECT_EQ(l.lead, 2 * kMiB);
  EXPECT_EQ(l.heap_bytes, 6 * kMiB);
  EXPECT_EQ(l.control_offset, 8 * kMiB);
  EXPECT_EQ(l.control_bytes, 2 * kMiB);  // 5 pages, rounded up to a granule
  EXPECT_EQ(l.segment_bytes(), 10 * kMiB);
  EXPECT_EQ(l.reserved, 2 * kMiB + 10 * kMiB + 2 * kMiB);
  // Nothing mapped overlaps: lead guard, heap, hole, control area, trailing guard.
  EXPECT_LE(l.lead + l.heap_bytes, l.lead + l.control_offset - 2 * kMiB);
  EXPECT_EQ(l.lead + l.control_offset + l.control_bytes + 2 * kMiB, l.reserved);
}

TEST(GpuVmmLayout, OneAllocationWhenTheGranularityDoesNotDivideTheHoleOrNoHoleIsAsked) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  // A 4 MiB granularity cannot end an allocation at 6 MiB.
  detail::VmmLayout l = detail::vmm_layout(8 * kMiB + 4096, 6 * kMiB, 2 * kMiB, 4 * kMiB);
  EXPECT_FALSE(l.split());
  EXPECT_EQ(l.lead, 0u);
  EXPECT_EQ(l.heap_bytes, 12 * kMiB);
  EXPECT_EQ(l.segment_bytes(), 12 * kMiB);
  EXPECT_EQ(l.reserved, 12 * kMiB);
  EXPECT_NE(l.why_whole.find("granularity (4194304 bytes) does not divide"), std::string::npos)
      << l.why_whole;
  // No hole asked for (the layout the VMM path falls back to when another PE cannot split).
  l = detail::vmm_layout(3 * kMiB, 0, 0, 2 * kMiB);
  EXPECT_FALSE(l.split());
  EXPECT_EQ(l.heap_bytes, 4 * kMiB);
  EXPECT_NE(l.why_whole.find("no hole"), std::string::npos) << l.why_whole;
}

// A preflight of one device that passes every device check, with the kernels given.
detail::GpuPreflight one_device(std::vector<detail::GpuDeviceFacts::Kernel> kernels) {
  detail::GpuPreflight p;
  p.api = "CUDA";
  p.probe.devices = 1;
  p.probe.driver_version = p.probe.runtime_version = 13000;
  p.block_threads = 256;
  detail::GpuDeviceFacts d;
  d.name = "Fake GPU";
  d.cooperative_launch = true;
  d.multiprocessors = 132;
  d.vmm_gpudirect_rdma = 1;
  d.kernels = std::move(kernels);
  p.devices.push_back(d);
  return p;
}

TEST(GpuPreflight, ReportsTheFewestAndMostCoResidentBlocksOfTheKernels) {
  bool ok = false;
  const std::string report = detail::format_preflight(
      one_device({{"AllReduceKernel<float>", 4}, {"GemmTilesKernel", 1}, {"BarrierKernel", 8}}),
      ok);
  EXPECT_TRUE(ok) << report;
  EXPECT_NE(report.find("GPUDirect RDMA with VMM yes"), std::string::npos) << report;
  EXPECT_NE(report.find("device 0: 3 kernels of 256 threads per block; co-resident at once: "
                        "fewest 132 blocks (1 per multiprocessor) of GemmTilesKernel, most 1056 "
                        "blocks (8 per multiprocessor) of BarrierKernel"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("preflight: ok"), std::string::npos) << report;
}

TEST(GpuPreflight, AKernelOfWhichNoBlockFitsFailsNamingIt) {
  bool ok = true;
  const std::string report =
      detail::format_preflight(one_device({{"AllReduceKernel<float>", 4}, {"HugeKernel", 0}}), ok);
  EXPECT_FALSE(ok) << report;
  EXPECT_NE(report.find("CUDA: FAIL: device 0: not one 256-thread block of HugeKernel fits on a "
                        "multiprocessor"),
            std::string::npos)
      << report;
  EXPECT_EQ(report.find("preflight: ok"), std::string::npos) << report;
}

TEST(GpuPreflight, AFailedQueryIsANoteAndNoKernelsIsSaid) {
  bool ok = false;
  std::string report = detail::format_preflight(one_device({{"OddKernel", -1}}), ok);
  EXPECT_TRUE(ok) << report;
  EXPECT_NE(report.find("note: device 0: the co-resident blocks of OddKernel could not be queried"),
            std::string::npos)
      << report;
  report = detail::format_preflight(one_device({}), ok);
  EXPECT_TRUE(ok) << report;
  EXPECT_NE(report.find("device 0: no CUDA kernels are compiled into this program"),
            std::string::npos)
      << report;
}

namespace fake_kernels {
struct First {};
template <class T>
struct Second {};
}  // namespace fake_kernels

TEST(GpuKernelRecord, EachEntryIsKeptOncePerRuntimeInTheOrderFirstRecorded) {
  // Stand-ins for kernel entry points (only their addresses are recorded); runtime 7 is one no
  // build has, so the library's own records (none in a host build) cannot mix in.
  static const char a = 0, b = 0;
  detail::record_gpu_kernel(7, &a, typeid(fake_kernels::First).name());
  detail::record_gpu_kernel(7, &b, typeid(fake_kernels::Second<float>).name());
  detail::record_gpu_kernel(7, &a, typeid(fake_kernels::First).name());
  detail::record_gpu_kernel(8, &a, typeid(fake_kernels::First).name());
  const auto kernels = detail::recorded_gpu_kernels(7);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].entry, &a);
  EXPECT_EQ(kernels[1].entry, &b);
  EXPECT_EQ(detail::kernel_display_name(kernels[0].type_name), "fake_kernels::First");
  EXPECT_EQ(detail::kernel_display_name(kernels[1].type_name), "fake_kernels::Second<float>");
  EXPECT_EQ(detail::recorded_gpu_kernels(8).size(), 1u);
}

}  // namespace
}  // namespace tessera
