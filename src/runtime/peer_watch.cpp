#include "runtime/peer_watch.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace tessera::detail {
namespace {

// A pidfd becomes readable when its process ends (before it is reaped), so a zombie counts as
// gone. Kernels before 5.3 lack it; those peers are polled with kill(pid, 0) instead.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

constexpr int kPollFallbackMs = 100;

}  // namespace

PeerWatch::PeerWatch(std::vector<Peer> peers, std::function<void(int pe)> on_lost)
    : peers_(std::move(peers)), on_lost_(std::move(on_lost)) {
  if (peers_.empty()) return;
  for (const Peer& p : peers_) pidfds_.push_back(open_pidfd(p.pid));
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd_ < 0) {
    for (int fd : pidfds_) {
      if (fd >= 0) ::close(fd);
    }
    pidfds_.clear();
    peers_.clear();
    return;
  }
  thread_ = std::thread([this] { run(); });
}

PeerWatch::~PeerWatch() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] ssize_t written = ::write(stop_fd_, &one, sizeof(one));
    thread_.join();
  }
  for (int fd : pidfds_) {
    if (fd >= 0) ::close(fd);
  }
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

void PeerWatch::run() {
  std::vector<bool> watching(peers_.size(), true);
  std::vector<pollfd> fds;
  std::vector<std::size_t> fd_peer;
  for (;;) {
    fds.assign(1, pollfd{stop_fd_, POLLIN, 0});
    fd_peer.clear();
    bool polled_by_kill = false;
    for (std::size_t i = 0; i < peers_.size(); ++i) {
      if (!watching[i]) continue;
      if (pidfds_[i] >= 0) {
        fds.push_back({pidfds_[i], POLLIN, 0});
        fd_peer.push_back(i);
      } else {
        polled_by_kill = true;
      }
    }
    const int n = ::poll(fds.data(), fds.size(), polled_by_kill ? kPollFallbackMs : -1);
    if (n < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    for (std::size_t k = 1; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      watching[fd_peer[k - 1]] = false;
      on_lost_(peers_[fd_peer[k - 1]].pe);
    }
    for (std::size_t i = 0; i < peers_.size(); ++i) {
      if (watching[i] && pidfds_[i] < 0 && process_gone(peers_[i].pid)) {
        watching[i] = false;
        on_lost_(peers_[i].pe);
      }
    }
  }
}

}  // namespace tessera::detail
