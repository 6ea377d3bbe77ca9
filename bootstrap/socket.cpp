#include "socket.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

using Clock = std::chrono::steady_clock;

std::string errno_text(int err) { return std::string(std::strerror(err)); }

Fd new_tcp_socket(int pe) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) {
    throw Error(ErrorCode::backend, pe, "cannot create a bootstrap socket: " + errno_text(errno));
  }
  return fd;
}

sockaddr_in make_sockaddr(std::uint32_t address, std::uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = address;
  sa.sin_port = htons(port);
  return sa;
}

std::string endpoint(std::uint32_t address, std::uint16_t port) {
  return ipv4_to_string(address) + ":" + std::to_string(port);
}

bool wait_fd(int fd, short events, const Deadline& deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, deadline.poll_ms());
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // let the next I/O call report the error
    if (n == 0 && deadline.expired()) return false;
  }
}

}  // namespace

Deadline Deadline::after(Timeout timeout) {
  Deadline d;
  if (timeout.count() > 0) {
    d.unbounded_ = false;
    d.at_ = Clock::now() + timeout;
  }
  return d;
}

bool Deadline::expired() const { return !unbounded_ && Clock::now() >= at_; }

int Deadline::poll_ms() const {
  if (unbounded_) return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(at_ - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

IoResult read_some(int fd, void* data, std::size_t bytes) {
  for (;;) {
    ssize_t n = ::recv(fd, data, bytes, 0);
    if (n > 0) return {IoStatus::ok, static_cast<std::size_t>(n), 0};
    if (n == 0) return {IoStatus::closed, 0, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoStatus::would_block, 0, 0};
    if (errno == ECONNRESET || errno == EPIPE || errno == ETIMEDOUT) {
      return {IoStatus::closed, 0, errno};
    }
    return {IoStatus::failed, 0, errno};
  }
}

IoResult write_some(int fd, const void* data, std::size_t bytes) {
  for (;;) {
    ssize_t n = ::send(fd, data, bytes, MSG_NOSIGNAL);
    if (n >= 0) return {IoStatus::ok, static_cast<std::size_t>(n), 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {IoStatus::would_block, 0, 0};
    if (errno == ECONNRESET || errno == EPIPE || errno == ETIMEDOUT) {
      return {IoStatus::closed, 0, errno};
    }
    return {IoStatus::failed, 0, errno};
  }
}

IoResult write_all(int fd, const void* data, std::size_t bytes, const Deadline& deadline) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::size_t done = 0;
  while (done < bytes) {
    IoResult r = write_some(fd, p + done, bytes - done);
    if (r.status == IoStatus::ok) {
      done += r.bytes;
      continue;
    }
    if (r.status != IoStatus::would_block) return {r.status, done, r.error};
    if (!wait_fd(fd, POLLOUT, deadline)) return {IoStatus::timeout, done, 0};
  }
  return {IoStatus::ok, done, 0};
}

void put_u16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}

void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint16_t get_u16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

std::uint32_t get_u32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{p[i]} << (8 * i);
  return v;
}

std::array<std::uint8_t, frame_header_bytes> encode_frame_header(const FrameHeader& header) {
  std::array<std::uint8_t, frame_header_bytes> b{};
  put_u32(b.data(), frame_magic);
  put_u16(b.data() + 4, static_cast<std::uint16_t>(header.kind));
  put_u16(b.data() + 6, frame_version);
  put_u32(b.data() + 8, static_cast<std::uint32_t>(header.tag));
  put_u32(b.data() + 12, static_cast<std::uint32_t>(header.source));
  put_u32(b.data() + 16, static_cast<std::uint32_t>(header.length));
  put_u32(b.data() + 20, static_cast<std::uint32_t>(header.length >> 32));
  return b;
}

DecodedFrameHeader decode_frame_header(const std::uint8_t* bytes, std::size_t size) {
  DecodedFrameHeader out;
  if (bytes == nullptr || size != frame_header_bytes) {
    out.error = "frame header of " + std::to_string(size) + " bytes, expected " +
                std::to_string(frame_header_bytes);
    return out;
  }
  std::uint32_t magic = get_u32(bytes);
  if (magic != frame_magic) {
    out.error =
        "bad frame magic " + std::to_string(magic) + ", expected " + std::to_string(frame_magic);
    return out;
  }
  std::uint16_t kind = get_u16(bytes + 4);
  if (kind < static_cast<std::uint16_t>(FrameKind::hello) ||
      kind > static_cast<std::uint16_t>(FrameKind::collective)) {
    out.error = "unknown frame kind " + std::to_string(kind);
    return out;
  }
  std::uint16_t version = get_u16(bytes + 6);
  if (version != frame_version) {
    out.error =
        "frame version " + std::to_string(version) + ", expected " + std::to_string(frame_version);
    return out;
  }
  auto source = static_cast<std::int32_t>(get_u32(bytes + 12));
  if (source < 0) {
    out.error = "negative source rank " + std::to_string(source);
    return out;
  }
  std::uint64_t length = get_u32(bytes + 16) | (std::uint64_t{get_u32(bytes + 20)} << 32);
  if (length > max_frame_bytes) {
    out.error = "frame length " + std::to_string(length) + " exceeds the cap of " +
                std::to_string(max_frame_bytes);
    return out;
  }
  FrameHeader h;
  h.kind = static_cast<FrameKind>(kind);
  h.tag = static_cast<std::int32_t>(get_u32(bytes + 8));
  h.source = source;
  h.length = length;
  out.header = h;
  return out;
}

FrameReader::State FrameReader::pump(int fd) {
  for (;;) {
    if (!have_header_) {
      IoResult r =
          read_some(fd, header_bytes_.data() + header_got_, frame_header_bytes - header_got_);
      if (r.status == IoStatus::would_block) return State::need_more;
      if (r.status == IoStatus::closed) return State::closed;
      if (r.status != IoStatus::ok) {
        sys_error_ = r.error;
        return State::failed;
      }
      header_got_ += r.bytes;
      if (header_got_ < frame_header_bytes) continue;
      DecodedFrameHeader d = decode_frame_header(header_bytes_.data(), frame_header_bytes);
      if (!d.header) {
        error_ = d.error;
        return State::bad_frame;
      }
      if (d.header->length > max_payload_) {
        error_ = "frame length " + std::to_string(d.header->length) +
                 " exceeds this connection's limit of " + std::to_string(max_payload_);
        return State::bad_frame;
      }
      header_ = *d.header;
      have_header_ = true;
      payload_.clear();
      payload_got_ = 0;
    }
    if (payload_got_ == header_.length) return State::frame_ready;
    if (payload_.size() == payload_got_) {
      // Grow geometrically as bytes arrive, never straight to what the header claims.
      std::size_t grown = std::max<std::size_t>(payload_.size() * 2, 64 * 1024);
      payload_.resize(std::min<std::size_t>(header_.length, grown));
    }
    IoResult r = read_some(fd, payload_.data() + payload_got_, payload_.size() - payload_got_);
    if (r.status == IoStatus::would_block) return State::need_more;
    if (r.status == IoStatus::closed) return State::closed;
    if (r.status != IoStatus::ok) {
      sys_error_ = r.error;
      return State::failed;
    }
    payload_got_ += r.bytes;
  }
}

void FrameReader::next() {
  header_got_ = 0;
  have_header_ = false;
  payload_.clear();
  payload_got_ = 0;
}

FrameReader::State read_frame(int fd, FrameReader& reader, const Deadline& deadline,
                              bool* timed_out) {
  *timed_out = false;
  for (;;) {
    FrameReader::State s = reader.pump(fd);
    if (s != FrameReader::State::need_more) return s;
    if (!wait_fd(fd, POLLIN, deadline)) {
      *timed_out = true;
      return s;
    }
  }
}

std::vector<std::uint8_t> make_frame(FrameKind kind, std::int32_t tag, std::int32_t source,
                                     const void* payload, std::size_t bytes) {
  FrameHeader h{kind, tag, source, bytes};
  auto head = encode_frame_header(h);
  std::vector<std::uint8_t> frame(frame_header_bytes + bytes);
  std::memcpy(frame.data(), head.data(), head.size());
  if (bytes > 0) std::memcpy(frame.data() + frame_header_bytes, payload, bytes);
  return frame;
}

std::uint32_t resolve_ipv4(const std::string& host, int pe) {
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) == 1) return a.s_addr;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    throw Error(ErrorCode::bootstrap, pe,
                "cannot resolve bootstrap host \"" + host + "\" to an IPv4 address: " +
                    (rc != 0 ? std::string(::gai_strerror(rc)) : std::string("no address")));
  }
  std::uint32_t out = reinterpret_cast<const sockaddr_in*>(res->ai_addr)->sin_addr.s_addr;
  ::freeaddrinfo(res);
  return out;
}

std::string ipv4_to_string(std::uint32_t address) {
  in_addr a{};
  a.s_addr = address;
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a, text, sizeof text);
  return text;
}

Fd listen_tcp(std::uint32_t address, std::uint16_t port, int backlog, int pe) {
  Fd fd = new_tcp_socket(pe);
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa = make_sockaddr(address, port);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    throw Error(ErrorCode::bootstrap, pe,
                "cannot bind the bootstrap listener to " + endpoint(address, port) + ": " +
                    errno_text(errno));
  }
  if (::listen(fd.get(), backlog) != 0) {
    throw Error(ErrorCode::bootstrap, pe,
                "cannot listen on " + endpoint(address, port) + ": " + errno_text(errno));
  }
  return fd;
}

std::uint32_t local_address(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return sa.sin_addr.s_addr;
}

std::uint16_t local_port(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return ntohs(sa.sin_port);
}

std::uint32_t peer_address(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  ::getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return sa.sin_addr.s_addr;
}

Fd connect_tcp(std::uint32_t address, std::uint16_t port, const Deadline& deadline, int pe,
               const std::string& what) {
  auto backoff = std::chrono::milliseconds(1);
  int last_error = 0;
  for (;;) {
    Fd fd = new_tcp_socket(pe);
    sockaddr_in sa = make_sockaddr(address, port);
    int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
    int err = rc == 0 ? 0 : errno;
    if (rc != 0 && (err == EINPROGRESS || err == EINTR)) {
      if (wait_fd(fd.get(), POLLOUT, deadline)) {
        socklen_t len = sizeof err;
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      } else {
        err = ETIMEDOUT;
      }
    }
    if (err == 0) {
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    last_error = err;
    bool retry = err == ECONNREFUSED || err == ECONNRESET || err == ETIMEDOUT ||
                 err == EHOSTUNREACH || err == ENETUNREACH || err == EAGAIN;
    if (!retry) {
      throw Error(
          ErrorCode::bootstrap, pe,
          "cannot connect to " + what + " at " + endpoint(address, port) + ": " + errno_text(err));
    }
    if (deadline.expired()) break;
    // The listener may not be up yet: back off, never past the deadline.
    auto pause = backoff;
    if (!deadline.unbounded()) {
      pause = std::min(pause, std::chrono::milliseconds(std::max(deadline.poll_ms(), 0)));
    }
    std::this_thread::sleep_for(pause);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(100));
    if (deadline.expired()) break;
  }
  throw Error(ErrorCode::timeout, pe,
              "timed out connecting to " + what + " at " + endpoint(address, port) +
                  " (last error: " + errno_text(last_error) + ")");
}

Fd accept_tcp(int listen_fd) {
  for (;;) {
    Fd fd(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (fd.valid()) {
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    return Fd();
  }
}

bool tokens_equal(const std::array<std::uint8_t, 16>& a, const std::array<std::uint8_t, 16>& b) {
  std::uint8_t diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<std::uint8_t>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace tessera::detail
