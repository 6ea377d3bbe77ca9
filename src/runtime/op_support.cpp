#include "runtime/op_support.hpp"

#include <string>

#include "tessera/error.hpp"

#include "runtime/runtime_access.hpp"
#include "runtime/runtime_impl.hpp"

namespace tessera::detail {

std::size_t bytes_left_in_block(Runtime& rt, const void* p) {
  RuntimeImpl& impl = RuntimeAccess::impl(rt);
  if (!impl.in_heap(p, 1)) return 0;
  return impl.heap_->bytes_left_in_block(impl.heap_offset(p));
}

void check_op_call(Runtime& rt, std::string_view call, const char* what) {
  RuntimeAccess::impl(rt).check_op_call(call, what);
}

void refuse_capture(const Stream& stream, const char* what, std::string_view why) {
  if (!stream.capturing()) return;
  throw Error(ErrorCode::invalid_argument, stream.pe(),
              std::string(what) + ": cannot be captured: this call " + std::string(why) +
                  ", which runs on the host; make the same call once before begin_capture (its "
                  "later calls are captured and replay correctly)");
}

OpCache& op_cache(Runtime& rt) { return RuntimeAccess::impl(rt).op_cache_; }

}  // namespace tessera::detail
