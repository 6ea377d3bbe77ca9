// Nothing a wrong tile reaches but the heap (issue 17, items 1-2): a 2-PE job under tessera-run
// whose PE 0 writes past the end of, or before the start of, PE 1's heap with checked mode off.
// The write must fault (the process dies of SIGSEGV, reported by the PE and by tessera-run) or be
// refused; it must never land silently in PE 1's control words (the abort word) or in a
// neighbouring mapping.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/run_pes.hpp"
#include "harness/sibling_binary.hpp"
#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/tessera.hpp"

extern char** environ;

namespace {

// Executables of this build, beside this test (tests/harness/sibling_binary.hpp).
const std::string kTesseraRun = tessera::harness::sibling_binary("tessera-run");
const std::string kGuardProc = tessera::harness::sibling_binary("guard_proc");

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

struct Job {
  int status = -1;  // exit status, or 128 + signal
  std::string output;
};

// Runs guard_proc MODE as a 2-PE job under tessera-run (with `launcher_options`), stdout and
// stderr captured, with `extra` added to an environment cleared of TESSERA_* variables.
Job run_guard_job(const std::string& mode, const std::vector<std::string>& extra,
                  const std::vector<std::string>& launcher_options = {}) {
  std::vector<std::string> argv = {kTesseraRun, "-np", "2",        "--timeout", "60",
                                   "--grace",   "10",  kGuardProc, mode};
  argv.insert(argv.begin() + 1, launcher_options.begin(), launcher_options.end());
  std::vector<std::string> env_strings = {"TESSERA_HEAP_SIZE=16M", "TESSERA_TIMEOUT=20"};
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    if (entry.rfind("TESSERA_", 0) != 0) env_strings.push_back(entry);
  }
  env_strings.insert(env_strings.end(), extra.begin(), extra.end());
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  Job job;
  int out[2];
  if (::pipe(out) != 0) return job;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    return job;
  }
  char buf[4096];
  for (;;) {
    const ssize_t got = ::read(out[0], buf, sizeof(buf));
    if (got <= 0) break;
    job.output.append(buf, static_cast<std::size_t>(got));
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  job.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return job;
}

const std::vector<std::string> kUnchecked = {"TESSERA_CHECK=0"};

// PE 0 died of SIGSEGV inside the kernel and said where it faulted; tessera-run named the rank
// and the signal; PE 1 learned that PE 0 is gone (from its watch of PE 0's process, or from the
// bootstrap, whichever comes first) and never read a corrupted abort word.
void expect_fault_reported(const Job& job, const std::string& where) {
  EXPECT_NE(job.status, 0) << job.output;
  EXPECT_THAT(job.output, HasSubstr("tessera: PE 0: fault (SIGSEGV) at address 0x")) << job.output;
  EXPECT_THAT(job.output,
              HasSubstr(" outside the symmetric heap (" + where + ") during a kernel\n"))
      << job.output;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizer's own SEGV handling comes after the report (ASan's handler is the one the
  // reporter hands the fault on to) and may end the process with its own exit status, or abort
  // it (ASAN_OPTIONS=abort_on_error=1, as the asan preset sets).
  EXPECT_THAT(job.output, AnyOf(HasSubstr("tessera-run: rank 0 (PE 0) was killed by signal 11 "
                                          "(SIGSEGV)"),
                                HasSubstr("tessera-run: rank 0 (PE 0) was killed by signal 6 "
                                          "(SIGABRT)"),
                                HasSubstr("tessera-run: rank 0 (PE 0) exited with status ")))
      << job.output;
#else
  EXPECT_THAT(job.output, HasSubstr("tessera-run: rank 0 (PE 0) was killed by signal 11 (SIGSEGV)"))
      << job.output;
#endif
  EXPECT_THAT(job.output, HasSubstr("guard_proc PE 1: tessera [PE 1] PeerLost: barrier: "))
      << job.output;
  EXPECT_THAT(job.output,
              AnyOf(HasSubstr("PE 0 is lost"), HasSubstr("rank 0 closed its bootstrap")))
      << job.output;
  EXPECT_THAT(job.output, Not(HasSubstr("failed and aborted the job"))) << job.output;
  EXPECT_THAT(job.output, Not(HasSubstr("guard_proc PE 0: no error"))) << job.output;
}

TEST(Guard, TileOverrunningThePeersHeapEndFaultsInsteadOfWritingItsAbortWord) {
  expect_fault_reported(run_guard_job("overrun", kUnchecked),
                        "heap offset 0x1000000, past the end of PE 1's heap of 0x1000000 bytes");
}

// The own mapping's guard is sealed after init (once a NIC may have registered the segment).
TEST(Guard, TileOverrunningItsOwnHeapEndFaultsInsteadOfWritingItsAbortWord) {
  expect_fault_reported(run_guard_job("overrun-own", kUnchecked),
                        "heap offset 0x1000000, past the end of PE 0's heap of 0x1000000 bytes");
}

TEST(Guard, TileStartingBeforeThePeersHeapFaultsInsteadOfWritingANeighbour) {
  expect_fault_reported(run_guard_job("underrun", kUnchecked),
                        "64 bytes before the start of PE 1's heap");
}

TEST(Guard, SignalWordBeforeThePeersHeapFaultsWithItsAddressNamed) {
  expect_fault_reported(run_guard_job("signal-below", kUnchecked),
                        "8 bytes before the start of PE 1's heap");
}

TEST(Guard, CheckedModeRefusesTheOverrunningTile) {
  const Job job = run_guard_job("overrun", {"TESSERA_CHECK=1"});
  EXPECT_NE(job.status, 0) << job.output;
  EXPECT_THAT(job.output, HasSubstr("guard_proc PE 0: tessera [PE 0] InvalidArgument"))
      << job.output;
  EXPECT_THAT(job.output, Not(HasSubstr("SIGSEGV"))) << job.output;
  EXPECT_THAT(job.output, Not(HasSubstr("failed and aborted the job"))) << job.output;
}

TEST(Guard, HostPutPastTheHeapEndIsRefusedWithCheckedModeOff) {
  const Job job = run_guard_job("host-put", kUnchecked);
  EXPECT_NE(job.status, 0) << job.output;
  EXPECT_THAT(job.output, HasSubstr("guard_proc PE 0: tessera [PE 0] InvalidArgument: put "
                                    "destination: pointer 0x"))
      << job.output;
  EXPECT_THAT(job.output, HasSubstr("is not inside the symmetric heap")) << job.output;
}

#ifdef TESSERA_TEST_FABRIC
// PE 1 on another node (by TESSERA_NODE_ID), reached through the network proxy: the proxy
// checks every descriptor against the heap whatever TESSERA_CHECK says, so the tile is refused
// before anything is sent.
TEST(Guard, ProxyPathRefusesTheOverrunningTileWithCheckedModeOff) {
  const Job job = run_guard_job("overrun",
                                {"TESSERA_CHECK=0", "TESSERA_FABRIC=on", "TESSERA_P2P=0",
                                 "TESSERA_FABRIC_PROVIDER=tcp;ofi_rxm", "FI_TCP_IFACE=lo"},
                                {"--node-ids", "a,b"});
  EXPECT_NE(job.status, 0) << job.output;
  EXPECT_THAT(job.output, HasSubstr("guard_proc PE 0: tessera [PE 0] InvalidArgument: "))
      << job.output;
  EXPECT_THAT(job.output, HasSubstr("network proxy of PE 0 rejected a descriptor: put to PE 1: "
                                    "data at heap offset "))
      << job.output;
  EXPECT_THAT(job.output, HasSubstr("is outside the 16777216-byte heap")) << job.output;
  EXPECT_THAT(job.output, Not(HasSubstr("SIGSEGV"))) << job.output;
  EXPECT_THAT(job.output, Not(HasSubstr("failed and aborted the job"))) << job.output;
}
#endif

// Threads mode: two PEs in one process, and PE 1's kernel writes 64 bytes before PE 0's heap
// (checked mode off). The report names the PE whose thread faulted, not the process's first.
void fault_in_a_threads_job() {
  namespace td = tessera::device;
  tessera::harness::PeOptions o;
  o.heap_size = 1 << 20;
  tessera::harness::run_pes(
      2,
      [](tessera::Runtime& rt) {
        static const std::uint64_t pattern[16] = {};
        rt.barrier();
        if (rt.pe() == 1) {
          const auto ctx = rt.device_context();
          auto* dst = reinterpret_cast<std::uint64_t*>(static_cast<char*>(rt.heap_base()) - 64);
          tessera::launch(rt.stream(), 1, [=](td::Block g) {
            td::put(g, ctx, td::make_tile(dst, 16), td::make_tile(pattern, 16), 0);
          });
          rt.stream().synchronize();
        }
        rt.barrier();
      },
      o);
}

bool died_of_the_fault(int status) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizer's report, then its exit, or its abort (ASAN_OPTIONS=abort_on_error=1).
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGABRT;
  return WIFEXITED(status) && WEXITSTATUS(status) != 0;
#else
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
#endif
}

TEST(GuardDeathTest, ThreadsModeFaultIsReportedAsTheFaultingThreadsPe) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(fault_in_a_threads_job(), died_of_the_fault,
              "tessera: PE 1: fault \\(SIGSEGV\\) at address 0x[0-9a-f]+ outside the symmetric "
              "heap \\(64 bytes before the start of PE 0's heap\\) during a kernel");
}

}  // namespace
