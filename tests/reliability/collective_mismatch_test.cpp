// PEs that make different collective calls, or the same call with different arguments, are told
// so by every PE, naming both calls, instead of hanging or pairing the wrong calls: each host
// collective carries its kind and sequence number through the bootstrap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "harness/expect_error.hpp"
#include "harness/run_pes.hpp"
#include "tessera/ops.hpp"
#include "tessera/tessera.hpp"

namespace tessera {
namespace {

using harness::expect_error;
using harness::run_pes;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(CollectiveMismatch, MallocAgainstBarrierNamesBothCalls) {
  run_pes(2, [](Runtime& rt) {
    rt.barrier();  // collective call #1 on both
    Error e = expect_error(ErrorCode::invalid_argument, [&] {
      if (rt.pe() == 0) {
        rt.malloc(256);
      } else {
        rt.barrier();
      }
    });
    EXPECT_THAT(e.message(), AllOf(HasSubstr("PEs made different collective calls"),
                                   HasSubstr("PE 0 called malloc #2 with bytes=256, align=64"),
                                   HasSubstr("PE 1 called barrier #2")));
    EXPECT_EQ(e.pe(), rt.pe());
  });
}

TEST(CollectiveMismatch, FreeAgainstCallocNamesBothCalls) {
  run_pes(3, [](Runtime& rt) {
    void* p = rt.malloc(128);
    const std::string offset = std::to_string(rt.heap_offset(p));
    Error e = expect_error(ErrorCode::invalid_argument, [&] {
      if (rt.pe() == 1) {
        rt.free(p);
      } else {
        rt.calloc(4, 16);
      }
    });
    EXPECT_THAT(e.message(), AllOf(HasSubstr("PEs 0,2 called calloc #2 with bytes=64, align=64"),
                                   HasSubstr("PE 1 called free #2 with offset=" + offset)));
  });
}

TEST(CollectiveMismatch, SameCallWithDifferentArgumentsNamesEachPesArguments) {
  run_pes(2, [](Runtime& rt) {
    void* a = rt.malloc(64);
    void* b = rt.malloc(64);
    Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.free(rt.pe() == 0 ? a : b); });
    EXPECT_THAT(
        e.message(),
        AllOf(HasSubstr("PE 0 called free #3 with offset=" + std::to_string(rt.heap_offset(a))),
              HasSubstr("PE 1 called free #3 with offset=" + std::to_string(rt.heap_offset(b)))));
    e = expect_error(ErrorCode::invalid_argument, [&] { rt.calloc(rt.pe() == 0 ? 8 : 16, 8, 64); });
    EXPECT_THAT(e.message(), AllOf(HasSubstr("PE 0 called calloc #4 with bytes=64"),
                                   HasSubstr("PE 1 called calloc #4 with bytes=128")));
  });
}

// A PE that finalizes while another still calls collectives: both are told. The finalizing PE
// has left the job afterwards, so the other's own finalize then sees it gone.
TEST(CollectiveMismatch, BarrierAgainstFinalizeNamesBothCalls) {
  run_pes(2, [](Runtime& rt) {
    const int me = rt.pe();  // rt is empty once finalized
    Error e = expect_error(ErrorCode::invalid_argument, [&] {
      if (me == 0) {
        rt.barrier();
      } else {
        rt.finalize();
      }
    });
    EXPECT_THAT(e.message(),
                AllOf(HasSubstr("PE 0 called barrier #1"), HasSubstr("PE 1 called finalize #1")));
    if (me == 0) expect_error(ErrorCode::peer_lost, [&] { rt.finalize(); });
  });
}

// A PE that skipped a barrier is caught at its next collective (here finalize) by the kinds and
// sequence numbers, instead of its finalize pairing with the other PE's extra barrier.
TEST(CollectiveMismatch, ASkippedBarrierIsCaughtAtTheNextCollective) {
  run_pes(2, [](Runtime& rt) {
    rt.barrier();
    const int me = rt.pe();  // rt is empty once finalized
    Error e = expect_error(ErrorCode::invalid_argument, [&] {
      if (me == 0) {
        rt.barrier();  // PE 1 skips this one
      } else {
        rt.finalize();
      }
    });
    EXPECT_THAT(e.message(),
                AllOf(HasSubstr("PE 0 called barrier #2"), HasSubstr("PE 1 called finalize #2")));
    if (me == 0) expect_error(ErrorCode::peer_lost, [&] { rt.finalize(); });
  });
}

// The ops' host calls take part too: a PE starting an all_gather on a new recv buffer while its
// peer allocates is told so by both, naming the op and the allocation.
TEST(CollectiveMismatch, AllGatherSetupAgainstMallocNamesBothCalls) {
  run_pes(2, [](Runtime& rt) {
    auto recv = rt.alloc<std::uint8_t>(2 * 64);  // collective call #1 on both
    auto send = rt.alloc<std::uint8_t>(64);      // #2
    Error e = expect_error(ErrorCode::invalid_argument, [&] {
      if (rt.pe() == 0) {
        ops::all_gather(rt, rt.stream(), send.get(), recv.get(), 64);
      } else {
        rt.malloc(256);
      }
    });
    EXPECT_THAT(e.message(),
                AllOf(HasSubstr("PEs made different collective calls"),
                      HasSubstr("PE 0 called ops::all_gather (first call on its recv buffer) #3"),
                      HasSubstr("PE 1 called malloc #3 with bytes=256")));
  });
}

}  // namespace
}  // namespace tessera
