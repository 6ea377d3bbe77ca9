// Point-to-point synchronization: wait_until and test on one variable, on sets of variables
// (all, any, some) and with one comparison value per variable (the _vector forms).
#include <cstdint>
#include <vector>

#include "shmem/wait.hpp"

namespace tessera::shmem {
namespace {

// The variables of one call: ivars[i] is in the set unless status[i] is nonzero; it compares
// with values[i] when `values` is given, else with `value`.
// Where this thread's next test_any/wait_until_any scan begins (see WaitSet::any). Per thread,
// so that SHMEM_THREAD_MULTIPLE callers need no lock; one counter for every set and type.
thread_local std::size_t any_start = 0;

template <class T>
struct WaitSet {
  const char* routine;
  T* ivars;
  std::size_t n;
  const int* status;
  device::Cmp cmp;
  T value;
  const T* values;

  bool active(std::size_t i) const { return status == nullptr || status[i] == 0; }
  bool satisfied(std::size_t i) const {
    return holds(cmp, load_acquire(&ivars[i]), values != nullptr ? values[i] : value);
  }
  bool empty() const {
    for (std::size_t i = 0; i < n; ++i)
      if (active(i)) return false;
    return true;
  }
  bool all() const {
    for (std::size_t i = 0; i < n; ++i)
      if (active(i) && !satisfied(i)) return false;
    return true;
  }
  // The first active, satisfied variable at or after this thread's rotating start, wrapping
  // around; the start then moves past the one found. OpenSHMEM 1.5 asks that a series of
  // _any calls eventually return every satisfied index: with all of them satisfied, n calls
  // on the same set return each index once.
  std::size_t any() const {
    if (n == 0) return SIZE_MAX;
    const std::size_t start = any_start % n;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (start + k) % n;
      if (active(i) && satisfied(i)) {
        any_start = i + 1;
        return i;
      }
    }
    return SIZE_MAX;
  }
  std::size_t some(std::size_t* indices) const {
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (active(i) && satisfied(i)) indices[count++] = i;
    return count;
  }
  std::string describe(const State& s) const {
    std::string out = std::to_string(n) + " variables from " + where(s, ivars) + "; values now:";
    for (std::size_t i = 0; i < n && i < 8; ++i)
      out += " " + (active(i) ? std::to_string(load_acquire(&ivars[i])) : std::string("-"));
    return out + (n > 8 ? " ..." : "");
  }
};

template <class T>
WaitSet<T> make_set(const char* routine, T* ivars, std::size_t n, const int* status, int cmp,
                    T value, const T* values) {
  const State& s = state(routine);
  if (n > 0) symmetric_ctx(s, routine, ivars, n * sizeof(T), "ivars");
  return WaitSet<T>{routine, ivars, n, status, to_cmp(routine, cmp), value, values};
}

template <class T>
void wait_until(const char* routine, T* ivar, int cmp, T value) {
  const State& s = state(routine);
  symmetric_ctx(s, routine, ivar, sizeof(T), "ivar");
  const device::Cmp c = to_cmp(routine, cmp);
  spin_until(
      s, routine, [&] { return holds(c, load_acquire(ivar), value); },
      [&] {
        return "ivar at " + where(s, ivar) + " never satisfied (value " + device::to_string(c) +
               " " + std::to_string(value) + "); last value " + std::to_string(load_acquire(ivar));
      });
}

template <class T>
int test(const char* routine, T* ivar, int cmp, T value) {
  const State& s = state(routine);
  symmetric_ctx(s, routine, ivar, sizeof(T), "ivar");
  return holds(to_cmp(routine, cmp), load_acquire(ivar), value) ? 1 : 0;
}

template <class T>
void wait_all(const WaitSet<T>& set) {
  const State& s = state(set.routine);
  spin_until(
      s, set.routine, [&] { return set.all(); },
      [&] { return "not all of " + set.describe(s) + " satisfied the comparison"; });
}

template <class T>
std::size_t wait_any(const WaitSet<T>& set) {
  if (set.empty()) return SIZE_MAX;
  const State& s = state(set.routine);
  std::size_t found = SIZE_MAX;
  spin_until(
      s, set.routine, [&] { return (found = set.any()) != SIZE_MAX; },
      [&] { return "none of " + set.describe(s) + " satisfied the comparison"; });
  return found;
}

template <class T>
std::size_t wait_some(const WaitSet<T>& set, std::size_t* indices) {
  if (set.empty()) return 0;
  const State& s = state(set.routine);
  std::size_t count = 0;
  spin_until(
      s, set.routine, [&] { return (count = set.some(indices)) != 0; },
      [&] { return "none of " + set.describe(s) + " satisfied the comparison"; });
  return count;
}

}  // namespace
}  // namespace tessera::shmem

namespace ts = tessera::shmem;

extern "C" {

#define TESSERA_SHMEM_DEFINE_SYNC(NAME, TYPE)                                                      \
  void shmem_##NAME##_wait_until(TYPE* ivar, int cmp, TYPE cmp_value) {                            \
    ts::wait_until("shmem_" #NAME "_wait_until", ivar, cmp, cmp_value);                            \
  }                                                                                                \
  int shmem_##NAME##_test(TYPE* ivar, int cmp, TYPE cmp_value) {                                   \
    return ts::test("shmem_" #NAME "_test", ivar, cmp, cmp_value);                                 \
  }                                                                                                \
  void shmem_##NAME##_wait_until_all(TYPE* ivars, size_t nelems, const int* status, int cmp,       \
                                     TYPE cmp_value) {                                             \
    ts::wait_all(ts::make_set<TYPE>("shmem_" #NAME "_wait_until_all", ivars, nelems, status, cmp,  \
                                    cmp_value, nullptr));                                          \
  }                                                                                                \
  size_t shmem_##NAME##_wait_until_any(TYPE* ivars, size_t nelems, const int* status, int cmp,     \
                                       TYPE cmp_value) {                                           \
    return ts::wait_any(ts::make_set<TYPE>("shmem_" #NAME "_wait_until_any", ivars, nelems,        \
                                           status, cmp, cmp_value, nullptr));                      \
  }                                                                                                \
  size_t shmem_##NAME##_wait_until_some(TYPE* ivars, size_t nelems, size_t* indices,               \
                                        const int* status, int cmp, TYPE cmp_value) {              \
    return ts::wait_some(ts::make_set<TYPE>("shmem_" #NAME "_wait_until_some", ivars, nelems,      \
                                            status, cmp, cmp_value, nullptr),                      \
                         indices);                                                                 \
  }                                                                                                \
  int shmem_##NAME##_test_all(TYPE* ivars, size_t nelems, const int* status, int cmp,              \
                              TYPE cmp_value) {                                                    \
    return ts::make_set<TYPE>("shmem_" #NAME "_test_all", ivars, nelems, status, cmp, cmp_value,   \
                              nullptr)                                                             \
                   .all()                                                                          \
               ? 1                                                                                 \
               : 0;                                                                                \
  }                                                                                                \
  size_t shmem_##NAME##_test_any(TYPE* ivars, size_t nelems, const int* status, int cmp,           \
                                 TYPE cmp_value) {                                                 \
    return ts::make_set<TYPE>("shmem_" #NAME "_test_any", ivars, nelems, status, cmp, cmp_value,   \
                              nullptr)                                                             \
        .any();                                                                                    \
  }                                                                                                \
  size_t shmem_##NAME##_test_some(TYPE* ivars, size_t nelems, size_t* indices, const int* status,  \
                                  int cmp, TYPE cmp_value) {                                       \
    return ts::make_set<TYPE>("shmem_" #NAME "_test_some", ivars, nelems, status, cmp, cmp_value,  \
                              nullptr)                                                             \
        .some(indices);                                                                            \
  }                                                                                                \
  void shmem_##NAME##_wait_until_all_vector(TYPE* ivars, size_t nelems, const int* status,         \
                                            int cmp, TYPE* cmp_values) {                           \
    ts::wait_all(ts::make_set<TYPE>("shmem_" #NAME "_wait_until_all_vector", ivars, nelems,        \
                                    status, cmp, static_cast<TYPE>(0), cmp_values));               \
  }                                                                                                \
  size_t shmem_##NAME##_wait_until_any_vector(TYPE* ivars, size_t nelems, const int* status,       \
                                              int cmp, TYPE* cmp_values) {                         \
    return ts::wait_any(ts::make_set<TYPE>("shmem_" #NAME "_wait_until_any_vector", ivars, nelems, \
                                           status, cmp, static_cast<TYPE>(0), cmp_values));        \
  }                                                                                                \
  size_t shmem_##NAME##_wait_until_some_vector(TYPE* ivars, size_t nelems, size_t* indices,        \
                                               const int* status, int cmp, TYPE* cmp_values) {     \
    return ts::wait_some(                                                                          \
        ts::make_set<TYPE>("shmem_" #NAME "_wait_until_some_vector", ivars, nelems, status, cmp,   \
                           static_cast<TYPE>(0), cmp_values),                                      \
        indices);                                                                                  \
  }                                                                                                \
  int shmem_##NAME##_test_all_vector(TYPE* ivars, size_t nelems, const int* status, int cmp,       \
                                     TYPE* cmp_values) {                                           \
    return ts::make_set<TYPE>("shmem_" #NAME "_test_all_vector", ivars, nelems, status, cmp,       \
                              static_cast<TYPE>(0), cmp_values)                                    \
                   .all()                                                                          \
               ? 1                                                                                 \
               : 0;                                                                                \
  }                                                                                                \
  size_t shmem_##NAME##_test_any_vector(TYPE* ivars, size_t nelems, const int* status, int cmp,    \
                                        TYPE* cmp_values) {                                        \
    return ts::make_set<TYPE>("shmem_" #NAME "_test_any_vector", ivars, nelems, status, cmp,       \
                              static_cast<TYPE>(0), cmp_values)                                    \
        .any();                                                                                    \
  }                                                                                                \
  size_t shmem_##NAME##_test_some_vector(TYPE* ivars, size_t nelems, size_t* indices,              \
                                         const int* status, int cmp, TYPE* cmp_values) {           \
    return ts::make_set<TYPE>("shmem_" #NAME "_test_some_vector", ivars, nelems, status, cmp,      \
                              static_cast<TYPE>(0), cmp_values)                                    \
        .some(indices);                                                                            \
  }
TESSERA_SHMEM_SYNC_TYPES(TESSERA_SHMEM_DEFINE_SYNC)
#undef TESSERA_SHMEM_DEFINE_SYNC

}  // extern "C"
