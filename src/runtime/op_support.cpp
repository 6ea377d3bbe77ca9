#include "runtime/op_support.hpp"

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

OpCache& op_cache(Runtime& rt) { return RuntimeAccess::impl(rt).op_cache_; }

}  // namespace tessera::detail
