// Bad input and failures: every one ends in a tessera::Error with a code and a message that
// names the PE and the values involved.
#include <cstdint>
#include <string>
#include <vector>

#include "device_test_util.hpp"

namespace tessera::device_test {
namespace {

using harness::PeOptions;
using harness::run_pes;
using ::testing::AllOf;
using ::testing::HasSubstr;

PeOptions checked() {
  PeOptions o;
  o.checked = true;
  return o;
}

TEST(DeviceErrors, PeOutsideTheJobIsInvalidArgument) {
  run_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto buf = rt.alloc<int>(4);
    std::vector<int> src(4);
    for (int bad : {-1, 2, 100}) {
      launch(rt.stream(), 1, [=, &src, &buf](td::Block g) {
        td::put(g, ctx, td::make_tile(buf.get(), 4), td::make_tile<const int>(src.data(), 4), bad);
      });
      Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
      EXPECT_THAT(e.message(), AllOf(HasSubstr("put on PE " + std::to_string(rt.pe())),
                                     HasSubstr("target PE " + std::to_string(bad)),
                                     HasSubstr("outside [0, 2)")));
    }
    std::uint64_t* sig = nullptr;
    auto s = rt.alloc<std::uint64_t>(1);
    sig = s.get();
    launch(rt.stream(), 1, [=](td::Block) { td::signal(ctx, sig, 1, td::SignalOp::set, 7); });
    expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    launch(rt.stream(), 1, [=](td::Block) { (void)td::atomic_fetch_add(ctx, sig, 1, -3); });
    expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
  });
}

TEST(DeviceErrors, CheckedModeRejectsPointersOutsideTheHeap) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        std::vector<std::uint64_t> not_symmetric(8), src(8);
        launch(rt.stream(), 1, [=, &not_symmetric, &src](td::Block g) {
          td::put(g, ctx, td::make_tile(not_symmetric.data(), 8),
                  td::make_tile<const std::uint64_t>(src.data(), 8), 1 - ctx.my_pe);
        });
        Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("destination tile"), HasSubstr("outside the heap"),
                                       HasSubstr("not inside the symmetric heap")));
        launch(rt.stream(), 1, [=, &not_symmetric](td::Block) {
          (void)td::atomic_fetch_add(ctx, &not_symmetric[0], 1, 0);
        });
        expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        launch(rt.stream(), 1, [=, &not_symmetric](td::Block g) {
          td::wait_until(g, ctx, &not_symmetric[0], td::Cmp::eq, 0);
        });
        expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
      },
      checked());
}

// A tile running past the end of the heap is caught with its heap offset and extent (tiles
// running out of their allocation are covered in tests/reliability/checked_mode_test.cpp).
TEST(DeviceErrors, CheckedModeRejectsATileThatRunsPastTheHeap) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto* end =
            reinterpret_cast<std::uint32_t*>(static_cast<char*>(rt.heap_base()) + rt.heap_size());
        std::vector<std::uint32_t> src(64 * 4);
        // 4 rows of 16 with ld 64: starts 100 elements before the end, reaches past it.
        td::Tile<std::uint32_t> dst(end - 100, 4, 16, 64);
        launch(rt.stream(), 1, [=, &src](td::Block g) {
          td::get(g, ctx, td::make_tile(src.data(), 4, 16), td::Tile<const std::uint32_t>(dst), 0);
        });
        Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(),
                    AllOf(HasSubstr("get on PE"), HasSubstr("source tile"),
                          HasSubstr("heap offset " + std::to_string(rt.heap_size() - 400)),
                          HasSubstr("+" + std::to_string((3 * 64 + 16) * 4) + " bytes")));
        // The same tile one row shorter stays inside the heap, but in no allocation.
        launch(rt.stream(), 1, [=, &src](td::Block g) {
          td::get(g, ctx, td::make_tile(src.data(), 1, 16),
                  td::Tile<const std::uint32_t>(dst.sub(0, 0, 1, 16)), 0);
        });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("is not inside any live allocation"));
      },
      checked());
}

TEST(DeviceErrors, ShapeMismatchIsInvalidArgument) {
  run_pes(1, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto buf = rt.alloc<float>(64);
    std::vector<float> src(64);
    launch(rt.stream(), 1, [=, &buf, &src](td::Block g) {
      td::put(g, ctx, td::make_tile(buf.get(), 4, 8), td::make_tile<const float>(src.data(), 8, 4),
              0);
    });
    Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(),
                AllOf(HasSubstr("destination tile is 4x8"), HasSubstr("source tile is 8x4"),
                      HasSubstr("shapes must match")));
    launch(rt.stream(), 1, [=, &buf, &src](td::Block g) {
      td::put(g, ctx, td::make_tile(buf.get(), 4, 8, 6),
              td::make_tile<const float>(src.data(), 4, 8), 0);
    });
    expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
  });
}

// A timeout aborts the job: the PE's later waits (and its peers', see fault_test) end with
// PeerLost naming the PE that failed, and so do its host collectives. One PE, so that no other
// PE's timeout can be the first.
TEST(DeviceErrors, AWaitThatTimesOutNamesPeOffsetComparisonAndValueSeen) {
  PeOptions o;
  o.timeout = std::chrono::milliseconds(200);
  run_pes(
      1,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto pad = rt.alloc<std::uint64_t>(3);
        auto sig = rt.alloc<std::uint64_t>(1);
        sig[0] = 4;
        const std::size_t offset = rt.heap_offset(sig.get());
        launch(rt.stream(), 1,
               [=, &sig](td::Block g) { td::wait_until(g, ctx, sig.get(), td::Cmp::ge, 5); });
        Error e = expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
        EXPECT_EQ(e.pe(), rt.pe());
        EXPECT_THAT(e.message(), AllOf(HasSubstr("wait_until on PE " + std::to_string(rt.pe())),
                                       HasSubstr("timed out after 200 ms"),
                                       HasSubstr("heap offset " + std::to_string(offset) +
                                                 " (allocation #1: " + "offset " +
                                                 std::to_string(offset) + ", 64 bytes)"),
                                       HasSubstr("(value >= 5)"), HasSubstr("saw 4")));
        std::uint64_t* sigs = pad.get();
        launch(rt.stream(), 1,
               [=](td::Block g) { td::wait_until_all(g, ctx, sigs, 3, td::Cmp::eq, 9); });
        e = expect_error(ErrorCode::peer_lost, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("wait_until_all on PE " + std::to_string(rt.pe())),
                                       HasSubstr("failed and aborted the job")));
        e = expect_error(ErrorCode::peer_lost, [&] { rt.barrier(); });
        EXPECT_THAT(e.message(), HasSubstr("barrier: the job is aborting"));
      },
      o);
}

TEST(DeviceErrors, WaitUntilAllAndAnyTimeOutNamingTheirSignals) {
  PeOptions o;
  o.timeout = std::chrono::milliseconds(200);
  for (const bool any : {false, true}) {
    run_pes(
        1,
        [any](Runtime& rt) {
          const auto ctx = rt.device_context();
          auto pad = rt.alloc<std::uint64_t>(3);
          std::uint64_t* sigs = pad.get();
          if (any) {
            launch(rt.stream(), 1, [=](td::Block) {
              (void)td::wait_until_any(td::Thread{}, ctx, sigs, 3, td::Cmp::gt, 0);
            });
            Error e = expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
            EXPECT_THAT(e.message(), AllOf(HasSubstr("wait_until_any"),
                                           HasSubstr("none of 3 signals"), HasSubstr("saw 0 0 0")));
          } else {
            launch(rt.stream(), 1,
                   [=](td::Block g) { td::wait_until_all(g, ctx, sigs, 3, td::Cmp::eq, 9); });
            Error e = expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
            EXPECT_THAT(e.message(), AllOf(HasSubstr("wait_until_all"), HasSubstr("(value == 9)"),
                                           HasSubstr("(allocation #0: offset 0, 64 bytes)")));
          }
        },
        o);
  }
}

// The barrier's diagnostic names the PE that never entered it; the peer that did enter learns
// of the abort at its next collective.
TEST(DeviceErrors, DeviceBarrierTimesOutWhenAPeNeverArrives) {
  run_pes(2, [](Runtime& rt) {
    auto ctx = rt.device_context();
    ctx.timeout_ns = 200'000'000;  // the device waits only; the bootstrap keeps its bound
    if (rt.pe() == 0) {
      launch(rt.stream(), 1, [=](td::Block g) { td::barrier(g, ctx); });
      Error e = expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
      EXPECT_THAT(e.message(),
                  AllOf(HasSubstr("barrier on PE 0"), HasSubstr("(value >= 2)"), HasSubstr("saw 1"),
                        HasSubstr("not yet entered by PE 1 (at #0)")));
    }
    expect_error(ErrorCode::peer_lost, [&] { rt.barrier(); });
  });
}

TEST(DeviceErrors, UnmappedPeerIsATransportErrorNamingThePe) {
  PeOptions o;
  o.node_ids = {"node-a", "node-a", "node-b", "node-b"};
  run_pes(
      4,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto buf = rt.alloc<int>(4);
        auto sig = rt.alloc<std::uint64_t>(1);
        std::vector<int> src(4);
        if (rt.pe() == 0) {
          launch(rt.stream(), 1, [=, &buf, &src](td::Block g) {
            td::put(g, ctx, td::make_tile(buf.get(), 4), td::make_tile<const int>(src.data(), 4),
                    1);
          });
          rt.stream().synchronize();  // same node: mapped
          launch(rt.stream(), 1, [=, &buf, &src, &sig](td::Block g) {
            td::put_signal(g, ctx, td::make_tile(buf.get(), 4),
                           td::make_tile<const int>(src.data(), 4), sig.get(), 1, td::SignalOp::set,
                           2);
          });
          Error e = expect_error(ErrorCode::transport, [&] { rt.stream().synchronize(); });
          EXPECT_THAT(e.message(), AllOf(HasSubstr("PE 2's heap is not mapped"),
                                         HasSubstr("network transport")));
          expect_error(ErrorCode::transport, [&] {
            launch(rt.stream(), 1,
                   [=, &sig](td::Block) { (void)td::atomic_load(ctx, sig.get(), 2); });
            rt.stream().synchronize();
          });
        }
        rt.barrier();
      },
      o);
}

TEST(DeviceErrors, CheckedModeReportsANarrowScopeOnARemotePe) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto word = rt.alloc<std::uint64_t>(1);
        std::uint64_t* w = word.get();
        launch(rt.stream(), 1, [=](td::Block) {
          (void)td::atomic_fetch_add(ctx, w, 1, ctx.my_pe, td::Sem::relaxed, td::Scope::device);
        });
        rt.stream().synchronize();  // on self a device scope is fine
        launch(rt.stream(), 1, [=](td::Block) {
          td::signal(ctx, w, 1, td::SignalOp::add, 1 - ctx.my_pe, td::Sem::release,
                     td::Scope::device);
        });
        Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("scope is device"), HasSubstr("Scope::system")));
        rt.barrier();
      },
      checked());
}

}  // namespace
}  // namespace tessera::device_test
