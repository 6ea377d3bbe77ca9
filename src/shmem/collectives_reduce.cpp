// The team-based reductions shmem_TYPENAME_{and,or,xor,max,min,sum,prod}_reduce: one template
// over the element type and the operation. Every member reads every member's source (by
// load/store where mapped, else into a bounce buffer through the proxy) and combines them in
// team order, chunk by chunk so the partial result stays in cache; every member therefore
// computes the same bits, floating point included.
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

template <class T, class Op>
int reduce(const char* routine, shmem_team_t team, T* dest, const T* source, std::size_t n, Op op) {
  State& s = state(routine);
  if (!usable_team(team)) return -1;
  const std::size_t bytes = n * sizeof(T);
  require_symmetric_range(s, routine, dest, bytes, "destination");
  require_symmetric_range(s, routine, source, bytes, "source");
  return run_collective(s, routine, *team, [&] {
    Landing landing(dest, bytes, source, bytes);
    T* out = reinterpret_cast<T*>(landing.at());
    const auto m = static_cast<int>(team->pes.size());
    const std::size_t chunk = std::max<std::size_t>(1, kChunkBytes / sizeof(T));
    std::vector<T> bounce;  // a chunk of an unmapped member's source
    for (std::size_t first = 0; first < n; first += chunk) {
      const std::size_t count = std::min(chunk, n - first);
      for (int k = 0; k < m; ++k) {
        const int pe = world_pe(*team, k);
        const T* in = s.ctx.ptr(source + first, pe);
        if (in == nullptr) {
          bounce.resize(count);
          read_member(s, routine, bounce.data(), source + first, count * sizeof(T), pe);
          in = bounce.data();
        }
        T* o = out + first;
        if (k == 0) {
          std::copy(in, in + count, o);
        } else {
          for (std::size_t i = 0; i < count; ++i) o[i] = op(o[i], in[i]);
        }
      }
    }
    return landing;
  });
}

}  // namespace
}  // namespace tessera::shmem

extern "C" {

// One reduction routine: TYPENAME, TYPE, the operation's name and its functor.
#define TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, OP, FUNCTOR)                                     \
  int shmem_##NAME##_##OP(shmem_team_t team, TYPE* dest, const TYPE* source,            \
                                   size_t nreduce) {                                             \
    return tessera::shmem::reduce("shmem_" #NAME "_" #OP, team, dest, source, nreduce, \
                                  tessera::shmem::FUNCTOR{});                                    \
  }
#define TESSERA_SHMEM_DEFINE_BITWISE_REDUCE(NAME, TYPE) \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, and_reduce, And)     \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, or_reduce, Or)       \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, xor_reduce, Xor)
#define TESSERA_SHMEM_DEFINE_ORDERED_REDUCE(NAME, TYPE) \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, max_reduce, Max)     \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, min_reduce, Min)
#define TESSERA_SHMEM_DEFINE_ARITHMETIC_REDUCE(NAME, TYPE) \
  TESSERA_SHMEM_DEFINE_REDUCE(NAME, TYPE, sum_reduce, Sum)        \
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
