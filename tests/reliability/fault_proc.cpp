// One PE of a job with an injected fault, as a real process (under tessera-run or mpirun), for
// the reliability tests. Usage: fault_proc MODE RANK
//   skip-signal R     each PE put_signals its right neighbour and waits for its left one, then
//                     all meet in a device barrier; PE R skips its signal, so PE R+1 times out
//   die-in-barrier R  PE R SIGKILLs itself while the others wait in a device barrier
//   die-in-wait R     PE R SIGKILLs itself while the others wait for a signal it would send
// Prints "fault_proc PE p: <error>" for the error a PE ends with and exits with 3 (Timeout),
// 42 (PeerLost), 1 (any other error or none at all).
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/tessera.hpp"

namespace td = tessera::device;

namespace {

int exit_code(const tessera::Error& e) {
  switch (e.code()) {
    case tessera::ErrorCode::timeout:
      return 3;
    case tessera::ErrorCode::peer_lost:
      return 42;
    default:
      return 1;
  }
}

int run(const std::string& mode, int faulty) {
  auto rt = tessera::Runtime::init(tessera::Options::from_env());
  const int me = rt.pe(), n = rt.n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  // A few blocks first, so the signal is not allocation #0 at offset 0.
  auto pad = rt.alloc<std::uint64_t>(24);
  auto data = rt.alloc<std::uint64_t>(8);
  auto sig = rt.alloc<std::uint64_t>(1);
  rt.barrier();
  const auto ctx = rt.device_context();
  // The test measures the time to the job's end from this line.
  std::printf("fault_proc PE %d: armed\n", me);
  std::fflush(stdout);
  std::uint64_t* s = sig.get();
  std::uint64_t* d = data.get();
  if (mode == "skip-signal") {
    const bool skip = me == faulty;
    // The barrier after the ring gets twice the bound, so the starved ring step is the first
    // wait to expire (otherwise the PEs already in the barrier could time out first).
    auto barrier_ctx = ctx;
    barrier_ctx.timeout_ns *= 2;
    tessera::launch(rt.stream(), 1, [=](td::Block g) {
      if (!skip) {
        td::put_signal(g, ctx, td::make_tile(d, 8), td::make_tile<const std::uint64_t>(d, 8), s, 1,
                       td::SignalOp::set, right);
      }
      td::detail::wait_from(g, ctx, s, td::Cmp::ge, 1, left, "ring step (wait for left PE)");
      td::barrier(g, barrier_ctx);
    });
  } else if (mode == "die-in-barrier") {
    if (me == faulty) std::raise(SIGKILL);
    tessera::launch(rt.stream(), 1, [=](td::Block g) { td::barrier(g, ctx); });
  } else if (mode == "die-in-wait") {
    rt.barrier();
    if (me == faulty) std::raise(SIGKILL);
    tessera::launch(rt.stream(), 1, [=](td::Block g) {
      td::detail::wait_from(g, ctx, s, td::Cmp::ge, 1, faulty, "wait for the faulty PE");
    });
  } else {
    std::fprintf(stderr, "fault_proc: unknown mode '%s'\n", mode.c_str());
    return 1;
  }
  rt.stream().synchronize();
  rt.barrier();
  std::printf("fault_proc PE %d: no error\n", me);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fault_proc skip-signal|die-in-barrier|die-in-wait RANK\n");
    return 2;
  }
  try {
    return run(argv[1], std::atoi(argv[2]));
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "fault_proc PE %d: %s\n", e.pe(), e.what());
    std::fflush(stderr);
    return exit_code(e);
  }
}
