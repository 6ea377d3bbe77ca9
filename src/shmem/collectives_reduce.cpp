// The team-based reductions shmem_TYPENAME_{and,or,xor,max,min,sum,prod}_reduce: one template
// over the element type and the operation. Each element is combined over the members' sources
// in team order (read by load/store where mapped, else into a bounce buffer through the proxy),
// chunk by chunk so the partial result stays in cache: by every member (small calls), or by the
// member owning its slice, whose result the others then copy (large calls). Either way every
// member ends with the same bits, floating point included.
#include <algorithm>
#include <complex>
#include <type_traits>

#include "shmem/collectives.hpp"

namespace tessera::shmem {
namespace {

// Integer arithmetic wraps (as the two's complement hardware does) instead of overflowing: done
// in an unsigned type at least as wide as unsigned int, so that neither the sum nor the product
// of two promoted operands can overflow a signed int.
template <class T>
using wrap_t = std::common_type_t<std::make_unsigned_t<T>, unsigned int>;

struct And {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};
struct Or {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};
struct Xor {
  template <class T>
  T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};
struct Max {
  template <class T>
  T operator()(T a, T b) const {
    return b > a ? b : a;
  }
};
struct Min {
  template <class T>
  T operator()(T a, T b) const {
    return b < a ? b : a;
  }
};
struct Sum {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
    } else {
      return a + b;
    }
  }
};
struct Prod {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
    } else {
      return a * b;
    }
  }
};

// Elements combined per member before moving to the next chunk.
constexpr std::size_t kChunkBytes = 16 * 1024;

// From this many elements, on teams of three or more, a reduction runs in two phases (each
// member reduces its slice, then gathers the others' slices from their dest): about 2 n reads
// per PE instead of (team size) x n, for one more sync.
constexpr std::size_t kSplitElements = 4096;

// Combines elements [first, first + count) of every member's source, in team order, into
// out[0, count); `out` must not be any member's source.
template <class T, class Op>
void combine(const State& s, const char* routine, const tessera_shmem_team& team, const T* source,
             std::size_t first, std::size_t count, T* out, Op op) {
  const std::size_t chunk = std::max<std::size_t>(1, kChunkBytes / sizeof(T));
  std::vector<T> bounce;  // a chunk of an unmapped member's source
  for (std::size_t done = 0; done < count; done += chunk) {
    const std::size_t c = std::min(chunk, count - done);
    for (int k = 0; k < team.team.size; ++k) {
      const int pe = team.team.pe(k);
      const T* in = ctx_of(s, source).ptr(source + first + done, pe);
      if (in == nullptr) {
        bounce.resize(c);
        read_member(s, routine, bounce.data(), source + first + done, c * sizeof(T), pe);
        in = bounce.data();
      }
      T* o = out + done;
      if (k == 0) {
        std::copy(in, in + c, o);
      } else {
        for (std::size_t i = 0; i < c; ++i) o[i] = op(o[i], in[i]);
      }
    }
  }
}

template <class T, class Op>
int reduce(const char* routine, shmem_team_t team, T* dest, const T* source, std::size_t n, Op op) {
  State& s = state(routine);
  if (!usable_team(team)) return -1;
  const std::size_t bytes = n * sizeof(T);
  require_symmetric_range(s, routine, dest, bytes, "destination");
  require_symmetric_range(s, routine, source, bytes, "source");
  const auto m = static_cast<std::size_t>(team->team.size);
  const bool disjoint = dest + n <= source || source + n <= dest;
  if (m < 3 || n < kSplitElements || !(disjoint || dest == source)) {
    return run_collective(s, routine, *team, [&] {
      Landing landing(dest, bytes, source, bytes);
      combine(s, routine, *team, source, 0, n, reinterpret_cast<T*>(landing.at()), op);
      return landing;
    });
  }
  // Two phases. Slice j is [n j / m, n (j + 1) / m); this member (rank r) owns slice r. Phase 1
  // reads slice r of every source: in place, this member's own slice r is read by nobody else,
  // so the result goes there through a private chunk. Phase 2 reads slice j of member j's dest;
  // by then (the middle sync) no member reads a source any more, so dest may overwrite it. The
  // closing sync keeps slice r of this dest unchanged until every member has read it.
  const auto slice = [&](std::size_t j) { return n * j / m; };
  const auto r = static_cast<std::size_t>(team->team.my_rank);
  team_sync(s, *team, routine);
  {
    const std::size_t chunk = std::max<std::size_t>(1, kChunkBytes / sizeof(T));
    std::vector<T> result(std::min(chunk, slice(r + 1) - slice(r)));
    for (std::size_t first = slice(r); first < slice(r + 1); first += chunk) {
      const std::size_t count = std::min(chunk, slice(r + 1) - first);
      combine(s, routine, *team, source, first, count, result.data(), op);
      std::copy(result.data(), result.data() + count, dest + first);
    }
  }
  team_sync(s, *team, routine);
  for (std::size_t j = 0; j < m; ++j) {
    if (j == r) continue;
    read_member(s, routine, dest + slice(j), dest + slice(j), (slice(j + 1) - slice(j)) * sizeof(T),
                team->team.pe(static_cast<int>(j)));
  }
  team_sync(s, *team, routine);
  return 0;
}

}  // namespace
}  // namespace tessera::shmem

extern "C" {

// One reduction routine: TYPENAME, TYPE, the operation's name and its functor.
#define TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, OP, FUNCTOR)                                   \
  int shmem_##NAME##_##OP(shmem_team_t team, TYPE* dest, const TYPE* source, size_t nreduce) { \
    return tessera::shmem::reduce("shmem_" #NAME "_" #OP, team, dest, source, nreduce,         \
                                  tessera::shmem::FUNCTOR{});                                  \
  }
#define TESSERA_SHMEM_DEFINE_BITWISE_REDUCE(NAME, TYPE)    \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, and_reduce, And) \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, or_reduce, Or)   \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, xor_reduce, Xor)
#define TESSERA_SHMEM_DEFINE_ORDERED_REDUCE(NAME, TYPE)    \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, max_reduce, Max) \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, min_reduce, Min)
#define TESSERA_SHMEM_DEFINE_ARITHMETIC_REDUCE(NAME, TYPE) \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, sum_reduce, Sum) \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, prod_reduce, Prod)
TESSERA_SHMEM_BITWISE_REDUCE_TYPES(TESSERA_SHMEM_DEFINE_BITWISE_REDUCE)
TESSERA_SHMEM_ORDERED_REDUCE_TYPES(TESSERA_SHMEM_DEFINE_ORDERED_REDUCE)
TESSERA_SHMEM_ORDERED_REDUCE_TYPES(TESSERA_SHMEM_DEFINE_ARITHMETIC_REDUCE)
TESSERA_SHMEM_COMPLEX_REDUCE_TYPES(TESSERA_SHMEM_DEFINE_ARITHMETIC_REDUCE)
#undef TESSERA_SHMEM_DEFINE_REDUCE
#undef TESSERA_SHMEM_DEFINE_BITWISE_REDUCE
#undef TESSERA_SHMEM_DEFINE_ORDERED_REDUCE
#undef TESSERA_SHMEM_DEFINE_ARITHMETIC_REDUCE

}  // extern "C"
