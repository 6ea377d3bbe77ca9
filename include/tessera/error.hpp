// Typed errors of the host API. Device code never throws; see DESIGN §8.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

// What kind of failure an Error reports. Values are stable (the C layer returns them negated).
enum class ErrorCode : int {
  invalid_argument = 1,  // a caller passed something the API cannot accept
  out_of_memory = 2,     // the symmetric heap (or host memory) cannot satisfy a request
  timeout = 3,           // a bounded wait expired (TESSERA_TIMEOUT)
  peer_lost = 4,         // a peer PE died or closed its connection
  bootstrap = 5,         // the bootstrap could not form or run the job
  transport = 6,         // a peer cannot be reached by the transport asked for
  backend = 7,           // the OS or GPU runtime refused an operation
  internal = 8,          // a broken invariant inside Tessera
};

// Name of a code, e.g. "OutOfMemory".
const char* to_string(ErrorCode code) noexcept;

// The one exception type of the host API. what() reads "tessera [PE p] Code: message".
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, int pe, const std::string& message);

  ErrorCode code() const noexcept { return code_; }
  // The PE that raised the error, or -1 when it is not known (before init).
  int pe() const noexcept { return pe_; }
  // The message without the "tessera [PE p] Code:" prefix.
  const std::string& message() const noexcept { return message_; }

 private:
  ErrorCode code_;
  int pe_;
  std::string message_;
};

}  // namespace tessera
