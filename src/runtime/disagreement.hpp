// How an error names PEs that disagree: grouped by what each reported, "PEs 0,2-3 passed X; PE 1
// passed Y". Shared by the checks that every PE agrees (job formation, collective calls). Internal.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace tessera::detail {

// "0,2-4,7" for a sorted list of PEs.
std::string pe_list(const std::vector<int>& pes);

// Groups PEs by the value they reported (values[pe]); `describe(value)` says what a group did.
template <class T, class Describe>
std::string describe_disagreement(const std::vector<T>& values, Describe describe) {
  std::map<T, std::vector<int>> groups;
  for (std::size_t pe = 0; pe < values.size(); ++pe)
    groups[values[pe]].push_back(static_cast<int>(pe));
  std::string out;
  for (const auto& [value, pes] : groups) {
    if (!out.empty()) out += "; ";
    out += (pes.size() == 1 ? "PE " : "PEs ") + pe_list(pes) + " " + describe(value);
  }
  return out;
}

}  // namespace tessera::detail
