// The network proxy ring's wire format (device/proxy_wire.hpp) as Python sees it: the layout
// constants tessera.triton's producer mirrors, and the C++ encoders, so a test can hold the Triton
// producer's descriptors to the C++ ones byte for byte.
#include <nanobind/nanobind.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tessera/device/proxy_wire.hpp"

namespace tessera::python {

namespace nb = nanobind;
using namespace nb::literals;
using device::ProxyAmo;
using device::ProxyChannel;
using device::ProxyDescriptor;
using device::ProxyOp;
using device::ProxyWord;
using device::SignalOp;

namespace {

nb::bytes as_bytes(const ProxyDescriptor& d) {
  return nb::bytes(reinterpret_cast<const char*>(&d), sizeof(d));
}

SignalOp signal_op(int op) { return op == 1 ? SignalOp::add : SignalOp::set; }

// Any Python int, negative ones included, as the low 64 bits of its two's complement.
std::uint64_t low_bits(const nb::int_& v) { return PyLong_AsUnsignedLongLongMask(v.ptr()); }

nb::bytes encode_atomic(int op, int amo, int word, int pe, std::uint64_t remote_offset,
                        const nb::int_& value_in, const nb::int_& compare_in, bool fenced) {
  const std::uint64_t bits = low_bits(value_in), compare_bits = low_bits(compare_in);
  const auto value = static_cast<std::int64_t>(bits);
  const auto compare = static_cast<std::int64_t>(compare_bits);
  const auto o = static_cast<ProxyOp>(op);
  const auto a = static_cast<ProxyAmo>(amo);
  switch (static_cast<ProxyWord>(word)) {
    case ProxyWord::i32:
      return as_bytes(device::encode_proxy_atomic<std::int32_t>(
          o, a, pe, remote_offset, static_cast<std::int32_t>(value),
          static_cast<std::int32_t>(compare), fenced));
    case ProxyWord::u32:
      return as_bytes(device::encode_proxy_atomic<std::uint32_t>(
          o, a, pe, remote_offset, static_cast<std::uint32_t>(value),
          static_cast<std::uint32_t>(compare), fenced));
    case ProxyWord::i64:
      return as_bytes(device::encode_proxy_atomic<std::int64_t>(o, a, pe, remote_offset, value,
                                                                compare, fenced));
    case ProxyWord::u64:
      break;
  }
  return as_bytes(device::encode_proxy_atomic<std::uint64_t>(o, a, pe, remote_offset, bits,
                                                             compare_bits, fenced));
}

nb::dict wire_layout() {
  nb::dict d;
  d["header_bytes"] = ProxyChannel::kHeaderBytes;
  d["descriptor_bytes"] = sizeof(ProxyDescriptor);
  nb::dict ops;
  ops["put"] = static_cast<int>(ProxyOp::put);
  ops["get"] = static_cast<int>(ProxyOp::get);
  ops["put_signal"] = static_cast<int>(ProxyOp::put_signal);
  ops["signal"] = static_cast<int>(ProxyOp::signal);
  ops["atomic"] = static_cast<int>(ProxyOp::atomic);
  ops["fetch_atomic"] = static_cast<int>(ProxyOp::fetch_atomic);
  ops["compare_atomic"] = static_cast<int>(ProxyOp::compare_atomic);
  ops["fence"] = static_cast<int>(ProxyOp::fence);
  d["ops"] = ops;
  nb::dict amos;
  amos["add"] = static_cast<int>(ProxyAmo::add);
  amos["and"] = static_cast<int>(ProxyAmo::and_);
  amos["or"] = static_cast<int>(ProxyAmo::or_);
  amos["xor"] = static_cast<int>(ProxyAmo::xor_);
  amos["min"] = static_cast<int>(ProxyAmo::min);
  amos["max"] = static_cast<int>(ProxyAmo::max);
  amos["exchange"] = static_cast<int>(ProxyAmo::exchange);
  amos["load"] = static_cast<int>(ProxyAmo::load);
  amos["store"] = static_cast<int>(ProxyAmo::store);
  d["amos"] = amos;
  nb::dict words;
  words["i32"] = static_cast<int>(ProxyWord::i32);
  words["u32"] = static_cast<int>(ProxyWord::u32);
  words["i64"] = static_cast<int>(ProxyWord::i64);
  words["u64"] = static_cast<int>(ProxyWord::u64);
  d["words"] = words;
  nb::dict flags;
  flags["collect"] = static_cast<int>(device::kProxyCollect);
  flags["fenced"] = static_cast<int>(device::kProxyFenced);
  d["flags"] = flags;
  nb::dict channel;
  channel["reserve"] = offsetof(ProxyChannel, reserve);
  channel["completed"] = offsetof(ProxyChannel, completed);
  channel["failure"] = offsetof(ProxyChannel, failure);
  channel["n_slots"] = offsetof(ProxyChannel, n_slots);
  channel["message"] = offsetof(ProxyChannel, message);
  channel["message_bytes"] = sizeof(ProxyChannel::message);
  d["channel"] = channel;
  nb::dict desc;
  desc["seq"] = offsetof(ProxyDescriptor, seq);
  desc["op"] = offsetof(ProxyDescriptor, op);
  desc["amo"] = offsetof(ProxyDescriptor, amo);
  desc["word"] = offsetof(ProxyDescriptor, word);
  desc["flags"] = offsetof(ProxyDescriptor, flags);
  desc["pe"] = offsetof(ProxyDescriptor, pe);
  desc["remote_offset"] = offsetof(ProxyDescriptor, remote_offset);
  desc["local"] = offsetof(ProxyDescriptor, local);
  desc["bytes"] = offsetof(ProxyDescriptor, bytes);
  desc["signal_offset"] = offsetof(ProxyDescriptor, signal_offset);
  desc["value"] = offsetof(ProxyDescriptor, value);
  desc["compare"] = offsetof(ProxyDescriptor, compare);
  d["descriptor"] = desc;
  return d;
}

}  // namespace

void bind_proxy_wire(nb::module_& m) {
  m.attr("PROXY_WIRE") = wire_layout();
  m.def(
      "_encode_proxy_rma",
      [](int op, int pe, std::uint64_t remote_offset, std::uint64_t local, std::uint64_t nbytes) {
        return as_bytes(
            device::encode_proxy_rma(static_cast<ProxyOp>(op), pe, remote_offset, local, nbytes));
      },
      "op"_a, "pe"_a, "remote_offset"_a, "local"_a, "nbytes"_a,
      "The C++ encoding (encode_proxy_rma) of a put (op 1) or get (op 2): 64 bytes, seq 0.");
  m.def(
      "_encode_proxy_put_signal",
      [](int pe, std::uint64_t remote_offset, std::uint64_t local, std::uint64_t nbytes,
         std::uint64_t signal_offset, const nb::int_& value, int sig_op) {
        return as_bytes(device::encode_proxy_put_signal(
            pe, remote_offset, local, nbytes, signal_offset, low_bits(value), signal_op(sig_op)));
      },
      "pe"_a, "remote_offset"_a, "local"_a, "nbytes"_a, "signal_offset"_a, "value"_a, "sig_op"_a,
      "The C++ encoding (encode_proxy_put_signal); sig_op 0 set, 1 add.");
  m.def(
      "_encode_proxy_signal",
      [](int pe, std::uint64_t signal_offset, const nb::int_& value, int sig_op, bool fenced) {
        return as_bytes(device::encode_proxy_signal(pe, signal_offset, low_bits(value),
                                                    signal_op(sig_op), fenced));
      },
      "pe"_a, "signal_offset"_a, "value"_a, "sig_op"_a, "fenced"_a,
      "The C++ encoding (encode_proxy_signal).");
  m.def("_encode_proxy_atomic", &encode_atomic, "op"_a, "amo"_a, "word"_a, "pe"_a,
        "remote_offset"_a, "value"_a, "compare"_a, "fenced"_a,
        "The C++ encoding (encode_proxy_atomic<T>, T by word: 0 i32, 1 u32, 2 i64, 3 u64).");
  m.def(
      "_encode_proxy_fence", [](int my_pe) { return as_bytes(device::encode_proxy_fence(my_pe)); },
      "my_pe"_a, "The C++ encoding (encode_proxy_fence).");
}

}  // namespace tessera::python
