// The tcp bootstrap: the Bootstrap interface over a full mesh of sockets that the rendezvous
// (tcp_rendezvous.cpp) forms and the router (tcp_router.cpp) carries frames over. Collectives are
// tagged with their sequence number, so ranks that disagree on the sequence or size fail loudly.
#include <algorithm>
#include <cstring>
#include <deque>

#include "socket.hpp"
#include "tcp_diagnostics.hpp"
#include "tcp_rendezvous.hpp"
#include "tcp_router.hpp"
#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

using detail::Deadline;
using detail::FrameKind;

class TcpBootstrap final : public Bootstrap {
 public:
  TcpBootstrap(const UniqueId& id, int rank, int size, Timeout timeout)
      : rank_(rank),
        size_(size),
        timeout_(timeout),
        router_(rank, timeout, detail::form_tcp_mesh(id, rank, size, timeout)) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* name() const override { return "tcp"; }

  void allgather(void* buf, std::size_t bytes_per_rank) override {
    if (buf == nullptr && bytes_per_rank > 0) {
      throw Error(ErrorCode::invalid_argument, rank_, "allgather got a null buffer");
    }
    check_bytes(bytes_per_rank, "allgather");
    auto tag = static_cast<std::int32_t>(collective_seq_++);
    if (size_ == 1) return;
    auto* base = static_cast<std::uint8_t*>(buf);
    std::vector<detail::OutgoingFrame> sends;
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      sends.push_back(router_.outgoing(p, FrameKind::collective, tag,
                                       base + static_cast<std::size_t>(rank_) * bytes_per_rank,
                                       bytes_per_rank));
    }
    auto missing = [&] {
      std::vector<int> out;
      for (int p = 0; p < size_; ++p) {
        if (p != rank_ && !router_.arrived(p, FrameKind::collective, tag)) out.push_back(p);
      }
      return out;
    };
    router_.drive(sends, missing, Deadline::after(timeout_),
                  "allgather #" + std::to_string(tag) + " of " + std::to_string(bytes_per_rank) +
                      " bytes per rank");
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      detail::RoutedFrame f = router_.take(p, FrameKind::collective, tag);
      if (f.payload.size() != bytes_per_rank) {
        throw Error(ErrorCode::bootstrap, rank_,
                    "allgather #" + std::to_string(tag) + ": rank " + std::to_string(p) +
                        " contributed " + std::to_string(f.payload.size()) +
                        " bytes, this rank expected " + std::to_string(bytes_per_rank) +
                        " (ranks disagree on the collective sequence or size)");
      }
      if (bytes_per_rank > 0) {
        std::memcpy(base + static_cast<std::size_t>(p) * bytes_per_rank, f.payload.data(),
                    bytes_per_rank);
      }
    }
  }

  void barrier() override {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size_), 0);
    allgather(bytes.data(), 1);
  }

  void send(int peer, const void* buf, std::size_t bytes, int tag) override {
    check_peer(peer, "send");
    check_bytes(bytes, "send");
    if (buf == nullptr && bytes > 0) {
      throw Error(ErrorCode::invalid_argument, rank_, "send got a null buffer");
    }
    const auto* p = static_cast<const std::uint8_t*>(buf);
    if (peer == rank_) {
      self_stash_.push_back({FrameKind::data, tag, std::vector<std::uint8_t>(p, p + bytes)});
      return;
    }
    std::vector<detail::OutgoingFrame> sends{
        router_.outgoing(peer, FrameKind::data, tag, p, bytes)};
    router_.drive(
        sends, [] { return std::vector<int>{}; }, Deadline::after(timeout_),
        "send of " + std::to_string(bytes) + " bytes with tag " + std::to_string(tag) +
            " to rank " + std::to_string(peer));
  }

  void recv(int peer, void* buf, std::size_t bytes, int tag) override {
    check_peer(peer, "recv");
    if (buf == nullptr && bytes > 0) {
      throw Error(ErrorCode::invalid_argument, rank_, "recv got a null buffer");
    }
    detail::RoutedFrame f;
    if (peer == rank_) {
      auto it = std::find_if(self_stash_.begin(), self_stash_.end(),
                             [&](const detail::RoutedFrame& s) { return s.tag == tag; });
      if (it == self_stash_.end()) {
        throw Error(ErrorCode::invalid_argument, rank_,
                    "recv from itself with tag " + std::to_string(tag) +
                        " but no matching send to itself was made");
      }
      f = std::move(*it);
      self_stash_.erase(it);
    } else {
      std::vector<detail::OutgoingFrame> none;
      auto missing = [&] {
        return router_.arrived(peer, FrameKind::data, tag) ? std::vector<int>{}
                                                           : std::vector<int>{peer};
      };
      router_.drive(none, missing, Deadline::after(timeout_),
                    "recv of " + std::to_string(bytes) + " bytes with tag " + std::to_string(tag) +
                        " from rank " + std::to_string(peer));
      f = router_.take(peer, FrameKind::data, tag);
    }
    if (f.payload.size() != bytes) {
      throw Error(ErrorCode::invalid_argument, rank_,
                  "recv from rank " + std::to_string(peer) + " with tag " + std::to_string(tag) +
                      " asked for " + std::to_string(bytes) + " bytes but the message has " +
                      std::to_string(f.payload.size()) + " bytes");
    }
    if (bytes > 0) std::memcpy(buf, f.payload.data(), bytes);
  }

 private:
  void check_peer(int peer, const char* call) const {
    if (peer < 0 || peer >= size_) {
      throw Error(ErrorCode::invalid_argument, rank_,
                  std::string(call) + " to/from rank " + std::to_string(peer) +
                      ", expected a rank in 0.." + std::to_string(size_ - 1));
    }
  }

  void check_bytes(std::size_t bytes, const char* call) const {
    if (bytes > detail::max_frame_bytes) {
      throw Error(ErrorCode::invalid_argument, rank_,
                  std::string(call) + " of " + std::to_string(bytes) +
                      " bytes exceeds the bootstrap's message cap of " +
                      std::to_string(detail::max_frame_bytes) + " bytes");
    }
  }

  int rank_;
  int size_;
  Timeout timeout_;
  detail::TcpRouter router_;
  std::deque<detail::RoutedFrame> self_stash_;
  std::uint32_t collective_seq_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> make_tcp_bootstrap(const UniqueId& id, int rank, int size,
                                              Timeout timeout) {
  if (size < 1 || rank < 0 || rank >= size) {
    throw Error(ErrorCode::invalid_argument, rank,
                "tcp bootstrap for rank " + std::to_string(rank) + " of " + std::to_string(size) +
                    ": expected size >= 1 and 0 <= rank < size");
  }
  if (id.port == 0 || id.host.empty()) {
    throw Error(ErrorCode::invalid_argument, rank,
                "tcp bootstrap got a UniqueId without a host or port (\"" + id.to_string() +
                    "\"); make one with UniqueId::create()");
  }
  if (timeout.count() < 0) {
    throw Error(ErrorCode::invalid_argument, rank,
                "tcp bootstrap timeout of " + detail::ms_text(timeout) + ", expected >= 0");
  }
  return std::make_unique<TcpBootstrap>(id, rank, size, timeout);
}

}  // namespace tessera
