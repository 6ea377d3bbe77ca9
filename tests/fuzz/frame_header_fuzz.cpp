// libFuzzer target: the tcp bootstrap's frame decoder (bootstrap/socket.hpp) on hostile bytes.
//
// 1. decode_frame_header on the whole input and on its first 24 bytes: never crashes; refuses
//    every size but 24; an accepted header has a known kind, a non-negative source, a length
//    within max_frame_bytes, and encodes back to exactly the bytes it came from.
// 2. The same bytes as a byte stream on a socket, read by FrameReader with a small per-connection
//    limit: every frame it hands out has the length its header claims and no more than the
//    limit, the payload never grows past the header's length, and it stops (closed or
//    bad_frame) once the stream ends, having read no more bytes than were sent.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "bootstrap/socket.hpp"
#include "fuzz/fuzz_check.hpp"

namespace {

using tessera::detail::DecodedFrameHeader;
using tessera::detail::frame_header_bytes;
using tessera::detail::FrameKind;
using tessera::detail::FrameReader;

// Small enough that fuzzed headers often exceed it, large enough for real payloads.
constexpr std::uint64_t kConnectionLimit = 512;

void check_decoded(const DecodedFrameHeader& d, const std::uint8_t* bytes, std::size_t size) {
  if (size != frame_header_bytes) {
    TESSERA_FUZZ_CHECK(!d.header, "a %zu-byte header was accepted", size);
  }
  if (!d.header) {
    TESSERA_FUZZ_CHECK(!d.error.empty(), "a refused header carries no reason");
    return;
  }
  const auto& h = *d.header;
  const auto kind = static_cast<unsigned>(h.kind);
  TESSERA_FUZZ_CHECK(kind >= static_cast<unsigned>(FrameKind::hello) &&
                         kind <= static_cast<unsigned>(FrameKind::collective),
                     "accepted kind %u", kind);
  TESSERA_FUZZ_CHECK(h.source >= 0, "accepted source %d", h.source);
  TESSERA_FUZZ_CHECK(h.length <= tessera::detail::max_frame_bytes,
                     "accepted length %llu over the cap",
                     static_cast<unsigned long long>(h.length));
  const auto encoded = tessera::detail::encode_frame_header(h);
  TESSERA_FUZZ_CHECK(std::memcmp(encoded.data(), bytes, frame_header_bytes) == 0,
                     "the accepted header does not encode back to its bytes");
}

// Feeds `bytes` through a socket pair into a FrameReader, as a peer's connection would.
void check_stream(const std::uint8_t* bytes, std::size_t size) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) return;
  tessera::detail::Fd reader_end(fds[0]);
  tessera::detail::Fd writer_end(fds[1]);
  // libFuzzer's inputs (-max_len) are far below a local socket's buffer, so one write suffices.
  const auto written = tessera::detail::write_some(writer_end.get(), bytes, size);
  if (written.status != tessera::detail::IoStatus::ok || written.bytes != size) return;
  writer_end.reset();

  FrameReader reader(kConnectionLimit);
  std::uint64_t consumed = 0;
  for (;;) {
    const auto state = reader.pump(reader_end.get());
    if (state == FrameReader::State::frame_ready) {
      const auto& h = reader.header();
      TESSERA_FUZZ_CHECK(h.length <= kConnectionLimit, "a %llu-byte frame passed the limit",
                         static_cast<unsigned long long>(h.length));
      TESSERA_FUZZ_CHECK(reader.payload().size() == h.length,
                         "payload of %zu bytes for a %llu-byte frame", reader.payload().size(),
                         static_cast<unsigned long long>(h.length));
      consumed += frame_header_bytes + h.length;
      TESSERA_FUZZ_CHECK(consumed <= size, "read %llu bytes of a %zu-byte stream",
                         static_cast<unsigned long long>(consumed), size);
      reader.next();
      continue;
    }
    TESSERA_FUZZ_CHECK(state != FrameReader::State::need_more,
                       "the reader waits for more bytes on a closed stream");
    TESSERA_FUZZ_CHECK(state != FrameReader::State::failed, "socket error %d", reader.sys_error());
    if (state == FrameReader::State::bad_frame) {
      TESSERA_FUZZ_CHECK(!reader.error().empty(), "a bad frame carries no reason");
    }
    TESSERA_FUZZ_CHECK(reader.payload().size() <= kConnectionLimit, "payload grew to %zu bytes",
                       reader.payload().size());
    return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check_decoded(tessera::detail::decode_frame_header(data, size), data, size);
  if (size >= frame_header_bytes) {
    check_decoded(tessera::detail::decode_frame_header(data, frame_header_bytes), data,
                  frame_header_bytes);
  }
  check_stream(data, size);
  return 0;
}
