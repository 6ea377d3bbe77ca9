#include "heap/fd_exchange.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

constexpr std::size_t kPathBytes = 256;

[[noreturn]] void fail(int pe, const std::string& what) {
  throw Error(ErrorCode::backend, pe, "heap fd exchange: " + what + ": " + std::strerror(errno));
}

sockaddr_un socket_address(const std::string& dir, int pe, int rank) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = dir + "/pe" + std::to_string(rank) + ".sock";
  if (path.size() >= sizeof(addr.sun_path)) {
    throw Error(ErrorCode::invalid_argument, pe,
                "heap fd exchange: socket path '" + path + "' is longer than " +
                    std::to_string(sizeof(addr.sun_path) - 1) +
                    " bytes; point TMPDIR at a shorter directory");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

void send_fd(int sock, int my_rank, int fd) {
  msghdr msg{};
  iovec iov{&my_rank, sizeof(my_rank)};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  ssize_t n;
  do {
    n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(my_rank))) fail(my_rank, "sendmsg");
}

// Receives (rank, fd) from an accepted connection.
std::pair<int, Fd> recv_fd(int sock, int pe) {
  int rank = -1;
  msghdr msg{};
  iovec iov{&rank, sizeof(rank)};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(rank))) fail(pe, "recvmsg");
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  if (cmsg == nullptr || cmsg->cmsg_type != SCM_RIGHTS) {
    throw Error(ErrorCode::backend, pe,
                "heap fd exchange: rank " + std::to_string(rank) + " sent no file descriptor");
  }
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
  return {rank, Fd(fd)};
}

// Removes this PE's socket and, when it is the last one out, the directory.
struct DirectoryCleanup {
  std::string dir;
  std::string socket_path;
  ~DirectoryCleanup() {
    if (!socket_path.empty()) ::unlink(socket_path.c_str());
    if (!dir.empty()) ::rmdir(dir.c_str());  // fails harmlessly while others' sockets remain
  }
};

}  // namespace

std::vector<Fd> exchange_node_fds(Bootstrap& boot, const std::vector<int>& node_pes, int my_fd,
                                  Timeout timeout) {
  const int me = boot.rank();
  std::vector<Fd> fds(node_pes.size());

  // The node's first PE makes the directory; every PE learns its leader's path.
  std::vector<char> paths(static_cast<std::size_t>(boot.size()) * kPathBytes, '\0');
  DirectoryCleanup cleanup;
  if (node_pes.size() > 1 && node_pes.front() == me) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tessera-XXXXXX";
    if (pattern.size() >= kPathBytes) {
      throw Error(ErrorCode::invalid_argument, me, "TMPDIR is too long: " + pattern);
    }
    if (::mkdtemp(pattern.data()) == nullptr) fail(me, "mkdtemp " + pattern);  // mode 0700
    cleanup.dir = pattern;
    std::memcpy(&paths[static_cast<std::size_t>(me) * kPathBytes], pattern.c_str(), pattern.size());
  }
  boot.allgather(paths.data(), kPathBytes);
  if (node_pes.size() == 1) {
    // Alone on its node: nothing to exchange, but the two barriers below are collective.
    boot.barrier();
    boot.barrier();
    return fds;
  }

  const std::string dir(&paths[static_cast<std::size_t>(node_pes.front()) * kPathBytes]);
  cleanup.dir = dir;
  Fd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener.valid()) fail(me, "socket");
  const sockaddr_un my_addr = socket_address(dir, me, me);
  if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&my_addr), sizeof(my_addr)) != 0)
    fail(me, std::string("bind ") + my_addr.sun_path);
  cleanup.socket_path = my_addr.sun_path;
  if (::listen(listener.get(), static_cast<int>(node_pes.size())) != 0) fail(me, "listen");
  boot.barrier();  // every listener is up

  // A Unix stream connection is established once it is in the listener's backlog, and data
  // sent on it waits there, so sending before the peer accepts cannot deadlock.
  for (int peer : node_pes) {
    if (peer == me) continue;
    Fd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!sock.valid()) fail(me, "socket");
    const sockaddr_un addr = socket_address(dir, me, peer);
    int rc;
    do {
      rc = ::connect(sock.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) fail(me, "connect to PE " + std::to_string(peer) + "'s socket");
    send_fd(sock.get(), me, my_fd);
  }

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t received = 0;
  while (received + 1 < node_pes.size()) {
    pollfd pfd{listener.get(), POLLIN, 0};
    int wait_ms = -1;
    if (timeout.count() > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      wait_ms = static_cast<int>(std::max<long long>(0, left.count()));
    }
    int ready = ::poll(&pfd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) fail(me, "poll");
    if (ready == 0) {
      throw Error(ErrorCode::timeout, me,
                  "heap fd exchange: received " + std::to_string(received) + " of " +
                      std::to_string(node_pes.size() - 1) + " peer heaps within " +
                      std::to_string(timeout.count()) + " ms");
    }
    Fd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn.valid()) fail(me, "accept");
    auto [rank, fd] = recv_fd(conn.get(), me);
    auto it = std::find(node_pes.begin(), node_pes.end(), rank);
    if (it == node_pes.end() || rank == me ||
        fds[static_cast<std::size_t>(it - node_pes.begin())].valid()) {
      throw Error(ErrorCode::backend, me,
                  "heap fd exchange: unexpected heap from rank " + std::to_string(rank));
    }
    fds[static_cast<std::size_t>(it - node_pes.begin())] = std::move(fd);
    ++received;
  }
  listener = Fd();
  boot.barrier();  // nobody connects any more; the directory can go
  return fds;
}

}  // namespace tessera::detail
