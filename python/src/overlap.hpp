// The fused ops' overlap options by name ("auto", "bulk_synchronous", ...; "push", "pull"), as
// tessera::ops parses them, the parser's message prefixed with the op's name.
#pragma once

#include <string>

#include "tessera/ops/overlap.hpp"

namespace tessera::python {

// Throws Error(invalid_argument) "<op>: overlap pattern 'x' is not one of ..." on PE `pe`.
ops::OverlapPattern pattern_from(const std::string& name, const char* op, int pe);
// Throws Error(invalid_argument) "<op>: communication direction 'x' is not one of ...".
ops::CommDirection direction_from(const std::string& name, const char* op, int pe);

}  // namespace tessera::python
