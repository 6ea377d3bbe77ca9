#include "runtime/disagreement.hpp"

namespace tessera::detail {

std::string pe_list(const std::vector<int>& pes) {
  std::string out;
  for (std::size_t i = 0; i < pes.size();) {
    std::size_t j = i;
    while (j + 1 < pes.size() && pes[j + 1] == pes[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(pes[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(pes[j]);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace tessera::detail
