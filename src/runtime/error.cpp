#include "tessera/error.hpp"

namespace tessera {
namespace {

std::string format(ErrorCode code, int pe, const std::string& message) {
  std::string out = "tessera ";
  if (pe >= 0) out += "[PE " + std::to_string(pe) + "] ";
  out += to_string(code);
  out += ": ";
  out += message;
  return out;
}

}  // namespace

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_argument:
      return "InvalidArgument";
    case ErrorCode::out_of_memory:
      return "OutOfMemory";
    case ErrorCode::timeout:
      return "Timeout";
    case ErrorCode::peer_lost:
      return "PeerLost";
    case ErrorCode::bootstrap:
      return "Bootstrap";
    case ErrorCode::transport:
      return "Transport";
    case ErrorCode::backend:
      return "Backend";
    case ErrorCode::internal:
      return "Internal";
  }
  return "Unknown";
}

Error::Error(ErrorCode code, int pe, const std::string& message)
    : std::runtime_error(format(code, pe, message)), code_(code), pe_(pe), message_(message) {}

}  // namespace tessera
