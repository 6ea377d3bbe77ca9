#include <cerrno>
#include <cstdlib>
#include <string>

#include "runtime/log.hpp"
#include "tessera/runtime.hpp"

namespace tessera {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return (value != nullptr && *value != '\0') ? value : nullptr;
}

Error bad_env(const char* name, const std::string& expected, const char* seen) {
  return Error(ErrorCode::invalid_argument, -1,
               std::string(name) + ": expected " + expected + ", saw '" + seen + "'");
}

}  // namespace

const char* to_string(Backend backend) noexcept {
  switch (backend) {
    case Backend::automatic:
      return "auto";
    case Backend::host:
      return "host";
    case Backend::cuda:
      return "cuda";
    case Backend::hip:
      return "hip";
  }
  return "?";
}

const char* to_string(BootstrapKind kind) noexcept {
  switch (kind) {
    case BootstrapKind::automatic:
      return "auto";
    case BootstrapKind::single:
      return "single";
    case BootstrapKind::threads:
      return "threads";
    case BootstrapKind::mpi:
      return "mpi";
    case BootstrapKind::tcp:
      return "tcp";
  }
  return "?";
}

std::size_t parse_size(const std::string& text) {
  const auto fail = [&] {
    return Error(ErrorCode::invalid_argument, -1,
                 "expected a byte count such as 4096, 64K, 256M or 1G, saw '" + text + "'");
  };
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) throw fail();
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0) throw fail();
  std::string suffix(end);
  unsigned shift = 0;
  if (suffix == "" || suffix == "B" || suffix == "b") {
    shift = 0;
  } else if (suffix == "K" || suffix == "k" || suffix == "KiB") {
    shift = 10;
  } else if (suffix == "M" || suffix == "m" || suffix == "MiB") {
    shift = 20;
  } else if (suffix == "G" || suffix == "g" || suffix == "GiB") {
    shift = 30;
  } else {
    throw fail();
  }
  if (shift > 0 && value > (~0ull >> shift)) throw fail();
  return static_cast<std::size_t>(value << shift);
}

Options Options::from_env() {
  Options o;
  if (const char* v = env("TESSERA_BACKEND")) {
    std::string s(v);
    if (s == "host")
      o.backend = Backend::host;
    else if (s == "cuda")
      o.backend = Backend::cuda;
    else if (s == "hip")
      o.backend = Backend::hip;
    else if (s == "auto")
      o.backend = Backend::automatic;
    else
      throw bad_env("TESSERA_BACKEND", "host, cuda, hip or auto", v);
  }
  if (const char* v = env("TESSERA_BOOTSTRAP")) {
    std::string s(v);
    if (s == "mpi")
      o.bootstrap_kind = BootstrapKind::mpi;
    else if (s == "tcp")
      o.bootstrap_kind = BootstrapKind::tcp;
    else if (s == "single")
      o.bootstrap_kind = BootstrapKind::single;
    else if (s == "auto")
      o.bootstrap_kind = BootstrapKind::automatic;
    else
      throw bad_env("TESSERA_BOOTSTRAP", "mpi, tcp, single or auto", v);
  }
  if (const char* v = env("TESSERA_HEAP_SIZE")) {
    try {
      o.heap_size = parse_size(v);
    } catch (const Error&) {
      throw bad_env("TESSERA_HEAP_SIZE", "a byte count such as 64M or 1G", v);
    }
    if (o.heap_size == 0) throw bad_env("TESSERA_HEAP_SIZE", "a non-zero size", v);
  }
  if (const char* v = env("TESSERA_DEBUG")) o.log_level = detail::parse_log_level(v);
  if (const char* v = env("TESSERA_NODE_ID")) o.node_id = v;
  if (const char* v = env("TESSERA_TIMEOUT")) {
    char* end = nullptr;
    errno = 0;
    double seconds = std::strtod(v, &end);
    if (errno != 0 || *end != '\0' || !(seconds >= 0) || seconds > 1e9)
      throw bad_env("TESSERA_TIMEOUT", "seconds (0 = wait forever)", v);
    o.timeout = std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
  }
  if (const char* v = env("TESSERA_P2P")) {
    std::string s(v);
    if (s == "1" || s == "on" || s == "yes")
      o.p2p = true;
    else if (s == "0" || s == "off" || s == "no")
      o.p2p = false;
    else
      throw bad_env("TESSERA_P2P", "0 or 1", v);
  }
  if (const char* v = env("TESSERA_FABRIC")) {
    std::string s(v);
    if (s == "auto")
      o.fabric = FabricMode::automatic;
    else if (s == "1" || s == "on")
      o.fabric = FabricMode::on;
    else if (s == "0" || s == "off")
      o.fabric = FabricMode::off;
    else
      throw bad_env("TESSERA_FABRIC", "auto, on or off", v);
  }
  if (const char* v = env("TESSERA_FABRIC_PROVIDER")) o.fabric_provider = v;
  if (const char* v = env("TESSERA_CHECK")) {
    std::string s(v);
    if (s == "1" || s == "on" || s == "yes")
      o.checked = true;
    else if (s == "0" || s == "off" || s == "no")
      o.checked = false;
    else
      throw bad_env("TESSERA_CHECK", "0 or 1", v);
  }
  return o;
}

}  // namespace tessera
