// The element-alignment cases of checked mode (issue #17), written once for every backend in
// the style of device_suites.hpp (whose Case, Sym, run and Checker they use): 1x1 tiles of
// under-aligned structs (alignof < sizeof, or packed) at offsets that are multiples of their
// alignment but not of their size or of 8 must move without a wider access than the type allows.
// On a GPU a 64-bit access to a 4-aligned Pair is a misaligned-address fault; on the host
// checked_test is built with _GLIBCXX_ASSERTIONS, which turns a misaligned std::atomic_ref into
// a failure. The same text runs
//   - on the host backend: checked_test.cpp (PEs as threads, checked mode off and on) and
//     checked_proc_test.cpp (processes under mpirun, TESSERA_CHECK=0 and =1);
//   - on the cuda backend, compiled by nvcc: tests/gpu/gpu_device_suites_test.cu;
//   - compiled by hipcc for gfx90a/gfx940: tests/gpu/device_suites_compile.cu.
// Every PE of a job runs the same cases in the same order; any number of PEs >= 1 works.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device_suites.hpp"

namespace tessera::suites {

namespace alignment {

// 8 bytes aligned to 4: alignof < sizeof, so its size alone does not allow a 64-bit access.
struct Pair {
  std::int32_t a, b;
};
static_assert(sizeof(Pair) == 8 && alignof(Pair) == 4);

// 12 bytes aligned to 4: a size no single access moves.
struct Triple {
  std::int32_t a, b, c;
};
static_assert(sizeof(Triple) == 12 && alignof(Triple) == 4);

// 8 bytes aligned to 1: may start at any byte.
struct __attribute__((packed)) Packed8 {
  std::uint8_t tag;
  std::uint32_t value;
  std::uint16_t tail;
  std::uint8_t end;
};
static_assert(sizeof(Packed8) == 8 && alignof(Packed8) == 1);

inline constexpr std::size_t kBytes = 64;  // each buffer; every element fits at every offset
inline constexpr unsigned char kUntouched = 0xee;

inline unsigned char pattern(int pe, std::size_t i) {
  return static_cast<unsigned char>(0x10 * (pe + 1) + i + 1);
}

// One 1x1 tile of T from src to dst: a put to PE `pe`, or a get from it.
template <class G, class T>
struct OneElementMove {
  TESSERA_KERNEL_CODE void operator()(td::Block blk, td::Context ctx, T* dst, const T* src,
                                      int is_get, int pe) const {
    litmus::as_group<G>(blk, [&](auto g) {
      if (is_get != 0) {
        td::get(g, ctx, td::Tile<T>(dst, 1, 1), td::Tile<const T>(src, 1, 1), pe);
      } else {
        td::put(g, ctx, td::Tile<T>(dst, 1, 1), td::Tile<const T>(src, 1, 1), pe);
      }
    });
  }
};

// The kBytes bytes of `got` hold `inside(i)` for the element's bytes at `offset` and kUntouched
// around them; one report per buffer.
template <class T, class Inside>
void expect_element(Checker& ck, const std::vector<unsigned char>& got, std::size_t offset,
                    Inside inside, const std::string& what) {
  for (std::size_t i = 0; i < kBytes; ++i) {
    const bool in = i >= offset && i < offset + sizeof(T);
    const unsigned char want = in ? inside(i - offset) : kUntouched;
    if (!ck.expect(got[i] == want, what + ": byte " + std::to_string(i) + ", element of " +
                                       std::to_string(sizeof(T)) + " bytes at " +
                                       std::to_string(offset) + ": got " + std::to_string(got[i]) +
                                       ", want " + std::to_string(want)))
      break;
  }
}

// A one-element tile of T at byte offset `offset` of `local` is put into the right neighbour's
// `remote` at the same offset and got back from it into `local`: every byte arrives, and no
// byte next to the element changes. Both buffers are 64-byte aligned heap memory, so the
// offset misaligns the element the same way on both sides.
template <class T, class G>
void one_element_at(Runtime& rt, const Sym<unsigned char>& remote, const Sym<unsigned char>& local,
                    std::size_t offset, Checker& ck) {
  const int me = rt.pe(), n = rt.n_pes();
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  remote.write(std::vector<unsigned char>(kBytes, kUntouched));
  std::vector<unsigned char> local_h(kBytes, kUntouched);
  for (std::size_t i = 0; i < sizeof(T); ++i) local_h[offset + i] = pattern(me, i);
  local.write(local_h);
  rt.barrier();
  auto* remote_elem = reinterpret_cast<T*>(remote.get() + offset);
  auto* local_elem = reinterpret_cast<T*>(local.get() + offset);
  run(rt, OneElementMove<G, T>{}, remote_elem, static_cast<const T*>(local_elem), 0, right);
  rt.barrier();
  expect_element<T>(
      ck, remote.read(), offset, [&](std::size_t i) { return pattern(left, i); }, "put");
  // The right neighbour's buffer holds my element (I put it there).
  local.write(std::vector<unsigned char>(kBytes, kUntouched));
  run(rt, OneElementMove<G, T>{}, local_elem, static_cast<const T*>(remote_elem), 1, right);
  expect_element<T>(
      ck, local.read(), offset, [&](std::size_t i) { return pattern(me, i); }, "get");
  rt.barrier();
}

template <class G>
Result one_element_tiles_of_under_aligned_types(Runtime& rt) {
  Sym<unsigned char> remote(rt, kBytes), local(rt, kBytes);
  Checker ck;
  for (std::size_t offset : {4, 12, 20}) one_element_at<Pair, G>(rt, remote, local, offset, ck);
  for (std::size_t offset : {4, 12, 16, 28})
    one_element_at<Triple, G>(rt, remote, local, offset, ck);
  for (std::size_t offset : {1, 2, 3, 5, 6, 7, 9})
    one_element_at<Packed8, G>(rt, remote, local, offset, ck);
  // Naturally aligned words still move as one access (the flag case).
  one_element_at<std::uint64_t, G>(rt, remote, local, 8, ck);
  one_element_at<std::uint32_t, G>(rt, remote, local, 4, ck);
  return ck.res;
}

}  // namespace alignment

inline constexpr Case kAlignmentCases[] = {
    {"Thread_OneElementTilesOfUnderAlignedTypesMoveWithoutMisalignedAccesses",
     alignment::one_element_tiles_of_under_aligned_types<td::Thread>, 2},
    {"Warp_OneElementTilesOfUnderAlignedTypesMoveWithoutMisalignedAccesses",
     alignment::one_element_tiles_of_under_aligned_types<td::Warp>, 2},
    {"Block_OneElementTilesOfUnderAlignedTypesMoveWithoutMisalignedAccesses",
     alignment::one_element_tiles_of_under_aligned_types<td::Block>, 2},
};

}  // namespace tessera::suites
