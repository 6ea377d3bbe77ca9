// Injected faults in real multi-process jobs, under tessera-run (tcp bootstrap), mpirun and the
// network proxy: a PE that never signals, a PE killed with SIGKILL while its peers wait in a
// device barrier or a signal wait. Each job must end with a non-zero exit in bounded time (the
// wall time is measured against a bound), every PE's message must name the PE at fault, and
// nothing of Tessera's may be left in /dev/shm or TMPDIR.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "harness/sibling_binary.hpp"

extern char** environ;

namespace {

// Executables of this build, beside this test (tests/harness/sibling_binary.hpp).
const std::string kTesseraRun = tessera::harness::sibling_binary("tessera-run");
const std::string kFaultProc = tessera::harness::sibling_binary("fault_proc");

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Job {
  int status = -1;  // exit status, or 128 + signal
  std::string output;
  double seconds = 0;  // from the first "armed" line (the fault is about to happen) to the end
};

constexpr const char* kArmed = ": armed\n";

// Runs argv with stdout and stderr captured, TMPDIR = tmp and `extra` added to the environment.
Job run_job(const std::vector<std::string>& argv, const fs::path& tmp,
            const std::vector<std::string>& extra) {
  std::vector<std::string> env_strings = {"TMPDIR=" + tmp.string()};
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    if (entry.rfind("TMPDIR=", 0) != 0 && entry.rfind("TESSERA_", 0) != 0)
      env_strings.push_back(entry);
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
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    return job;
  }
  std::optional<std::chrono::steady_clock::time_point> armed;
  char buf[4096];
  for (;;) {
    const ssize_t got = ::read(out[0], buf, sizeof(buf));
    if (got <= 0) break;
    job.output.append(buf, static_cast<std::size_t>(got));
    if (!armed && job.output.find(kArmed) != std::string::npos)
      armed = std::chrono::steady_clock::now();
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  job.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - armed.value_or(start))
          .count();
  job.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return job;
}

std::vector<std::string> tessera_entries(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().find("tessera") != std::string::npos)
      found.push_back(entry.path().string());
  }
  return found;
}

// The last line "fault_proc PE p: <error>" of the job's output for each PE other than its
// "armed" line; empty for a PE that said nothing more. (The armed line is stdout, the error
// stderr, and mpirun forwards the two streams without ordering them: the armed line may come
// last.)
std::vector<std::string> pe_errors(const std::string& output, int n_pes) {
  std::vector<std::string> errors(static_cast<std::size_t>(n_pes));
  const std::regex line("fault_proc PE ([0-9]+): ([^\n]*)");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
       it != std::sregex_iterator(); ++it) {
    const int pe = std::stoi((*it)[1]);
    if (pe >= 0 && pe < n_pes && (*it)[2] != "armed")
      errors[static_cast<std::size_t>(pe)] = (*it)[2];
  }
  return errors;
}

constexpr int kPes = 4;

class Fault : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-fault-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    tmp_ = pattern;
    shm_before_ = tessera_entries("/dev/shm");
  }
  void TearDown() override {
    EXPECT_EQ(tessera_entries(tmp_), std::vector<std::string>{}) << "left in TMPDIR";
    EXPECT_EQ(tessera_entries("/dev/shm"), shm_before_) << "left in /dev/shm";
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }

  Job run(const std::vector<std::string>& launcher, const std::string& mode, int faulty,
          std::vector<std::string> env) {
    std::vector<std::string> argv = launcher;
    argv.insert(argv.end(), {kFaultProc, mode, std::to_string(faulty)});
    env.push_back("TESSERA_HEAP_SIZE=16M");
    Job job = run_job(argv, tmp_, env);
    RecordProperty("wall_seconds", std::to_string(job.seconds));
    std::printf("[ measured ] %s: job ended with status %d, %.2f s after the fault was armed\n",
                mode.c_str(), job.status, job.seconds);
    return job;
  }

  fs::path tmp_;
  std::vector<std::string> shm_before_;
};

std::vector<std::string> tessera_run() { return {kTesseraRun, "-np", std::to_string(kPes)}; }

// Whether every PE lives to say how it ended. mpirun kills the rest of the job the moment one
// rank dies or calls MPI_Abort, so there a PE may end without a word: then only the PEs that
// did speak are checked.
enum class Survivors { all_report, some_may_be_killed };

void expect_names(const std::string& error, const std::string& expected, Survivors survivors,
                  const std::string& output) {
  if (survivors == Survivors::some_may_be_killed && error.empty()) return;
  EXPECT_THAT(error, HasSubstr("PeerLost")) << output;
  EXPECT_THAT(error, HasSubstr(expected)) << output;
}

// PE 1 skips its signal: PE 2 times out naming the operation, the signal's offset and
// allocation, the comparison, the value seen and PE 1; every other PE ends with PeerLost
// naming PE 2; the job ends non-zero within the timeout + 5 s.
void expect_hang_diagnosed(const Job& job, double timeout_s,
                           Survivors survivors = Survivors::all_report) {
  EXPECT_NE(job.status, 0) << job.output;
  EXPECT_LT(job.seconds, timeout_s + 5.0) << job.output;
  const auto errors = pe_errors(job.output, kPes);
  EXPECT_THAT(errors[2], HasSubstr("Timeout: ring step (wait for left PE) on PE 2 timed out"))
      << job.output;
  EXPECT_THAT(errors[2], HasSubstr("signal at heap offset ")) << job.output;
  EXPECT_THAT(errors[2], HasSubstr("(allocation #2: offset ")) << job.output;
  EXPECT_THAT(errors[2], HasSubstr("awaited (value >= 1), saw 0")) << job.output;
  EXPECT_THAT(errors[2], HasSubstr("PE 1 was expected to write it")) << job.output;
  for (int pe : {0, 1, 3}) {
    expect_names(errors[static_cast<std::size_t>(pe)], "PE 2 failed and aborted the job", survivors,
                 job.output);
  }
}

// PE 2 is killed: every survivor ends with PeerLost naming PE 2, long before the timeout.
void expect_dead_peer_named(const Job& job, const std::vector<int>& survivors, double bound_s,
                            bool launcher_reports_failure = true) {
  if (launcher_reports_failure) {
    EXPECT_NE(job.status, 0) << job.output;
  }
  EXPECT_LT(job.seconds, bound_s) << job.output;
  const auto errors = pe_errors(job.output, kPes);
  for (int pe : survivors) {
    expect_names(errors[static_cast<std::size_t>(pe)], "PE 2 is lost", Survivors::all_report,
                 job.output);
  }
}

constexpr double kTimeout = 4;  // TESSERA_TIMEOUT for the hang tests
const std::string kTimeoutEnv = "TESSERA_TIMEOUT=4";
// The dead-peer tests: a long timeout, so ending well before it proves the death was noticed.
const std::string kLongTimeoutEnv = "TESSERA_TIMEOUT=60";
constexpr double kDeadPeerBound = 15;

TEST_F(Fault, TcpLauncherSkippedSignalEndsTheJobWithADiagnostic) {
  expect_hang_diagnosed(run(tessera_run(), "skip-signal", 1, {kTimeoutEnv}), kTimeout);
}

TEST_F(Fault, TcpLauncherPeKilledInADeviceBarrierIsNamedBySurvivors) {
  expect_dead_peer_named(run(tessera_run(), "die-in-barrier", 2, {kLongTimeoutEnv}), {0, 1, 3},
                         kDeadPeerBound);
}

TEST_F(Fault, TcpLauncherPeKilledWhilePeersWaitForItsSignalIsNamedBySurvivors) {
  expect_dead_peer_named(run(tessera_run(), "die-in-wait", 2, {kLongTimeoutEnv}), {0, 1, 3},
                         kDeadPeerBound);
}

#ifdef TESSERA_TEST_FABRIC
// Two nodes by TESSERA_NODE_ID and no peer mapping: every PE reaches the others through the
// network proxy, so no abort word can be written into a peer's heap.
std::vector<std::string> fabric_run() {
  return {kTesseraRun, "-np", std::to_string(kPes), "--node-ids", "a,a,b,b"};
}
const std::vector<std::string> kFabricEnv = {
    "TESSERA_FABRIC=on", "TESSERA_P2P=0", "TESSERA_FABRIC_PROVIDER=tcp;ofi_rxm", "FI_TCP_IFACE=lo"};

TEST_F(Fault, FabricSkippedSignalEndsTheJobWithADiagnostic) {
  auto env = kFabricEnv;
  env.push_back(kTimeoutEnv);
  const Job job = run(fabric_run(), "skip-signal", 1, env);
  EXPECT_NE(job.status, 0) << job.output;
  EXPECT_LT(job.seconds, kTimeout + 5.0) << job.output;
  const auto errors = pe_errors(job.output, kPes);
  EXPECT_THAT(errors[2], HasSubstr("PE 1 was expected to write it")) << job.output;
  for (int pe : {0, 1, 3}) {
    EXPECT_THAT(errors[static_cast<std::size_t>(pe)], HasSubstr("PE 2")) << job.output;
  }
}

TEST_F(Fault, FabricPeKilledInADeviceBarrierIsNamedBySurvivors) {
  auto env = kFabricEnv;
  env.push_back(kLongTimeoutEnv);
  expect_dead_peer_named(run(fabric_run(), "die-in-barrier", 2, env), {0, 1, 3}, kDeadPeerBound);
}
#endif

#ifdef MPIEXEC_PATH
const std::vector<std::string> kMpiEnv = {"OMPI_ALLOW_RUN_AS_ROOT=1",
                                          "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};

std::vector<std::string> mpirun(bool recovery) {
  std::vector<std::string> argv = {MPIEXEC_PATH, "-np", std::to_string(kPes), "--oversubscribe"};
  // By default mpirun kills the whole job the moment one rank dies, before any survivor can say
  // anything; with recovery enabled the survivors notice the death themselves.
  if (recovery) argv.push_back("--enable-recovery");
  return argv;
}

TEST_F(Fault, MpirunSkippedSignalEndsTheJobWithADiagnostic) {
  auto env = kMpiEnv;
  env.push_back(kTimeoutEnv);
  env.push_back("TESSERA_BOOTSTRAP=mpi");
  expect_hang_diagnosed(run(mpirun(false), "skip-signal", 1, env), kTimeout,
                        Survivors::some_may_be_killed);
}

TEST_F(Fault, MpirunPeKilledInADeviceBarrierIsNamedBySurvivors) {
  auto env = kMpiEnv;
  env.push_back(kLongTimeoutEnv);
  env.push_back("TESSERA_BOOTSTRAP=mpi");
  // mpirun --enable-recovery exits 0 whatever its ranks return (even after MPI_Abort), so the
  // survivors' own words and the time are what is checked.
  const Job job = run(mpirun(true), "die-in-barrier", 2, env);
  expect_dead_peer_named(job, {0, 1, 3}, kDeadPeerBound, false);
  EXPECT_THAT(job.output, HasSubstr("aborting the MPI job instead of finalizing")) << job.output;
}

TEST_F(Fault, MpirunPeKilledWhilePeersWaitForItsSignalEndsTheJob) {
  auto env = kMpiEnv;
  env.push_back(kLongTimeoutEnv);
  env.push_back("TESSERA_BOOTSTRAP=mpi");
  // Plain mpirun: it ends the job itself when the rank dies.
  const Job job = run(mpirun(false), "die-in-wait", 2, env);
  EXPECT_NE(job.status, 0) << job.output;
  EXPECT_LT(job.seconds, kDeadPeerBound) << job.output;
}
#endif

}  // namespace
