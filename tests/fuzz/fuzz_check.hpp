// Invariant checks of the fuzz targets: a violated invariant prints what was expected and what
// was seen, then aborts, so libFuzzer records the input as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>

#define TESSERA_FUZZ_CHECK(condition, ...)                                                     \
  do {                                                                                         \
    if (!(condition)) {                                                                        \
      std::fprintf(stderr, "%s:%d: invariant violated: %s: ", __FILE__, __LINE__, #condition); \
      std::fprintf(stderr, __VA_ARGS__);                                                       \
      std::fputc('\n', stderr);                                                                \
      std::abort();                                                                            \
    }                                                                                          \
  } while (false)
