// put / get / put_nbi / get_nbi for every group, element size and tile shape, between every
// pair of PEs including a PE and itself.
#include <cstdint>
#include <vector>

#include "device_test_util.hpp"

namespace tessera::device_test {
namespace {

struct Shape {
  const char* name;
  std::size_t rows, cols, dst_ld, src_ld;
};

// 1x1, 1xN, Nx1, ragged, and leading dimensions wider than the tile (different on each side).
constexpr Shape kShapes[] = {
    {"1x1", 1, 1, 1, 1},
    {"1x37", 1, 37, 37, 37},
    {"29x1", 29, 1, 1, 1},
    {"7x13", 7, 13, 13, 13},
    {"7x13/ld20<-ld17", 7, 13, 20, 17},
    {"5x8/ld8<-ld11", 5, 8, 8, 11},
};
constexpr std::size_t kSlot = 256;  // elements per source PE; >= every shape's extent

enum class Op { put, put_nbi, get, get_nbi };
constexpr Op kOps[] = {Op::put, Op::put_nbi, Op::get, Op::get_nbi};
const char* name(Op op) {
  switch (op) {
    case Op::put:
      return "put";
    case Op::put_nbi:
      return "put_nbi";
    case Op::get:
      return "get";
    case Op::get_nbi:
      return "get_nbi";
  }
  return "?";
}

// The value PE `pe` places at (r, c) for case `salt`; distinct per PE, position and case.
std::uint64_t pattern(int pe, std::size_t r, std::size_t c, std::uint64_t salt) {
  return 0x0101010101010101ull * static_cast<std::uint64_t>(pe + 1) + r * 131 + c * 7 + salt * 17;
}
constexpr std::uint64_t kSentinel = 0xA5A5A5A5A5A5A5A5ull;

template <class G_, class T_>
struct Combo {
  using G = G_;
  using T = T_;
};

template <class C>
class Rma : public ::testing::Test {};

using Combos = ::testing::Types<Combo<td::Thread, std::uint8_t>, Combo<td::Thread, td::bf16>,
                                Combo<td::Thread, float>, Combo<td::Thread, std::uint64_t>,
                                Combo<td::Warp, std::int8_t>, Combo<td::Warp, td::half>,
                                Combo<td::Warp, std::int32_t>, Combo<td::Warp, double>,
                                Combo<td::Block, char>, Combo<td::Block, std::uint16_t>,
                                Combo<td::Block, std::uint32_t>, Combo<td::Block, std::int64_t>>;
TYPED_TEST_SUITE(Rma, Combos);

TYPED_TEST(Rma, EveryOpMovesEveryShapeBetweenEveryPairOfPes) {
  using G = typename TypeParam::G;
  using T = typename TypeParam::T;
  constexpr int kPes = 3;
  harness::run_pes(kPes, [](Runtime& rt) {
    const auto ctx = rt.device_context();
    const int me = rt.pe();
    // Symmetric: a slot per peer that writes into me (put) or that I read from (get source).
    auto sym = rt.alloc<T>(kSlot * kPes);
    std::vector<T> local(kSlot * kPes);
    std::uint64_t salt = 0;
    for (const Shape& s : kShapes) {
      for (Op op : kOps) {
        ++salt;
        const bool is_put = op == Op::put || op == Op::put_nbi;
        SCOPED_TRACE(std::string(name(op)) + " " + s.name);
        // Sources hold the pattern, destinations the sentinel (so gaps can be checked).
        for (std::size_t i = 0; i < kSlot * kPes; ++i) {
          sym[i] = element<T>(kSentinel);
          local[i] = element<T>(kSentinel);
        }
        for (int p = 0; p < kPes; ++p) {
          T* src_base = is_put ? &local[kSlot * static_cast<std::size_t>(p)]
                               : &sym[kSlot * static_cast<std::size_t>(p)];
          for (std::size_t r = 0; r < s.rows; ++r)
            for (std::size_t c = 0; c < s.cols; ++c)
              src_base[r * s.src_ld + c] = element<T>(pattern(me, r, c, salt));
        }
        rt.barrier();
        run_kernel<G>(rt, [&, ctx](G g) {
          for (int p = 0; p < kPes; ++p) {
            const std::size_t mine = kSlot * static_cast<std::size_t>(me);
            const std::size_t theirs = kSlot * static_cast<std::size_t>(p);
            if (is_put) {
              // My tile into slot `me` of PE p.
              td::Tile<T> dst(sym.get() + mine, s.rows, s.cols, s.dst_ld);
              td::Tile<const T> src(local.data() + theirs, s.rows, s.cols, s.src_ld);
              if (op == Op::put) {
                td::put(g, ctx, dst, src, p);
              } else {
                td::put_nbi(g, ctx, dst, src, p);
              }
            } else {
              // PE p's slot `me` into my local slot p.
              td::Tile<T> dst(local.data() + theirs, s.rows, s.cols, s.dst_ld);
              td::Tile<const T> src(sym.get() + mine, s.rows, s.cols, s.src_ld);
              if (op == Op::get) {
                td::get(g, ctx, dst, src, p);
              } else {
                td::get_nbi(g, ctx, dst, src, p);
              }
            }
          }
          if (op == Op::put_nbi || op == Op::get_nbi) td::quiet(g, ctx);
        });
        rt.barrier();
        // Slot p of the destination holds PE p's pattern inside the tile, the sentinel outside.
        for (int p = 0; p < kPes; ++p) {
          const T* dst = is_put ? &sym[kSlot * static_cast<std::size_t>(p)]
                                : &local[kSlot * static_cast<std::size_t>(p)];
          for (std::size_t i = 0; i < kSlot; ++i) {
            const std::size_t r = i / s.dst_ld, c = i % s.dst_ld;
            const bool inside = r < s.rows && c < s.cols;
            const std::uint64_t want = inside ? pattern(p, r, c, salt) : kSentinel;
            ASSERT_TRUE(same_bytes(dst[i], element<T>(want)))
                << "PE " << me << " slot of PE " << p << " element " << i << " (" << r << "," << c
                << "): got " << bits_of(dst[i]) << ", want " << bits_of(element<T>(want));
          }
        }
        rt.barrier();
      }
    }
  });
}

TEST(Tile, SubViewAndConstConversionKeepTheLeadingDimension) {
  std::vector<int> buf(10 * 16);
  td::Tile<int> t(buf.data(), 10, 12, 16);
  EXPECT_FALSE(t.is_contiguous());
  auto s = t.sub(2, 3, 4, 5);
  EXPECT_EQ(s.data, buf.data() + 2 * 16 + 3);
  EXPECT_EQ(s.rows, 4u);
  EXPECT_EQ(s.cols, 5u);
  EXPECT_EQ(s.ld, 16u);
  td::Tile<const int> c = s;
  EXPECT_EQ(c.data, s.data);
  EXPECT_EQ(c.extent_bytes(), (3 * 16 + 5) * sizeof(int));
  EXPECT_TRUE(td::make_tile(buf.data(), 7).is_contiguous());
  EXPECT_TRUE(td::Tile<int>(buf.data(), 3, 16, 16).is_contiguous());
  EXPECT_TRUE(td::Tile<int>(buf.data(), 1, 5, 16).is_contiguous());
}

harness::PeOptions big_heap() {
  harness::PeOptions o;
  o.heap_size = std::size_t{128} << 20;
  return o;
}

TEST(Rma, LargeContiguousPutArrivesWhole) {
  harness::run_pes(
      2,
      [](Runtime& rt) {
        constexpr std::size_t kN = std::size_t{4} << 20;  // 32 MiB of uint64: memcpy's large path
        auto dst = rt.alloc<std::uint64_t>(kN);
        std::vector<std::uint64_t> src(kN);
        for (std::size_t i = 0; i < kN; ++i) src[i] = i * 3 + static_cast<unsigned>(rt.pe());
        const auto ctx = rt.device_context();
        const int right = (rt.pe() + 1) % rt.n_pes();
        run_kernel<td::Block>(rt, [&, ctx](td::Block g) {
          td::put(g, ctx, td::make_tile(dst.get(), kN),
                  td::make_tile<const std::uint64_t>(src.data(), kN), right);
        });
        rt.barrier();
        const unsigned left = static_cast<unsigned>((rt.pe() + 1) % 2);
        for (std::size_t i = 0; i < kN; ++i) ASSERT_EQ(dst[i], i * 3 + left) << i;
        rt.barrier();
      },
      big_heap());
}

}  // namespace
}  // namespace tessera::device_test
