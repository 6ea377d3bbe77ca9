// Fills a buffer of any supported dtype with one value (Runtime.full).
#pragma once

#include <cstddef>
#include <cstdint>

#include "dtype.hpp"

namespace tessera::python {

// Integer dtypes take `exact` (a Python int keeps all 64 bits), floating ones `value`.
void fill(void* data, std::size_t count, const Dtype& dtype, double value, std::int64_t exact);

}  // namespace tessera::python
