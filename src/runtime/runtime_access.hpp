// How the library's own code reaches the state behind a Runtime (RuntimeImpl), which the public
// header keeps private. Internal: ops do not use it; they go through op_support.hpp.
#pragma once

#include <memory>

#include "tessera/error.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

struct RuntimeAccess {
  // Throws Error(invalid_argument) for an empty (finalized, or never initialized) Runtime.
  static RuntimeImpl& impl(const Runtime& rt) {
    if (!rt.impl_) throw Error(ErrorCode::invalid_argument, -1, "the Runtime is not initialized");
    return *rt.impl_;
  }
};

}  // namespace tessera::detail
