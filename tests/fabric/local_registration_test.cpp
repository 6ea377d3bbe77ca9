// Issue 18 item 3: what the proxy does with a put/get's local buffer, for made-up provider
// mr_mode flags (no fabric or GPU needed): the heap's descriptor in the heap, FI_HMEM
// registration (never a host one) for device memory when FI_MR_LOCAL or FI_MR_HMEM asks, a
// refusal naming the cause when the provider lacks FI_HMEM, nothing when nothing is asked.
// Issue 17 item 1: the segment as two registered regions (heap, control page), the hole in
// neither.
#include <gtest/gtest.h>

#include <vector>

#include "transport/heap_registration.hpp"

namespace {

using tessera::detail::heap_registration;
using tessera::detail::HeapMemory;
using tessera::detail::local_registration;
using tessera::detail::LocalRegistration;
using tessera::detail::ProviderMrMode;
using tessera::detail::SegmentRegions;

ProviderMrMode provider(bool mr_local, bool mr_hmem, bool hmem) {
  ProviderMrMode p;
  p.mr_local = mr_local;
  p.mr_hmem = mr_hmem;
  p.hmem = hmem;
  p.name = "fake";
  return p;
}

const auto kHostHeap = heap_registration(HeapMemory::host, -1);
const auto kCudaHeap = heap_registration(HeapMemory::cuda, 1);

TEST(LocalRegistration, NothingWhenTheProviderAsksForNothing) {
  const auto p = provider(false, false, true);
  EXPECT_EQ(local_registration(64, true, HeapMemory::cuda, 1, kCudaHeap, p).action,
            LocalRegistration::none);
  EXPECT_EQ(local_registration(64, false, HeapMemory::host, -1, kCudaHeap, p).action,
            LocalRegistration::none);
  EXPECT_EQ(local_registration(64, false, HeapMemory::cuda, 1, kCudaHeap, p).action,
            LocalRegistration::none);
  EXPECT_EQ(local_registration(0, false, HeapMemory::cuda, 1, kCudaHeap, provider(1, 1, 1)).action,
            LocalRegistration::none);
}

TEST(LocalRegistration, HeapBuffersCarryTheHeapDescriptor) {
  EXPECT_EQ(local_registration(64, true, HeapMemory::host, -1, kHostHeap, provider(1, 0, 0)).action,
            LocalRegistration::heap);
  // FI_MR_HMEM alone: the heap needs its descriptor when it is GPU memory, not when host memory.
  EXPECT_EQ(local_registration(64, true, HeapMemory::cuda, 1, kCudaHeap, provider(0, 1, 1)).action,
            LocalRegistration::heap);
  EXPECT_EQ(local_registration(64, true, HeapMemory::host, -1, kHostHeap, provider(0, 1, 0)).action,
            LocalRegistration::none);
}

TEST(LocalRegistration, HostBuffersOutsideTheHeapAreRegisteredForMrLocalOnly) {
  EXPECT_EQ(
      local_registration(64, false, HeapMemory::host, -1, kCudaHeap, provider(1, 0, 1)).action,
      LocalRegistration::register_host);
  EXPECT_EQ(
      local_registration(64, false, HeapMemory::host, -1, kCudaHeap, provider(0, 1, 1)).action,
      LocalRegistration::none);
}

TEST(LocalRegistration, DeviceBuffersOutsideTheHeapAreRegisteredAsDeviceMemory) {
  for (const auto& p : {provider(1, 0, 1), provider(0, 1, 1), provider(1, 1, 1)}) {
    const auto r = local_registration(64, false, HeapMemory::cuda, 2, kCudaHeap, p);
    EXPECT_EQ(r.action, LocalRegistration::register_hmem);
    EXPECT_TRUE(r.where.hmem);
    EXPECT_EQ(r.where.iface, HeapMemory::cuda);
    EXPECT_EQ(r.where.device, 2);  // the buffer's device, not the heap's
  }
  const auto rocm = heap_registration(HeapMemory::rocr, 0);
  const auto r = local_registration(64, false, HeapMemory::rocr, 0, rocm, provider(0, 1, 1));
  EXPECT_EQ(r.action, LocalRegistration::register_hmem);
  EXPECT_EQ(r.where.iface, HeapMemory::rocr);
}

TEST(LocalRegistration, DeviceBufferWithoutHmemIsRefusedWithTheCause) {
  const auto r = local_registration(64, false, HeapMemory::cuda, 0, kHostHeap, provider(1, 0, 0));
  EXPECT_EQ(r.action, LocalRegistration::refuse);
  EXPECT_NE(r.error.find("a put/get buffer in CUDA device memory (device 0) outside the heap "
                         "needs FI_HMEM, which provider fake did not grant"),
            std::string::npos)
      << r.error;
}

// A 6 MiB heap, the 2 MiB hole, then a 4 KiB control page, as Runtime::init lays a segment out.
constexpr std::size_t kMiB = std::size_t{1} << 20;
const SegmentRegions kSegment{6 * kMiB, 8 * kMiB, 4096};

TEST(SegmentRegions, OffsetsPastTheHeapAreTheControlPagesAndCountFromItsStart) {
  EXPECT_EQ(kSegment.region_of(0), SegmentRegions::kHeap);
  EXPECT_EQ(kSegment.region_of(6 * kMiB - 8), SegmentRegions::kHeap);
  EXPECT_EQ(kSegment.offset_in_region(6 * kMiB - 8), 6 * kMiB - 8);
  EXPECT_EQ(kSegment.region_of(8 * kMiB), SegmentRegions::kControl);
  EXPECT_EQ(kSegment.offset_in_region(8 * kMiB), 0u);
  EXPECT_EQ(kSegment.region_of(8 * kMiB + 128), SegmentRegions::kControl);
  EXPECT_EQ(kSegment.offset_in_region(8 * kMiB + 128), 128u);
  // Without a control page everything is the one region, offsets unchanged.
  const SegmentRegions one{64, 0, 0};
  EXPECT_EQ(one.region_of(48), SegmentRegions::kHeap);
  EXPECT_EQ(one.offset_in_region(48), 48u);
}

TEST(SegmentRegions, ALocalBufferIsInARegionOnlyWhenWhollyInsideIt) {
  std::vector<char> segment(8 * kMiB + 8192);
  const char* s = segment.data();
  const char* c = s + 8 * kMiB;  // the control page where the host backend keeps it
  EXPECT_EQ(kSegment.region_holding(s, c, s, 6 * kMiB), SegmentRegions::kHeap);
  EXPECT_EQ(kSegment.region_holding(s, c, s + 6 * kMiB - 64, 64), SegmentRegions::kHeap);
  EXPECT_EQ(kSegment.region_holding(s, c, s + 6 * kMiB - 64, 65), -1);  // runs into the hole
  EXPECT_EQ(kSegment.region_holding(s, c, s + 7 * kMiB, 8), -1);        // in the hole
  EXPECT_EQ(kSegment.region_holding(s, c, s + 8 * kMiB, 4096), SegmentRegions::kControl);
  EXPECT_EQ(kSegment.region_holding(s, c, s + 8 * kMiB + 4088, 16), -1);  // past the page
  EXPECT_EQ(kSegment.region_holding(s, c, s + 8 * kMiB - 8, 16), -1);     // from the hole in
  EXPECT_EQ(kSegment.region_holding(s, c, s - 8, 8), -1);                 // before the segment
  EXPECT_EQ(kSegment.region_holding(nullptr, nullptr, s, 8), -1);
}

// The GPUs' IPC path: the control page is an allocation of its own, at an address unrelated to
// the heap's. Only its own address places a buffer in it; segment + control_offset means nothing.
TEST(SegmentRegions, AControlPageOfItsOwnIsFoundAtItsAddressNotPastTheHeap) {
  std::vector<char> heap(8 * kMiB + 8192);
  std::vector<char> control(4096);
  const char* h = heap.data();
  const char* c = control.data();
  EXPECT_EQ(kSegment.region_holding(h, c, c, 4096), SegmentRegions::kControl);
  EXPECT_EQ(kSegment.region_holding(h, c, c + 64, 8), SegmentRegions::kControl);
  EXPECT_EQ(kSegment.region_holding(h, c, c + 4092, 8), -1);  // runs past it
  EXPECT_EQ(kSegment.region_holding(h, c, h + 8 * kMiB, 8), -1);
  EXPECT_EQ(kSegment.region_holding(h, c, h, 64), SegmentRegions::kHeap);
  EXPECT_EQ(kSegment.region_holding(h, nullptr, c, 8), -1);
}

}  // namespace
