#include "array.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace tessera::python {

namespace {

// DLPack device of the runtime's memory: the host backend's heap is CPU memory.
std::pair<int, int> dlpack_device(const Array& a) {
  const auto& rt = a.lifetime->state->rt;
  switch (rt.backend()) {
    case Backend::cuda:
      return {static_cast<int>(nb::device::cuda::value), rt.stream().native_device()};
    case Backend::hip:
      return {static_cast<int>(nb::device::rocm::value), rt.stream().native_device()};
    default:
      return {static_cast<int>(nb::device::cpu::value), 0};
  }
}

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

nb::object export_ndarray(nb::handle self, const Array& a) {
  a.check_usable("__dlpack__");
  auto [type, id] = dlpack_device(a);
  nb::ndarray<nb::array_api> view(a.data, a.shape.size(), a.shape.data(), self, nullptr, a.dtype.dl,
                                  type, id);
  return nb::cast(view, nb::rv_policy::reference);
}

void free_array(Array& a) {
  if (!a.owner) {
    fail(ErrorCode::invalid_argument, a.pe, "free: this array is a view; free the array it views");
  }
  a.check_usable("free");
  a.lifetime->live = false;
  if (a.data == nullptr) return;  // zero bytes: nothing was allocated
  nb::gil_scoped_release unlocked;
  a.lifetime->state->rt.free(a.data);
}

}  // namespace

std::size_t Array::size() const {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

void Array::check_usable(const char* what) const {
  if (!lifetime->state->alive) {
    fail(ErrorCode::invalid_argument, pe,
         std::string(what) + ": the array's Runtime was finalized; its memory is gone");
  }
  if (!lifetime->live)
    fail(ErrorCode::invalid_argument, pe, std::string(what) + ": the array was freed");
}

std::string Array::repr() const {
  std::string s = "tessera.Array(shape=" + shape_text(shape) + ", dtype=" + dtype.name;
  if (!owner) s += ", view of PE " + std::to_string(pe);
  if (!lifetime->usable()) s += ", freed";
  return s + ")";
}

std::string Buffer::describe() const { return shape_text(shape) + " " + dtype.name; }

Buffer buffer_of(nb::handle obj, bool writable, const char* what, int pe) {
  Buffer b;
  b.keep = nb::borrow(obj);
  if (nb::isinstance<Array>(obj)) {
    const Array& a = nb::cast<const Array&>(obj);
    a.check_usable(what);
    b.data = a.data;
    b.shape = a.shape;
    b.dtype = a.dtype;
    b.nbytes = a.nbytes();
    return b;
  }
  nb::ndarray<nb::ro> arr;
  if (!nb::try_cast(obj, arr)) {
    fail(ErrorCode::invalid_argument, pe,
         std::string(what) + ": expected an array (DLPack or buffer protocol), got " +
             nb::cast<std::string>(nb::str(nb::handle(obj.type()))));
  }
  b.dtype = dtype_from(arr.dtype());
  std::int64_t expected = 1;
  // An empty array has no elements to be out of order (NumPy gives it arbitrary strides).
  const bool empty = arr.size() == 0;
  for (std::size_t i = arr.ndim(); i-- > 0;) {
    b.shape.insert(b.shape.begin(), arr.shape(i));
    if (!empty && arr.shape(i) != 1 && arr.stride(i) != expected) {
      fail(ErrorCode::invalid_argument, pe,
           std::string(what) +
               ": the array is not contiguous (C order); pass numpy.ascontiguousarray(x) or "
               "x.contiguous()");
    }
    expected *= static_cast<std::int64_t>(arr.shape(i));
  }
  if (writable) {
    nb::ndarray<> w;
    if (!nb::try_cast(obj, w)) {
      fail(ErrorCode::invalid_argument, pe, std::string(what) + ": the array is read-only");
    }
  }
  b.data = const_cast<void*>(arr.data());
  b.nbytes = arr.nbytes();
  return b;
}

void bind_array(nb::module_& m) {
  nb::class_<Array>(m, "Array",
                    "A block of the symmetric heap with a shape and dtype. Collective to make "
                    "(Runtime.empty/zeros/full) and to free; numpy.from_dlpack(a) and "
                    "torch.from_dlpack(a) view it without a copy.")
      .def_prop_ro("shape",
                   [](const Array& a) {
                     nb::list l;
                     for (auto d : a.shape) l.append(d);
                     return nb::tuple(l);
                   })
      .def_prop_ro(
          "dtype", [](const Array& a) { return std::string(a.dtype.name); },
          "The element type's name, as NumPy and torch spell it.")
      .def_prop_ro("ndim", [](const Array& a) { return a.shape.size(); })
      .def_prop_ro("size", &Array::size, "Number of elements.")
      .def_prop_ro("nbytes", &Array::nbytes)
      .def_prop_ro("itemsize", [](const Array& a) { return a.dtype.itemsize(); })
      .def_ro("pe", &Array::pe, "The PE whose memory this array is (itself, or a peer for views).")
      .def_prop_ro("is_view", [](const Array& a) { return !a.owner; })
      .def_prop_ro(
          "data_ptr",
          [](const Array& a) {
            a.check_usable("data_ptr");
            return reinterpret_cast<std::uintptr_t>(a.data);
          },
          "The address of the first element, as mapped in this process.")
      .def_prop_ro(
          "offset",
          [](const Array& a) {
            a.check_usable("offset");
            return a.offset;
          },
          "Offset into the symmetric heap: the same on every PE for the same array.")
      .def_prop_ro("freed", [](const Array& a) { return !a.lifetime->usable(); })
      .def("__len__", [](const Array& a) { return a.shape.empty() ? 0 : a.shape[0]; })
      .def("__repr__", &Array::repr)
      .def(
          "__dlpack__",
          [](nb::handle self, nb::kwargs kwargs) {
            nb::object view = export_ndarray(self, nb::cast<const Array&>(self));
            return view.attr("__dlpack__")(**kwargs);
          },
          "The DLPack capsule of a zero-copy view (the array stays alive while it is used).")
      .def("__dlpack_device__",
           [](const Array& a) {
             auto [type, id] = dlpack_device(a);
             return nb::make_tuple(type, id);
           })
      .def(
          "numpy",
          [](nb::handle self) {
            nb::object np = nb::module_::import_("numpy");
            return np.attr("from_dlpack")(self);
          },
          "numpy.from_dlpack(self): a zero-copy NumPy view (host backend).")
      .def("free", &free_array,
           "Collective: frees the block now (every PE frees its arrays in the same order). Views "
           "of it become unusable.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](Array& a, nb::args) {
        if (a.lifetime->usable()) free_array(a);
      });
}

}  // namespace tessera::python
