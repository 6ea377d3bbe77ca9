// tessera-run: starts N processes of one program on this machine as one tcp-bootstrap job.
//
//   tessera-run -np N [--node-ids a,a,b,b] [--timeout SEC] [--grace SEC] PROGRAM [ARGS...]
//
// Each child gets TESSERA_BOOTSTRAP=tcp, TESSERA_UNIQUE_ID, TESSERA_RANK, TESSERA_SIZE (and
// TESSERA_NODE_ID with --node-ids). When a child fails, tessera-run says which rank and how, lets
// the others exit on their own for the grace period, then kills the rest. It exits 0 only when
// every child exited 0, or with the status a rank passed to shmem_global_exit (see below).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int exit_usage = 2;
constexpr int exit_job_timeout = 124;

struct Options {
  int np = 0;
  std::vector<std::string> node_ids;
  double timeout_s = 0;  // whole-job wall-clock limit; 0 = none
  double grace_s = 5;
  std::vector<std::string> command;
};

void usage(const char* why) {
  std::fprintf(stderr,
               "tessera-run: %s\n"
               "usage: tessera-run -np N [--node-ids a,a,b,b] [--timeout SEC] [--grace SEC] "
               "PROGRAM [ARGS...]\n"
               "  -np N        number of processes (ranks 0..N-1)\n"
               "  --node-ids   one node id per rank, exported as TESSERA_NODE_ID\n"
               "  --timeout    kill the job if it runs longer than SEC seconds (0: no limit)\n"
               "  --grace      after a rank fails, seconds the others get to exit (default 5)\n",
               why);
}

std::optional<double> parse_seconds(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

std::optional<Options> parse_args(int argc, char** argv) {
  Options o;
  int i = 1;
  auto value = [&](const char* flag) -> std::optional<std::string_view> {
    if (i + 1 >= argc) {
      usage((std::string(flag) + " needs a value").c_str());
      return std::nullopt;
    }
    return std::string_view(argv[++i]);
  };
  for (; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "-np" || a == "-n" || a == "--np") {
      auto v = value("-np");
      if (!v) return std::nullopt;
      auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), o.np);
      if (ec != std::errc() || end != v->data() + v->size() || o.np < 1) {
        usage(("-np " + std::string(*v) + ": expected a positive integer").c_str());
        return std::nullopt;
      }
    } else if (a == "--node-ids") {
      auto v = value("--node-ids");
      if (!v) return std::nullopt;
      std::string_view rest = *v;
      for (;;) {
        std::size_t comma = rest.find(',');
        o.node_ids.emplace_back(rest.substr(0, comma));
        if (o.node_ids.back().empty()) {
          usage("--node-ids: empty node id");
          return std::nullopt;
        }
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
    } else if (a == "--timeout" || a == "--grace") {
      auto v = value(argv[i]);
      if (!v) return std::nullopt;
      auto s = parse_seconds(*v);
      if (!s) {
        usage((std::string(a) + " " + std::string(*v) + ": expected seconds >= 0").c_str());
        return std::nullopt;
      }
      (a == "--timeout" ? o.timeout_s : o.grace_s) = *s;
    } else if (a == "-h" || a == "--help") {
      usage("help");
      return std::nullopt;
    } else if (!a.empty() && a[0] == '-' && o.command.empty()) {
      usage(("unknown option " + std::string(a)).c_str());
      return std::nullopt;
    } else {
      for (; i < argc; ++i) o.command.emplace_back(argv[i]);
    }
  }
  if (o.np == 0) {
    usage("-np N is required");
    return std::nullopt;
  }
  if (o.command.empty()) {
    usage("no program to run");
    return std::nullopt;
  }
  if (!o.node_ids.empty() && static_cast<int>(o.node_ids.size()) != o.np) {
    usage(("--node-ids lists " + std::to_string(o.node_ids.size()) + " ids for -np " +
           std::to_string(o.np))
              .c_str());
    return std::nullopt;
  }
  return o;
}

bool is_job_variable(const char* entry) {
  static const char* const names[] = {
      "TESSERA_BOOTSTRAP=", "TESSERA_UNIQUE_ID=", "TESSERA_RANK=",
      "TESSERA_SIZE=",      "TESSERA_NODE_ID=",   "TESSERA_RUN_EXIT_FD="};
  for (const char* n : names) {
    if (std::strncmp(entry, n, std::strlen(n)) == 0) return true;
  }
  return false;
}

struct Child {
  pid_t pid = -1;
  bool running = false;
  bool killed_by_us = false;
  int status = 0;
};

// The signal's name as written in C ("SIGSEGV"), or its number's description when not a common one.
std::string signal_name(int sig) {
  static const std::pair<int, const char*> names[] = {
      {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"},
      {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
      {SIGHUP, "SIGHUP"},   {SIGPIPE, "SIGPIPE"}, {SIGQUIT, "SIGQUIT"}, {SIGTRAP, "SIGTRAP"}};
  for (const auto& [number, name] : names) {
    if (number == sig) return name;
  }
  const char* description = ::strsignal(sig);
  return description != nullptr ? description : "?";
}

// "rank 1 (PE 1) was killed by signal 11 (SIGSEGV); pid 4242": a rank is the PE of the same
// number (TESSERA_RANK), so the line names the PE whose own messages say more.
std::string describe(int rank, const Child& c) {
  std::string out = "rank " + std::to_string(rank) + " (PE " + std::to_string(rank) + ") ";
  if (WIFEXITED(c.status)) {
    out += "exited with status " + std::to_string(WEXITSTATUS(c.status));
  } else {
    const int sig = WTERMSIG(c.status);
    out += "was killed by signal " + std::to_string(sig) + " (" + signal_name(sig) + ")";
    if (c.killed_by_us) out += " sent by tessera-run";
  }
  return out + "; pid " + std::to_string(c.pid);
}

bool failed(const Child& c) { return !WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0; }

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> parsed = parse_args(argc, argv);
  if (!parsed) return exit_usage;
  const Options& opt = *parsed;

  std::string unique_id;
  try {
    unique_id = tessera::UniqueId::create().to_string();
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera-run: cannot make a UniqueId: %s\n", e.what());
    return 1;
  }

  // SIGCHLD and the termination signals are taken with sigtimedwait, so waits are exact and
  // nothing races a handler; children start with the mask cleared.
  sigset_t watched;
  sigemptyset(&watched);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&watched, s);
  sigset_t previous;
  sigprocmask(SIG_BLOCK, &watched, &previous);
  sigset_t child_mask;
  sigemptyset(&child_mask);

  std::vector<std::string> base_env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!is_job_variable(*e)) base_env.emplace_back(*e);
  }
  std::vector<char*> child_argv;
  for (const std::string& a : opt.command) child_argv.push_back(const_cast<char*>(a.c_str()));
  child_argv.push_back(nullptr);

  // ---- shmem_global_exit's status ----
  // A rank that calls shmem_global_exit(status) writes `status` (an int) to the pipe whose write
  // end TESSERA_RUN_EXIT_FD names before it exits. The job then exits with that status whatever
  // the other ranks' (who see a lost peer) is, and the rest are killed at once: the
  // specification makes `status` the program's exit status and asks every PE to end promptly.
  int exit_pipe[2] = {-1, -1};
  if (::pipe(exit_pipe) == 0) {
    ::fcntl(exit_pipe[0], F_SETFD, FD_CLOEXEC);
    ::fcntl(exit_pipe[0], F_SETFL, O_NONBLOCK);
    base_env.push_back("TESSERA_RUN_EXIT_FD=" + std::to_string(exit_pipe[1]));
  }
  std::optional<int> global_exit_status;
  auto read_global_exit = [&] {
    int status = 0;
    if (exit_pipe[0] >= 0 && !global_exit_status &&
        ::read(exit_pipe[0], &status, sizeof(status)) == static_cast<ssize_t>(sizeof(status))) {
      global_exit_status = status & 0xff;
    }
  };
  // ---- end of the shmem block ----

  std::vector<Child> children(static_cast<std::size_t>(opt.np));
  int running = 0;
  for (int rank = 0; rank < opt.np; ++rank) {
    std::vector<std::string> env = base_env;
    env.push_back("TESSERA_BOOTSTRAP=tcp");
    env.push_back("TESSERA_UNIQUE_ID=" + unique_id);
    env.push_back("TESSERA_RANK=" + std::to_string(rank));
    env.push_back("TESSERA_SIZE=" + std::to_string(opt.np));
    if (!opt.node_ids.empty()) {
      env.push_back("TESSERA_NODE_ID=" + opt.node_ids[static_cast<std::size_t>(rank)]);
    }
    std::vector<char*> envp;
    for (std::string& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);

    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigmask(&attr, &child_mask);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, child_argv[0], nullptr, &attr, child_argv.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
      std::fprintf(stderr, "tessera-run: cannot start rank %d (%s): %s\n", rank, child_argv[0],
                   std::strerror(rc));
      for (Child& c : children) {
        if (c.running) ::kill(c.pid, SIGKILL);
      }
      for (Child& c : children) {
        if (c.running) ::waitpid(c.pid, nullptr, 0);
      }
      return 127;
    }
    children[static_cast<std::size_t>(rank)] = {pid, true, false, 0};
    ++running;
  }

  if (exit_pipe[1] >= 0) ::close(exit_pipe[1]);  // the children hold it (shmem block)

  const auto start = Clock::now();
  std::optional<Clock::time_point> kill_at;
  if (opt.timeout_s > 0) {
    kill_at = start + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(opt.timeout_s));
  }
  const auto grace =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.grace_s));
  int exit_code = 0;
  bool killed_all = false;

  auto kill_running = [&] {
    for (Child& c : children) {
      if (c.running) {
        c.killed_by_us = true;
        ::kill(c.pid, SIGKILL);
      }
    }
    killed_all = true;
  };
  auto begin_grace = [&] {
    auto at = Clock::now() + grace;
    if (!kill_at || at < *kill_at) kill_at = at;
  };

  while (running > 0) {
    // shmem block: a global_exit status is written before its rank exits, so it is here by the
    // time any exit it caused is reaped below.
    if (!global_exit_status) {
      read_global_exit();
      if (global_exit_status) kill_running();
    }
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      for (std::size_t r = 0; r < children.size(); ++r) {
        Child& c = children[r];
        if (c.pid != pid || !c.running) continue;
        c.running = false;
        c.status = status;
        --running;
        if (failed(c) && !global_exit_status) {
          std::fprintf(stderr, "tessera-run: %s\n", describe(static_cast<int>(r), c).c_str());
          if (exit_code == 0 && !c.killed_by_us) {
            exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            if (running > 0) {
              std::fprintf(stderr,
                           "tessera-run: giving the other %d rank(s) %.1f s to exit before "
                           "killing them\n",
                           running, opt.grace_s);
              begin_grace();
            }
          }
        }
      }
    }
    if (running == 0) break;

    if (kill_at && Clock::now() >= *kill_at && !killed_all) {
      if (exit_code == 0) {
        exit_code = exit_job_timeout;
        std::fprintf(stderr, "tessera-run: job ran past --timeout %.1f s; killing %d rank(s)\n",
                     opt.timeout_s, running);
      } else {
        std::fprintf(stderr, "tessera-run: grace period over; killing %d rank(s)\n", running);
      }
      kill_running();
      continue;
    }

    timespec wait{};
    bool bounded = kill_at && !killed_all;
    if (bounded) {
      auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(*kill_at - Clock::now());
      if (left.count() < 0) left = std::chrono::nanoseconds(0);
      wait.tv_sec = static_cast<time_t>(left.count() / 1'000'000'000);
      wait.tv_nsec = static_cast<long>(left.count() % 1'000'000'000);
    }
    int sig = bounded ? sigtimedwait(&watched, nullptr, &wait) : sigwaitinfo(&watched, nullptr);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      std::fprintf(stderr, "tessera-run: got signal %d; forwarding it to %d rank(s)\n", sig,
                   running);
      for (Child& c : children) {
        if (c.running) ::kill(c.pid, sig);
      }
      if (exit_code == 0) exit_code = 128 + sig;
      begin_grace();
    }
  }

  sigprocmask(SIG_SETMASK, &previous, nullptr);
  read_global_exit();  // shmem block
  if (exit_pipe[0] >= 0) ::close(exit_pipe[0]);
  if (global_exit_status) return *global_exit_status;
  return exit_code;
}
