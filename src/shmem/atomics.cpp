// Atomic memory operations: each is one device-API atomic on the target word, so it is atomic
// with respect to every other PE's AMOs on that word (a mapped peer's heap is the same physical
// memory in every process; a peer on another node is updated by the network's atomics).
#include <bit>
#include <cstdint>

#include "shmem/state.hpp"

namespace tessera::shmem {
namespace {

namespace td = tessera::device;

// The word an AMO on T operates on: the integer of T's size and signedness; float and double
// are moved as the bits of a same-sized unsigned word (fetch, set and swap only).
template <class T>
using amo_word_t = std::conditional_t<std::is_floating_point_v<T>,
                                      typename WordOf<sizeof(T), false>::type, word_t<T>>;

// The word an AMO targets and the Context that reaches it (the heap's or the static data's).
template <class T>
struct Target {
  const td::Context& ctx;
  amo_word_t<T>* word;
};

template <class T>
Target<T> target(const char* routine, const T* dest, int pe) {
  State& s = state(routine);
  require_pe(s, routine, pe);
  const td::Context& ctx = symmetric_ctx(s, routine, dest, sizeof(T), "destination", pe);
  if (reinterpret_cast<std::uintptr_t>(dest) % sizeof(T) != 0) {
    die(routine,
        "the atomic object is not aligned to its size of " + std::to_string(sizeof(T)) + " bytes");
  }
  return {ctx, reinterpret_cast<amo_word_t<T>*>(const_cast<T*>(dest))};
}

template <class T>
amo_word_t<T> to_word(T value) {
  return std::bit_cast<amo_word_t<T>>(value);
}

template <class T>
T from_word(amo_word_t<T> word) {
  return std::bit_cast<T>(word);
}

template <class T>
T fetch(const char* routine, const T* source, int pe) {
  const Target<T> t = target(routine, source, pe);
  return from_word<T>(guarded(routine, [&] { return td::atomic_load(t.ctx, t.word, pe); }));
}

template <class T>
void set(const char* routine, T* dest, T value, int pe) {
  const Target<T> t = target(routine, dest, pe);
  guarded(routine, [&] { td::atomic_store(t.ctx, t.word, to_word(value), pe); });
}

template <class T>
T swap(const char* routine, T* dest, T value, int pe) {
  const Target<T> t = target(routine, dest, pe);
  return from_word<T>(
      guarded(routine, [&] { return td::atomic_exchange(t.ctx, t.word, to_word(value), pe); }));
}

template <class T>
T compare_swap(const char* routine, T* dest, T cond, T value, int pe) {
  const Target<T> t = target(routine, dest, pe);
  return from_word<T>(guarded(routine, [&] {
    return td::atomic_compare_exchange(t.ctx, t.word, to_word(cond), to_word(value), pe);
  }));
}

enum class Rmw { add, and_, or_, xor_ };

template <class T>
T fetch_op(const char* routine, Rmw op, T* dest, T value, int pe) {
  const Target<T> t = target(routine, dest, pe);
  auto* w = t.word;
  const auto v = to_word(value);
  return from_word<T>(guarded(routine, [&] {
    const td::Context& ctx = t.ctx;
    switch (op) {
      case Rmw::add:
        return td::atomic_fetch_add(ctx, w, v, pe);
      case Rmw::and_:
        return td::atomic_fetch_and(ctx, w, v, pe);
      case Rmw::or_:
        return td::atomic_fetch_or(ctx, w, v, pe);
      case Rmw::xor_:
        return td::atomic_fetch_xor(ctx, w, v, pe);
    }
    return decltype(v){};
  }));
}

// The non-fetching add: the device API's atomic_add, which GPUs and networks may issue as a
// reduction.
template <class T>
void add(const char* routine, T* dest, T value, int pe) {
  const Target<T> t = target(routine, dest, pe);
  guarded(routine, [&] { td::atomic_add(t.ctx, t.word, to_word(value), pe); });
}

}  // namespace
}  // namespace tessera::shmem

namespace ts = tessera::shmem;

extern "C" {

#define TESSERA_SHMEM_DEFINE_EXTENDED_AMO(NAME, TYPE)                                \
  TYPE shmem_##NAME##_atomic_fetch(const TYPE* source, int pe) {                     \
    return ts::fetch("shmem_" #NAME "_atomic_fetch", source, pe);                    \
  }                                                                                  \
  void shmem_##NAME##_atomic_set(TYPE* dest, TYPE value, int pe) {                   \
    ts::set("shmem_" #NAME "_atomic_set", dest, value, pe);                          \
  }                                                                                  \
  TYPE shmem_##NAME##_atomic_swap(TYPE* dest, TYPE value, int pe) {                  \
    return ts::swap("shmem_" #NAME "_atomic_swap", dest, value, pe);                 \
  }                                                                                  \
  void shmem_##NAME##_atomic_fetch_nbi(TYPE* fetch, const TYPE* source, int pe) {    \
    *fetch = ts::fetch("shmem_" #NAME "_atomic_fetch_nbi", source, pe);              \
  }                                                                                  \
  void shmem_##NAME##_atomic_swap_nbi(TYPE* fetch, TYPE* dest, TYPE value, int pe) { \
    *fetch = ts::swap("shmem_" #NAME "_atomic_swap_nbi", dest, value, pe);           \
  }

#define TESSERA_SHMEM_DEFINE_STANDARD_AMO(NAME, TYPE)                                             \
  TESSERA_SHMEM_DEFINE_EXTENDED_AMO(NAME, TYPE)                                                   \
  TYPE shmem_##NAME##_atomic_compare_swap(TYPE* dest, TYPE cond, TYPE value, int pe) {            \
    return ts::compare_swap("shmem_" #NAME "_atomic_compare_swap", dest, cond, value, pe);        \
  }                                                                                               \
  TYPE shmem_##NAME##_atomic_fetch_inc(TYPE* dest, int pe) {                                      \
    return ts::fetch_op("shmem_" #NAME "_atomic_fetch_inc", ts::Rmw::add, dest,                   \
                        static_cast<TYPE>(1), pe);                                                \
  }                                                                                               \
  void shmem_##NAME##_atomic_inc(TYPE* dest, int pe) {                                            \
    ts::add("shmem_" #NAME "_atomic_inc", dest, static_cast<TYPE>(1), pe);                        \
  }                                                                                               \
  TYPE shmem_##NAME##_atomic_fetch_add(TYPE* dest, TYPE value, int pe) {                          \
    return ts::fetch_op("shmem_" #NAME "_atomic_fetch_add", ts::Rmw::add, dest, value, pe);       \
  }                                                                                               \
  void shmem_##NAME##_atomic_add(TYPE* dest, TYPE value, int pe) {                                \
    ts::add("shmem_" #NAME "_atomic_add", dest, value, pe);                                       \
  }                                                                                               \
  void shmem_##NAME##_atomic_compare_swap_nbi(TYPE* fetch, TYPE* dest, TYPE cond, TYPE value,     \
                                              int pe) {                                           \
    *fetch = ts::compare_swap("shmem_" #NAME "_atomic_compare_swap_nbi", dest, cond, value, pe);  \
  }                                                                                               \
  void shmem_##NAME##_atomic_fetch_inc_nbi(TYPE* fetch, TYPE* dest, int pe) {                     \
    *fetch = ts::fetch_op("shmem_" #NAME "_atomic_fetch_inc_nbi", ts::Rmw::add, dest,             \
                          static_cast<TYPE>(1), pe);                                              \
  }                                                                                               \
  void shmem_##NAME##_atomic_fetch_add_nbi(TYPE* fetch, TYPE* dest, TYPE value, int pe) {         \
    *fetch = ts::fetch_op("shmem_" #NAME "_atomic_fetch_add_nbi", ts::Rmw::add, dest, value, pe); \
  }

#define TESSERA_SHMEM_DEFINE_BITWISE_AMO(NAME, TYPE)                                               \
  TYPE shmem_##NAME##_atomic_fetch_and(TYPE* dest, TYPE value, int pe) {                           \
    return ts::fetch_op("shmem_" #NAME "_atomic_fetch_and", ts::Rmw::and_, dest, value, pe);       \
  }                                                                                                \
  void shmem_##NAME##_atomic_and(TYPE* dest, TYPE value, int pe) {                                 \
    ts::fetch_op("shmem_" #NAME "_atomic_and", ts::Rmw::and_, dest, value, pe);                    \
  }                                                                                                \
  TYPE shmem_##NAME##_atomic_fetch_or(TYPE* dest, TYPE value, int pe) {                            \
    return ts::fetch_op("shmem_" #NAME "_atomic_fetch_or", ts::Rmw::or_, dest, value, pe);         \
  }                                                                                                \
  void shmem_##NAME##_atomic_or(TYPE* dest, TYPE value, int pe) {                                  \
    ts::fetch_op("shmem_" #NAME "_atomic_or", ts::Rmw::or_, dest, value, pe);                      \
  }                                                                                                \
  TYPE shmem_##NAME##_atomic_fetch_xor(TYPE* dest, TYPE value, int pe) {                           \
    return ts::fetch_op("shmem_" #NAME "_atomic_fetch_xor", ts::Rmw::xor_, dest, value, pe);       \
  }                                                                                                \
  void shmem_##NAME##_atomic_xor(TYPE* dest, TYPE value, int pe) {                                 \
    ts::fetch_op("shmem_" #NAME "_atomic_xor", ts::Rmw::xor_, dest, value, pe);                    \
  }                                                                                                \
  void shmem_##NAME##_atomic_fetch_and_nbi(TYPE* fetch, TYPE* dest, TYPE value, int pe) {          \
    *fetch = ts::fetch_op("shmem_" #NAME "_atomic_fetch_and_nbi", ts::Rmw::and_, dest, value, pe); \
  }                                                                                                \
  void shmem_##NAME##_atomic_fetch_or_nbi(TYPE* fetch, TYPE* dest, TYPE value, int pe) {           \
    *fetch = ts::fetch_op("shmem_" #NAME "_atomic_fetch_or_nbi", ts::Rmw::or_, dest, value, pe);   \
  }                                                                                                \
  void shmem_##NAME##_atomic_fetch_xor_nbi(TYPE* fetch, TYPE* dest, TYPE value, int pe) {          \
    *fetch = ts::fetch_op("shmem_" #NAME "_atomic_fetch_xor_nbi", ts::Rmw::xor_, dest, value, pe); \
  }

TESSERA_SHMEM_STANDARD_AMO_TYPES(TESSERA_SHMEM_DEFINE_STANDARD_AMO)
TESSERA_SHMEM_FLOAT_AMO_TYPES(TESSERA_SHMEM_DEFINE_EXTENDED_AMO)
TESSERA_SHMEM_BITWISE_AMO_TYPES(TESSERA_SHMEM_DEFINE_BITWISE_AMO)
#undef TESSERA_SHMEM_DEFINE_EXTENDED_AMO
#undef TESSERA_SHMEM_DEFINE_STANDARD_AMO
#undef TESSERA_SHMEM_DEFINE_BITWISE_AMO

}  // extern "C"
