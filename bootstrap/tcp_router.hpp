// Framed routing over the tcp bootstrap's mesh: frames to peers written without copying their
// payload, every link read while writing (so two ranks sending large messages to each other never
// deadlock), and frames that arrive before they are asked for kept per link until taken.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "fd.hpp"
#include "socket.hpp"
#include "tessera/bootstrap.hpp"

namespace tessera::detail {

// A frame that arrived, by kind and tag.
struct RoutedFrame {
  FrameKind kind;
  std::int32_t tag;
  std::vector<std::uint8_t> payload;
};

// One frame being written; `payload` must stay valid until it is done.
struct OutgoingFrame {
  int peer;
  std::array<std::uint8_t, frame_header_bytes> head;
  const std::uint8_t* payload;
  std::size_t bytes;
  std::size_t sent = 0;
  bool done() const { return sent == head.size() + bytes; }
};

class TcpRouter {
 public:
  // `links[p]` is the socket shared with rank p (the entry of `rank` itself is unused). `timeout`
  // only names the bound in diagnostics; each call gets its own deadline.
  TcpRouter(int rank, Timeout timeout, std::vector<Fd> links);

  // A frame of `kind` and `tag` from this rank to `peer`, carrying `bytes` at `payload`.
  OutgoingFrame outgoing(int peer, FrameKind kind, std::int32_t tag, const std::uint8_t* payload,
                         std::size_t bytes) const;

  // Writes `sends` and reads every link until all sends are done and `missing()` (the peers
  // whose frames have yet to arrive) is empty. Throws Error(timeout) past the deadline naming
  // `step` and the ranks still waited for, Error(peer_lost) when one of them closed its socket,
  // Error(bootstrap) on a malformed or misrouted frame.
  void drive(std::vector<OutgoingFrame>& sends, const std::function<std::vector<int>()>& missing,
             const Deadline& deadline, const std::string& step);

  // Whether a frame of `kind` and `tag` from `peer` has arrived; take() removes and returns it.
  bool arrived(int peer, FrameKind kind, std::int32_t tag) const;
  RoutedFrame take(int peer, FrameKind kind, std::int32_t tag);

 private:
  // One end of the socket shared with one peer, and what arrived on it ahead of being asked for.
  struct Link {
    Fd fd;
    FrameReader reader{max_frame_bytes};
    std::deque<RoutedFrame> stash;
    bool closed = false;
  };

  void write_pending(int peer, std::vector<OutgoingFrame>& sends);
  void read_available(int peer);

  int rank_;
  Timeout timeout_;
  std::vector<Link> links_;  // indexed by rank; links_[rank_] stays unused
};

}  // namespace tessera::detail
