// The failure record (device/failure_record.hpp) and the flat context (device/flat_context.hpp):
// a record written as a Triton kernel writes it is reported by Runtime::check_device_failure
// with the code and the message the C++ device API reports for the same failure.
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "device_test_util.hpp"

namespace tessera::device_test {
namespace {

using harness::PeOptions;
using harness::run_pes;
using td::FailureKind;
using td::FailureRecord;

std::uint64_t op_index(const char* name) {
  for (std::size_t i = 0; i < td::kFailureOpCount; ++i) {
    if (std::string(td::kFailureOps[i]) == name) return i;
  }
  ADD_FAILURE() << "no failure op " << name;
  return 0;
}

// Fills this PE's record as a kernel would: claim, operands, then complete.
void write_record(Runtime& rt, td::FailureCode code, FailureKind kind, const char* op,
                  std::initializer_list<std::uint64_t> args) {
  std::uint64_t* r = rt.device_context().failure_record();
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r[FailureRecord::kState], FailureRecord::kEmpty);
  r[FailureRecord::kState] = FailureRecord::kWriting;
  r[FailureRecord::kCode] = static_cast<std::uint64_t>(code);
  r[FailureRecord::kKind] = static_cast<std::uint64_t>(kind);
  r[FailureRecord::kOp] = op_index(op);
  r[FailureRecord::kPe] = static_cast<std::uint64_t>(rt.pe());
  std::size_t i = FailureRecord::kArgs;
  for (std::uint64_t a : args) r[i++] = a;
  r[FailureRecord::kState] = FailureRecord::kComplete;
}

std::uint64_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(FlatContext, HoldsTheContextsFieldsTheHeapBasesAndTheControlPages) {
  run_pes(2, [](Runtime& rt) {
    const td::Context ctx = rt.device_context();
    std::vector<std::uint64_t> bases, controls;
    for (int pe = 0; pe < rt.n_pes(); ++pe) {
      bases.push_back(addr(rt.ptr(rt.heap_base(), pe)));
      controls.push_back(addr(ctx.peer_control[pe]));
    }
    std::vector<std::int64_t> w(td::FlatContext::words(ctx.n_pes), -1);
    td::flatten(ctx, bases.data(), controls.data(), w.data());
    using F = td::FlatContext;
    EXPECT_EQ(w[F::kMyPe], rt.pe());
    EXPECT_EQ(w[F::kNPes], 2);
    EXPECT_EQ(static_cast<std::size_t>(w[F::kHeapSize]), rt.heap_size());
    EXPECT_EQ(static_cast<std::uint64_t>(w[F::kTimeoutNs]), ctx.timeout_ns);
    EXPECT_EQ(static_cast<std::uint32_t>(w[F::kFlags]), ctx.flags);
    EXPECT_EQ(static_cast<std::uint64_t>(w[F::kPeerBase]), addr(ctx.peer_base));
    EXPECT_EQ(static_cast<std::uint64_t>(w[F::kControlPage]), addr(ctx.control_page));
    EXPECT_EQ(static_cast<std::uint64_t>(w[F::kProxy]), addr(ctx.proxy));
    EXPECT_EQ(static_cast<std::uint64_t>(w[F::kAllocations]), addr(ctx.allocations));
    EXPECT_EQ(static_cast<std::uint64_t>(w[F::kFailureRecord]), addr(ctx.failure_record()));
    EXPECT_EQ(static_cast<std::uint64_t>(w[F::kControlOffset]), ctx.control_offset);
    for (std::size_t i = F::kNamedWords; i < F::kHeaderWords; ++i) EXPECT_EQ(w[i], 0) << i;
    ASSERT_EQ(w.size(), F::kHeaderWords + 4);
    for (int pe = 0; pe < 2; ++pe) {
      const auto i = static_cast<std::size_t>(pe);
      EXPECT_EQ(static_cast<std::uint64_t>(w[F::kHeapBases + i]), addr(ctx.peer_base[pe]));
      EXPECT_EQ(static_cast<std::uint64_t>(w[F::control_bases(2) + i]), addr(ctx.peer_control[pe]));
    }
    // This PE's entry of the control table is its own control page.
    EXPECT_EQ(ctx.peer_control[rt.pe()], ctx.control_page);
    // The record lies in the control area, past the heap, in this PE's own page.
    EXPECT_FALSE(rt.in_heap(ctx.failure_record()));
    EXPECT_EQ(ctx.failure_record()[FailureRecord::kState], FailureRecord::kEmpty);
  });
}

// One PE, so no peer's failure comes first.
TEST(FailureRecord, AWaitTimeoutReadsAsTheCppWaitsDiagnostic) {
  PeOptions o;
  o.timeout = std::chrono::milliseconds(100);
  run_pes(
      1,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto sig = rt.alloc<std::uint64_t>(1);
        sig[0] = 4;
        std::uint64_t* s = sig.get();
        launch(rt.stream(), 1, [=](td::Block g) { td::wait_until(g, ctx, s, td::Cmp::ge, 5); });
        const Error cpp = expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
        write_record(rt, td::FailureCode::timeout, FailureKind::wait_timeout, "wait_until",
                     {addr(s), static_cast<std::uint64_t>(td::Cmp::ge), 5, 4, ~std::uint64_t{0}});
        const Error triton = expect_error(ErrorCode::timeout, [&] { rt.check_device_failure(); });
        EXPECT_EQ(triton.message(), cpp.message());
        EXPECT_EQ(triton.pe(), rt.pe());
        // Reported once; the abort word names this PE, which is no news to it.
        rt.check_device_failure();
      },
      o);
}

// A some_timeout record (a Triton wait_until_some's) reads as C++'s wait_until_some timeout:
// four awaited signals of five, all four values shown in both. A record claiming more than four
// shown values is one this version cannot read.
TEST(FailureRecord, AWaitUntilSomeTimeoutReadsAsTheCppDiagnostic) {
  PeOptions o;
  o.timeout = std::chrono::milliseconds(100);
  run_pes(
      1,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto sig = rt.alloc<std::uint64_t>(5);
        for (std::size_t i = 0; i < 5; ++i) sig[i] = i == 0 ? 9 : i;
        std::uint64_t* s = sig.get();
        launch(rt.stream(), 1, [=](td::Block g) {
          int status[5] = {1, 0, 0, 0, 0};
          std::size_t indices[5] = {};
          td::wait_until_some(g, ctx, s, 5, status, indices, td::Cmp::ge, 5);
        });
        const Error cpp = expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(cpp.message(), ::testing::HasSubstr("none of 4 awaited signals (of 5) from "
                                                        "signal at heap offset"));
        const std::uint64_t ge = static_cast<std::uint64_t>(td::Cmp::ge);
        write_record(rt, td::FailureCode::timeout, FailureKind::some_timeout, "wait_until_some",
                     {addr(s), 5 | std::uint64_t{4} << 32, ge | 4 << 8, 5,
                      1 | std::uint64_t{2} << 32, 3 | std::uint64_t{4} << 32, 1, 2, 3, 4});
        const Error triton = expect_error(ErrorCode::timeout, [&] { rt.check_device_failure(); });
        EXPECT_EQ(triton.message(), cpp.message());
        rt.check_device_failure();  // reported once

        write_record(rt, td::FailureCode::timeout, FailureKind::some_timeout, "wait_until_some",
                     {addr(s), 5 | std::uint64_t{4} << 32, ge | 5 << 8, 5});
        const Error bad = expect_error(ErrorCode::internal, [&] { rt.check_device_failure(); });
        EXPECT_THAT(bad.message(), ::testing::HasSubstr("unknown kind 12"));
      },
      o);
}

TEST(FailureRecord, BadPesAndPointersReadAsTheCppChecks) {
  PeOptions o;
  o.checked = true;
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto buf = rt.alloc<std::uint64_t>(8);
        std::vector<std::uint64_t> src(8), not_symmetric(8);
        std::uint64_t* b = buf.get();
        const std::uint64_t* sp = src.data();
        launch(rt.stream(), 1, [=](td::Block g) {
          td::put(g, ctx, td::make_tile(b, 8), td::make_tile<const std::uint64_t>(sp, 8), 5);
        });
        Error cpp = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        write_record(rt, td::FailureCode::invalid_argument, FailureKind::pe_out_of_range, "put",
                     {5});
        Error triton =
            expect_error(ErrorCode::invalid_argument, [&] { rt.check_device_failure(); });
        EXPECT_EQ(triton.message(), cpp.message());

        std::uint64_t* outside = not_symmetric.data();
        launch(rt.stream(), 1, [=](td::Block g) {
          td::put(g, ctx, td::make_tile(outside, 8), td::make_tile<const std::uint64_t>(sp, 8),
                  1 - ctx.my_pe);
        });
        cpp = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        write_record(rt, td::FailureCode::invalid_argument, FailureKind::outside_heap, "put",
                     {addr(outside), 64, 1});
        triton = expect_error(ErrorCode::invalid_argument, [&] { rt.check_device_failure(); });
        EXPECT_EQ(triton.message(), cpp.message());

        // A tile in the heap but past its allocation names the allocation.
        write_record(rt, td::FailureCode::invalid_argument, FailureKind::outside_heap, "get",
                     {addr(b + 4), 64, 2});
        triton = expect_error(ErrorCode::invalid_argument, [&] { rt.check_device_failure(); });
        EXPECT_THAT(triton.message(),
                    ::testing::AllOf(::testing::HasSubstr("get on PE " + std::to_string(rt.pe())),
                                     ::testing::HasSubstr("source tile"),
                                     ::testing::HasSubstr("runs past the end of its allocation"),
                                     ::testing::HasSubstr("by 32 bytes")));

        write_record(rt, td::FailureCode::transport, FailureKind::pe_not_mapped, "signal", {1});
        triton = expect_error(ErrorCode::transport, [&] { rt.check_device_failure(); });
        EXPECT_THAT(triton.message(),
                    ::testing::HasSubstr("signal on PE " + std::to_string(rt.pe()) +
                                         ": PE 1's "
                                         "heap is not mapped here"));
        rt.barrier();
      },
      o);
}

TEST(FailureRecord, BarrierTimeoutAndAbortAndUnknownKinds) {
  run_pes(1, [](Runtime& rt) {
    write_record(rt, td::FailureCode::timeout, FailureKind::barrier_timeout, "barrier", {3, 2});
    Error e = expect_error(ErrorCode::timeout, [&] { rt.check_device_failure(); });
    EXPECT_THAT(e.message(), ::testing::AllOf(::testing::HasSubstr("barrier on PE 0 timed out"),
                                              ::testing::HasSubstr("in barrier #3"),
                                              ::testing::HasSubstr("(value >= 3), saw 2"),
                                              ::testing::HasSubstr("not yet entered by PE 0")));

    write_record(rt, td::FailureCode::peer_lost, FailureKind::aborted, "wait_until",
                 {td::encode_abort(7, td::AbortReason::died)});
    e = expect_error(ErrorCode::peer_lost, [&] { rt.check_device_failure(); });
    EXPECT_EQ(e.message(), "wait_until on PE 0 gave up: PE 7 is lost (its process ended)");

    write_record(rt, td::FailureCode::timeout, FailureKind::proxy_timeout, "put", {3, 5});
    e = expect_error(ErrorCode::timeout, [&] { rt.check_device_failure(); });
    EXPECT_EQ(e.message(),
              "put on PE 0 timed out after 30000 ms waiting for the network proxy (ticket state 3, "
              "awaited 5)");

    // One PE runs no proxy: the record's own code, and a message that says so.
    write_record(rt, td::FailureCode::peer_lost, FailureKind::proxy_failed, "get", {});
    e = expect_error(ErrorCode::peer_lost, [&] { rt.check_device_failure(); });
    EXPECT_EQ(e.message(), "get on PE 0: the network proxy failed");

    write_record(rt, td::FailureCode::timeout, static_cast<FailureKind>(99), "fence", {1, 2, 3});
    e = expect_error(ErrorCode::internal, [&] { rt.check_device_failure(); });
    EXPECT_THAT(e.message(), ::testing::HasSubstr("unknown kind 99"));

    std::uint64_t* r = rt.device_context().failure_record();
    r[FailureRecord::kOp] = 1000;  // not complete: ignored
    rt.check_device_failure();
    write_record(rt, td::FailureCode::timeout, FailureKind::aborted, "fence", {0});
    r[FailureRecord::kOp] = 1000;
    e = expect_error(ErrorCode::internal, [&] { rt.check_device_failure(); });
    EXPECT_THAT(e.message(), ::testing::HasSubstr("unknown call (1000)"));
    rt.check_device_failure();
  });
}

// Another PE's abort is PeerLost even with no record here.
TEST(FailureRecord, APeersAbortIsPeerLost) {
  run_pes(2, [](Runtime& rt) {
    if (rt.pe() == 1) {
      const auto ctx = rt.device_context();
      launch(rt.stream(), 1, [=](td::Block) { td::detail::broadcast_abort(ctx); });
      rt.stream().synchronize();
    }
    // Wait (bounded) until PE 1's abort reached this PE.
    const auto ctx = rt.device_context();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (td::platform::atomic_load(&ctx.control_page[td::Context::kAbortWord], td::Sem::acquire,
                                     td::Scope::system) == 0) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline);
      std::this_thread::yield();
    }
    if (rt.pe() == 0) {
      const Error e = expect_error(ErrorCode::peer_lost, [&] { rt.check_device_failure(); });
      EXPECT_EQ(e.message(),
                "check_device_failure on PE 0 gave up: PE 1 failed and aborted the job (its own "
                "message says why)");
    } else {
      rt.check_device_failure();
    }
  });
}

}  // namespace
}  // namespace tessera::device_test
