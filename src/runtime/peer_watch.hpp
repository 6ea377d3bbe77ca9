// PeerWatch: notices when a PE of the job that runs as another process on this machine ends
// (SIGKILL, a crash, an exit without finalize), so the PEs waiting for it fail with PeerLost
// naming it instead of running into their timeouts. Internal.
#pragma once

#include <sys/types.h>

#include <functional>
#include <thread>
#include <vector>

namespace tessera::detail {

class PeerWatch {
 public:
  struct Peer {
    int pe;
    pid_t pid;
  };

  // Starts one thread that sleeps until a watched process ends, then calls on_lost(pe) for it
  // (from that thread) and stops watching it. With no peers, starts nothing.
  PeerWatch(std::vector<Peer> peers, std::function<void(int pe)> on_lost);
  // Stops the thread and closes every descriptor.
  ~PeerWatch();
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;

 private:
  void run();

  std::vector<Peer> peers_;
  std::vector<int> pidfds_;  // per peer; -1 where pidfd_open is unavailable (polled instead)
  std::function<void(int)> on_lost_;
  int stop_fd_ = -1;  // an eventfd the destructor writes
  std::thread thread_;
};

}  // namespace tessera::detail
