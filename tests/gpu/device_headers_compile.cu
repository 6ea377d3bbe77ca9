// Compile-only check that the device API is single-source: <tessera/device.hpp> in a __global__
// kernel that instantiates every call for Thread, Warp and Block and several element types. The
// CUDA build compiles it for every CMAKE_CUDA_ARCHITECTURES entry (sm_80, sm_90);
// scripts/hip_compile_check compiles the same file as HIP for gfx90a and gfx940. Nothing runs
// it: the behaviour is tested by gpu_device_suites_test and gpu_litmus_test (the host-backend
// suites, compiled by nvcc) and by the host-backend suites themselves.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/device.hpp"

namespace tessera::device_headers_compile {

namespace td = tessera::device;

template <class G, class T>
TESSERA_KERNEL_CODE void rma_calls(G g, const td::Context& ctx, T* heap, std::uint64_t* sig,
                                   int pe) {
  const td::Tile<T> dst = td::make_tile(heap, 4, 8, 16);
  const td::Tile<const T> src = td::make_tile(static_cast<const T*>(heap + 64), 4, 8, 16);
  td::put(g, ctx, dst, src, pe);
  td::get(g, ctx, dst, src, pe);
  td::put_nbi(g, ctx, dst, src, pe);
  td::get_nbi(g, ctx, dst, src, pe);
  td::put_signal(g, ctx, dst, src, sig, 1, td::SignalOp::set, pe);
  td::put_signal_nbi(g, ctx, td::make_tile(heap, 1), td::make_tile(heap + 1, 1), sig, 1,
                     td::SignalOp::add, pe);
  td::fence(g, ctx);
  td::quiet(g, ctx);
}

template <class G>
TESSERA_KERNEL_CODE void signal_calls(G g, const td::Context& ctx, std::uint64_t* sigs, int pe) {
  td::wait_until(g, ctx, sigs, td::Cmp::ge, 1);
  td::wait_until(g, ctx, sigs, td::Cmp::eq, 2, td::Sem::relaxed);
  td::wait_until_all(g, ctx, sigs, 4, td::Cmp::ge, 1);
  td::barrier(g, ctx);
  td::sync_all(g, ctx);
  if (g.rank() == 0) {
    td::signal(ctx, sigs, 3, td::SignalOp::add, pe);
    td::signal(ctx, sigs, 3, td::SignalOp::set, pe, td::Sem::relaxed, td::Scope::device);
    (void)td::wait_until_any(td::Thread{}, ctx, sigs, 4, td::Cmp::ne, 0);
    (void)td::signal_fetch(sigs);
  }
}

template <class T>
TESSERA_KERNEL_CODE T atomic_calls(const td::Context& ctx, T* word, int pe) {
  T r = td::atomic_load(ctx, word, pe);
  td::atomic_store(ctx, word, T{1}, pe);
  r += td::atomic_fetch_add(ctx, word, T{1}, pe, td::Sem::relaxed, td::Scope::block);
  td::atomic_add(ctx, word, T{1}, pe);
  r += td::atomic_exchange(ctx, word, T{2}, pe, td::Sem::acquire, td::Scope::device);
  r += td::atomic_compare_exchange(ctx, word, T{2}, T{3}, pe);
  r += td::atomic_fetch_and(ctx, word, T{7}, pe);
  r += td::atomic_fetch_or(ctx, word, T{8}, pe);
  r += td::atomic_fetch_xor(ctx, word, T{1}, pe, td::Sem::release);
  r += td::atomic_fetch_min(ctx, word, T{0}, pe);
  r += td::atomic_fetch_max(ctx, word, T{9}, pe);
  return r;
}

// One small kernel per call family, group and element type: a single kernel holding every call
// inlined would cost ptxas minutes and gigabytes.
template <class G>
TESSERA_KERNEL_CODE G make_group() {
  if constexpr (std::is_same_v<G, td::Block>) {
    return td::Block(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x));
  } else {
    return G{};
  }
}

template <class G, class T>
__global__ void rma_kernel(td::Context ctx, T* heap, std::uint64_t* sig, int pe) {
  rma_calls(make_group<G>(), ctx, heap, sig, pe);
}

template <class G>
__global__ void signal_kernel(td::Context ctx, std::uint64_t* sigs, int pe) {
  signal_calls(make_group<G>(), ctx, sigs, pe);
}

template <class T>
__global__ void atomic_kernel(td::Context ctx, T* word, int pe, T* out) {
  *out = atomic_calls(ctx, word, pe);
  td::fence(ctx);
  td::quiet(ctx);
}

__global__ void platform_kernel(std::uint64_t* out) {
  out[0] = td::platform::clock_ns();
  td::platform::spin_pause(100);
}

// Element types change only the copies, so Block takes them all and Thread and Warp one.
template __global__ void rma_kernel<td::Block, std::uint8_t>(td::Context, std::uint8_t*,
                                                             std::uint64_t*, int);
template __global__ void rma_kernel<td::Block, td::half>(td::Context, td::half*, std::uint64_t*,
                                                         int);
template __global__ void rma_kernel<td::Block, float>(td::Context, float*, std::uint64_t*, int);
template __global__ void rma_kernel<td::Block, std::uint64_t>(td::Context, std::uint64_t*,
                                                              std::uint64_t*, int);
template __global__ void rma_kernel<td::Warp, double>(td::Context, double*, std::uint64_t*, int);
template __global__ void rma_kernel<td::Thread, std::int32_t>(td::Context, std::int32_t*,
                                                              std::uint64_t*, int);
template __global__ void signal_kernel<td::Thread>(td::Context, std::uint64_t*, int);
template __global__ void signal_kernel<td::Warp>(td::Context, std::uint64_t*, int);
template __global__ void signal_kernel<td::Block>(td::Context, std::uint64_t*, int);

template __global__ void atomic_kernel<std::int32_t>(td::Context, std::int32_t*, int,
                                                     std::int32_t*);
template __global__ void atomic_kernel<std::uint32_t>(td::Context, std::uint32_t*, int,
                                                      std::uint32_t*);
template __global__ void atomic_kernel<std::int64_t>(td::Context, std::int64_t*, int,
                                                     std::int64_t*);
template __global__ void atomic_kernel<std::uint64_t>(td::Context, std::uint64_t*, int,
                                                      std::uint64_t*);

// --- issue 17, H-check: one-element tiles of element types whose alignment is below their size
// (struct {int a, b;}: 8 bytes aligned to 4; a 12-byte struct; a packed 8-byte struct), which
// copy_element moves in the accesses their addresses allow; checked-mode alignment checks and
// the allocation table's lookup. ---
struct Pair4 {
  std::int32_t a, b;
};
struct Triple4 {
  std::int32_t a, b, c;
};
struct __attribute__((packed)) Packed8 {
  std::uint8_t tag;
  std::uint32_t value;
  std::uint16_t tail;
  std::uint8_t end;
};

template <class G, class T>
__global__ void element_kernel(td::Context ctx, T* heap, std::uint64_t* out, int pe) {
  const G g = make_group<G>();
  td::put(g, ctx, td::make_tile(heap, 1), td::make_tile(static_cast<const T*>(heap + 1), 1), pe);
  td::get(g, ctx, td::make_tile(heap + 2, 1), td::make_tile(static_cast<const T*>(heap), 1), pe);
  td::detail::check_aligned(ctx, heap, alignof(T), "put", "destination tile");
  const td::detail::AllocationLookup a = td::detail::find_allocation(ctx, 64);
  out[0] = a.found ? a.begin : a.bytes;
}

template __global__ void element_kernel<td::Block, Pair4>(td::Context, Pair4*, std::uint64_t*, int);
template __global__ void element_kernel<td::Block, Triple4>(td::Context, Triple4*, std::uint64_t*,
                                                            int);
template __global__ void element_kernel<td::Warp, Packed8>(td::Context, Packed8*, std::uint64_t*,
                                                           int);
template __global__ void element_kernel<td::Thread, Pair4>(td::Context, Pair4*, std::uint64_t*,
                                                           int);
// --- Issue 17, H-team: device teams, the renamed whole-job barriers, grid_sync ---
template <class G>
__global__ void team_kernel(td::Context ctx, td::Team team, td::Team other, int* out) {
  const G g = make_group<G>();
  td::barrier(g, ctx, team);
  td::team_sync(g, ctx, team);
  td::barrier_all(g, ctx);
  td::sync_all(g, ctx);
  if (g.rank() == 0) *out = td::translate(team, 0, other) + team.rank_of(ctx.my_pe);
}

__global__ void grid_sync_kernel(td::Context ctx, std::uint64_t* out) {
  const td::Block blk = make_group<td::Block>();
  out[blk.block_id()] = 1;
  td::grid_sync(blk, ctx);
  if (blk.rank() == 0) out[blk.grid_size() + blk.block_id()] = td::platform::launch_id();
}

template __global__ void team_kernel<td::Thread>(td::Context, td::Team, td::Team, int*);
template __global__ void team_kernel<td::Warp>(td::Context, td::Team, td::Team, int*);
template __global__ void team_kernel<td::Block>(td::Context, td::Team, td::Team, int*);
// --- Device API II calls (issue #17, H-calls): pointer/byte/scalar RMA, float atomics, waits
// that return values, status-masked waits and the tests ---

template <class G, class T>
TESSERA_KERNEL_CODE void rma_form_calls(G g, const td::Context& ctx, T* heap, std::uint64_t* sig,
                                        int pe) {
  td::put(g, ctx, heap, heap + 64, 7, pe);
  td::get(g, ctx, heap, heap + 64, 7, pe);
  td::put_nbi(g, ctx, heap, heap + 64, 1, pe);
  td::get_nbi(g, ctx, heap, heap + 64, 33, pe);
  td::putmem(g, ctx, heap, heap + 64, 13, pe);
  td::getmem(g, ctx, heap, heap + 64, 13, pe);
  td::putmem_nbi(g, ctx, heap, heap + 64, 5, pe);
  td::getmem_nbi(g, ctx, heap, heap + 64, 5, pe);
  td::put_signal(g, ctx, heap, heap + 64, 9, sig, 1, td::SignalOp::set, pe);
  td::put_signal_nbi(g, ctx, heap, heap + 64, 9, sig, 1, td::SignalOp::add, pe);
  if (g.rank() == 0) {
    td::p(ctx, heap, td::g(ctx, heap + 1, pe), pe);
  }
  td::quiet(g, ctx);
}

template <class G>
TESSERA_KERNEL_CODE std::uint64_t wait_calls(G g, const td::Context& ctx, std::uint64_t* sigs,
                                             int* status, std::size_t* indices) {
  std::uint64_t r = td::wait_until(g, ctx, sigs, td::Cmp::ge, 1);
  r += td::wait_until_any(g, ctx, sigs, 4, td::Cmp::ne, 0);
  r += td::wait_until_any(g, ctx, sigs, 4, status, td::Cmp::ne, 0, td::Sem::relaxed);
  r += td::wait_until_some(g, ctx, sigs, 4, status, indices, td::Cmp::ge, 2);
  if (g.rank() == 0) {
    r += td::test(ctx, sigs, td::Cmp::eq, 3) ? 1 : 0;
    r += td::test_any(ctx, sigs, 4, td::Cmp::gt, 0);
    r += td::test_any(ctx, sigs, 4, status, td::Cmp::gt, 0);
    r += td::test_some(ctx, sigs, 4, status, indices, td::Cmp::gt, 0);
    r += td::test_all(ctx, sigs, 4, td::Cmp::ge, 1, td::Sem::relaxed) ? 1 : 0;
    td::Epoch e;
    r += e.advance(3);
  }
  return r;
}

template <class T>
TESSERA_KERNEL_CODE T float_atomic_calls(const td::Context& ctx, T* word, int pe) {
  td::atomic_add(ctx, word, T{1}, pe);
  td::atomic_add(ctx, word, T{1}, pe, td::Sem::relaxed, td::Scope::device);
  T r = td::atomic_fetch_add(ctx, word, T{2}, pe);
  r += td::atomic_fetch_add(ctx, word, T{2}, pe, td::Sem::release, td::Scope::block);
  return r;
}

template <class G, class T>
__global__ void rma_form_kernel(td::Context ctx, T* heap, std::uint64_t* sig, int pe) {
  rma_form_calls(make_group<G>(), ctx, heap, sig, pe);
}

template <class G>
__global__ void wait_kernel(td::Context ctx, std::uint64_t* sigs, int* status, std::size_t* indices,
                            std::uint64_t* out) {
  const std::uint64_t r = wait_calls(make_group<G>(), ctx, sigs, status, indices);
  if (threadIdx.x == 0) out[blockIdx.x] = r;
}

template <class T>
__global__ void float_atomic_kernel(td::Context ctx, T* word, int pe, T* out) {
  *out = float_atomic_calls(ctx, word, pe);
}

template __global__ void rma_form_kernel<td::Thread, std::uint8_t>(td::Context, std::uint8_t*,
                                                                   std::uint64_t*, int);
template __global__ void rma_form_kernel<td::Warp, float>(td::Context, float*, std::uint64_t*, int);
template __global__ void rma_form_kernel<td::Block, double>(td::Context, double*, std::uint64_t*,
                                                            int);
template __global__ void wait_kernel<td::Thread>(td::Context, std::uint64_t*, int*, std::size_t*,
                                                 std::uint64_t*);
template __global__ void wait_kernel<td::Warp>(td::Context, std::uint64_t*, int*, std::size_t*,
                                               std::uint64_t*);
template __global__ void wait_kernel<td::Block>(td::Context, std::uint64_t*, int*, std::size_t*,
                                                std::uint64_t*);
template __global__ void float_atomic_kernel<float>(td::Context, float*, int, float*);
template __global__ void float_atomic_kernel<double>(td::Context, double*, int, double*);

}  // namespace tessera::device_headers_compile
