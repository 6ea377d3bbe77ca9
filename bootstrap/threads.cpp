// The threads bootstrap: PEs are threads of one process sharing a ThreadsGroup. Collectives
// meet at a generation-counted rendezvous guarded by one mutex; every wait is bounded.
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

namespace tessera {

class ThreadsGroup {
 public:
  explicit ThreadsGroup(int n) : n_(n), slots_(static_cast<std::size_t>(n)) {}

  int size() const { return n_; }

  void allgather(int rank, void* buf, std::size_t bytes, Timeout timeout) {
    std::unique_lock lock(mu_);
    check_alive(rank);
    // Wait until the previous collective has been drained by everyone.
    wait(lock, rank, timeout, "allgather (previous round)", [&] { return leaving_ == 0; });
    const std::uint64_t gen = generation_;
    auto* mine = static_cast<std::uint8_t*>(buf) + static_cast<std::size_t>(rank) * bytes;
    slots_[static_cast<std::size_t>(rank)].assign(mine, mine + bytes);
    if (bytes_ == kUnset) bytes_ = bytes;
    if (bytes_ != bytes) mismatch_ = true;
    if (++arrived_ == n_) {
      arrived_ = 0;
      leaving_ = n_;
      ++generation_;
      cv_.notify_all();
    } else {
      wait(lock, rank, timeout, "allgather", [&] { return generation_ != gen; });
    }
    const bool mismatch = mismatch_;
    if (!mismatch) {
      for (int r = 0; r < n_; ++r) {
        std::memcpy(static_cast<std::uint8_t*>(buf) + static_cast<std::size_t>(r) * bytes,
                    slots_[static_cast<std::size_t>(r)].data(), bytes);
      }
    }
    if (--leaving_ == 0) {
      bytes_ = kUnset;
      mismatch_ = false;
      cv_.notify_all();
    }
    if (mismatch) {
      throw Error(ErrorCode::bootstrap, rank,
                  "threads bootstrap: ranks called allgather with different sizes (this rank: " +
                      std::to_string(bytes) + " bytes)");
    }
  }

  void send(int from, int to, const void* buf, std::size_t bytes, int tag) {
    std::lock_guard lock(mu_);
    check_alive(from);
    const auto* p = static_cast<const std::uint8_t*>(buf);
    mailbox_[{from, to, tag}].emplace_back(p, p + bytes);
    cv_.notify_all();
  }

  void recv(int to, int from, void* buf, std::size_t bytes, int tag, Timeout timeout) {
    std::unique_lock lock(mu_);
    auto& queue = mailbox_[{from, to, tag}];
    wait(lock, to, timeout, "recv from rank " + std::to_string(from),
         [&] { return !queue.empty(); });
    std::vector<std::uint8_t> msg = std::move(queue.front());
    queue.pop_front();
    if (msg.size() != bytes) {
      throw Error(ErrorCode::bootstrap, to,
                  "threads bootstrap: recv from rank " + std::to_string(from) + " tag " +
                      std::to_string(tag) + " expected " + std::to_string(bytes) +
                      " bytes, the message has " + std::to_string(msg.size()));
    }
    std::memcpy(buf, msg.data(), bytes);
  }

  // A rank whose bootstrap is destroyed leaves the group: waiters on it fail with PeerLost.
  void leave(int rank) {
    std::lock_guard lock(mu_);
    departed_.push_back(rank);
    cv_.notify_all();
  }

 private:
  static constexpr std::size_t kUnset = ~std::size_t{0};

  void check_alive(int rank) const {
    for (int r : departed_) {
      if (r != rank) {
        throw Error(ErrorCode::peer_lost, rank,
                    "threads bootstrap: rank " + std::to_string(r) + " has left the job");
      }
    }
  }

  template <class Pred>
  void wait(std::unique_lock<std::mutex>& lock, int rank, Timeout timeout, const std::string& what,
            Pred done) {
    auto ready = [&] {
      if (done()) return true;
      check_alive(rank);
      return false;
    };
    if (timeout.count() == 0) {
      cv_.wait(lock, ready);
    } else if (!cv_.wait_for(lock, timeout, ready)) {
      throw Error(ErrorCode::timeout, rank,
                  "threads bootstrap: " + what + " did not complete within " +
                      std::to_string(timeout.count()) + " ms");
    }
  }

  const int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<std::uint8_t>> slots_;
  std::uint64_t generation_ = 0;
  int arrived_ = 0;
  int leaving_ = 0;
  std::size_t bytes_ = kUnset;
  bool mismatch_ = false;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<std::uint8_t>>> mailbox_;
  std::vector<int> departed_;
};

namespace {

class ThreadsBootstrap final : public Bootstrap {
 public:
  ThreadsBootstrap(std::shared_ptr<ThreadsGroup> group, int rank, Timeout timeout)
      : group_(std::move(group)), rank_(rank), timeout_(timeout) {}
  ~ThreadsBootstrap() override { group_->leave(rank_); }

  int rank() const override { return rank_; }
  int size() const override { return group_->size(); }
  const char* name() const override { return "threads"; }
  void allgather(void* buf, std::size_t bytes) override {
    group_->allgather(rank_, buf, bytes, timeout_);
  }
  void barrier() override {
    std::vector<std::uint8_t> token(static_cast<std::size_t>(size()));
    allgather(token.data(), 1);
  }
  void send(int peer, const void* buf, std::size_t bytes, int tag) override {
    check_peer(peer);
    group_->send(rank_, peer, buf, bytes, tag);
  }
  void recv(int peer, void* buf, std::size_t bytes, int tag) override {
    check_peer(peer);
    group_->recv(rank_, peer, buf, bytes, tag, timeout_);
  }

 private:
  void check_peer(int peer) const {
    if (peer < 0 || peer >= size()) {
      throw Error(ErrorCode::invalid_argument, rank_,
                  "threads bootstrap: peer " + std::to_string(peer) + " is outside [0, " +
                      std::to_string(size()) + ")");
    }
  }

  std::shared_ptr<ThreadsGroup> group_;
  int rank_;
  Timeout timeout_;
};

}  // namespace

std::shared_ptr<ThreadsGroup> make_threads_group(int n_pes) {
  if (n_pes < 1) {
    throw Error(
        ErrorCode::invalid_argument, -1,
        "threads bootstrap: a group needs at least 1 PE, asked for " + std::to_string(n_pes));
  }
  return std::make_shared<ThreadsGroup>(n_pes);
}

std::unique_ptr<Bootstrap> make_threads_bootstrap(std::shared_ptr<ThreadsGroup> group, int rank,
                                                  Timeout timeout) {
  if (!group) throw Error(ErrorCode::invalid_argument, rank, "threads bootstrap: null group");
  if (rank < 0 || rank >= group->size()) {
    throw Error(ErrorCode::invalid_argument, rank,
                "threads bootstrap: rank " + std::to_string(rank) + " is outside [0, " +
                    std::to_string(group->size()) + ")");
  }
  return std::make_unique<ThreadsBootstrap>(std::move(group), rank, timeout);
}

}  // namespace tessera
