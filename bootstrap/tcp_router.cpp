#include "tcp_router.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tcp_diagnostics.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

TcpRouter::TcpRouter(int rank, Timeout timeout, std::vector<Fd> links)
    : rank_(rank), timeout_(timeout), links_(links.size()) {
  for (std::size_t p = 0; p < links.size(); ++p) links_[p].fd = std::move(links[p]);
}

OutgoingFrame TcpRouter::outgoing(int peer, FrameKind kind, std::int32_t tag,
                                  const std::uint8_t* payload, std::size_t bytes) const {
  return OutgoingFrame{peer, encode_frame_header({kind, tag, rank_, bytes}), payload, bytes};
}

bool TcpRouter::arrived(int peer, FrameKind kind, std::int32_t tag) const {
  for (const RoutedFrame& f : links_[static_cast<std::size_t>(peer)].stash) {
    if (f.kind == kind && f.tag == tag) return true;
  }
  return false;
}

RoutedFrame TcpRouter::take(int peer, FrameKind kind, std::int32_t tag) {
  auto& stash = links_[static_cast<std::size_t>(peer)].stash;
  auto it = std::find_if(stash.begin(), stash.end(),
                         [&](const RoutedFrame& f) { return f.kind == kind && f.tag == tag; });
  RoutedFrame f = std::move(*it);
  stash.erase(it);
  return f;
}

void TcpRouter::drive(std::vector<OutgoingFrame>& sends,
                      const std::function<std::vector<int>()>& missing, const Deadline& deadline,
                      const std::string& step) {
  std::vector<pollfd> fds;
  std::vector<int> fd_peer;
  for (;;) {
    std::vector<int> waiting = missing();
    std::vector<int> sending;
    for (const OutgoingFrame& o : sends) {
      if (!o.done()) sending.push_back(o.peer);
    }
    if (waiting.empty() && sending.empty()) return;
    for (int p : sending) {
      if (links_[static_cast<std::size_t>(p)].closed) throw_peer_lost(rank_, p, step);
    }
    for (int p : waiting) {
      if (links_[static_cast<std::size_t>(p)].closed) throw_peer_lost(rank_, p, step);
    }

    // Checked before every poll, so a peer that keeps the sockets busy cannot stretch it.
    if (deadline.expired()) {
      std::string what = "timed out after " + ms_text(timeout_) + " in " + step;
      if (!waiting.empty()) what += "; still waiting for data from rank(s) " + rank_list(waiting);
      if (!sending.empty()) what += "; still sending to rank(s) " + rank_list(sending);
      throw Error(ErrorCode::timeout, rank_, what);
    }
    fds.clear();
    fd_peer.clear();
    for (int p = 0; p < static_cast<int>(links_.size()); ++p) {
      Link& link = links_[static_cast<std::size_t>(p)];
      if (!link.fd.valid() || link.closed) continue;
      short events = POLLIN;
      if (std::find(sending.begin(), sending.end(), p) != sending.end()) events |= POLLOUT;
      fds.push_back({link.fd.get(), events, 0});
      fd_peer.push_back(p);
    }
    int n = ::poll(fds.data(), fds.size(), deadline.poll_ms());
    if (n < 0 && errno != EINTR) {
      throw Error(ErrorCode::backend, rank_,
                  "poll() failed during " + step + ": " + std::strerror(errno));
    }
    if (n <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      int p = fd_peer[i];
      if (fds[i].revents & (POLLOUT | POLLERR | POLLHUP)) write_pending(p, sends);
      if (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) read_available(p);
    }
  }
}

void TcpRouter::write_pending(int peer, std::vector<OutgoingFrame>& sends) {
  Link& link = links_[static_cast<std::size_t>(peer)];
  for (OutgoingFrame& o : sends) {
    if (o.peer != peer || o.done()) continue;
    while (!o.done() && !link.closed) {
      IoResult r;
      if (o.sent < o.head.size()) {
        r = write_some(link.fd.get(), o.head.data() + o.sent, o.head.size() - o.sent);
      } else {
        std::size_t off = o.sent - o.head.size();
        r = write_some(link.fd.get(), o.payload + off, o.bytes - off);
      }
      if (r.status == IoStatus::ok) {
        o.sent += r.bytes;
      } else if (r.status == IoStatus::would_block) {
        return;
      } else {
        link.closed = true;
      }
    }
    if (!o.done()) return;
  }
}

void TcpRouter::read_available(int peer) {
  Link& link = links_[static_cast<std::size_t>(peer)];
  for (;;) {
    FrameReader::State s = link.reader.pump(link.fd.get());
    switch (s) {
      case FrameReader::State::need_more:
        return;
      case FrameReader::State::frame_ready: {
        const FrameHeader& h = link.reader.header();
        bool expected_kind = h.kind == FrameKind::data || h.kind == FrameKind::collective;
        if (h.source != peer || !expected_kind) {
          throw Error(ErrorCode::bootstrap, rank_,
                      "the connection to rank " + std::to_string(peer) +
                          " carried a frame of kind " + std::to_string(static_cast<int>(h.kind)) +
                          " from rank " + std::to_string(h.source) + ", expected data from rank " +
                          std::to_string(peer));
        }
        link.stash.push_back(RoutedFrame{h.kind, h.tag, std::move(link.reader.payload())});
        link.reader.next();
        break;
      }
      case FrameReader::State::bad_frame:
        throw Error(ErrorCode::bootstrap, rank_,
                    "rank " + std::to_string(peer) +
                        " sent a malformed bootstrap frame: " + link.reader.error());
      case FrameReader::State::closed:
      case FrameReader::State::failed:
        link.closed = true;
        return;
    }
  }
}

}  // namespace tessera::detail
