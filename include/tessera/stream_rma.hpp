// Stream-ordered host versions of the device calls, for programs that write no kernels. Each
// runs on `stream` after the work enqueued before it and reports failures at stream.synchronize()
// like a kernel's. On the host backend it runs as one thread (device::Thread) on the stream's
// executor; on a GPU backend's stream it is a one-block kernel on the native stream, so the
// local tiles must be memory that kernels reach (device memory, e.g. the symmetric heap), and the
// file calling it must be compiled by nvcc: a host-compiled caller gets the Error tessera::launch
// gives (compile with nvcc, or run on the host backend).
#pragma once

#include <cstdint>
#include <type_traits>

#include "tessera/device/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/stream.hpp"

namespace tessera {

namespace detail {

// Runs kernel(g, args...) on `stream`: g = device::Thread on the host backend's executor, g = the
// one block of a grid-1 launch on a GPU stream.
template <class Kernel, class... Args>
void run_on_stream(Stream& stream, Kernel kernel, Args... args) {
  if (stream.native_handle() != nullptr) {
    launch(stream, 1, kernel, args...);
    return;
  }
  stream.enqueue([=] { kernel(device::Thread{}, args...); });
}

// The calls below as group functors, so one text serves both ways of running.
struct PutOnStream {
  template <class G, class T>
  TESSERA_KERNEL_CODE void operator()(G g, device::Context ctx, device::Tile<T> dst,
                                      device::Tile<const T> src, int pe) const {
    device::put(g, ctx, dst, src, pe);
  }
};

struct GetOnStream {
  template <class G, class T>
  TESSERA_KERNEL_CODE void operator()(G g, device::Context ctx, device::Tile<T> dst,
                                      device::Tile<const T> src, int pe) const {
    device::get(g, ctx, dst, src, pe);
  }
};

struct PutSignalOnStream {
  template <class G, class T>
  TESSERA_KERNEL_CODE void operator()(G g, device::Context ctx, device::Tile<T> dst,
                                      device::Tile<const T> src, std::uint64_t* sig,
                                      std::uint64_t value, device::SignalOp op, int pe) const {
    device::put_signal(g, ctx, dst, src, sig, value, op, pe);
  }
};

struct SignalOnStream {
  template <class G>
  TESSERA_KERNEL_CODE void operator()(G g, device::Context ctx, std::uint64_t* sig,
                                      std::uint64_t value, device::SignalOp op, int pe) const {
    if (g.rank() == 0) device::signal(ctx, sig, value, op, pe);
  }
};

struct WaitUntilOnStream {
  template <class G>
  TESSERA_KERNEL_CODE void operator()(G g, device::Context ctx, const std::uint64_t* sig,
                                      device::Cmp cmp, std::uint64_t value,
                                      std::uint64_t* seen) const {
    const std::uint64_t v = device::wait_until(g, ctx, sig, cmp, value);
    if (seen != nullptr && g.rank() == 0) *seen = v;
  }
};

struct QuietOnStream {
  template <class G>
  TESSERA_KERNEL_CODE void operator()(G g, device::Context ctx) const {
    device::quiet(g, ctx);
  }
};

struct BarrierOnStream {
  template <class G>
  TESSERA_KERNEL_CODE void operator()(G g, device::Context ctx) const {
    device::barrier(g, ctx);
  }
};

}  // namespace detail

// device::put on the stream: once it has run, `src` is reusable and the data is on `pe`.
template <class T>
void put_on_stream(Stream& stream, const device::Context& ctx, device::Tile<T> dst,
                   std::type_identity_t<device::Tile<const T>> src, int pe) {
  detail::run_on_stream(stream, detail::PutOnStream{}, ctx, dst, src, pe);
}

// device::get on the stream: once it has run, `dst` holds the tile from `pe`.
template <class T>
void get_on_stream(Stream& stream, const device::Context& ctx, device::Tile<T> dst,
                   std::type_identity_t<device::Tile<const T>> src, int pe) {
  detail::run_on_stream(stream, detail::GetOnStream{}, ctx, dst, src, pe);
}

// device::put_signal on the stream: the tile, then `sig` on `pe` updated with release.
template <class T>
void put_signal_on_stream(Stream& stream, const device::Context& ctx, device::Tile<T> dst,
                          std::type_identity_t<device::Tile<const T>> src, std::uint64_t* sig,
                          std::uint64_t value, device::SignalOp op, int pe) {
  detail::run_on_stream(stream, detail::PutSignalOnStream{}, ctx, dst, src, sig, value, op, pe);
}

// device::signal on the stream (release, system scope).
inline void signal_on_stream(Stream& stream, const device::Context& ctx, std::uint64_t* sig,
                             std::uint64_t value, device::SignalOp op, int pe) {
  detail::run_on_stream(stream, detail::SignalOnStream{}, ctx, sig, value, op, pe);
}

// device::wait_until on the stream: later work on the stream starts only once local `sig`
// CMP `value` holds (acquire); bounded by ctx.timeout_ns. When `seen` is not null, the value
// that satisfied the comparison is stored there once the wait has run (memory the stream's
// work reaches, like the local tiles; it must outlive the wait).
inline void wait_until_on_stream(Stream& stream, const device::Context& ctx,
                                 const std::uint64_t* sig, device::Cmp cmp, std::uint64_t value,
                                 std::uint64_t* seen = nullptr) {
  detail::run_on_stream(stream, detail::WaitUntilOnStream{}, ctx, sig, cmp, value, seen);
}

// device::quiet on the stream.
inline void quiet_on_stream(Stream& stream, const device::Context& ctx) {
  detail::run_on_stream(stream, detail::QuietOnStream{}, ctx);
}

// device::barrier on the stream: a device-side barrier over all PEs, ordered with the stream.
inline void barrier_on_stream(Stream& stream, const device::Context& ctx) {
  detail::run_on_stream(stream, detail::BarrierOnStream{}, ctx);
}

}  // namespace tessera
