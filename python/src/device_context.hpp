// The addresses kernels written in Python (Triton) need: the heap-base table, the kernel
// Context's fields, and the flat context tessera.triton reads (device/flat_context.hpp) with
// the layout of everything it addresses.
#pragma once

#include <nanobind/nanobind.h>

#include "tessera/runtime.hpp"

namespace tessera::python {

namespace nb = nanobind;

nb::object heap_bases(const Runtime& rt);
// The named words of the flat context, in the order of tessera.DEVICE_CONTEXT_FIELDS.
nb::object device_context_array(const Runtime& rt);
nb::tuple device_context_fields();
// Every word of the flat context (header and heap bases), as Python ints.
nb::list triton_context_words(const Runtime& rt);
// tessera.TRITON_CONTEXT_WORDS: the word indices of the flat context and the layouts and enum
// values of what it points at (control page, failure record) and of the calls' operands.
nb::dict triton_context_layout();

}  // namespace tessera::python
