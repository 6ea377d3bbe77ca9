// Nothing of Tessera's is left in /dev/shm or the temp directory after a job, whether it ends
// normally or one PE is killed with SIGKILL, under the tcp launcher and under mpirun.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/sibling_binary.hpp"

extern char** environ;

namespace {

// Executables of this build, beside this test (tests/harness/sibling_binary.hpp).
const std::string kTesseraRun = tessera::harness::sibling_binary("tessera-run");
const std::string kHeapProc = tessera::harness::sibling_binary("heap_proc");

namespace fs = std::filesystem;

std::vector<std::string> tessera_entries(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find("tessera") != std::string::npos) found.push_back(entry.path().string());
  }
  return found;
}

// Runs argv with TMPDIR set to `tmp` and the given extra environment; returns the exit status.
int run(const std::vector<std::string>& argv, const fs::path& tmp,
        const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> env_strings = {"TMPDIR=" + tmp.string(), "TESSERA_TIMEOUT=20",
                                          "TESSERA_HEAP_SIZE=16M"};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("TMPDIR=", 0) != 0) env_strings.emplace_back(*e);
  }
  for (const auto& e : extra_env) env_strings.push_back(e);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), envp.data()) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class Cleanup : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tessera-cleanup-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    tmp_ = pattern;
    shm_before_ = tessera_entries("/dev/shm");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(tmp_, ec);
  }
  void expect_nothing_left() {
    EXPECT_EQ(tessera_entries(tmp_), std::vector<std::string>{}) << "left in TMPDIR";
    EXPECT_EQ(tessera_entries("/dev/shm"), shm_before_) << "left in /dev/shm";
  }
  fs::path tmp_;
  std::vector<std::string> shm_before_;
};

TEST_F(Cleanup, TcpLauncherNormalRunLeavesNothing) {
  EXPECT_EQ(run({kTesseraRun, "-np", "4", kHeapProc}, tmp_), 0);
  expect_nothing_left();
}

TEST_F(Cleanup, TcpLauncherRunWithAPeKilledLeavesNothing) {
  EXPECT_NE(run({kTesseraRun, "-np", "4", kHeapProc, "--die-rank", "2"}, tmp_), 0);
  expect_nothing_left();
}

#ifdef MPIEXEC_PATH
std::vector<std::string> mpirun(std::vector<std::string> rest) {
  std::vector<std::string> argv = {MPIEXEC_PATH, "-np", "4", "--oversubscribe"};
  argv.insert(argv.end(), rest.begin(), rest.end());
  return argv;
}
const std::vector<std::string> kMpiEnv = {"OMPI_ALLOW_RUN_AS_ROOT=1",
                                          "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};

TEST_F(Cleanup, MpirunNormalRunLeavesNothing) {
  EXPECT_EQ(run(mpirun({kHeapProc}), tmp_, kMpiEnv), 0);
  expect_nothing_left();
}

TEST_F(Cleanup, MpirunRunWithAPeKilledLeavesNothing) {
  EXPECT_NE(run(mpirun({kHeapProc, "--die-rank", "1"}), tmp_, kMpiEnv), 0);
  expect_nothing_left();
}
#endif

}  // namespace
