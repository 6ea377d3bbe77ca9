// Remote atomics on int32/uint32/int64/uint64: every operation with its exact result, on a
// remote PE and on self, and a contended fetch_add from every PE.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

#include "device_test_util.hpp"

namespace tessera::device_test {
namespace {

using harness::run_pes;

template <class T>
class Atomic : public ::testing::Test {};
using Words = ::testing::Types<std::int32_t, std::uint32_t, std::int64_t, std::uint64_t>;
TYPED_TEST_SUITE(Atomic, Words);

TYPED_TEST(Atomic, EveryOperationReturnsAndLeavesTheExactValue) {
  using T = TypeParam;
  run_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    // Word [p] of every PE is worked on by PE p only, so the sequence below is deterministic.
    auto words = rt.alloc<T>(2);
    words[0] = words[1] = 0;
    rt.barrier();
    const int me = rt.pe();
    for (int target : {1 - me, me}) {
      SCOPED_TRACE("target PE " + std::to_string(target));
      T* w = &words[static_cast<std::size_t>(me)];
      auto at = [&] { return td::atomic_load(ctx, w, target); };
      td::atomic_store(ctx, w, 10, target);
      EXPECT_EQ(at(), T{10});
      EXPECT_EQ(td::atomic_fetch_add(ctx, w, 5, target), T{10});
      td::atomic_add(ctx, w, 3, target);
      EXPECT_EQ(at(), T{18});
      EXPECT_EQ(td::atomic_exchange(ctx, w, 7, target), T{18});
      EXPECT_EQ(td::atomic_compare_exchange(ctx, w, 7, 9, target), T{7});  // swaps
      EXPECT_EQ(td::atomic_compare_exchange(ctx, w, 7, 1, target), T{9});  // does not
      EXPECT_EQ(at(), T{9});
      EXPECT_EQ(td::atomic_fetch_and(ctx, w, 12, target), T{9});
      EXPECT_EQ(td::atomic_fetch_or(ctx, w, 3, target), T{8});
      EXPECT_EQ(td::atomic_fetch_xor(ctx, w, 5, target), T{11});
      EXPECT_EQ(at(), T{14});
      EXPECT_EQ(td::atomic_fetch_min(ctx, w, 4, target), T{14});
      EXPECT_EQ(td::atomic_fetch_min(ctx, w, 100, target), T{4});
      EXPECT_EQ(td::atomic_fetch_max(ctx, w, 50, target), T{4});
      EXPECT_EQ(td::atomic_fetch_max(ctx, w, 1, target), T{50});
      EXPECT_EQ(at(), T{50});
      if constexpr (std::is_signed_v<T>) {
        EXPECT_EQ(td::atomic_fetch_min(ctx, w, -3, target), T{50});
        EXPECT_EQ(td::atomic_fetch_max(ctx, w, -7, target), T{-3});
        EXPECT_EQ(at(), T{-3});
      } else {
        // Unsigned: wraps, and min/max compare as unsigned.
        EXPECT_EQ(td::atomic_fetch_add(ctx, w, static_cast<T>(-50), target), T{50});
        EXPECT_EQ(td::atomic_fetch_max(ctx, w, 1, target), T{0});
        EXPECT_EQ(td::atomic_fetch_add(ctx, w, static_cast<T>(-2), target), T{1});
        EXPECT_EQ(at(), static_cast<T>(~T{0}));
        EXPECT_EQ(td::atomic_fetch_min(ctx, w, 3, target), static_cast<T>(~T{0}));
        EXPECT_EQ(at(), T{3});
      }
      // Explicit semantics and scope.
      const T before = at();
      EXPECT_EQ(td::atomic_fetch_add(ctx, w, 1, target, td::Sem::relaxed), before);
      EXPECT_EQ(td::atomic_fetch_add(ctx, w, 0, target, td::Sem::relaxed, td::Scope::system),
                static_cast<T>(before + 1));
      rt.barrier();
      // The word still holds my last write after the other PE's round.
      EXPECT_EQ(at(), std::is_signed_v<T> ? static_cast<T>(-2) : T{4});
    }
    rt.barrier();
  });
}

TYPED_TEST(Atomic, ContendedFetchAddGivesTheExactTotalAndDistinctResults) {
  using T = TypeParam;
  constexpr int kPes = 4, kAdds = 3000;
  std::mutex mu;
  std::vector<T> seen;
  run_pes(kPes, [&](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto word = rt.alloc<T>(1);
    word[0] = 0;
    rt.barrier();
    std::vector<T> mine;
    mine.reserve(kAdds);
    run_kernel<td::Block>(rt, [&, ctx](td::Block) {
      for (int i = 0; i < kAdds; ++i) mine.push_back(td::atomic_fetch_add(ctx, word.get(), 1, 0));
    });
    rt.barrier();
    if (rt.pe() == 0) {
      EXPECT_EQ(word[0], static_cast<T>(kPes * kAdds));
    }
    {
      std::lock_guard lock(mu);
      seen.insert(seen.end(), mine.begin(), mine.end());
    }
    rt.barrier();
  });
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(kPes * kAdds));
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], static_cast<T>(i));
}

}  // namespace
}  // namespace tessera::device_test
