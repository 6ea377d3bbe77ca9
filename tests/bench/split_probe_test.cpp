// The time-split probes of a -DTESSERA_PROFILE_SPLIT=ON build (platform/host.hpp's SplitProbe)
// and tessera-bench's reading of them (benchmarks/split.hpp), compiled here with the probes on.
// Header-only: this program links no libtessera, whose objects are built without them. Every
// check is a bound that holds however slowly the machine runs: a part's time is at least the
// time spent in it, and the parts of one kernel add up to no more than its wall time.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "split.hpp"
#include "tessera/device/platform.hpp"

namespace tessera {
namespace {

namespace pf = device::platform;

static_assert(pf::kSplitProbes, "this test is compiled with TESSERA_PROFILE_SPLIT");

// Keeps the calling thread busy for at least `ns` of the platform's clock.
void spend(std::uint64_t ns) {
  const std::uint64_t start = pf::clock_ns();
  while (pf::clock_ns() - start < ns) {
  }
}

struct Totals {
  std::uint64_t ns[pf::kSplitParts], count[pf::kSplitParts];
};

Totals read() {
  Totals t;
  for (int p = 0; p < pf::kSplitParts; ++p) {
    t.ns[p] = pf::split_totals.ns[p].load();
    t.count[p] = pf::split_totals.count[p].load();
  }
  return t;
}

constexpr int kKernel = static_cast<int>(pf::SplitPart::kernel);
constexpr int kCopy = static_cast<int>(pf::SplitPart::copy);
constexpr int kWait = static_cast<int>(pf::SplitPart::wait);
constexpr std::uint64_t kMs = 1'000'000;

TEST(SplitProbe, PartsAreExclusiveAndABlockOfTwoCountsHalf) {
  const Totals before = read();
  const std::uint64_t t0 = pf::clock_ns();
  {
    const pf::SplitProbe block(pf::SplitPart::kernel, 2);
    spend(2 * kMs);
    {
      const pf::SplitProbe copy(pf::SplitPart::copy);
      spend(1 * kMs);
    }
    {
      const pf::SplitProbe wait(pf::SplitPart::wait);
      spend(1 * kMs);
    }
  }
  const std::uint64_t wall = pf::clock_ns() - t0;
  const Totals after = read();
  const std::uint64_t kernel = after.ns[kKernel] - before.ns[kKernel];
  const std::uint64_t copy = after.ns[kCopy] - before.ns[kCopy];
  const std::uint64_t wait = after.ns[kWait] - before.ns[kWait];
  // Each part at least its own time, halved; together no more than the block's wall time,
  // halved (each division may round down by 1 ns).
  EXPECT_GE(copy, kMs / 2);
  EXPECT_GE(wait, kMs / 2);
  EXPECT_GE(kernel, kMs);
  EXPECT_LE(2 * (kernel + copy + wait), wall + 3);
  EXPECT_EQ(after.count[kKernel] - before.count[kKernel], 1u);
  EXPECT_EQ(after.count[kCopy] - before.count[kCopy], 1u);
  EXPECT_EQ(after.count[kWait] - before.count[kWait], 1u);
  // Outside the block a copy counts whole again.
  const Totals again = read();
  {
    const pf::SplitProbe outside(pf::SplitPart::copy);
    spend(1 * kMs);
  }
  EXPECT_GE(read().ns[kCopy] - again.ns[kCopy], kMs);
}

TEST(SplitProbe, CopyBytesIsACopy) {
  std::vector<char> src(1 << 20, 'x'), dst(1 << 20);
  const Totals before = read();
  pf::copy_bytes(dst.data(), src.data(), src.size());
  EXPECT_EQ(read().count[kCopy] - before.count[kCopy], 1u);
  EXPECT_EQ(dst[12345], 'x');
}

double field(const std::vector<bench::Field>& fields, const std::string& name) {
  for (const bench::Field& f : fields) {
    if (f.name == name) return std::get<double>(f.value);
  }
  ADD_FAILURE() << "no field " << name;
  return -1;
}

TEST(SplitTally, HandOffIsTheCallLessTheKernels) {
  bench::SplitTally tally;
  for (int call = 0; call < 2; ++call) {
    tally.begin();
    const std::uint64_t t0 = pf::clock_ns();
    spend(1 * kMs);  // the host side of the call
    {
      const pf::SplitProbe block(pf::SplitPart::kernel, 1);
      const pf::SplitProbe copy(pf::SplitPart::copy);
      spend(1 * kMs);
    }
    tally.end(static_cast<double>(pf::clock_ns() - t0) / 1e3);
  }
  std::vector<bench::Field> fields;
  tally.add_fields(fields);
  ASSERT_EQ(fields.size(), 7u);
  EXPECT_EQ(field(fields, "split_blocks"), 1.0);
  EXPECT_GE(field(fields, "split_copy_us"), 1000.0);
  EXPECT_GE(field(fields, "split_handoff_us"), 1000.0);
  EXPECT_GE(field(fields, "split_rest_us"), 0.0);
  EXPECT_DOUBLE_EQ(field(fields, "split_kernel_us"), field(fields, "split_rest_us") +
                                                         field(fields, "split_copy_us") +
                                                         field(fields, "split_wait_us"));
  EXPECT_NEAR(field(fields, "split_call_us"),
              field(fields, "split_kernel_us") + field(fields, "split_handoff_us"), 1e-6);
}

}  // namespace
}  // namespace tessera
