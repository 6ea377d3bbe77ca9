// Checked mode (TESSERA_CHECK=1) across the device API, the host API and the ops: one test per
// violation, each asserting the message. PEs are threads here (run_pes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/expect_error.hpp"
#include "harness/run_pes.hpp"
#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/ops/all_gather.hpp"

namespace tessera {
namespace {

namespace td = tessera::device;
using harness::expect_error;
using harness::PeOptions;
using harness::run_pes;
using ::testing::AllOf;
using ::testing::HasSubstr;

PeOptions checked() {
  PeOptions o;
  o.checked = true;
  return o;
}

// Runs fn as a one-block kernel and returns the error synchronize throws (or fails the test).
template <class Fn>
Error kernel_error(Runtime& rt, ErrorCode code, Fn fn) {
  launch(rt.stream(), 1, fn);
  return expect_error(code, [&] { rt.stream().synchronize(); });
}

std::string offset_of(Runtime& rt, const void* p) { return std::to_string(rt.heap_offset(p)); }

TEST(CheckedMode, PutTileRunningPastItsAllocationIntoTheNextNamesTheAllocation) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto first = rt.alloc<std::uint32_t>(16);   // 64 bytes: allocation #0
        auto second = rt.alloc<std::uint32_t>(16);  // right after it: allocation #1
        std::vector<std::uint32_t> src(32);
        std::uint32_t* dst = first.get();
        const std::uint32_t* from = src.data();
        Error e = kernel_error(rt, ErrorCode::invalid_argument, [=](td::Block g) {
          td::put(g, ctx, td::make_tile(dst, 32), td::make_tile(from, 32), 1 - ctx.my_pe);
        });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("put on PE " + std::to_string(rt.pe())),
                                       HasSubstr("destination tile [heap offset " +
                                                 offset_of(rt, dst) + ", +128 bytes)"),
                                       HasSubstr("runs past the end of its allocation #0 [offset " +
                                                 offset_of(rt, dst) + ", +64 bytes) by 64 bytes")));
        // The tile that fits its block goes through.
        launch(rt.stream(), 1, [=](td::Block g) {
          td::put(g, ctx, td::make_tile(dst, 16), td::make_tile(from, 16), 1 - ctx.my_pe);
        });
        rt.stream().synchronize();
        rt.barrier();
      },
      checked());
}

TEST(CheckedMode, GetFromAFreedAllocationIsRejected) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto keep = rt.alloc<std::uint64_t>(8);
        void* freed = rt.malloc(256);
        const std::string offset = offset_of(rt, freed);
        rt.free(freed);
        std::vector<std::uint64_t> dst(4);
        auto* src = static_cast<const std::uint64_t*>(freed);
        std::uint64_t* out = dst.data();
        Error e = kernel_error(rt, ErrorCode::invalid_argument, [=](td::Block g) {
          td::get(g, ctx, td::make_tile(out, 4), td::make_tile(src, 4), 1 - ctx.my_pe);
        });
        EXPECT_THAT(e.message(),
                    AllOf(HasSubstr("get on PE"), HasSubstr("source tile [heap offset " + offset),
                          HasSubstr("is not inside any live allocation")));
        rt.barrier();
      },
      checked());
}

TEST(CheckedMode, TwoDimensionalTileWhoseLastRowLeavesTheAllocationIsRejected) {
  run_pes(
      1,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto block = rt.alloc<float>(64);  // 256 bytes
        auto next = rt.alloc<float>(64);
        std::vector<float> src(4 * 16);
        float* base = block.get();
        const float* from = src.data();
        // 4 rows of 16 floats with ld 20: spans (3 * 20 + 16) * 4 = 304 bytes.
        Error e = kernel_error(rt, ErrorCode::invalid_argument, [=](td::Block g) {
          td::put(g, ctx, td::Tile<float>(base, 4, 16, 20), td::make_tile(from, 4, 16), 0);
        });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("+304 bytes"),
                                       HasSubstr("runs past the end of its allocation #0"),
                                       HasSubstr("by 48 bytes")));
      },
      checked());
}

TEST(CheckedMode, SignalWordOutsideItsAllocationIsRejected) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        void* freed = rt.malloc(64);
        rt.free(freed);
        auto* sig = static_cast<std::uint64_t*>(freed);
        Error e = kernel_error(rt, ErrorCode::invalid_argument, [=](td::Block) {
          td::signal(ctx, sig, 1, td::SignalOp::set, 1 - ctx.my_pe);
        });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("signal on PE"), HasSubstr("signal [heap offset"),
                                       HasSubstr("is not inside any live allocation")));
        e = kernel_error(rt, ErrorCode::invalid_argument,
                         [=](td::Block g) { td::wait_until(g, ctx, sig, td::Cmp::ge, 1); });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("wait_until on PE"),
                                       HasSubstr("is not inside any live allocation")));
        rt.barrier();
      },
      checked());
}

TEST(CheckedMode, AtomicOnAFreedAllocationIsRejected) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto keep = rt.alloc<std::uint64_t>(8);  // #0
        void* freed = rt.malloc(64);             // #1, then freed
        rt.free(freed);
        auto* word = static_cast<std::uint64_t*>(freed);
        Error e = kernel_error(rt, ErrorCode::invalid_argument, [=](td::Block) {
          (void)td::atomic_fetch_add(ctx, word, std::uint64_t{1}, 1 - ctx.my_pe);
        });
        EXPECT_THAT(e.message(),
                    AllOf(HasSubstr("atomic_fetch_add on PE"),
                          HasSubstr("atomic word [heap offset " + offset_of(rt, freed) + ", +8"),
                          HasSubstr("is not inside any live allocation")));
        // The live block next to it: fine.
        std::uint64_t* live = keep.get();
        launch(rt.stream(), 1, [=](td::Block) {
          (void)td::atomic_fetch_add(ctx, live, std::uint64_t{1}, 1 - ctx.my_pe);
        });
        rt.stream().synchronize();
        rt.barrier();
      },
      checked());
}

TEST(CheckedMode, RemoteAtomicAtDeviceScopeIsRejected) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto word = rt.alloc<std::uint64_t>(1);
        std::uint64_t* w = word.get();
        Error e = kernel_error(rt, ErrorCode::invalid_argument, [=](td::Block) {
          (void)td::atomic_fetch_add(ctx, w, std::uint64_t{1}, 1 - ctx.my_pe, td::Sem::relaxed,
                                     td::Scope::device);
        });
        EXPECT_THAT(e.message(),
                    AllOf(HasSubstr("atomic_fetch_add on PE " + std::to_string(rt.pe())),
                          HasSubstr("target PE " + std::to_string(1 - rt.pe()) + " is remote"),
                          HasSubstr("scope is device"), HasSubstr("Scope::system")));
        e = kernel_error(rt, ErrorCode::invalid_argument, [=](td::Block) {
          td::atomic_store(ctx, w, std::uint64_t{1}, 1 - ctx.my_pe, td::Sem::release,
                           td::Scope::block);
        });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("atomic_store"), HasSubstr("scope is block")));
        rt.barrier();
      },
      checked());
}

TEST(CheckedMode, RemoteSignalAtBlockScopeIsRejected) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto sig = rt.alloc<std::uint64_t>(1);
        std::uint64_t* s = sig.get();
        Error e = kernel_error(rt, ErrorCode::invalid_argument, [=](td::Block) {
          td::signal(ctx, s, 1, td::SignalOp::add, 1 - ctx.my_pe, td::Sem::release,
                     td::Scope::block);
        });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("signal on PE"), HasSubstr("scope is block"),
                                       HasSubstr("cross-PE operations need Scope::system")));
        rt.barrier();
      },
      checked());
}

TEST(CheckedMode, PeOutsideTheTeamIsRejectedByEveryKindOfCall) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto buf = rt.alloc<std::uint64_t>(4);
        std::uint64_t* b = buf.get();
        std::vector<std::uint64_t> local(4);
        std::uint64_t* l = local.data();
        Error e = kernel_error(rt, ErrorCode::invalid_argument, [=](td::Block g) {
          td::get(g, ctx, td::make_tile(l, 4), td::make_tile<const std::uint64_t>(b, 4), 2);
        });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("get on PE"), HasSubstr("target PE 2"),
                                       HasSubstr("outside [0, 2)")));
        e = kernel_error(rt, ErrorCode::invalid_argument, [=](td::Block g) {
          td::put_signal(g, ctx, td::make_tile(b, 2), td::make_tile<const std::uint64_t>(l, 2),
                         b + 3, 1, td::SignalOp::set, -1);
        });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("put_signal"), HasSubstr("target PE -1")));
        e = kernel_error(rt, ErrorCode::invalid_argument,
                         [=](td::Block) { td::atomic_store(ctx, b, std::uint64_t{1}, 5); });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("atomic_store"), HasSubstr("target PE 5")));
        rt.barrier();
      },
      checked());
}

TEST(CheckedMode, HostPutPastItsAllocationIsRejected) {
  run_pes(
      2,
      [](Runtime& rt) {
        auto block = rt.alloc<std::uint8_t>(64);
        auto next = rt.alloc<std::uint8_t>(64);
        std::vector<std::uint8_t> src(100);
        Error e = expect_error(ErrorCode::invalid_argument,
                               [&] { rt.put(block.get(), src.data(), 100, 1 - rt.pe()); });
        EXPECT_THAT(e.message(),
                    AllOf(HasSubstr("put destination: [heap offset " + offset_of(rt, block.get()) +
                                    ", +100 bytes) runs past the end of its allocation #0"),
                          HasSubstr("by 36 bytes")));
        void* freed = rt.malloc(64);
        rt.free(freed);
        e = expect_error(ErrorCode::invalid_argument,
                         [&] { rt.get(src.data(), freed, 8, 1 - rt.pe()); });
        EXPECT_THAT(e.message(),
                    AllOf(HasSubstr("get source"), HasSubstr("is not inside any live allocation")));
        rt.put(block.get(), src.data(), 64, 1 - rt.pe());  // fits: fine
        rt.barrier();
      },
      checked());
}

TEST(CheckedMode, AllGatherHostApiRejectsARecvBlockTooSmall) {
  run_pes(
      2,
      [](Runtime& rt) {
        auto recv = rt.alloc<std::uint8_t>(64);  // a 64-byte block: room for one PE
        std::vector<std::uint8_t> send(64);
        Error e = expect_error(ErrorCode::invalid_argument, [&] {
          ops::all_gather(rt, rt.stream(), send.data(), recv.get(), 64);
        });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("all_gather: recv too small"),
                                       HasSubstr("needs n_pes * bytes_per_pe = 2 * 64 bytes")));
        void* freed = rt.malloc(256);
        rt.free(freed);
        e = expect_error(ErrorCode::invalid_argument,
                         [&] { ops::all_gather(rt, rt.stream(), send.data(), freed, 64); });
        EXPECT_THAT(e.message(), HasSubstr("not inside a live symmetric heap block"));
      },
      checked());
}

// The ops themselves run clean under checked mode: no false positives from their own signals,
// staging buffers and tiles.
TEST(CheckedMode, AllGatherRunsCleanUnderCheckedMode) {
  run_pes(
      4,
      [](Runtime& rt) {
        for (const auto algo : {ops::AllGatherAlgo::oneshot, ops::AllGatherAlgo::ring}) {
          for (const std::size_t bytes : {std::size_t{64}, std::size_t{64} << 10}) {
            auto recv = rt.alloc<std::uint8_t>(4 * bytes);
            std::vector<std::uint8_t> send(bytes, static_cast<std::uint8_t>(rt.pe() + 1));
            ops::all_gather(rt, rt.stream(), send.data(), recv.get(), bytes, algo);
            rt.stream().synchronize();
            for (std::size_t pe = 0; pe < 4; ++pe) {
              ASSERT_EQ(recv[pe * bytes], pe + 1);
              ASSERT_EQ(recv[pe * bytes + bytes - 1], pe + 1);
            }
            rt.barrier();
          }
        }
      },
      checked());
}

// A timeout names the signal's allocation and, in the device barrier, the PE that never came.
TEST(CheckedMode, TimeoutNamesTheSignalsAllocation) {
  PeOptions o = checked();
  o.timeout = std::chrono::milliseconds(200);
  run_pes(
      1,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto pad = rt.alloc<std::uint64_t>(10);  // #0: 80 bytes, rounded to 128
        auto sigs = rt.alloc<std::uint64_t>(4);  // #1
        std::uint64_t* s = sigs.get() + 2;
        Error e = kernel_error(rt, ErrorCode::timeout,
                               [=](td::Block g) { td::wait_until(g, ctx, s, td::Cmp::eq, 7); });
        EXPECT_THAT(e.message(),
                    AllOf(HasSubstr("heap offset " + offset_of(rt, s) + " (allocation #1: offset " +
                                    offset_of(rt, sigs.get()) + ", 64 bytes)"),
                          HasSubstr("(value == 7), saw 0")));
      },
      o);
}

}  // namespace
}  // namespace tessera
