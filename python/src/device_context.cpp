#include "device_context.hpp"

#include <nanobind/ndarray.h>

#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <utility>
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

// One table of tessera.TRITON_CONTEXT_WORDS: name -> value (an enum's by its number), in order.
template <class T>
nb::dict named_values(std::initializer_list<std::pair<const char*, T>> entries) {
  nb::dict d;
  for (const auto& [name, value] : entries) {
    if constexpr (std::is_enum_v<T>) {
      d[name] = static_cast<std::uint64_t>(value);
    } else {
      d[name] = value;
    }
  }
  return d;
}

// name -> its index in `names` (a layout's word names, a record's call names).
template <std::size_t N>
nb::dict name_indices(const char* const (&names)[N]) {
  nb::dict d;
  for (std::size_t i = 0; i < N; ++i) d[names[i]] = i;
  return d;
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
  using device::Cmp;
  using device::Context;
  using device::FailureCode;
  using device::FailureKind;
  using device::FailureRecord;
  using device::FlatContext;
  nb::dict d = name_indices(FlatContext::kNames);
  d["header_words"] = FlatContext::kHeaderWords;
  d["heap_bases"] = FlatContext::kHeapBases;
  // The control pages follow the n_pes heap bases: word heap_bases + n_pes + pe.
  d["control_words"] =
      named_values<std::uint64_t>({{"barrier_arrivals", Context::kBarrierArrivals},
                                   {"barrier_entered", Context::kBarrierEntered},
                                   {"abort_word", Context::kAbortWord},
                                   {"barrier_seen", Context::kBarrierSeen},
                                   {"barrier_seen_pes", Context::kBarrierSeenPes},
                                   {"failure_record", Context::kFailureRecordWord}});

  nb::dict team = name_indices(device::FlatTeam::kNames);
  team["words"] = device::FlatTeam::kWords;
  d["team_words"] = team;

  d["abort_reasons"] = named_values<device::AbortReason>(
      {{"failed", device::AbortReason::failed}, {"died", device::AbortReason::died}});
  d["failure_words"] = named_values<std::uint64_t>({{"state", FailureRecord::kState},
                                                    {"code", FailureRecord::kCode},
                                                    {"kind", FailureRecord::kKind},
                                                    {"op", FailureRecord::kOp},
                                                    {"pe", FailureRecord::kPe},
                                                    {"args", FailureRecord::kArgs},
                                                    {"arg_count", FailureRecord::kArgCount},
                                                    {"words", FailureRecord::kWords}});
  d["failure_states"] = named_values<std::uint64_t>({{"empty", FailureRecord::kEmpty},
                                                     {"writing", FailureRecord::kWriting},
                                                     {"complete", FailureRecord::kComplete}});
  d["failure_kinds"] =
      named_values<FailureKind>({{"wait_timeout", FailureKind::wait_timeout},
                                 {"barrier_timeout", FailureKind::barrier_timeout},
                                 {"aborted", FailureKind::aborted},
                                 {"pe_out_of_range", FailureKind::pe_out_of_range},
                                 {"pe_not_mapped", FailureKind::pe_not_mapped},
                                 {"outside_heap", FailureKind::outside_heap},
                                 {"proxy_timeout", FailureKind::proxy_timeout},
                                 {"proxy_failed", FailureKind::proxy_failed},
                                 {"misaligned", FailureKind::misaligned},
                                 {"team_not_member", FailureKind::team_not_member},
                                 {"team_barrier_timeout", FailureKind::team_barrier_timeout},
                                 {"some_timeout", FailureKind::some_timeout}});

  d["failure_ops"] = name_indices(device::kFailureOps);
  d["failure_roles"] = name_indices(device::kFailureRoles);

  d["failure_codes"] =
      named_values<FailureCode>({{"timeout", FailureCode::timeout},
                                 {"invalid_argument", FailureCode::invalid_argument},
                                 {"transport", FailureCode::transport},
                                 {"peer_lost", FailureCode::peer_lost}});
  d["cmp"] = named_values<Cmp>({{"eq", Cmp::eq},
                                {"ne", Cmp::ne},
                                {"gt", Cmp::gt},
                                {"ge", Cmp::ge},
                                {"lt", Cmp::lt},
                                {"le", Cmp::le}});
  d["signal_ops"] = named_values<device::SignalOp>(
      {{"set", device::SignalOp::set}, {"add", device::SignalOp::add}});
  d["context_flags"] = named_values<std::uint64_t>({{"checked", device::kCheckedMode}});
  return d;
}

}  // namespace tessera::python
