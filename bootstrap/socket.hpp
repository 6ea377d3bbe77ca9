// Sockets for the tcp bootstrap: deadlines, IPv4 listen/connect, and framed messages
// whose header is validated before a single payload byte is trusted.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fd.hpp"
#include "tessera/bootstrap.hpp"

namespace tessera::detail {

// A point in time every blocking step of one call must finish by; a zero timeout never expires.
class Deadline {
 public:
  static Deadline after(Timeout timeout);
  bool unbounded() const { return unbounded_; }
  bool expired() const;
  // Milliseconds to hand to poll(): -1 when unbounded, else the time left rounded up.
  int poll_ms() const;

 private:
  bool unbounded_ = true;
  std::chrono::steady_clock::time_point at_{};
};

// What a read or write ended with. `error` is the errno of a failure.
enum class IoStatus { ok, would_block, timeout, closed, failed };
struct IoResult {
  IoStatus status = IoStatus::ok;
  std::size_t bytes = 0;
  int error = 0;
};

// One non-blocking read or write (EINTR retried; writes never raise SIGPIPE). A peer that closed
// or reset the connection yields IoStatus::closed.
IoResult read_some(int fd, void* data, std::size_t bytes);
IoResult write_some(int fd, const void* data, std::size_t bytes);
// All `bytes`, waiting with poll() until the deadline.
IoResult write_all(int fd, const void* data, std::size_t bytes, const Deadline& deadline);

// Frames: a fixed 24-byte little-endian header, then `length` payload bytes.
inline constexpr std::uint32_t frame_magic = 0x53534554;  // "TESS"
inline constexpr std::uint16_t frame_version = 1;
inline constexpr std::size_t frame_header_bytes = 24;
// No frame is ever longer; a header claiming more is refused before anything is allocated.
inline constexpr std::uint64_t max_frame_bytes = std::uint64_t{1} << 30;

enum class FrameKind : std::uint16_t {
  hello = 1,          // rank -> rank 0: token, rank, size, listen port
  address_table = 2,  // rank 0 -> rank: every rank's IPv4 address and listen port
  peer_hello = 3,     // lower rank -> higher rank when the mesh forms: token, rank
  data = 4,           // send/recv payload; tag is the user's tag
  collective = 5,     // allgather/barrier payload; tag is the collective's sequence number
};

struct FrameHeader {
  FrameKind kind = FrameKind::data;
  std::int32_t tag = 0;
  std::int32_t source = 0;  // the sending rank
  std::uint64_t length = 0;
};

// The header, or why these bytes are not one.
struct DecodedFrameHeader {
  std::optional<FrameHeader> header;
  std::string error;
};

std::array<std::uint8_t, frame_header_bytes> encode_frame_header(const FrameHeader& header);
// Pure: checks size, magic, version, kind, source and the length cap. Never throws.
DecodedFrameHeader decode_frame_header(const std::uint8_t* bytes, std::size_t size);

// Reads one frame at a time from a non-blocking socket, never past the frame's end, growing the
// payload only as bytes arrive (a header that lies about its length costs nothing).
class FrameReader {
 public:
  enum class State { need_more, frame_ready, closed, failed, bad_frame };

  explicit FrameReader(std::uint64_t max_payload) : max_payload_(max_payload) {}
  // Reads what the socket has until it would block or a frame is complete.
  State pump(int fd);
  // Valid after pump() returned frame_ready; next() starts the following frame.
  const FrameHeader& header() const { return header_; }
  std::vector<std::uint8_t>& payload() { return payload_; }
  void next();
  // After bad_frame: what was wrong. After failed: the errno.
  const std::string& error() const { return error_; }
  int sys_error() const { return sys_error_; }
  // True when some bytes of an unfinished frame were read.
  bool mid_frame() const { return header_got_ > 0; }

 private:
  std::uint64_t max_payload_;
  std::array<std::uint8_t, frame_header_bytes> header_bytes_{};
  std::size_t header_got_ = 0;
  bool have_header_ = false;
  FrameHeader header_;
  std::vector<std::uint8_t> payload_;
  std::size_t payload_got_ = 0;
  std::string error_;
  int sys_error_ = 0;
};

// Waits up to the deadline for one whole frame on a non-blocking socket.
FrameReader::State read_frame(int fd, FrameReader& reader, const Deadline& deadline,
                              bool* timed_out);

// A frame's header and payload as one byte string ready to write.
std::vector<std::uint8_t> make_frame(FrameKind kind, std::int32_t tag, std::int32_t source,
                                     const void* payload, std::size_t bytes);

// IPv4 in network byte order. `host` is numeric or a name to resolve (first IPv4 address);
// throws Error(bootstrap, pe) when it is neither.
std::uint32_t resolve_ipv4(const std::string& host, int pe);
std::string ipv4_to_string(std::uint32_t address);

// A non-blocking listening socket on address:port (port 0: the OS picks one).
Fd listen_tcp(std::uint32_t address, std::uint16_t port, int backlog, int pe);
// The local address and port of a socket.
std::uint32_t local_address(int fd);
std::uint16_t local_port(int fd);
std::uint32_t peer_address(int fd);
// A non-blocking connected socket; connection refusals are retried with backoff until the
// deadline. Throws Error(timeout, pe) naming `what` past it, Error(bootstrap, pe) on other errors.
Fd connect_tcp(std::uint32_t address, std::uint16_t port, const Deadline& deadline, int pe,
               const std::string& what);
// An accepted connection (non-blocking), or an invalid Fd when none is pending.
Fd accept_tcp(int listen_fd);

// Equal without leaking where the first difference is.
bool tokens_equal(const std::array<std::uint8_t, 16>& a, const std::array<std::uint8_t, 16>& b);

// Little-endian helpers for payloads.
void put_u16(std::uint8_t* p, std::uint16_t v);
void put_u32(std::uint8_t* p, std::uint32_t v);
std::uint16_t get_u16(const std::uint8_t* p);
std::uint32_t get_u32(const std::uint8_t* p);

}  // namespace tessera::detail
