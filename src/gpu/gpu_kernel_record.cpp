// The process-wide list of GPU kernel entry points (tessera/detail/gpu_kernel_record.hpp).
#include "tessera/detail/gpu_kernel_record.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace tessera::detail {
namespace {

struct Records {
  std::mutex mutex;
  std::vector<GpuKernelRecord> list;
};

// Built on first use: entries are recorded from other objects' static initialisers, whose order
// relative to this file's is unspecified.
Records& records() {
  static Records r;
  return r;
}

void erase_all(std::string& text, const std::string& what) {
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at)) {
    text.erase(at, what.size());
  }
}

}  // namespace

void record_gpu_kernel(int runtime, const void* entry, const char* type_name) noexcept {
  try {
    Records& r = records();
    const std::lock_guard<std::mutex> lock(r.mutex);
    const bool known = std::any_of(r.list.begin(), r.list.end(), [&](const GpuKernelRecord& k) {
      return k.runtime == runtime && k.entry == entry;
    });
    if (!known) r.list.push_back({runtime, entry, type_name});
  } catch (...) {
    // Out of memory while loading: the preflight then lists one kernel fewer.
  }
}

std::vector<GpuKernelRecord> recorded_gpu_kernels(int runtime) {
  Records& r = records();
  const std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<GpuKernelRecord> out;
  for (const GpuKernelRecord& k : r.list) {
    if (k.runtime == runtime) out.push_back(k);
  }
  return out;
}

std::string kernel_display_name(const char* type_name) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(type_name, nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && demangled ? demangled.get() : type_name;
  erase_all(name, "(anonymous namespace)::");
  erase_all(name, "tessera::");
  return name;
}

}  // namespace tessera::detail
