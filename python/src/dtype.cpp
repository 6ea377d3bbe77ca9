#include "dtype.hpp"

#include <nanobind/stl/string.h>

#include <array>
#include <cstring>

#include "state.hpp"

namespace tessera::python {

namespace {

using Code = nb::dlpack::dtype_code;

constexpr nb::dlpack::dtype dl(Code code, int bits) {
  return nb::dlpack::dtype{static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), 1};
}

const std::array<Dtype, 12> kDtypes = {{
    {"float32", dl(Code::Float, 32)},
    {"float64", dl(Code::Float, 64)},
    {"float16", dl(Code::Float, 16)},
    {"bfloat16", dl(Code::Bfloat, 16)},
    {"int8", dl(Code::Int, 8)},
    {"int16", dl(Code::Int, 16)},
    {"int32", dl(Code::Int, 32)},
    {"int64", dl(Code::Int, 64)},
    {"uint8", dl(Code::UInt, 8)},
    {"uint16", dl(Code::UInt, 16)},
    {"uint32", dl(Code::UInt, 32)},
    {"uint64", dl(Code::UInt, 64)},
}};

std::string supported() {
  std::string s;
  for (const auto& d : kDtypes) s += std::string(s.empty() ? "" : ", ") + d.name;
  return s;
}

// "torch.float32" -> "float32"; "<class 'numpy.float32'>" -> "float32"; "float32" stays.
std::string bare_name(std::string s) {
  if (auto p = s.rfind('.'); p != std::string::npos) s = s.substr(p + 1);
  while (!s.empty() && (s.back() == '>' || s.back() == '\'')) s.pop_back();
  return s;
}

}  // namespace

Dtype dtype_from(nb::handle obj) {
  std::string text = nb::isinstance<nb::str>(obj) ? nb::cast<std::string>(obj)
                                                  : nb::cast<std::string>(nb::str(obj));
  std::string name = bare_name(text);
  for (const auto& d : kDtypes) {
    if (name == d.name) return d;
  }
  fail(ErrorCode::invalid_argument, -1,
       "unsupported dtype '" + text + "'; supported: " + supported());
}

Dtype dtype_from(nb::dlpack::dtype d) {
  for (const auto& t : kDtypes) {
    if (t.dl == d) return t;
  }
  fail(ErrorCode::invalid_argument, -1,
       "unsupported element type (DLPack code " + std::to_string(d.code) + ", " +
           std::to_string(d.bits) + " bits); supported: " + supported());
}

}  // namespace tessera::python
