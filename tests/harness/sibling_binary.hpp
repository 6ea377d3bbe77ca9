// sibling_binary(name): the path of `name`, an executable of this build, found at run time next
// to the running test (every target of the build lands in <build>/bin). Tests that start
// tessera-run or a helper process use it instead of a path compiled in, so their objects do not
// depend on where the build tree lies and a fresh clone's build reuses the compiler cache.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tessera::harness {

inline std::string sibling_binary(const char* name) {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) {
    throw std::runtime_error(std::string("sibling_binary: readlink(/proc/self/exe): ") +
                             std::strerror(errno));
  }
  std::string dir(self, static_cast<std::size_t>(n));
  dir.erase(dir.find_last_of('/') + 1);
  return dir + name;
}

}  // namespace tessera::harness
