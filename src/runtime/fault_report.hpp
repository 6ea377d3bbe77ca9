// The fault reporter of the host backend: a SIGSEGV or SIGBUS raised while a thread runs a
// Tessera call (a kernel's block, stream work, a host put/get) is reported on stderr as
//   tessera: PE 0: fault (SIGSEGV) at address 0x7f.. outside the symmetric heap (64 bytes before
//   the start of PE 1's heap) during a kernel
// before the process dies of that signal, so a stray tile names its cause. The handler only
// formats into a fixed buffer and write(2)s it. Internal.
#pragma once

#include <cstddef>

namespace tessera::detail {

// While alive, a fault on this thread is reported as PE `pe`'s, during `operation` (a string
// literal); nested scopes restore the outer one. Costs two thread-local stores each way.
class FaultScope {
 public:
  FaultScope(int pe, const char* operation) noexcept;
  ~FaultScope();
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;

 private:
  int saved_pe_;
  const char* saved_operation_;
};

// Records that, in this process, PE `viewer` sees PE `owner`'s heap of `heap_bytes` at `base`,
// its whole mapping (guards and control area included) ending at `mapping_end`, so the reporter
// can place a fault address relative to it. Returns a handle for forget_heap_mapping, or -1 when
// the (fixed-size) table is full: such a heap is then reported by address alone.
int remember_heap_mapping(int viewer, int owner, const char* base, std::size_t heap_bytes,
                          const char* mapping_end) noexcept;
// Drops a record made by remember_heap_mapping (ignores -1); call before the mapping goes.
void forget_heap_mapping(int handle) noexcept;

// Installs the reporter for SIGSEGV and SIGBUS, keeping the dispositions it replaces; installs
// it again when another library has replaced it since. A fault outside any FaultScope goes to
// the kept disposition unreported.
void install_fault_reporter();

}  // namespace tessera::detail
