#include "overlap.hpp"

#include "state.hpp"

namespace tessera::python {

ops::OverlapPattern pattern_from(const std::string& name, const char* op, int pe) {
  try {
    return ops::overlap_pattern_from_string(name);
  } catch (const Error& e) {
    fail(e.code(), pe, std::string(op) + ": " + e.message());
  }
}

ops::CommDirection direction_from(const std::string& name, const char* op, int pe) {
  try {
    return ops::comm_direction_from_string(name);
  } catch (const Error& e) {
    fail(e.code(), pe, std::string(op) + ": " + e.message());
  }
}

}  // namespace tessera::python
