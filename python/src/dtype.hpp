// Element types of symmetric arrays: their names (as NumPy and torch spell them) and DLPack codes.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <string>

namespace tessera::python {

namespace nb = nanobind;

struct Dtype {
  const char* name = "";  // "float32", "bfloat16", "int64", ...
  nb::dlpack::dtype dl;
  std::size_t itemsize() const { return dl.bits / 8; }
  bool operator==(const Dtype& o) const {
    return dl.code == o.dl.code && dl.bits == o.dl.bits && dl.lanes == o.dl.lanes;
  }
};

// A dtype from a name ("float32"), a NumPy dtype or scalar type, or a torch.dtype; throws
// Error(invalid_argument) naming the supported ones.
Dtype dtype_from(nb::handle obj);
// The dtype of an imported DLPack array; throws Error(invalid_argument) for one Tessera has no
// name for.
Dtype dtype_from(nb::dlpack::dtype dl);

}  // namespace tessera::python
