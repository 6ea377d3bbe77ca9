#include <arpa/inet.h>
#include <sys/random.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "socket.hpp"
#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

std::array<std::uint8_t, 16> random_token() {
  std::array<std::uint8_t, 16> token{};
  std::size_t got = 0;
  while (got < token.size()) {
    ssize_t n = ::getrandom(token.data() + got, token.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(
          ErrorCode::backend, -1,
          std::string("getrandom() failed while making a UniqueId token: ") + std::strerror(errno));
    }
    got += static_cast<std::size_t>(n);
  }
  return token;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

[[noreturn]] void malformed(std::string_view text, const std::string& why) {
  throw Error(ErrorCode::invalid_argument, -1,
              "UniqueId \"" + std::string(text.substr(0, 128)) +
                  "\" is malformed: expected \"host:port:token\" with a numeric IPv4 host, a "
                  "port in 1..65535 and a 32-hex-digit token; " +
                  why);
}

}  // namespace

UniqueId UniqueId::create(const std::string& host) {
  std::string chosen = host;
  if (chosen.empty()) {
    const char* env = std::getenv("TESSERA_BOOTSTRAP_ADDR");
    chosen = (env != nullptr && *env != '\0') ? env : "127.0.0.1";
  }
  UniqueId id;
  std::uint32_t address = detail::resolve_ipv4(chosen, -1);
  id.host = detail::ipv4_to_string(address);
  {
    // Reserve-and-release: the port is free now; rank 0 binds it again with SO_REUSEADDR.
    detail::Fd probe = detail::listen_tcp(address, 0, 1, -1);
    id.port = detail::local_port(probe.get());
  }
  id.token = random_token();
  return id;
}

std::string UniqueId::to_string() const {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out = host + ":" + std::to_string(port) + ":";
  for (std::uint8_t b : token) {
    out += digits[b >> 4];
    out += digits[b & 0xf];
  }
  return out;
}

UniqueId UniqueId::parse(std::string_view text) {
  std::size_t first = text.find(':');
  std::size_t second = first == std::string_view::npos ? first : text.find(':', first + 1);
  if (second == std::string_view::npos || text.find(':', second + 1) != std::string_view::npos) {
    malformed(text, "it does not have exactly three ':'-separated fields");
  }
  std::string_view host = text.substr(0, first);
  std::string_view port = text.substr(first + 1, second - first - 1);
  std::string_view token = text.substr(second + 1);

  UniqueId id;
  id.host = std::string(host);
  in_addr parsed{};
  if (host.empty() || ::inet_pton(AF_INET, id.host.c_str(), &parsed) != 1) {
    malformed(text, "host \"" + id.host + "\" is not a numeric IPv4 address");
  }

  unsigned value = 0;
  bool digits_only = !port.empty() && port.size() <= 5 &&
                     port.find_first_not_of("0123456789") == std::string_view::npos;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (!digits_only || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535) {
    malformed(text, "port \"" + std::string(port) + "\" is not a number in 1..65535");
  }
  id.port = static_cast<std::uint16_t>(value);

  if (token.size() != 2 * id.token.size()) {
    malformed(text, "token has " + std::to_string(token.size()) + " characters");
  }
  for (std::size_t i = 0; i < id.token.size(); ++i) {
    int hi = hex_value(token[2 * i]);
    int lo = hex_value(token[2 * i + 1]);
    if (hi < 0 || lo < 0) malformed(text, "token has a character that is not a hex digit");
    id.token[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return id;
}

}  // namespace tessera
