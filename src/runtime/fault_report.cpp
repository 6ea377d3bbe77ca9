#include "runtime/fault_report.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "heap/memfd.hpp"

namespace tessera::detail {
namespace {

// The call this thread is in. Default TLS model, not initial-exec: initial-exec marks every
// shared object linking the library STATIC_TLS, and the Python module of a CUDA build (its TLS
// page-aligned) then fails to load with "cannot allocate memory in static TLS block". A thread
// that faults inside a Tessera call has written this word, so the handler's read of it finds
// the thread's TLS block already allocated.
struct CurrentCall {
  int pe;
  const char* operation;
};
thread_local CurrentCall current_call{-1, nullptr};

// One PE's view of one heap, as remember_heap_mapping recorded it. Lock-free atomics only, so
// the handler may read a record while another thread writes it (it then misplaces an address at
// worst, never blocks).
struct HeapRecord {
  std::atomic<int> state{0};  // kFree, kWriting, kValid
  std::atomic<int> viewer{-1};
  std::atomic<int> owner{-1};
  std::atomic<std::uintptr_t> base{0};
  std::atomic<std::uintptr_t> heap_bytes{0};
  std::atomic<std::uintptr_t> mapping_end{0};
};
constexpr int kFree = 0, kWriting = 1, kValid = 2;
constexpr int kRecords = 256;
HeapRecord records[kRecords];

std::mutex install_mu;
struct sigaction kept_segv {};
struct sigaction kept_bus {};

// A line built in a fixed buffer: text, decimal and hex numbers, nothing that allocates.
class Line {
 public:
  void text(const char* s) {
    while (*s != '\0' && n_ < sizeof(buf_)) buf_[n_++] = *s++;
  }
  void decimal(std::uint64_t v) {
    char digits[20];
    int k = 0;
    do {
      digits[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (k > 0 && n_ < sizeof(buf_)) buf_[n_++] = digits[--k];
  }
  void hex(std::uint64_t v) {
    text("0x");
    char digits[16];
    int k = 0;
    do {
      digits[k++] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v != 0);
    while (k > 0 && n_ < sizeof(buf_)) buf_[n_++] = digits[--k];
  }
  void pe(int p) {
    if (p < 0) {
      text("an unknown PE");
      return;
    }
    text("PE ");
    decimal(static_cast<std::uint64_t>(p));
  }
  void write_to_stderr() const {
    std::size_t done = 0;
    while (done < n_) {
      const ssize_t w = ::write(2, buf_ + done, n_ - done);
      if (w <= 0) return;
      done += static_cast<std::size_t>(w);
    }
  }

 private:
  char buf_[512];
  std::size_t n_ = 0;
};

// "tessera: PE 0: fault (SIGSEGV) at ..." for a fault at `address` during `call`.
void report(int sig, std::uintptr_t address, const CurrentCall& call) {
  Line line;
  line.text("tessera: ");
  line.pe(call.pe);
  line.text(sig == SIGBUS ? ": fault (SIGBUS) at " : ": fault (SIGSEGV) at ");
  bool placed = false;
  for (const HeapRecord& r : records) {
    if (r.state.load(std::memory_order_acquire) != kValid) continue;
    const int viewer = r.viewer.load(std::memory_order_relaxed);
    if (call.pe >= 0 && viewer != call.pe) continue;
    const std::uintptr_t base = r.base.load(std::memory_order_relaxed);
    const std::uintptr_t bytes = r.heap_bytes.load(std::memory_order_relaxed);
    const std::uintptr_t end = r.mapping_end.load(std::memory_order_relaxed);
    const int owner = r.owner.load(std::memory_order_relaxed);
    if (address >= base && address - base < bytes) {
      line.text("heap offset ");
      line.hex(address - base);
      line.text(" of ");
      line.pe(owner);
      line.text("'s heap (address ");
      line.hex(address);
      line.text(")");
    } else if (address < base && base - address <= kGuardBytes) {
      line.text("address ");
      line.hex(address);
      line.text(" outside the symmetric heap (");
      line.decimal(base - address);
      line.text(" bytes before the start of ");
      line.pe(owner);
      line.text("'s heap)");
    } else if (address >= base + bytes && address < end + kGuardBytes) {
      line.text("address ");
      line.hex(address);
      line.text(" outside the symmetric heap (heap offset ");
      line.hex(address - base);
      line.text(", past the end of ");
      line.pe(owner);
      line.text("'s heap of ");
      line.hex(bytes);
      line.text(" bytes)");
    } else {
      continue;
    }
    placed = true;
    break;
  }
  if (!placed) {
    line.text("address ");
    line.hex(address);
    line.text(" outside the symmetric heap");
  }
  line.text(" during ");
  line.text(call.operation);
  line.text("\n");
  line.write_to_stderr();
}

void on_fault(int sig, siginfo_t* info, void*) {
  const CurrentCall call = current_call;
  const struct sigaction* kept = sig == SIGBUS ? &kept_bus : &kept_segv;
  const bool sent = info->si_code <= 0;  // by kill() or raise(), not by a fault
  if (call.operation != nullptr && !sent) {
    report(sig, reinterpret_cast<std::uintptr_t>(info->si_addr), call);
#if defined(__SANITIZE_ADDRESS__)
    ::sigaction(sig, kept, nullptr);  // the sanitizer's own report follows
#else
    // Reported: the process dies of the signal itself, so its launcher sees SIGSEGV (a kept
    // handler of another library may turn it into a plain exit(1)).
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
#endif
  } else {
    ::sigaction(sig, kept, nullptr);  // not ours to report
  }
  // A fault re-runs its instruction on return, under the disposition just restored; a signal
  // that was sent is sent again.
  if (sent) ::raise(sig);
}

void install_for(int sig, struct sigaction& kept) {
  struct sigaction current {};
  ::sigaction(sig, nullptr, &current);
  if ((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == &on_fault) return;
  struct sigaction mine {};
  mine.sa_sigaction = &on_fault;
  mine.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&mine.sa_mask);
  kept = current;
  ::sigaction(sig, &mine, nullptr);
}

}  // namespace

FaultScope::FaultScope(int pe, const char* operation) noexcept
    : saved_pe_(current_call.pe), saved_operation_(current_call.operation) {
  current_call = CurrentCall{pe, operation};
}

FaultScope::~FaultScope() { current_call = CurrentCall{saved_pe_, saved_operation_}; }

int remember_heap_mapping(int viewer, int owner, const char* base, std::size_t heap_bytes,
                          const char* mapping_end) noexcept {
  for (int i = 0; i < kRecords; ++i) {
    HeapRecord& r = records[i];
    int expected = kFree;
    if (!r.state.compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel)) continue;
    r.viewer.store(viewer, std::memory_order_relaxed);
    r.owner.store(owner, std::memory_order_relaxed);
    r.base.store(reinterpret_cast<std::uintptr_t>(base), std::memory_order_relaxed);
    r.heap_bytes.store(heap_bytes, std::memory_order_relaxed);
    r.mapping_end.store(reinterpret_cast<std::uintptr_t>(mapping_end), std::memory_order_relaxed);
    r.state.store(kValid, std::memory_order_release);
    return i;
  }
  return -1;
}

void forget_heap_mapping(int handle) noexcept {
  if (handle >= 0 && handle < kRecords)
    records[handle].state.store(kFree, std::memory_order_release);
}

void install_fault_reporter() {
  std::lock_guard lock(install_mu);
  install_for(SIGSEGV, kept_segv);
  install_for(SIGBUS, kept_bus);
}

}  // namespace tessera::detail
