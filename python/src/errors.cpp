// tessera::Error -> the matching subclass of tessera.Error (tessera/errors.py), carrying the
// library's message, code and PE.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <array>

#include "tessera/error.hpp"

namespace tessera::python {

namespace nb = nanobind;

namespace {

// Indexed by ErrorCode; filled at import from tessera.errors.
std::array<PyObject*, 9> g_classes{};

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    const auto code = static_cast<std::size_t>(e.code());
    PyObject* cls = code < g_classes.size() && g_classes[code] ? g_classes[code] : g_classes[0];
    nb::object args = nb::make_tuple(e.what(), e.message(), e.pe(), to_string(e.code()));
    PyErr_SetObject(cls, args.ptr());
  }
}

}  // namespace

void bind_errors(nb::module_& m) {
  nb::module_ errors = nb::module_::import_("tessera.errors");
  nb::dict by_code = errors.attr("_BY_CODE");
  g_classes[0] = errors.attr("Error").inc_ref().ptr();
  for (int code = 1; code <= static_cast<int>(ErrorCode::internal); ++code) {
    nb::object name = nb::str(to_string(static_cast<ErrorCode>(code)));
    if (by_code.contains(name))
      g_classes[static_cast<std::size_t>(code)] = nb::object(by_code[name]).inc_ref().ptr();
  }
  nb::register_exception_translator(translate);
  m.def("_error_code_names", [] {
    nb::list l;
    for (int code = 1; code <= static_cast<int>(ErrorCode::internal); ++code) {
      l.append(to_string(static_cast<ErrorCode>(code)));
    }
    return l;
  });
}

}  // namespace tessera::python
