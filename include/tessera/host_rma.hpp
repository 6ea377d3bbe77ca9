// Stream-ordered host versions of the device calls, for programs that write no kernels. Each
// runs on `stream` after the work enqueued before it, as one thread (device::Thread), and
// reports failures at stream.synchronize() like a kernel's.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tessera/device/device.hpp"
#include "tessera/stream.hpp"

namespace tessera {

// device::put on the stream: once it has run, `src` is reusable and the data is on `pe`.
template <class T>
void put_on_stream(Stream& stream, const device::Context& ctx, device::Tile<T> dst,
                   std::type_identity_t<device::Tile<const T>> src, int pe) {
  stream.enqueue([=] { device::put(device::Thread{}, ctx, dst, src, pe); });
}

// device::get on the stream: once it has run, `dst` holds the tile from `pe`.
template <class T>
void get_on_stream(Stream& stream, const device::Context& ctx, device::Tile<T> dst,
                   std::type_identity_t<device::Tile<const T>> src, int pe) {
  stream.enqueue([=] { device::get(device::Thread{}, ctx, dst, src, pe); });
}

// device::put_signal on the stream: the tile, then `sig` on `pe` updated with release.
template <class T>
void put_signal_on_stream(Stream& stream, const device::Context& ctx, device::Tile<T> dst,
                          std::type_identity_t<device::Tile<const T>> src, std::uint64_t* sig,
                          std::uint64_t value, device::SignalOp op, int pe) {
  stream.enqueue([=] { device::put_signal(device::Thread{}, ctx, dst, src, sig, value, op, pe); });
}

// device::signal on the stream (release, system scope).
inline void signal_on_stream(Stream& stream, const device::Context& ctx, std::uint64_t* sig,
                             std::uint64_t value, device::SignalOp op, int pe) {
  stream.enqueue([=] { device::signal(ctx, sig, value, op, pe); });
}

// device::wait_until on the stream: later work on the stream starts only once local `sig`
// CMP `value` holds (acquire); bounded by ctx.timeout_ns.
inline void wait_until_on_stream(Stream& stream, const device::Context& ctx,
                                 const std::uint64_t* sig, device::Cmp cmp, std::uint64_t value) {
  stream.enqueue([=] { device::wait_until(device::Thread{}, ctx, sig, cmp, value); });
}

// device::quiet on the stream.
inline void quiet_on_stream(Stream& stream, const device::Context& ctx) {
  stream.enqueue([=] { device::quiet(ctx); });
}

// device::barrier on the stream: a device-side barrier over all PEs, ordered with the stream.
inline void barrier_on_stream(Stream& stream, const device::Context& ctx) {
  stream.enqueue([=] { device::barrier(device::Thread{}, ctx); });
}

}  // namespace tessera
