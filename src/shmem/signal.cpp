// Put-with-signal, signal_fetch and signal_wait_until, over the device API's put_signal: the
// data first, then the signal word updated with release, so a PE that acquires the new signal
// value sees all of the data.
#include "shmem/rma.hpp"
#include "shmem/wait.hpp"

namespace tessera::shmem {
namespace {

device::SignalOp to_signal_op(const char* routine, int sig_op) {
  if (sig_op == SHMEM_SIGNAL_SET) return device::SignalOp::set;
  if (sig_op == SHMEM_SIGNAL_ADD) return device::SignalOp::add;
  die(routine,
      "sig_op " + std::to_string(sig_op) + " is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD");
}

template <std::size_t kBytes>
void put_signal(const char* routine, void* dest, const void* source, std::size_t n,
                std::uint64_t* sig_addr, std::uint64_t signal, int sig_op, int pe, bool nbi) {
  State& s = state(routine);
  require_pe(s, routine, pe);
  const device::Context& data_ctx =
      symmetric_ctx(s, routine, dest, span_bytes<kBytes>(n, 1), "destination", pe);
  const device::Context& sig_ctx =
      symmetric_ctx(s, routine, sig_addr, sizeof(std::uint64_t), "signal", pe);
  const device::SignalOp op = to_signal_op(routine, sig_op);
  auto dst = element_tile<kBytes>(dest, n, 1, true);
  auto src = element_tile<kBytes>(source, n, 1, true);
  guarded(routine, [&] {
    const device::Thread one;
    if (&data_ctx != &sig_ctx) {
      // One in the heap, one in static data (so `pe` is mapped): the data by a blocking put,
      // complete on return, then the signal with release, which keeps put_signal's guarantee.
      device::put(one, data_ctx, dst, src, pe);
      device::signal(sig_ctx, sig_addr, signal, op, pe, device::Sem::release,
                     device::Scope::system);
    } else if (nbi) {
      device::put_signal_nbi(one, data_ctx, dst, src, sig_addr, signal, op, pe);
    } else {
      device::put_signal(one, data_ctx, dst, src, sig_addr, signal, op, pe);
    }
  });
}

}  // namespace
}  // namespace tessera::shmem

namespace ts = tessera::shmem;

extern "C" {

void shmem_putmem_signal(void* dest, const void* source, size_t nelems, uint64_t* sig_addr,
                         uint64_t signal, int sig_op, int pe) {
  ts::put_signal<1>("shmem_putmem_signal", dest, source, nelems, sig_addr, signal, sig_op, pe,
                    false);
}

void shmem_putmem_signal_nbi(void* dest, const void* source, size_t nelems, uint64_t* sig_addr,
                             uint64_t signal, int sig_op, int pe) {
  ts::put_signal<1>("shmem_putmem_signal_nbi", dest, source, nelems, sig_addr, signal, sig_op, pe,
                    true);
}

#define TESSERA_SHMEM_DEFINE_PUT_SIGNAL(NAME, TYPE)                                                \
  void shmem_##NAME##_put_signal(TYPE* dest, const TYPE* source, size_t nelems,                    \
                                 uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) {        \
    ts::put_signal<sizeof(TYPE)>("shmem_" #NAME "_put_signal", dest, source, nelems, sig_addr,     \
                                 signal, sig_op, pe, false);                                       \
  }                                                                                                \
  void shmem_##NAME##_put_signal_nbi(TYPE* dest, const TYPE* source, size_t nelems,                \
                                     uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) {    \
    ts::put_signal<sizeof(TYPE)>("shmem_" #NAME "_put_signal_nbi", dest, source, nelems, sig_addr, \
                                 signal, sig_op, pe, true);                                        \
  }
TESSERA_SHMEM_RMA_TYPES(TESSERA_SHMEM_DEFINE_PUT_SIGNAL)
#undef TESSERA_SHMEM_DEFINE_PUT_SIGNAL

#define TESSERA_SHMEM_DEFINE_SIZED_PUT_SIGNAL(BITS, BYTES)                                         \
  void shmem_put##BITS##_signal(void* dest, const void* source, size_t nelems, uint64_t* sig_addr, \
                                uint64_t signal, int sig_op, int pe) {                             \
    ts::put_signal<BYTES>("shmem_put" #BITS "_signal", dest, source, nelems, sig_addr, signal,     \
                          sig_op, pe, false);                                                      \
  }                                                                                                \
  void shmem_put##BITS##_signal_nbi(void* dest, const void* source, size_t nelems,                 \
                                    uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) {     \
    ts::put_signal<BYTES>("shmem_put" #BITS "_signal_nbi", dest, source, nelems, sig_addr, signal, \
                          sig_op, pe, true);                                                       \
  }
TESSERA_SHMEM_RMA_SIZES(TESSERA_SHMEM_DEFINE_SIZED_PUT_SIGNAL)
#undef TESSERA_SHMEM_DEFINE_SIZED_PUT_SIGNAL

uint64_t shmem_signal_fetch(const uint64_t* sig_addr) {
  const ts::State& s = ts::state("shmem_signal_fetch");
  ts::symmetric_ctx(s, "shmem_signal_fetch", sig_addr, sizeof(uint64_t), "signal");
  return tessera::device::signal_fetch(sig_addr);
}

uint64_t shmem_signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t cmp_value) {
  const char* routine = "shmem_signal_wait_until";
  const ts::State& s = ts::state(routine);
  ts::symmetric_ctx(s, routine, sig_addr, sizeof(uint64_t), "signal");
  const tessera::device::Cmp c = ts::to_cmp(routine, cmp);
  uint64_t seen = 0;
  ts::spin_until(
      s, routine, [&] { return ts::holds(c, seen = ts::load_acquire(sig_addr), cmp_value); },
      [&] {
        return "signal at " + ts::where(s, sig_addr) + " never satisfied (value " +
               tessera::device::to_string(c) + " " + std::to_string(cmp_value) + "); last value " +
               std::to_string(seen);
      });
  return seen;
}

}  // extern "C"
