// tessera.Array: a symmetric heap block (or a node-local peer's copy of one) with a shape and a
// dtype, exported to NumPy and torch through DLPack without a copy.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dtype.hpp"
#include "state.hpp"

namespace tessera::python {

struct Array {
  std::shared_ptr<Lifetime> lifetime;
  void* data = nullptr;
  int pe = -1;             // whose memory data points into
  bool owner = true;       // false: a view (peer copy, op output); free() refuses
  std::size_t offset = 0;  // into the symmetric heap: the same on every PE
  std::vector<std::size_t> shape;
  Dtype dtype;

  std::size_t size() const;
  std::size_t nbytes() const { return size() * dtype.itemsize(); }
  // Throws Error(invalid_argument) once the block was freed or its runtime finalized.
  void check_usable(const char* what) const;
  std::string repr() const;
};

// A contiguous buffer taken from a tessera.Array or any DLPack / buffer-protocol object.
struct Buffer {
  nb::object keep;  // the object the pointer came from, held while work uses it
  void* data = nullptr;
  std::vector<std::size_t> shape;
  Dtype dtype;
  std::size_t nbytes = 0;
  std::string describe() const;  // "(4, 8) float32"
};

// Reads `obj` as a buffer; throws Error(invalid_argument) naming `what` when it is not an array,
// not C-contiguous, read-only where `writable`, or of a dtype Tessera does not know.
Buffer buffer_of(nb::handle obj, bool writable, const char* what, int pe);

void bind_array(nb::module_& m);

}  // namespace tessera::python
