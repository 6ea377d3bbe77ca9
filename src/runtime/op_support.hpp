// What the fused ops' host launchers (src/ops) need from a Runtime beyond its public API: the
// heap block around a pointer, a place in the collective-call sequence, and per-Runtime state.
// Internal; defined in op_support.cpp.
#pragma once

#include <cstddef>
#include <string_view>

#include "runtime/op_cache.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"

namespace tessera::detail {

// Bytes from `p` to the end of the live heap block that contains it; 0 when no live block does
// (outside the heap, or freed).
std::size_t bytes_left_in_block(Runtime& rt, const void* p);

// Collective: this PE's next collective call is the op call `call` (as errors name it: "ops::
// MoeBuffer creation"). Throws Error(invalid_argument) on every PE, naming the call each PE made,
// when some PE makes another collective call (a malloc, a barrier, another op); Error(peer_lost)
// first when the job is aborting. `what` prefixes the message ("MoeBuffer").
void check_op_call(Runtime& rt, std::string_view call, const char* what);

// Throws Error(invalid_argument) when `stream` is capturing (Stream::begin_capture): the call of
// op `what` has to do `why` on the host first (a collective agreement check, an allocation), so
// it cannot be recorded. The message names the op, the reason, and the remedy: make the same
// call once before the capture begins; later calls of it are captured.
void refuse_capture(const Stream& stream, const char* what, std::string_view why);

// The Runtime's op cache: state an op keeps between calls, destroyed at finalize.
OpCache& op_cache(Runtime& rt);

}  // namespace tessera::detail
