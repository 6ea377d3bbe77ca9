#include "device_context.hpp"

#include <nanobind/ndarray.h>

#include <cstdint>
#include <vector>

#include "tessera/device/device.hpp"

namespace tessera::python {

namespace {

// A 1-D array owning a copy of `values` (host memory, any framework reads it through DLPack or
// the buffer protocol).
template <class T>
nb::object owned_array(std::vector<T> values) {
  auto* held = new std::vector<T>(std::move(values));
  nb::capsule owner(held, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  std::size_t shape[1] = {held->size()};
  nb::ndarray<nb::array_api, T> arr(held->data(), 1, shape, owner);
  return nb::cast(arr, nb::rv_policy::reference);
}

std::vector<std::uint64_t> host_heap_bases(const Runtime& rt) {
  std::vector<std::uint64_t> bases(static_cast<std::size_t>(rt.n_pes()));
  for (int pe = 0; pe < rt.n_pes(); ++pe) {
    bases[static_cast<std::size_t>(pe)] =
        reinterpret_cast<std::uintptr_t>(rt.ptr(rt.heap_base(), pe));
  }
  return bases;
}

// Each PE's control page as mapped here. The control table is readable from host code on every
// backend (host memory, or a GPU segment's managed or pinned table).
std::vector<std::uint64_t> host_control_bases(const device::Context& c) {
  std::vector<std::uint64_t> bases(static_cast<std::size_t>(c.n_pes), 0);
  if (c.peer_control == nullptr) return bases;
  for (int pe = 0; pe < c.n_pes; ++pe) {
    bases[static_cast<std::size_t>(pe)] = reinterpret_cast<std::uintptr_t>(c.peer_control[pe]);
  }
  return bases;
}

std::vector<std::int64_t> flat_context(const Runtime& rt) {
  const device::Context c = rt.device_context();
  const std::vector<std::uint64_t> bases = host_heap_bases(rt);
  const std::vector<std::uint64_t> controls = host_control_bases(c);
  std::vector<std::int64_t> words(device::FlatContext::words(c.n_pes));
  device::flatten(c, bases.data(), controls.data(), words.data());
  return words;
}

}  // namespace

nb::object heap_bases(const Runtime& rt) { return owned_array(host_heap_bases(rt)); }

nb::object device_context_array(const Runtime& rt) {
  std::vector<std::int64_t> words = flat_context(rt);
  words.resize(device::FlatContext::kNamedWords);
  return owned_array(std::move(words));
}

nb::tuple device_context_fields() {
  nb::list l;
  for (const char* f : device::FlatContext::kNames) l.append(f);
  return nb::tuple(l);
}

nb::list triton_context_words(const Runtime& rt) {
  nb::list l;
  for (std::int64_t w : flat_context(rt)) l.append(w);
  return l;
}

nb::dict triton_context_layout() {
  using device::Context;
  using device::FailureRecord;
  using device::FlatContext;
  nb::dict d;
  for (std::size_t i = 0; i < FlatContext::kNamedWords; ++i) d[FlatContext::kNames[i]] = i;
  d["header_words"] = FlatContext::kHeaderWords;
  d["heap_bases"] = FlatContext::kHeapBases;
  // The control pages follow the n_pes heap bases: word heap_bases + n_pes + pe.

  nb::dict control;
  control["barrier_arrivals"] = Context::kBarrierArrivals;
  control["barrier_entered"] = Context::kBarrierEntered;
  control["abort_word"] = Context::kAbortWord;
  control["barrier_seen"] = Context::kBarrierSeen;
  control["barrier_seen_pes"] = Context::kBarrierSeenPes;
  control["failure_record"] = Context::kFailureRecordWord;
  d["control_words"] = control;

  nb::dict team;
  for (std::size_t i = 0; i < device::FlatTeam::kNamedWords; ++i)
    team[device::FlatTeam::kNames[i]] = i;
  team["words"] = device::FlatTeam::kWords;
  d["team_words"] = team;

  nb::dict abort;
  abort["failed"] = static_cast<std::uint32_t>(device::AbortReason::failed);
  abort["died"] = static_cast<std::uint32_t>(device::AbortReason::died);
  d["abort_reasons"] = abort;

  nb::dict record;
  record["state"] = FailureRecord::kState;
  record["code"] = FailureRecord::kCode;
  record["kind"] = FailureRecord::kKind;
  record["op"] = FailureRecord::kOp;
  record["pe"] = FailureRecord::kPe;
  record["args"] = FailureRecord::kArgs;
  record["arg_count"] = FailureRecord::kArgCount;
  record["words"] = FailureRecord::kWords;
  d["failure_words"] = record;

  nb::dict states;
  states["empty"] = FailureRecord::kEmpty;
  states["writing"] = FailureRecord::kWriting;
  states["complete"] = FailureRecord::kComplete;
  d["failure_states"] = states;

  using device::FailureKind;
  nb::dict kinds;
  kinds["wait_timeout"] = static_cast<std::uint64_t>(FailureKind::wait_timeout);
  kinds["barrier_timeout"] = static_cast<std::uint64_t>(FailureKind::barrier_timeout);
  kinds["aborted"] = static_cast<std::uint64_t>(FailureKind::aborted);
  kinds["pe_out_of_range"] = static_cast<std::uint64_t>(FailureKind::pe_out_of_range);
  kinds["pe_not_mapped"] = static_cast<std::uint64_t>(FailureKind::pe_not_mapped);
  kinds["outside_heap"] = static_cast<std::uint64_t>(FailureKind::outside_heap);
  kinds["proxy_timeout"] = static_cast<std::uint64_t>(FailureKind::proxy_timeout);
  kinds["proxy_failed"] = static_cast<std::uint64_t>(FailureKind::proxy_failed);
  kinds["misaligned"] = static_cast<std::uint64_t>(FailureKind::misaligned);
  kinds["team_not_member"] = static_cast<std::uint64_t>(FailureKind::team_not_member);
  kinds["team_barrier_timeout"] = static_cast<std::uint64_t>(FailureKind::team_barrier_timeout);
  kinds["some_timeout"] = static_cast<std::uint64_t>(FailureKind::some_timeout);
  d["failure_kinds"] = kinds;

  nb::dict ops;
  for (std::size_t i = 0; i < device::kFailureOpCount; ++i) ops[device::kFailureOps[i]] = i;
  d["failure_ops"] = ops;
  nb::dict roles;
  for (std::size_t i = 0; i < device::kFailureRoleCount; ++i) roles[device::kFailureRoles[i]] = i;
  d["failure_roles"] = roles;

  using device::FailureCode;
  nb::dict codes;
  codes["timeout"] = static_cast<unsigned>(FailureCode::timeout);
  codes["invalid_argument"] = static_cast<unsigned>(FailureCode::invalid_argument);
  codes["transport"] = static_cast<unsigned>(FailureCode::transport);
  codes["peer_lost"] = static_cast<unsigned>(FailureCode::peer_lost);
  d["failure_codes"] = codes;

  using device::Cmp;
  nb::dict cmp;
  cmp["eq"] = static_cast<unsigned>(Cmp::eq);
  cmp["ne"] = static_cast<unsigned>(Cmp::ne);
  cmp["gt"] = static_cast<unsigned>(Cmp::gt);
  cmp["ge"] = static_cast<unsigned>(Cmp::ge);
  cmp["lt"] = static_cast<unsigned>(Cmp::lt);
  cmp["le"] = static_cast<unsigned>(Cmp::le);
  d["cmp"] = cmp;
  nb::dict sig;
  sig["set"] = static_cast<unsigned>(device::SignalOp::set);
  sig["add"] = static_cast<unsigned>(device::SignalOp::add);
  d["signal_ops"] = sig;
  nb::dict flags;
  flags["checked"] = static_cast<unsigned>(device::kCheckedMode);
  d["context_flags"] = flags;
  return d;
}

}  // namespace tessera::python
