// The tcp bootstrap from the environment: the variables tessera-run sets (TESSERA_UNIQUE_ID,
// TESSERA_RANK, TESSERA_SIZE), else torchrun's (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), from
// which every rank derives the same UniqueId without exchanging it.
#include <charconv>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include "socket.hpp"
#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

namespace tessera {
namespace {

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
