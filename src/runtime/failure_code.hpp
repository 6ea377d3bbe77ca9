// The tessera::ErrorCode a device-side failure becomes on the host: the launcher's (Stream) and
// the network proxy's one mapping.
#pragma once

#include "tessera/device/failure.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {

inline ErrorCode error_code(device::FailureCode code) {
  switch (code) {
    case device::FailureCode::timeout:
      return ErrorCode::timeout;
    case device::FailureCode::invalid_argument:
      return ErrorCode::invalid_argument;
    case device::FailureCode::transport:
      return ErrorCode::transport;
    case device::FailureCode::peer_lost:
      return ErrorCode::peer_lost;
  }
  return ErrorCode::internal;
}

}  // namespace tessera::detail
