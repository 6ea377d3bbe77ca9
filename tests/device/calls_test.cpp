// The calls of Device API II: pointer, byte and scalar RMA forms (put/get/put_nbi/get_nbi/
// put_signal with a count, putmem/getmem, p/g), float and double atomic adds, waits that return
// what they saw (wait_until, wait_until_any with a status mask, wait_until_some), the tests
// (test, test_any, test_some, test_all) and Epoch::advance. The backend-neutral cases are
// device_suites_calls.hpp's (the kernels gpu_device_suites_test runs on the GPU; the group forms
// for Thread, Warp and Block each), run by suite_runner.hpp: PEs as threads of this process with
// checked mode off and on, or, as ctest also runs this binary, as processes under tessera-run
// (TESSERA_SUITES_AS_PROCESSES=1, checked mode from TESSERA_CHECK), where every process is one PE
// and the cases share one Runtime. The host-only tests below (the ungrouped wait_until_any kept
// for earlier releases, the proxy refusal, the failure paths) stay here.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device_suites_calls.hpp"
#include "suite_runner.hpp"

namespace tessera::device_test {
namespace {

using harness::PeOptions;
using harness::run_pes;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Runs fn(rt) on every PE in suite_runner.hpp's modes: as `n` thread PEs once with checked mode
// off and once with it on, or, as processes, once on this process's PE (the job's size and
// TESSERA_CHECK decide). The PEs start and end together.
void on_pes(int n, const std::function<void(Runtime&)>& fn) {
  if (suites_as_processes()) {
    Runtime& rt = ProcessPe::get();
    rt.barrier();
    fn(rt);
    rt.barrier();
    return;
  }
  for (bool checked : {false, true}) {
    SCOPED_TRACE(checked ? "TESSERA_CHECK=1" : "TESSERA_CHECK=0");
    PeOptions o;
    o.checked = checked;
    run_pes(n, fn, o);
  }
}

// Every backend-neutral call case (device_suites_calls.hpp; the same kernels run on the GPU).
class Calls : public ::testing::TestWithParam<suites::Case> {};

TEST_P(Calls, Case) { run_suite_case(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Suite, Calls, ::testing::ValuesIn(suites::kCallsCases), suite_case_name);

// Under the fabric suites (PEs split into nodes), a float add to a peer on another node is
// refused by name; with every peer mapped there is nothing to refuse.
TEST(CallsHost, FloatAddToAPeerBehindTheNetworkProxyIsRefused) {
  on_pes(4, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto word = rt.alloc<float>(1);
    float* w = word.get();
    for (int p = 0; p < ctx.n_pes; ++p) {
      if (!ctx.via_proxy(p)) continue;
      launch(rt.stream(), 1, [=](td::Block) { td::atomic_add(ctx, w, 1.0f, p); });
      Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
      EXPECT_THAT(e.message(),
                  HasSubstr("atomic_add on PE " + std::to_string(ctx.my_pe) + ": PE " +
                            std::to_string(p) + " is reached through the network proxy"));
    }
    rt.barrier();
  });
}

// --- waits ---

// The ungrouped wait_until_any of earlier releases still returns the lowest satisfied index. Host
// only: nvcc's own deprecation warning has no portable switch, so the GPU programs do not call it.
TEST(CallsHost, UngroupedWaitUntilAnyReturnsTheLowestSatisfiedIndex) {
  on_pes(2, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto sigs = rt.alloc<std::uint64_t>(4);
    for (std::size_t i = 0; i < 4; ++i) sigs[i] = 0;
    rt.barrier();
    if (rt.pe() == rt.n_pes() - 1) {
      run_kernel<td::Thread>(rt, [&, ctx](td::Thread) {
        td::signal(ctx, &sigs[3], 1, td::SignalOp::set, 0);
        td::signal(ctx, &sigs[2], 1, td::SignalOp::set, 0);
      });
    }
    rt.barrier();
    if (rt.pe() == 0) {
      std::size_t which = 99;
      run_kernel<td::Thread>(rt, [&, ctx](td::Thread) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        which = td::wait_until_any(ctx, sigs.get(), 4, td::Cmp::ne, 0);
#pragma GCC diagnostic pop
      });
      EXPECT_EQ(which, 2u);
    }
    rt.barrier();
  });
}

// --- failure paths (threads only: a failing wait aborts the job for every PE) ---

PeOptions checked_options(bool checked) {
  PeOptions o;
  o.checked = checked;
  return o;
}

// A short timeout for the case that waits for one on purpose. Only there: it also bounds the
// threads bootstrap, which a loaded sanitizer run once took longer than 300 ms to finish.
PeOptions timing_out_options() {
  PeOptions o = checked_options(false);
  o.timeout = std::chrono::milliseconds(300);
  return o;
}

class CallsErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    if (suites_as_processes()) GTEST_SKIP() << "failure paths run with PEs as threads";
  }
};

TEST_F(CallsErrors, StatusMaskedCallsRefuseNullArrays) {
  run_pes(1, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    auto sigs = rt.alloc<std::uint64_t>(2);
    std::uint64_t* s = sigs.get();
    int status[2] = {0, 0};
    launch(rt.stream(), 1, [=](td::Block g) {
      std::size_t idx[2];
      (void)td::wait_until_some(g, ctx, s, 2, nullptr, idx, td::Cmp::ge, 1);
    });
    Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("wait_until_some on PE 0: status is null; it must point to "
                                       "2 local ints"));
    launch(rt.stream(), 1, [=, &status](td::Block g) {
      (void)td::wait_until_some(g, ctx, s, 2, status, nullptr, td::Cmp::ge, 1);
    });
    e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("wait_until_some on PE 0: indices is null"));
    launch(rt.stream(), 1, [=](td::Block g) {
      (void)td::wait_until_any(g, ctx, s, 2, static_cast<int*>(nullptr), td::Cmp::ge, 1);
    });
    e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("wait_until_any on PE 0: status is null"));
    launch(rt.stream(), 1, [=](td::Block) {
      std::size_t idx[2];
      (void)td::test_some(ctx, s, 2, nullptr, idx, td::Cmp::ge, 1);
    });
    e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("test_some on PE 0: status is null"));
    launch(rt.stream(), 1,
           [=](td::Block g) { (void)td::wait_until_any(g, ctx, s, 0, td::Cmp::ge, 1); });
    e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), HasSubstr("wait_until_any on PE 0: no signals to wait for (n == 0)"));
  });
}

// A wait_until_some that nothing satisfies times out naming the awaited signals (the masked one
// left out) and their values.
TEST_F(CallsErrors, WaitUntilSomeTimesOutNamingTheAwaitedSignals) {
  run_pes(
      1,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto sigs = rt.alloc<std::uint64_t>(3);
        sigs[0] = 5;
        sigs[1] = 1;
        sigs[2] = 2;
        std::uint64_t* s = sigs.get();
        launch(rt.stream(), 1, [=](td::Block g) {
          int status[3] = {1, 0, 0};
          std::size_t idx[3];
          (void)td::wait_until_some(g, ctx, s, 3, status, idx, td::Cmp::ge, 5);
        });
        Error e = expect_error(ErrorCode::timeout, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(),
                    AllOf(HasSubstr("wait_until_some on PE 0 timed out after 300 ms"),
                          HasSubstr("none of 2 awaited signals (of 3) from signal at heap offset"),
                          HasSubstr("reached (value >= 5); saw [1]=1 [2]=2")));
      },
      timing_out_options());
}

// A float add to a peer reached through the network proxy is refused with a message before
// anything is queued (the ring carries integer atomics only). The Context is made by hand: PE 1
// unmapped, a proxy channel present.
TEST_F(CallsErrors, FloatAddThroughTheProxyIsRefused) {
  alignas(8) double word = 0;
  char* bases[2] = {reinterpret_cast<char*>(&word), nullptr};
  td::ProxyChannel* fake_proxy = reinterpret_cast<td::ProxyChannel*>(&word);
  td::Context ctx{};
  ctx.my_pe = 0;
  ctx.n_pes = 2;
  ctx.peer_base = bases;
  ctx.heap_size = sizeof(word);
  ctx.proxy = fake_proxy;
  try {
    td::atomic_add(ctx, reinterpret_cast<float*>(&word), 1.0f, 1);
    ADD_FAILURE() << "no failure";
  } catch (const td::Failure& f) {
    EXPECT_EQ(f.code(), td::FailureCode::invalid_argument);
    EXPECT_THAT(std::string(f.what()),
                HasSubstr("atomic_add on PE 0: PE 1 is reached through the network proxy, which "
                          "carries integer atomics only; a float add needs a peer whose heap is "
                          "mapped here"));
  }
  try {
    (void)td::atomic_fetch_add(ctx, &word, 1.0, 1);
    ADD_FAILURE() << "no failure";
  } catch (const td::Failure& f) {
    EXPECT_THAT(std::string(f.what()),
                HasSubstr("atomic_fetch_add on PE 0: PE 1 is reached through the network proxy"));
    EXPECT_THAT(std::string(f.what()), HasSubstr("a double add"));
  }
}

// The new forms name themselves in the always-on PE check and in checked mode's heap check.
TEST_F(CallsErrors, NewFormsNameThemselvesInDiagnostics) {
  run_pes(
      2,
      [](Runtime& rt) {
        const auto ctx = rt.device_context();
        auto buf = rt.alloc<int>(4);
        int* b = buf.get();
        std::vector<int> local(100000);  // more than buf's block, rounded up as it may be
        int* l = local.data();
        std::vector<std::uint64_t> local_sigs(2);
        const std::uint64_t* ls = local_sigs.data();
        const std::string on_me = " on PE " + std::to_string(rt.pe());
        launch(rt.stream(), 1, [=](td::Block) { td::p(ctx, b, 1, 5); });
        Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("p" + on_me + ": target PE 5 is outside [0, 2)"));
        launch(rt.stream(), 1, [=](td::Block) { (void)td::g(ctx, b, -1); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("g" + on_me + ": target PE -1 is outside [0, 2)"));
        launch(rt.stream(), 1, [=](td::Block g) { td::putmem(g, ctx, b, l, 16, 2); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("putmem" + on_me + ": target PE 2 is outside"));
        // Checked mode: a destination off the heap, and a run past its allocation.
        launch(rt.stream(), 1, [=](td::Block) { td::p(ctx, l, 1, 0); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("p" + on_me + ": destination tile"),
                                       HasSubstr("not inside the symmetric heap")));
        launch(rt.stream(), 1, [=](td::Block g) { td::get(g, ctx, l, b, 100000, 0); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), AllOf(HasSubstr("get" + on_me + ": source tile"),
                                       HasSubstr("runs past the end of its allocation")));
        launch(rt.stream(), 1, [=](td::Block g) { td::getmem(g, ctx, l, b, 400000, 0); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("getmem" + on_me + ": source tile"));
        launch(rt.stream(), 1, [=](td::Block) { (void)td::test_any(ctx, ls, 1, td::Cmp::eq, 0); });
        e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
        EXPECT_THAT(e.message(), HasSubstr("test_any" + on_me + ": signals"));
        rt.barrier();
      },
      checked_options(true));
}

}  // namespace
}  // namespace tessera::device_test
