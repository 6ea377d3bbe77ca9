// The tcp bootstrap: a full mesh of sockets. Rank 0 collects every rank's HELLO (token, rank,
// size, listen port) and answers with the address table; then each lower rank connects to each
// higher rank's listener, so every pair shares exactly one authenticated socket.
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <optional>

#include "socket.hpp"
#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

using detail::Deadline;
using detail::Fd;
using detail::FrameKind;
using detail::FrameReader;
using detail::IoStatus;

constexpr std::size_t token_bytes = 16;
constexpr std::size_t hello_bytes = token_bytes + 4 + 4 + 2;  // token, rank, size, listen port
constexpr std::size_t peer_hello_bytes = token_bytes + 4;     // token, rank
constexpr std::size_t table_entry_bytes = 4 + 2;              // IPv4 address, listen port
// Connections that have not yet presented a token; beyond this the oldest is dropped.
constexpr std::size_t max_unauthenticated = 256;
constexpr int listen_backlog = 4096;

struct Frame {
  FrameKind kind;
  std::int32_t tag;
  std::vector<std::uint8_t> payload;
};

// One end of the socket shared with one peer, and what arrived on it ahead of being asked for.
struct Link {
  Fd fd;
  FrameReader reader{detail::max_frame_bytes};
  std::deque<Frame> stash;
  bool closed = false;
};

// One frame being written without copying its payload.
struct Outgoing {
  int peer;
  std::array<std::uint8_t, detail::frame_header_bytes> head;
  const std::uint8_t* payload;
  std::size_t bytes;
  std::size_t sent = 0;
  bool done() const { return sent == head.size() + bytes; }
};

// A connection accepted during init that has not yet presented its HELLO.
struct Pending {
  Fd fd;
  FrameReader reader;
};

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += ", ";
    if (i == 8) return out + "... (" + std::to_string(ranks.size()) + " in all)";
    out += std::to_string(ranks[i]);
  }
  return out;
}

std::string ms_text(Timeout timeout) { return std::to_string(timeout.count()) + " ms"; }

class TcpBootstrap final : public Bootstrap {
 public:
  TcpBootstrap(const UniqueId& id, int rank, int size, Timeout timeout)
      : rank_(rank), size_(size), timeout_(timeout), token_(id.token), links_(size) {
    Deadline deadline = Deadline::after(timeout_);
    if (size_ == 1) return;
    if (rank_ == 0) {
      init_root(id, deadline);
    } else {
      init_member(id, deadline);
    }
  }

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
    std::vector<Outgoing> sends;
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      sends.push_back(make_outgoing(p, FrameKind::collective, tag,
                                    base + static_cast<std::size_t>(rank_) * bytes_per_rank,
                                    bytes_per_rank));
    }
    auto missing = [&] {
      std::vector<int> out;
      for (int p = 0; p < size_; ++p) {
        if (p != rank_ && !find(p, FrameKind::collective, tag)) out.push_back(p);
      }
      return out;
    };
    drive(sends, missing, Deadline::after(timeout_),
          "allgather #" + std::to_string(tag) + " of " + std::to_string(bytes_per_rank) +
              " bytes per rank");
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      Frame f = take(p, FrameKind::collective, tag);
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
    std::vector<Outgoing> sends{make_outgoing(peer, FrameKind::data, tag, p, bytes)};
    drive(
        sends, [] { return std::vector<int>{}; }, Deadline::after(timeout_),
        "send of " + std::to_string(bytes) + " bytes with tag " + std::to_string(tag) +
            " to rank " + std::to_string(peer));
  }

  void recv(int peer, void* buf, std::size_t bytes, int tag) override {
    check_peer(peer, "recv");
    if (buf == nullptr && bytes > 0) {
      throw Error(ErrorCode::invalid_argument, rank_, "recv got a null buffer");
    }
    Frame f;
    if (peer == rank_) {
      auto it = std::find_if(self_stash_.begin(), self_stash_.end(),
                             [&](const Frame& s) { return s.tag == tag; });
      if (it == self_stash_.end()) {
        throw Error(ErrorCode::invalid_argument, rank_,
                    "recv from itself with tag " + std::to_string(tag) +
                        " but no matching send to itself was made");
      }
      f = std::move(*it);
      self_stash_.erase(it);
    } else {
      std::vector<Outgoing> none;
      auto missing = [&] {
        return find(peer, FrameKind::data, tag) ? std::vector<int>{} : std::vector<int>{peer};
      };
      drive(none, missing, Deadline::after(timeout_),
            "recv of " + std::to_string(bytes) + " bytes with tag " + std::to_string(tag) +
                " from rank " + std::to_string(peer));
      f = take(peer, FrameKind::data, tag);
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

  Outgoing make_outgoing(int peer, FrameKind kind, std::int32_t tag, const std::uint8_t* payload,
                         std::size_t bytes) const {
    return Outgoing{peer, detail::encode_frame_header({kind, tag, rank_, bytes}), payload, bytes};
  }

  const Frame* find(int peer, FrameKind kind, std::int32_t tag) const {
    for (const Frame& f : links_[static_cast<std::size_t>(peer)].stash) {
      if (f.kind == kind && f.tag == tag) return &f;
    }
    return nullptr;
  }

  Frame take(int peer, FrameKind kind, std::int32_t tag) {
    auto& stash = links_[static_cast<std::size_t>(peer)].stash;
    auto it = std::find_if(stash.begin(), stash.end(),
                           [&](const Frame& f) { return f.kind == kind && f.tag == tag; });
    Frame f = std::move(*it);
    stash.erase(it);
    return f;
  }

  [[noreturn]] void throw_lost(int peer, const std::string& step) const {
    throw Error(ErrorCode::peer_lost, rank_,
                "rank " + std::to_string(peer) + " closed its bootstrap connection during " + step);
  }

  // Writes `sends` and reads every link until all sends are done and `missing()` (the peers
  // whose frames have yet to arrive) is empty. Reading every link while writing is what keeps
  // two ranks that send large messages to each other from deadlocking.
  void drive(std::vector<Outgoing>& sends, const std::function<std::vector<int>()>& missing,
             const Deadline& deadline, const std::string& step) {
    std::vector<pollfd> fds;
    std::vector<int> fd_peer;
    for (;;) {
      std::vector<int> waiting = missing();
      std::vector<int> sending;
      for (const Outgoing& o : sends) {
        if (!o.done()) sending.push_back(o.peer);
      }
      if (waiting.empty() && sending.empty()) return;
      for (int p : sending) {
        if (links_[static_cast<std::size_t>(p)].closed) throw_lost(p, step);
      }
      for (int p : waiting) {
        if (links_[static_cast<std::size_t>(p)].closed) throw_lost(p, step);
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
      for (int p = 0; p < size_; ++p) {
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

  void write_pending(int peer, std::vector<Outgoing>& sends) {
    Link& link = links_[static_cast<std::size_t>(peer)];
    for (Outgoing& o : sends) {
      if (o.peer != peer || o.done()) continue;
      while (!o.done() && !link.closed) {
        detail::IoResult r;
        if (o.sent < o.head.size()) {
          r = detail::write_some(link.fd.get(), o.head.data() + o.sent, o.head.size() - o.sent);
        } else {
          std::size_t off = o.sent - o.head.size();
          r = detail::write_some(link.fd.get(), o.payload + off, o.bytes - off);
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

  void read_available(int peer) {
    Link& link = links_[static_cast<std::size_t>(peer)];
    for (;;) {
      FrameReader::State s = link.reader.pump(link.fd.get());
      switch (s) {
        case FrameReader::State::need_more:
          return;
        case FrameReader::State::frame_ready: {
          const detail::FrameHeader& h = link.reader.header();
          bool expected_kind = h.kind == FrameKind::data || h.kind == FrameKind::collective;
          if (h.source != peer || !expected_kind) {
            throw Error(ErrorCode::bootstrap, rank_,
                        "the connection to rank " + std::to_string(peer) +
                            " carried a frame of kind " + std::to_string(static_cast<int>(h.kind)) +
                            " from rank " + std::to_string(h.source) +
                            ", expected data from rank " + std::to_string(peer));
          }
          link.stash.push_back({h.kind, h.tag, std::move(link.reader.payload())});
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

  // Rank 0: accept HELLOs until every other rank has joined, then send each the address table.
  void init_root(const UniqueId& id, const Deadline& deadline) {
    std::uint32_t address = detail::resolve_ipv4(id.host, rank_);
    Fd listener = detail::listen_tcp(address, id.port, listen_backlog, rank_);
    std::vector<std::uint32_t> addresses(static_cast<std::size_t>(size_), address);
    std::vector<std::uint16_t> ports(static_cast<std::size_t>(size_), id.port);

    accept_authenticated(
        listener, deadline, FrameKind::hello, hello_bytes, 1, size_,
        [&](int peer, const std::vector<std::uint8_t>& payload, Fd& fd) {
          int claimed_size =
              static_cast<std::int32_t>(detail::get_u32(payload.data() + token_bytes + 4));
          if (claimed_size != size_) {
            throw Error(ErrorCode::bootstrap, rank_,
                        "rank " + std::to_string(peer) + " says the job has " +
                            std::to_string(claimed_size) + " ranks, rank 0 was told " +
                            std::to_string(size_));
          }
          addresses[static_cast<std::size_t>(peer)] = detail::peer_address(fd.get());
          ports[static_cast<std::size_t>(peer)] = detail::get_u16(payload.data() + token_bytes + 8);
        },
        "HELLO on " + id.host + ":" + std::to_string(id.port));

    std::vector<std::uint8_t> table(static_cast<std::size_t>(size_) * table_entry_bytes);
    for (std::size_t r = 0; r < addresses.size(); ++r) {
      // Addresses stay in network byte order: copy them as bytes.
      std::memcpy(table.data() + r * table_entry_bytes, &addresses[r], 4);
      detail::put_u16(table.data() + r * table_entry_bytes + 4, ports[r]);
    }
    auto frame = detail::make_frame(FrameKind::address_table, 0, 0, table.data(), table.size());
    for (int p = 1; p < size_; ++p) {
      detail::IoResult r = detail::write_all(links_[static_cast<std::size_t>(p)].fd.get(),
                                             frame.data(), frame.size(), deadline);
      if (r.status == IoStatus::timeout) {
        throw Error(ErrorCode::timeout, rank_,
                    "timed out after " + ms_text(timeout_) + " sending the address table to rank " +
                        std::to_string(p));
      }
      if (r.status != IoStatus::ok) throw_lost(p, "init (sending the address table)");
    }
  }

  // Other ranks: HELLO to rank 0, receive the address table, connect to every higher rank and
  // accept every lower one (rank 0 excepted: its HELLO connection is the link).
  void init_member(const UniqueId& id, const Deadline& deadline) {
    std::uint32_t root_address = detail::resolve_ipv4(id.host, rank_);
    Fd root = detail::connect_tcp(root_address, id.port, deadline, rank_, "rank 0 (the root)");
    Fd listener = detail::listen_tcp(detail::local_address(root.get()), 0, listen_backlog, rank_);

    std::vector<std::uint8_t> hello(hello_bytes);
    std::memcpy(hello.data(), token_.data(), token_bytes);
    detail::put_u32(hello.data() + token_bytes, static_cast<std::uint32_t>(rank_));
    detail::put_u32(hello.data() + token_bytes + 4, static_cast<std::uint32_t>(size_));
    detail::put_u16(hello.data() + token_bytes + 8, detail::local_port(listener.get()));
    send_handshake(root, 0, FrameKind::hello, hello, deadline, "HELLO");

    FrameReader reader(static_cast<std::uint64_t>(size_) * table_entry_bytes);
    bool timed_out = false;
    FrameReader::State s = detail::read_frame(root.get(), reader, deadline, &timed_out);
    if (timed_out) {
      throw Error(ErrorCode::timeout, rank_,
                  "timed out after " + ms_text(timeout_) +
                      " waiting for the address table from rank 0 (not every rank has joined)");
    }
    if (s == FrameReader::State::closed || s == FrameReader::State::failed) {
      throw_lost(0,
                 "init (waiting for the address table; rank 0 may have rejected this rank's "
                 "HELLO: check that every rank got the same UniqueId and size)");
    }
    const std::size_t table_bytes = static_cast<std::size_t>(size_) * table_entry_bytes;
    if (s == FrameReader::State::bad_frame || reader.header().kind != FrameKind::address_table ||
        reader.payload().size() != table_bytes) {
      throw Error(ErrorCode::bootstrap, rank_,
                  "rank 0 answered HELLO with a malformed address table (expected " +
                      std::to_string(table_bytes) + " bytes)" +
                      (reader.error().empty() ? std::string() : ": " + reader.error()));
    }
    const std::vector<std::uint8_t>& table = reader.payload();
    links_[0].fd = std::move(root);

    std::vector<std::uint8_t> peer_hello(peer_hello_bytes);
    std::memcpy(peer_hello.data(), token_.data(), token_bytes);
    detail::put_u32(peer_hello.data() + token_bytes, static_cast<std::uint32_t>(rank_));
    for (int p = rank_ + 1; p < size_; ++p) {
      std::uint32_t address = 0;
      std::memcpy(&address, table.data() + static_cast<std::size_t>(p) * table_entry_bytes, 4);
      std::uint16_t port =
          detail::get_u16(table.data() + static_cast<std::size_t>(p) * table_entry_bytes + 4);
      Fd fd = detail::connect_tcp(address, port, deadline, rank_, "rank " + std::to_string(p));
      send_handshake(fd, p, FrameKind::peer_hello, peer_hello, deadline, "mesh HELLO");
      links_[static_cast<std::size_t>(p)].fd = std::move(fd);
    }
    accept_authenticated(
        listener, deadline, FrameKind::peer_hello, peer_hello_bytes, 1, rank_,
        [](int, const std::vector<std::uint8_t>&, Fd&) {},
        "mesh connections on port " + std::to_string(detail::local_port(listener.get())));
  }

  void send_handshake(const Fd& fd, int peer, FrameKind kind, const std::vector<std::uint8_t>& body,
                      const Deadline& deadline, const char* what) {
    auto frame = detail::make_frame(kind, 0, rank_, body.data(), body.size());
    detail::IoResult r = detail::write_all(fd.get(), frame.data(), frame.size(), deadline);
    if (r.status == IoStatus::timeout) {
      throw Error(ErrorCode::timeout, rank_,
                  "timed out after " + ms_text(timeout_) + " sending " + what + " to rank " +
                      std::to_string(peer));
    }
    if (r.status != IoStatus::ok) throw_lost(peer, std::string("init (sending ") + what + ")");
  }

  // Accepts connections on `listener` until ranks [first, last) have each presented a frame of
  // `kind` carrying the job's token and their rank. A connection without the token, or with a
  // garbled, truncated or oversized frame, is dropped and the wait goes on; one with the token
  // that claims an impossible or duplicate rank is a broken job and throws.
  void accept_authenticated(
      const Fd& listener, const Deadline& deadline, FrameKind kind, std::size_t body_bytes,
      int first, int last,
      const std::function<void(int, const std::vector<std::uint8_t>&, Fd&)>& admit,
      const std::string& what) {
    std::deque<Pending> pending;
    int joined = 0;
    const int expected = last - first;
    std::vector<pollfd> fds;
    while (joined < expected) {
      // Checked before every poll, so a stream of intruders cannot stretch it.
      if (deadline.expired()) {
        std::vector<int> absent;
        for (int p = first; p < last; ++p) {
          if (!links_[static_cast<std::size_t>(p)].fd.valid()) absent.push_back(p);
        }
        throw Error(ErrorCode::timeout, rank_,
                    "timed out after " + ms_text(timeout_) + " waiting for " + what +
                        " from rank(s) " + rank_list(absent) + " (" + std::to_string(joined) +
                        " of " + std::to_string(expected) + " arrived)");
      }
      fds.clear();
      fds.push_back({listener.get(), POLLIN, 0});
      for (const Pending& c : pending) fds.push_back({c.fd.get(), POLLIN, 0});
      int n = ::poll(fds.data(), fds.size(), deadline.poll_ms());
      if (n < 0 && errno != EINTR) {
        throw Error(ErrorCode::backend, rank_,
                    "poll() failed waiting for " + what + ": " + std::strerror(errno));
      }
      if (n <= 0) continue;
      // Pending connections before accepting: fds[i + 1] is pending[i] only until then.
      std::vector<bool> drop(pending.size(), false);
      for (std::size_t i = 0; i < pending.size(); ++i) {
        if (fds[i + 1].revents == 0) continue;
        Pending& c = pending[i];
        FrameReader::State s = c.reader.pump(c.fd.get());
        if (s == FrameReader::State::need_more) continue;
        drop[i] = true;
        if (s != FrameReader::State::frame_ready) continue;
        const std::vector<std::uint8_t>& body = c.reader.payload();
        if (c.reader.header().kind != kind || body.size() != body_bytes) continue;
        std::array<std::uint8_t, token_bytes> token{};
        std::memcpy(token.data(), body.data(), token_bytes);
        if (!detail::tokens_equal(token, token_)) continue;
        int peer = static_cast<std::int32_t>(detail::get_u32(body.data() + token_bytes));
        if (peer < first || peer >= last || peer != c.reader.header().source) {
          throw Error(ErrorCode::bootstrap, rank_,
                      "a connection with this job's token claims rank " + std::to_string(peer) +
                          " (frame source " + std::to_string(c.reader.header().source) +
                          "), expected a rank in " + std::to_string(first) + ".." +
                          std::to_string(last - 1));
        }
        Link& link = links_[static_cast<std::size_t>(peer)];
        if (link.fd.valid()) {
          throw Error(ErrorCode::bootstrap, rank_,
                      "two processes claim rank " + std::to_string(peer) +
                          " (check TESSERA_RANK / RANK of every process)");
        }
        admit(peer, body, c.fd);
        link.fd = std::move(c.fd);
        ++joined;
      }
      std::deque<Pending> kept;
      for (std::size_t i = 0; i < pending.size(); ++i) {
        if (!drop[i]) kept.push_back(std::move(pending[i]));
      }
      pending = std::move(kept);
      if (fds[0].revents != 0) {
        for (;;) {
          Fd fd = detail::accept_tcp(listener.get());
          if (!fd.valid()) break;
          if (pending.size() >= max_unauthenticated) pending.pop_front();
          pending.push_back({std::move(fd), FrameReader(body_bytes)});
        }
      }
    }
  }

  int rank_;
  int size_;
  Timeout timeout_;
  std::array<std::uint8_t, token_bytes> token_;
  std::vector<Link> links_;  // indexed by rank; links_[rank_] stays unused
  std::deque<Frame> self_stash_;
  std::uint32_t collective_seq_ = 0;
};

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

long long parse_number(const char* name, const std::string& text, long long lo, long long hi) {
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi) {
    throw Error(ErrorCode::invalid_argument, -1,
                std::string(name) + "=\"" + text + "\": expected an integer in " +
                    std::to_string(lo) + ".." + std::to_string(hi));
  }
  return value;
}

// 64-bit FNV-1a over `text` from `basis`, then a splitmix64 finalizer so every input bit reaches
// every output bit.
std::uint64_t mix_hash(const std::string& text, std::uint64_t basis) {
  std::uint64_t h = basis;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

std::string missing_list(const std::vector<std::pair<const char*, bool>>& vars) {
  std::string out;
  for (const auto& [name, present] : vars) {
    if (present) continue;
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

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
                "tcp bootstrap timeout of " + ms_text(timeout) + ", expected >= 0");
  }
  return std::make_unique<TcpBootstrap>(id, rank, size, timeout);
}

std::unique_ptr<Bootstrap> make_tcp_bootstrap_from_env(Timeout timeout) {
  auto id_text = env("TESSERA_UNIQUE_ID");
  auto rank_text = env("TESSERA_RANK");
  auto size_text = env("TESSERA_SIZE");
  if (id_text || rank_text || size_text) {
    if (!id_text || !rank_text || !size_text) {
      throw Error(ErrorCode::bootstrap, -1,
                  "TESSERA_UNIQUE_ID, TESSERA_RANK and TESSERA_SIZE must be set together; "
                  "missing: " +
                      missing_list({{"TESSERA_UNIQUE_ID", id_text.has_value()},
                                    {"TESSERA_RANK", rank_text.has_value()},
                                    {"TESSERA_SIZE", size_text.has_value()}}));
    }
    UniqueId id = UniqueId::parse(*id_text);
    auto size = static_cast<int>(parse_number("TESSERA_SIZE", *size_text, 1, 1 << 24));
    auto rank = static_cast<int>(parse_number("TESSERA_RANK", *rank_text, 0, size - 1));
    return make_tcp_bootstrap(id, rank, size, timeout);
  }

  auto rank_env = env("RANK");
  auto world_env = env("WORLD_SIZE");
  auto addr_env = env("MASTER_ADDR");
  auto port_env = env("MASTER_PORT");
  std::vector<std::pair<const char*, bool>> torch = {{"RANK", rank_env.has_value()},
                                                     {"WORLD_SIZE", world_env.has_value()},
                                                     {"MASTER_ADDR", addr_env.has_value()},
                                                     {"MASTER_PORT", port_env.has_value()}};
  if (!rank_env || !world_env || !addr_env || !port_env) {
    bool none = !rank_env && !world_env && !addr_env && !port_env;
    throw Error(ErrorCode::bootstrap, -1,
                std::string(none ? "no tcp bootstrap settings in the environment: "
                                 : "incomplete torchrun settings: ") +
                    "set TESSERA_UNIQUE_ID, TESSERA_RANK and TESSERA_SIZE (tessera-run does), "
                    "or RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (torchrun does); missing: " +
                    missing_list(torch));
  }
  auto size = static_cast<int>(parse_number("WORLD_SIZE", *world_env, 1, 1 << 24));
  auto rank = static_cast<int>(parse_number("RANK", *rank_env, 0, size - 1));
  auto master_port = parse_number("MASTER_PORT", *port_env, 1, 65535);
  // torchrun's own store already listens on MASTER_PORT, so Tessera's root takes the next one
  // unless TESSERA_BOOTSTRAP_PORT names another.
  long long port = master_port + 1;
  if (auto own = env("TESSERA_BOOTSTRAP_PORT")) {
    port = parse_number("TESSERA_BOOTSTRAP_PORT", *own, 1, 65535);
  } else if (port > 65535) {
    throw Error(ErrorCode::invalid_argument, -1,
                "MASTER_PORT=" + *port_env +
                    " leaves no port above it for the bootstrap; set TESSERA_BOOTSTRAP_PORT");
  }

  UniqueId id;
  id.host = detail::ipv4_to_string(detail::resolve_ipv4(*addr_env, rank));
  id.port = static_cast<std::uint16_t>(port);
  // Every rank derives the same token; TESSERA_TOKEN adds a secret the run id alone lacks.
  std::string seed = "tessera-tcp";
  seed += '\0';
  seed += env("TORCHELASTIC_RUN_ID").value_or("");
  seed += '\0';
  seed += env("TESSERA_TOKEN").value_or("");
  seed += '\0';
  seed += *addr_env + ":" + *port_env;
  std::uint64_t lo = mix_hash(seed, 0xcbf29ce484222325ULL);
  std::uint64_t hi = mix_hash(seed, 0x84222325cbf29ce4ULL);
  for (int i = 0; i < 8; ++i) {
    id.token[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(lo >> (8 * i));
    id.token[static_cast<std::size_t>(i + 8)] = static_cast<std::uint8_t>(hi >> (8 * i));
  }
  return make_tcp_bootstrap(id, rank, size, timeout);
}

}  // namespace tessera
