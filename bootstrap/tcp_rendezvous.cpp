#include "tcp_rendezvous.hpp"

#include <poll.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>

#include "socket.hpp"
#include "tcp_diagnostics.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

constexpr std::size_t token_bytes = 16;
constexpr std::size_t hello_bytes = token_bytes + 4 + 4 + 2;  // token, rank, size, listen port
constexpr std::size_t peer_hello_bytes = token_bytes + 4;     // token, rank
constexpr std::size_t table_entry_bytes = 4 + 2;              // IPv4 address, listen port
// Connections that have not yet presented a token; beyond this the oldest is dropped.
constexpr std::size_t max_unauthenticated = 256;
constexpr int listen_backlog = 4096;

// A connection accepted during the rendezvous that has not yet presented its HELLO.
struct Pending {
  Fd fd;
  FrameReader reader;
};

// One rank's side of the rendezvous; links() is the mesh once the constructor returns.
class MeshFormation {
 public:
  MeshFormation(const UniqueId& id, int rank, int size, Timeout timeout)
      : rank_(rank), size_(size), timeout_(timeout), token_(id.token), links_(size) {
    Deadline deadline = Deadline::after(timeout_);
    if (size_ == 1) return;
    if (rank_ == 0) {
      init_root(id, deadline);
    } else {
      init_member(id, deadline);
    }
  }

  std::vector<Fd> links() && { return std::move(links_); }

 private:
  // Rank 0: accept HELLOs until every other rank has joined, then send each the address table.
  void init_root(const UniqueId& id, const Deadline& deadline) {
    std::uint32_t address = resolve_ipv4(id.host, rank_);
    Fd listener = listen_tcp(address, id.port, listen_backlog, rank_);
    std::vector<std::uint32_t> addresses(static_cast<std::size_t>(size_), address);
    std::vector<std::uint16_t> ports(static_cast<std::size_t>(size_), id.port);

    accept_authenticated(
        listener, deadline, FrameKind::hello, hello_bytes, 1, size_,
        [&](int peer, const std::vector<std::uint8_t>& payload, Fd& fd) {
          int claimed_size = static_cast<std::int32_t>(get_u32(payload.data() + token_bytes + 4));
          if (claimed_size != size_) {
            throw Error(ErrorCode::bootstrap, rank_,
                        "rank " + std::to_string(peer) + " says the job has " +
                            std::to_string(claimed_size) + " ranks, rank 0 was told " +
                            std::to_string(size_));
          }
          addresses[static_cast<std::size_t>(peer)] = peer_address(fd.get());
          ports[static_cast<std::size_t>(peer)] = get_u16(payload.data() + token_bytes + 8);
        },
        "HELLO on " + id.host + ":" + std::to_string(id.port));

    std::vector<std::uint8_t> table(static_cast<std::size_t>(size_) * table_entry_bytes);
    for (std::size_t r = 0; r < addresses.size(); ++r) {
      // Addresses stay in network byte order: copy them as bytes.
      std::memcpy(table.data() + r * table_entry_bytes, &addresses[r], 4);
      put_u16(table.data() + r * table_entry_bytes + 4, ports[r]);
    }
    auto frame = make_frame(FrameKind::address_table, 0, 0, table.data(), table.size());
    for (int p = 1; p < size_; ++p) {
      IoResult r = write_all(links_[static_cast<std::size_t>(p)].get(), frame.data(), frame.size(),
                             deadline);
      if (r.status == IoStatus::timeout) {
        throw Error(ErrorCode::timeout, rank_,
                    "timed out after " + ms_text(timeout_) + " sending the address table to rank " +
                        std::to_string(p));
      }
      if (r.status != IoStatus::ok) throw_peer_lost(rank_, p, "init (sending the address table)");
    }
  }

  // Other ranks: HELLO to rank 0, receive the address table, connect to every higher rank and
  // accept every lower one (rank 0 excepted: its HELLO connection is the link).
  void init_member(const UniqueId& id, const Deadline& deadline) {
    std::uint32_t root_address = resolve_ipv4(id.host, rank_);
    Fd root = connect_tcp(root_address, id.port, deadline, rank_, "rank 0 (the root)");
    Fd listener = listen_tcp(local_address(root.get()), 0, listen_backlog, rank_);

    std::vector<std::uint8_t> hello(hello_bytes);
    std::memcpy(hello.data(), token_.data(), token_bytes);
    put_u32(hello.data() + token_bytes, static_cast<std::uint32_t>(rank_));
    put_u32(hello.data() + token_bytes + 4, static_cast<std::uint32_t>(size_));
    put_u16(hello.data() + token_bytes + 8, local_port(listener.get()));
    send_handshake(root, 0, FrameKind::hello, hello, deadline, "HELLO");

    FrameReader reader(static_cast<std::uint64_t>(size_) * table_entry_bytes);
    bool timed_out = false;
    FrameReader::State s = read_frame(root.get(), reader, deadline, &timed_out);
    if (timed_out) {
      throw Error(ErrorCode::timeout, rank_,
                  "timed out after " + ms_text(timeout_) +
                      " waiting for the address table from rank 0 (not every rank has joined)");
    }
    if (s == FrameReader::State::closed || s == FrameReader::State::failed) {
      throw_peer_lost(rank_, 0,
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
    links_[0] = std::move(root);

    std::vector<std::uint8_t> peer_hello(peer_hello_bytes);
    std::memcpy(peer_hello.data(), token_.data(), token_bytes);
    put_u32(peer_hello.data() + token_bytes, static_cast<std::uint32_t>(rank_));
    for (int p = rank_ + 1; p < size_; ++p) {
      std::uint32_t address = 0;
      std::memcpy(&address, table.data() + static_cast<std::size_t>(p) * table_entry_bytes, 4);
      std::uint16_t port =
          get_u16(table.data() + static_cast<std::size_t>(p) * table_entry_bytes + 4);
      Fd fd = connect_tcp(address, port, deadline, rank_, "rank " + std::to_string(p));
      send_handshake(fd, p, FrameKind::peer_hello, peer_hello, deadline, "mesh HELLO");
      links_[static_cast<std::size_t>(p)] = std::move(fd);
    }
    accept_authenticated(
        listener, deadline, FrameKind::peer_hello, peer_hello_bytes, 1, rank_,
        [](int, const std::vector<std::uint8_t>&, Fd&) {},
        "mesh connections on port " + std::to_string(local_port(listener.get())));
  }

  void send_handshake(const Fd& fd, int peer, FrameKind kind, const std::vector<std::uint8_t>& body,
                      const Deadline& deadline, const char* what) {
    auto frame = make_frame(kind, 0, rank_, body.data(), body.size());
    IoResult r = write_all(fd.get(), frame.data(), frame.size(), deadline);
    if (r.status == IoStatus::timeout) {
      throw Error(ErrorCode::timeout, rank_,
                  "timed out after " + ms_text(timeout_) + " sending " + what + " to rank " +
                      std::to_string(peer));
    }
    if (r.status != IoStatus::ok)
      throw_peer_lost(rank_, peer, std::string("init (sending ") + what + ")");
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
          if (!links_[static_cast<std::size_t>(p)].valid()) absent.push_back(p);
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
        if (!tokens_equal(token, token_)) continue;
        int peer = static_cast<std::int32_t>(get_u32(body.data() + token_bytes));
        if (peer < first || peer >= last || peer != c.reader.header().source) {
          throw Error(ErrorCode::bootstrap, rank_,
                      "a connection with this job's token claims rank " + std::to_string(peer) +
                          " (frame source " + std::to_string(c.reader.header().source) +
                          "), expected a rank in " + std::to_string(first) + ".." +
                          std::to_string(last - 1));
        }
        Fd& link = links_[static_cast<std::size_t>(peer)];
        if (link.valid()) {
          throw Error(ErrorCode::bootstrap, rank_,
                      "two processes claim rank " + std::to_string(peer) +
                          " (check TESSERA_RANK / RANK of every process)");
        }
        admit(peer, body, c.fd);
        link = std::move(c.fd);
        ++joined;
      }
      std::deque<Pending> kept;
      for (std::size_t i = 0; i < pending.size(); ++i) {
        if (!drop[i]) kept.push_back(std::move(pending[i]));
      }
      pending = std::move(kept);
      if (fds[0].revents != 0) {
        for (;;) {
          Fd fd = accept_tcp(listener.get());
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
  std::vector<Fd> links_;  // indexed by rank; links_[rank_] stays invalid
};

}  // namespace

std::vector<Fd> form_tcp_mesh(const UniqueId& id, int rank, int size, Timeout timeout) {
  return MeshFormation(id, rank, size, timeout).links();
}

}  // namespace tessera::detail
