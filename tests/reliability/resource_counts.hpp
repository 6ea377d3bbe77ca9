// What a process holds that a finalized Runtime must have given back: open file descriptors,
// threads and memory mappings, read from /proc/self.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace tessera::harness {

// Under AddressSanitizer or ThreadSanitizer, malloc is the sanitizer's allocator, which maps
// new regions as it goes (and ASan's quarantine holds freed memory back): the mapping count is
// then the runtime's, not Tessera's, and is not compared. LeakSanitizer checks memory instead.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kCountMappings = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kCountMappings = false;
#else
inline constexpr bool kCountMappings = true;
#endif
#else
inline constexpr bool kCountMappings = true;
#endif

struct ResourceCounts {
  std::size_t fds = 0;            // entries of /proc/self/fd
  std::size_t threads = 0;        // entries of /proc/self/task
  std::size_t mappings = 0;       // lines of /proc/self/maps
  std::vector<std::string> maps;  // those lines, sorted

  // "fds 12, threads 1, mappings 240"
  std::string to_string() const {
    return "fds " + std::to_string(fds) + ", threads " + std::to_string(threads) + ", mappings " +
           std::to_string(mappings);
  }
  // True when no count is larger than in `baseline`.
  bool within(const ResourceCounts& baseline) const {
    return fds <= baseline.fds && threads <= baseline.threads &&
           (!kCountMappings || mappings <= baseline.mappings);
  }
  // The mappings that are here but not in `baseline`, one per line, to say what leaked.
  std::string new_mappings(const ResourceCounts& baseline) const {
    std::vector<std::string> added;
    std::set_difference(maps.begin(), maps.end(), baseline.maps.begin(), baseline.maps.end(),
                        std::back_inserter(added));
    std::string text;
    for (const auto& line : added) text += line + "\n";
    return text;
  }
};

inline std::size_t count_entries(const char* dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

inline ResourceCounts count_resources() {
  ResourceCounts c;
  // The iterator's own descriptor on /proc/self/fd is open while it counts, every time alike.
  c.fds = count_entries("/proc/self/fd");
  c.threads = count_entries("/proc/self/task");
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) c.maps.push_back(line);
  std::sort(c.maps.begin(), c.maps.end());
  c.mappings = c.maps.size();
  return c;
}

// The counts once they are back within `baseline`, or as they stand after `bound`. A joined
// thread's task can stay listed in /proc/self/task for a moment after pthread_join returns (the
// kernel wakes the joiner before it removes the task), which slow runs under a sanitizer see;
// anything still there after the bound was not given back.
inline ResourceCounts count_resources_within(
    const ResourceCounts& baseline,
    std::chrono::milliseconds bound = std::chrono::milliseconds(2000)) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  ResourceCounts c = count_resources();
  while (!c.within(baseline) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
    c = count_resources();
  }
  return c;
}

}  // namespace tessera::harness
