// The host-only cases of checked_test (PEs as threads) and checked_proc_test (PEs as processes
// under mpirun): misaligned atomic and signal words refused in checked mode, allocation bounds
// checked past thousands of live allocations, hex addresses. Each case is one collective function
// of a PE's Runtime. (Element copies that respect the element type's real alignment are
// backend-neutral: device_suites_checked.hpp.)
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "device_test_util.hpp"

namespace tessera::device_test::checked_cases {

using ::testing::AllOf;
using ::testing::HasSubstr;

// "0x..." as the device diagnostics print an address.
inline std::string hex_address(const void* p) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx",
                static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)));
  return text;
}

// Checked mode: an atomic or signal word that is not aligned to its size is refused before the
// access, naming the call, the word's hex address, its heap offset and the alignment needed.
template <class G>
void misaligned_words_are_refused(Runtime& rt) {
  if (!rt.options().checked) return;
  const auto ctx = rt.device_context();
  const int right = (rt.pe() + 1) % rt.n_pes();
  auto heap = rt.alloc<std::uint64_t>(4);
  std::fill_n(heap.get(), 4, std::uint64_t{0});
  rt.barrier();
  auto* bytes = reinterpret_cast<unsigned char*>(heap.get());
  auto* word64 = reinterpret_cast<std::uint64_t*>(bytes + 4);
  auto* word32 = reinterpret_cast<std::uint32_t*>(bytes + 2);
  const std::string pe = " on PE " + std::to_string(rt.pe()) + ": ";
  auto expect_refused = [&](const char* what, const char* role, const void* p, int align,
                            auto kernel) {
    launch(rt.stream(), 1, [=](td::Block blk) { kernel(group_in<G>(blk)); });
    Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(),
                AllOf(HasSubstr(std::string(what) + pe + role + " at address " + hex_address(p) +
                                " (heap offset " + std::to_string(rt.heap_offset(p)) + ")"),
                      HasSubstr("is not aligned to " + std::to_string(align) + " bytes")));
  };
  expect_refused("atomic_fetch_add", "atomic word", word64, 8,
                 [=](G) { (void)td::atomic_fetch_add(ctx, word64, std::uint64_t{1}, right); });
  expect_refused("atomic_fetch_add", "atomic word", word32, 4,
                 [=](G) { (void)td::atomic_fetch_add(ctx, word32, std::uint32_t{1}, right); });
  expect_refused("atomic_compare_exchange", "atomic word", word64, 8, [=](G) {
    (void)td::atomic_compare_exchange(ctx, word64, std::uint64_t{0}, std::uint64_t{1}, right);
  });
  expect_refused("atomic_store", "atomic word", word64, 8,
                 [=](G) { td::atomic_store(ctx, word64, std::uint64_t{1}, right); });
  expect_refused("signal", "signal", word64, 8,
                 [=](G) { td::signal(ctx, word64, 1, td::SignalOp::add, right); });
  expect_refused("wait_until", "signal", word64, 8,
                 [=](G g) { td::wait_until(g, ctx, word64, td::Cmp::ge, 1); });
  // Nothing was written: every word of the buffer on every PE is still 0.
  rt.barrier();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(heap.get()[i], 0u) << "word " << i;
  rt.barrier();
}

// Checked mode with `n` live allocations of 64 bytes: a tile running out of one of them, the first,
// a middle one or the last, is still caught with its allocation named, and one that fits still goes
// through; the same after half of them are freed.
inline void bounds_checked_with_many_allocations(Runtime& rt, std::size_t n) {
  if (!rt.options().checked) return;
  const auto ctx = rt.device_context();
  const int right = (rt.pe() + 1) % rt.n_pes();
  std::vector<Symmetric<std::uint32_t>> blocks;
  blocks.reserve(n);
  for (std::size_t i = 0; i < n; ++i) blocks.push_back(rt.alloc<std::uint32_t>(16));
  std::vector<std::uint32_t> src(32, 7);
  const std::uint32_t* from = src.data();
  auto check_block = [&](std::uint32_t* dst) {
    launch(rt.stream(), 1, [=](td::Block g) {
      td::put(g, ctx, td::make_tile(dst, 32), td::make_tile(from, 32), right);
    });
    Error e = expect_error(ErrorCode::invalid_argument, [&] { rt.stream().synchronize(); });
    EXPECT_THAT(e.message(), AllOf(HasSubstr("put on PE " + std::to_string(rt.pe())),
                                   HasSubstr("destination tile [heap offset " +
                                             std::to_string(rt.heap_offset(dst)) + ", +128 bytes)"),
                                   HasSubstr("runs past the end of its allocation #"),
                                   HasSubstr("[offset " + std::to_string(rt.heap_offset(dst)) +
                                             ", +64 bytes) by 64 bytes")));
    launch(rt.stream(), 1, [=](td::Block g) {
      td::put(g, ctx, td::make_tile(dst, 16), td::make_tile(from, 16), right);
    });
    rt.stream().synchronize();
  };
  for (std::size_t i : {std::size_t{0}, n / 2, n - 1}) check_block(blocks[i].get());
  rt.barrier();
  for (std::size_t i = 0; i < n; i += 2) blocks[i] = Symmetric<std::uint32_t>();
  for (std::size_t i : {std::size_t{1}, n / 2 + 1, n - 1}) check_block(blocks[i].get());
  rt.barrier();
}

}  // namespace tessera::device_test::checked_cases
