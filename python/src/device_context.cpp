#include "device_context.hpp"

#include <nanobind/ndarray.h>

#include <cstdint>
#include <vector>

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

std::int64_t addr(const void* p) {
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p));
}

}  // namespace

nb::object heap_bases(const Runtime& rt) {
  std::vector<std::uint64_t> bases(static_cast<std::size_t>(rt.n_pes()));
  for (int pe = 0; pe < rt.n_pes(); ++pe) {
    bases[static_cast<std::size_t>(pe)] =
        reinterpret_cast<std::uintptr_t>(rt.ptr(rt.heap_base(), pe));
  }
  return owned_array(std::move(bases));
}

nb::object device_context_array(const Runtime& rt) {
  const device::Context c = rt.device_context();
  std::vector<std::int64_t> v = {c.my_pe,
                                 c.n_pes,
                                 static_cast<std::int64_t>(c.heap_size),
                                 static_cast<std::int64_t>(c.timeout_ns),
                                 static_cast<std::int64_t>(c.flags),
                                 addr(c.peer_base),
                                 addr(c.control_page),
                                 addr(c.proxy),
                                 addr(c.allocations)};
  return owned_array(std::move(v));
}

nb::tuple device_context_fields() {
  nb::list l;
  for (const char* f : kDeviceContextFields) l.append(f);
  return nb::tuple(l);
}

}  // namespace tessera::python
