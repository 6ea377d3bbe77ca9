// Atomic memory operations, from C++ (the header is valid C++ too): every PE hammers the same
// words concurrently and the totals come out exact; fetch_inc hands out every ticket exactly
// once; compare_swap elects exactly one winner; swap loses no value; bitwise ops combine bits
// from every PE. For every standard, extended and bitwise AMO type.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "shmem_check.h"

namespace {

// Updates each PE makes per word (argv[1]; fewer where every AMO crosses the network).
int g_rounds = 300;

template <class T>
struct StandardAmo {
  const char* name;
  T (*fetch)(const T*, int);
  void (*set)(T*, T, int);
  T (*swap)(T*, T, int);
  T (*compare_swap)(T*, T, T, int);
  T (*fetch_inc)(T*, int);
  void (*inc)(T*, int);
  T (*fetch_add)(T*, T, int);
  void (*add)(T*, T, int);
  void (*fetch_nbi)(T*, const T*, int);
  void (*swap_nbi)(T*, T*, T, int);
  void (*compare_swap_nbi)(T*, T*, T, T, int);
  void (*fetch_inc_nbi)(T*, T*, int);
  void (*fetch_add_nbi)(T*, T*, T, int);
};

template <class T>
void test_standard(const StandardAmo<T>& amo) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  T* words = static_cast<T*>(shmem_calloc(8, sizeof(T)));
  T* tickets = static_cast<T*>(shmem_calloc(static_cast<size_t>(n * g_rounds), sizeof(T)));
  std::vector<T> mine;

  // Concurrent updates from every PE.
  for (int k = 0; k < g_rounds; ++k) {
    for (int pe = 0; pe < n; ++pe) amo.inc(&words[0], pe);
    amo.add(&words[1], static_cast<T>(3), right);
    mine.push_back(amo.fetch_inc(&words[2], 0));
    amo.fetch_add(&words[3], static_cast<T>(2), 0);
  }
  shmem_putmem(&tickets[me * g_rounds], mine.data(), mine.size() * sizeof(T), 0);
  shmem_barrier_all();
  check(words[0] == static_cast<T>(n * g_rounds), "%s inc: %lld, expected %d", amo.name,
        static_cast<long long>(words[0]), n * g_rounds);
  check(words[1] == static_cast<T>(3 * g_rounds), "%s add: %lld, expected %d", amo.name,
        static_cast<long long>(words[1]), 3 * g_rounds);
  if (me == 0) {
    check(words[2] == static_cast<T>(n * g_rounds), "%s fetch_inc total %lld, expected %d",
          amo.name, static_cast<long long>(words[2]), n * g_rounds);
    check(words[3] == static_cast<T>(2 * n * g_rounds), "%s fetch_add total %lld, expected %d",
          amo.name, static_cast<long long>(words[3]), 2 * n * g_rounds);
    std::vector<T> all(tickets, tickets + n * g_rounds);
    std::sort(all.begin(), all.end());
    int out_of_place = 0;
    for (int i = 0; i < n * g_rounds; ++i) out_of_place += all[i] != static_cast<T>(i);
    check(out_of_place == 0, "%s fetch_inc: %d tickets duplicated or missing", amo.name,
          out_of_place);
  }
  // Each PE's own fetch_inc results increase (its own updates are ordered).
  check(std::is_sorted(mine.begin(), mine.end()), "%s fetch_inc results not increasing", amo.name);

  // compare_swap elects exactly one PE.
  const T old = amo.compare_swap(&words[4], static_cast<T>(0), static_cast<T>(me + 1), 0);
  if (old == static_cast<T>(0)) amo.inc(&words[5], 0);
  shmem_barrier_all();
  const T winner = amo.fetch(&words[4], 0);
  check(winner >= static_cast<T>(1) && winner <= static_cast<T>(n), "%s compare_swap winner %lld",
        amo.name, static_cast<long long>(winner));
  if (me == 0) {
    check(words[5] == static_cast<T>(1), "%s compare_swap: %lld winners", amo.name,
          static_cast<long long>(words[5]));
  }
  check(amo.compare_swap(&words[4], static_cast<T>(0), static_cast<T>(99), 0) == winner,
        "%s a failing compare_swap did not return the current value", amo.name);

  // swap: the values swapped out, plus the final value, are the initial value and every PE's.
  const T previous = amo.swap(&words[6], static_cast<T>(me + 1), 0);
  shmem_putmem(&tickets[me], &previous, sizeof(T), 0);
  shmem_barrier_all();
  if (me == 0) {
    std::vector<T> seen(tickets, tickets + n);
    seen.push_back(words[6]);
    std::sort(seen.begin(), seen.end());
    for (int i = 0; i <= n; ++i)
      check(seen[static_cast<size_t>(i)] == static_cast<T>(i), "%s swap lost or duplicated %d",
            amo.name, i);
  }

  // set and fetch.
  amo.set(&words[7], static_cast<T>(me + 7), right);
  shmem_barrier_all();
  check(words[7] == static_cast<T>(left + 7), "%s set: %lld, expected %d", amo.name,
        static_cast<long long>(words[7]), left + 7);
  check(amo.fetch(&words[7], right) == static_cast<T>(me + 7), "%s fetch from PE %d wrong",
        amo.name, right);
  shmem_barrier_all();

  // The _nbi forms, on this PE's own words (no other PE touches them now).
  T got{};
  amo.set(&words[0], static_cast<T>(10), me);
  amo.fetch_nbi(&got, &words[0], me);
  shmem_quiet();
  check(got == static_cast<T>(10), "%s fetch_nbi", amo.name);
  amo.swap_nbi(&got, &words[0], static_cast<T>(11), me);
  shmem_quiet();
  check(got == static_cast<T>(10) && words[0] == static_cast<T>(11), "%s swap_nbi", amo.name);
  amo.compare_swap_nbi(&got, &words[0], static_cast<T>(11), static_cast<T>(12), me);
  shmem_quiet();
  check(got == static_cast<T>(11) && words[0] == static_cast<T>(12), "%s compare_swap_nbi",
        amo.name);
  amo.fetch_inc_nbi(&got, &words[0], me);
  shmem_quiet();
  check(got == static_cast<T>(12) && words[0] == static_cast<T>(13), "%s fetch_inc_nbi", amo.name);
  amo.fetch_add_nbi(&got, &words[0], static_cast<T>(5), me);
  shmem_quiet();
  check(got == static_cast<T>(13) && words[0] == static_cast<T>(18), "%s fetch_add_nbi", amo.name);

  shmem_barrier_all();
  shmem_free(tickets);
  shmem_free(words);
}

template <class T>
struct BitwiseAmo {
  const char* name;
  T (*fetch_and)(T*, T, int);
  void (*and_)(T*, T, int);
  T (*fetch_or)(T*, T, int);
  void (*or_)(T*, T, int);
  T (*fetch_xor)(T*, T, int);
  void (*xor_)(T*, T, int);
  void (*fetch_and_nbi)(T*, T*, T, int);
  void (*fetch_or_nbi)(T*, T*, T, int);
  void (*fetch_xor_nbi)(T*, T*, T, int);
};

template <class T>
void test_bitwise(const BitwiseAmo<T>& amo) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const T bit = static_cast<T>(T{1} << me);
  const T all = static_cast<T>((T{1} << n) - 1);
  T* words = static_cast<T*>(shmem_calloc(4, sizeof(T)));
  words[1] = all;  // cleared bit by bit below
  shmem_barrier_all();
  amo.or_(&words[0], bit, 0);
  const T before_or = amo.fetch_or(&words[2], bit, 0);
  check((before_or & bit) == 0, "%s fetch_or: bit %d set before this PE set it", amo.name, me);
  const T before_and = amo.fetch_and(&words[1], static_cast<T>(~bit), 0);
  check((before_and & bit) != 0, "%s fetch_and: bit %d was already clear", amo.name, me);
  amo.xor_(&words[3], bit, 0);
  amo.xor_(&words[3], static_cast<T>(all & ~bit), 0);  // every other bit, so each bit flips n times
  shmem_barrier_all();
  if (me == 0) {
    check(words[0] == all, "%s or: %llx, expected %llx", amo.name,
          static_cast<unsigned long long>(words[0]), static_cast<unsigned long long>(all));
    check(words[2] == all, "%s fetch_or total wrong", amo.name);
    check(words[1] == 0, "%s and: %llx, expected 0", amo.name,
          static_cast<unsigned long long>(words[1]));
    const T expected_xor = n % 2 == 0 ? T{0} : all;
    check(words[3] == expected_xor, "%s xor: %llx, expected %llx", amo.name,
          static_cast<unsigned long long>(words[3]), static_cast<unsigned long long>(expected_xor));
  }
  shmem_barrier_all();
  words[0] = static_cast<T>(0xF0);
  T got{};
  amo.fetch_and_nbi(&got, &words[0], static_cast<T>(0x3C), me);
  shmem_quiet();
  check(got == static_cast<T>(0xF0) && words[0] == static_cast<T>(0x30), "%s fetch_and_nbi",
        amo.name);
  amo.fetch_or_nbi(&got, &words[0], static_cast<T>(0x03), me);
  shmem_quiet();
  check(got == static_cast<T>(0x30) && words[0] == static_cast<T>(0x33), "%s fetch_or_nbi",
        amo.name);
  amo.fetch_xor_nbi(&got, &words[0], static_cast<T>(0x11), me);
  shmem_quiet();
  check(got == static_cast<T>(0x33) && words[0] == static_cast<T>(0x22), "%s fetch_xor_nbi",
        amo.name);
  amo.and_(&words[0], static_cast<T>(0x20), me);
  check(words[0] == static_cast<T>(0x20), "%s and on self", amo.name);
  shmem_barrier_all();
  shmem_free(words);
}

template <class T>
void test_floating(const char* name, T (*fetch)(const T*, int), void (*set)(T*, T, int),
                   T (*swap)(T*, T, int), void (*fetch_nbi)(T*, const T*, int),
                   void (*swap_nbi)(T*, T*, T, int)) {
  const int me = shmem_my_pe(), n = shmem_n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  T* words = static_cast<T*>(shmem_calloc(2, sizeof(T)));
  set(&words[0], static_cast<T>(me) + static_cast<T>(0.25), right);
  shmem_barrier_all();
  check(words[0] == static_cast<T>(left) + static_cast<T>(0.25), "%s set", name);
  check(fetch(&words[0], right) == static_cast<T>(me) + static_cast<T>(0.25), "%s fetch", name);
  const T previous = swap(&words[1], static_cast<T>(1.5), me);
  check(previous == T{0} && words[1] == static_cast<T>(1.5), "%s swap", name);
  T got{};
  fetch_nbi(&got, &words[1], me);
  shmem_quiet();
  check(got == static_cast<T>(1.5), "%s fetch_nbi", name);
  swap_nbi(&got, &words[1], static_cast<T>(-2.0), me);
  shmem_quiet();
  check(got == static_cast<T>(1.5) && words[1] == static_cast<T>(-2.0), "%s swap_nbi", name);
  shmem_barrier_all();
  shmem_free(words);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_rounds = std::atoi(argv[1]);
  shmem_init();
#define RUN_STANDARD(NAME, TYPE)                                                                 \
  test_standard<TYPE>(StandardAmo<TYPE>{                                                         \
      #NAME, shmem_##NAME##_atomic_fetch, shmem_##NAME##_atomic_set, shmem_##NAME##_atomic_swap, \
      shmem_##NAME##_atomic_compare_swap, shmem_##NAME##_atomic_fetch_inc,                       \
      shmem_##NAME##_atomic_inc, shmem_##NAME##_atomic_fetch_add, shmem_##NAME##_atomic_add,     \
      shmem_##NAME##_atomic_fetch_nbi, shmem_##NAME##_atomic_swap_nbi,                           \
      shmem_##NAME##_atomic_compare_swap_nbi, shmem_##NAME##_atomic_fetch_inc_nbi,               \
      shmem_##NAME##_atomic_fetch_add_nbi});
  TESSERA_SHMEM_STANDARD_AMO_TYPES(RUN_STANDARD)
#undef RUN_STANDARD
#define RUN_BITWISE(NAME, TYPE)                                                                  \
  test_bitwise<TYPE>(BitwiseAmo<TYPE>{                                                           \
      #NAME, shmem_##NAME##_atomic_fetch_and, shmem_##NAME##_atomic_and,                         \
      shmem_##NAME##_atomic_fetch_or, shmem_##NAME##_atomic_or, shmem_##NAME##_atomic_fetch_xor, \
      shmem_##NAME##_atomic_xor, shmem_##NAME##_atomic_fetch_and_nbi,                            \
      shmem_##NAME##_atomic_fetch_or_nbi, shmem_##NAME##_atomic_fetch_xor_nbi});
  TESSERA_SHMEM_BITWISE_AMO_TYPES(RUN_BITWISE)
#undef RUN_BITWISE
#define RUN_FLOATING(NAME, TYPE)                                                     \
  test_floating<TYPE>(#NAME, shmem_##NAME##_atomic_fetch, shmem_##NAME##_atomic_set, \
                      shmem_##NAME##_atomic_swap, shmem_##NAME##_atomic_fetch_nbi,   \
                      shmem_##NAME##_atomic_swap_nbi);
  TESSERA_SHMEM_FLOAT_AMO_TYPES(RUN_FLOATING)
#undef RUN_FLOATING
  const int status = finish("amo");
  shmem_finalize();
  return status;
}
