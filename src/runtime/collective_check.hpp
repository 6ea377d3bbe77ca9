// The collective-sequence check: every host collective call (the runtime's own, and an op's
// setup) first allgathers what each PE is calling, numbered, with its arguments, so PEs that call
// different collectives, or the same one with different arguments, are told so instead of
// hanging or pairing the wrong calls. Internal.
#pragma once

#include <cstdint>
#include <string_view>

#include "tessera/bootstrap.hpp"

namespace tessera::detail {

// The runtime's own collective calls; `op` is a call an op makes, named by the op itself.
enum class CollectiveKind : std::uint32_t {
  malloc = 1,
  free = 2,
  calloc = 3,
  barrier = 4,
  finalize = 5,
  op = 6,
};

// One PE's count of its collective calls.
class CollectiveSequence {
 public:
  // Longest op call name carried to the peers; a longer one is cut (it is only described).
  static constexpr std::size_t kMaxOpName = 63;

  // Collective over `bootstrap` (this PE is `pe` of `n_pes`): numbers the call and compares it
  // with every PE's. Throws Error(invalid_argument) on every PE when the kinds, numbers,
  // arguments (`a`, `b`: what they mean depends on the kind) or op names differ, naming the PEs
  // that disagree and the call each made: "<what>: PEs made different collective calls: PE 0
  // called malloc #3 with bytes=64, align=64; PE 1 called barrier #3". `op_name` (kind op only)
  // is how the description names the call: "ops::MoeBuffer creation". When the exchange itself
  // fails (a timeout, a lost peer), rethrows its error with "<what>: " in front.
  void check(Bootstrap& bootstrap, int pe, int n_pes, CollectiveKind kind, std::string_view op_name,
             const char* what, std::uint64_t a = 0, std::uint64_t b = 0);

 private:
  std::uint64_t calls_ = 0;
};

}  // namespace tessera::detail
