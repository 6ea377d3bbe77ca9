// gemm_tile against a double-precision reference R of the unrounded inputs. Error norm:
// max |C - R| / max S over all of C, where S = |C0| + sum_p |A[i,p] * B[p,j]| is the magnitude of
// the terms each entry sums (max |R| alone would blow up on entries that cancel, e.g. 1x1x1 with
// accumulate). fp32 inputs must be within 1e-5, bf16 inputs (rounded from the same doubles)
// within 1e-2. Shapes cover 1x1, sizes that are multiples of no blocking, and ld > cols.
// The same cases run once per host GEMM path: the BLAS chosen by TESSERA_BLAS (unset: BLIS,
// else OpenBLAS, else the portable kernel; ctest also runs them with TESSERA_BLAS=none and
// =openblas), and HostBlas checks that the path asked for is the one taken and that a bad request
// says why.
#include "tessera/device/ops/gemm_tile.hpp"

#include <dlfcn.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tessera/device/ops/impl/host_blas.hpp"

namespace tessera::ops_test {
namespace {

namespace td = tessera::device;

struct Shape {
  std::size_t m, n, k;
  std::size_t pad = 0;  // extra elements per row of A, B and C (ld = cols + pad)
};

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);
  } else {
    return td::ops::to_bf16(static_cast<float>(v));
  }
}

template <class TA, class TB>
void check_gemm(const Shape& s, bool accumulate, double tolerance) {
  std::mt19937 rng(static_cast<unsigned>(s.m * 131 + s.n * 17 + s.k));
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  const std::size_t lda = s.k + s.pad, ldb = s.n + s.pad, ldc = s.n + s.pad;
  std::vector<double> a(s.m * s.k), b(s.k * s.n), c0(s.m * s.n);
  for (double& v : a) v = dist(rng);
  for (double& v : b) v = dist(rng);
  for (double& v : c0) v = dist(rng);
  // Padding holds a sentinel that must survive (C) or must not be read into results (A, B).
  constexpr float kSentinel = 12345.0f;
  std::vector<TA> a_store(s.m * lda, from_double<TA>(kSentinel));
  std::vector<TB> b_store(s.k * ldb, from_double<TB>(kSentinel));
  std::vector<float> c_store(s.m * ldc, kSentinel);
  for (std::size_t i = 0; i < s.m; ++i)
    for (std::size_t p = 0; p < s.k; ++p) a_store[i * lda + p] = from_double<TA>(a[i * s.k + p]);
  for (std::size_t p = 0; p < s.k; ++p)
    for (std::size_t j = 0; j < s.n; ++j) b_store[p * ldb + j] = from_double<TB>(b[p * s.n + j]);
  for (std::size_t i = 0; i < s.m; ++i)
    for (std::size_t j = 0; j < s.n; ++j)
      c_store[i * ldc + j] = static_cast<float>(c0[i * s.n + j]);

  td::ops::gemm_tile(td::Thread{}, td::Tile<float>(c_store.data(), s.m, s.n, ldc),
                     td::Tile<const TA>(a_store.data(), s.m, s.k, lda),
                     td::Tile<const TB>(b_store.data(), s.k, s.n, ldb), accumulate);

  double max_err = 0, max_ref = 0;
  for (std::size_t i = 0; i < s.m; ++i) {
    for (std::size_t j = 0; j < s.n; ++j) {
      double ref = accumulate ? static_cast<double>(static_cast<float>(c0[i * s.n + j])) : 0.0;
      double scale = std::abs(ref);
      for (std::size_t p = 0; p < s.k; ++p) {
        ref += a[i * s.k + p] * b[p * s.n + j];
        scale += std::abs(a[i * s.k + p] * b[p * s.n + j]);
      }
      max_err = std::max(max_err, std::abs(static_cast<double>(c_store[i * ldc + j]) - ref));
      max_ref = std::max(max_ref, scale);
    }
    for (std::size_t j = s.n; j < ldc; ++j) ASSERT_EQ(c_store[i * ldc + j], kSentinel) << "pad";
  }
  EXPECT_LE(max_err / std::max(max_ref, 1e-30), tolerance)
      << s.m << "x" << s.n << "x" << s.k << " pad " << s.pad << " accumulate " << accumulate;
}

const Shape kShapes[] = {{1, 1, 1},         {1, 1, 1, 3},      {7, 13, 5},    {7, 13, 5, 2},
                         {65, 33, 17},      {65, 33, 17, 5},   {6, 16, 1},    {12, 48, 64},
                         {97, 131, 67, 1},  {128, 96, 200, 8}, {3, 200, 300}, {200, 3, 7, 1},
                         {257, 300, 129, 3}};

TEST(GemmTile, Fp32MatchesDoubleReferenceWithin1e5) {
  for (const Shape& s : kShapes) {
    for (bool acc : {false, true}) check_gemm<float, float>(s, acc, 1e-5);
  }
}

TEST(GemmTile, Bf16MatchesDoubleReferenceWithin1e2) {
  for (const Shape& s : kShapes) {
    for (bool acc : {false, true}) {
      check_gemm<td::bf16, td::bf16>(s, acc, 1e-2);
      check_gemm<float, td::bf16>(s, acc, 1e-2);
      check_gemm<td::bf16, float>(s, acc, 1e-2);
    }
  }
}

TEST(GemmTile, EmptyKZeroesOrKeepsC) {
  std::vector<float> c = {1, 2, 3, 4};
  std::vector<float> a(2), b(2);
  td::ops::gemm_tile(td::Thread{}, td::Tile<float>(c.data(), 2, 2),
                     td::Tile<const float>(a.data(), 2, 0, 1),
                     td::Tile<const float>(b.data(), 0, 2), true);
  EXPECT_EQ(c, (std::vector<float>{1, 2, 3, 4}));
  td::ops::gemm_tile(td::Thread{}, td::Tile<float>(c.data(), 2, 2),
                     td::Tile<const float>(a.data(), 2, 0, 1),
                     td::Tile<const float>(b.data(), 0, 2), false);
  EXPECT_EQ(c, (std::vector<float>(4, 0.0f)));
}

TEST(GemmTile, Bf16RoundTripRoundsToNearestEven) {
  EXPECT_EQ(td::ops::to_float(td::ops::to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(td::ops::to_bf16(1.00390625f).bits, 0x3f80);  // halfway: to even
  EXPECT_EQ(td::ops::to_bf16(1.01171875f).bits, 0x3f82);  // halfway: to even (up)
  EXPECT_TRUE(std::isnan(td::ops::to_float(td::ops::to_bf16(std::nanf("")))));
}

TEST(GemmTile, Fp16WidensExactlyIncludingSubnormalsInfinityAndNan) {
  auto widen = [](std::uint16_t bits) { return td::ops::to_float(td::half{bits}); };
  EXPECT_EQ(widen(0x3c00), 1.0f);
  EXPECT_EQ(widen(0xc000), -2.0f);
  EXPECT_EQ(widen(0x3555), 0.333251953125f);
  EXPECT_EQ(widen(0x7bff), 65504.0f);
  EXPECT_EQ(widen(0x0400), std::ldexp(1.0f, -14));     // smallest normal
  EXPECT_EQ(widen(0x0001), std::ldexp(1.0f, -24));     // smallest subnormal
  EXPECT_EQ(widen(0x03ff), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(widen(0x8000), 0.0f);
  EXPECT_TRUE(std::signbit(widen(0x8000)));
  EXPECT_EQ(widen(0x7c00), INFINITY);
  EXPECT_EQ(widen(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(widen(0x7e00)));
}

// The fused ops call gemm_tile from every block of every PE at once (threads of one process on
// the host backend), so the BLAS must be safe to call concurrently with one thread per call:
// four threads multiply their own matrices over and over and must each match the result the
// same call gives alone.
TEST(GemmTile, ConcurrentCallsMatchSerialResults) {
  constexpr int kThreads = 4, kRounds = 12;
  constexpr std::size_t m = 96, n = 80, k = 70;
  std::vector<std::vector<float>> a(kThreads), b(kThreads), want(kThreads), got(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    std::mt19937 rng(static_cast<unsigned>(t + 1));
    std::uniform_real_distribution<float> dist(-1, 1);
    a[t].resize(m * k);
    b[t].resize(k * n);
    for (float& v : a[t]) v = dist(rng);
    for (float& v : b[t]) v = dist(rng);
    want[t].assign(m * n, 0.0f);
    td::ops::gemm_tile(td::Thread{}, td::Tile<float>(want[t].data(), m, n),
                       td::Tile<const float>(a[t].data(), m, k),
                       td::Tile<const float>(b[t].data(), k, n), false);
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> c(m * n);
      for (int r = 0; r < kRounds; ++r) {
        td::ops::gemm_tile(td::Thread{}, td::Tile<float>(c.data(), m, n),
                           td::Tile<const float>(a[t].data(), m, k),
                           td::Tile<const float>(b[t].data(), k, n), false);
        if (c != want[t]) ++mismatches[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

namespace blas = td::host_blas;

// The request this process was started with, as the wrapper reads it.
std::string blas_request() {
  const char* env = std::getenv("TESSERA_BLAS");
  return env != nullptr ? env : "";
}

TEST(HostBlas, ProcessUsesThePathAsked) {
  const std::string request = blas_request();
  const blas::Info& info = blas::info();
  if (request == "none") {
    EXPECT_FALSE(info.available);
    EXPECT_NE(info.status.find("TESSERA_BLAS=none: the portable kernel"), std::string::npos)
        << info.status;
    return;
  }
  // What a fresh load of the same request finds is what the process must be using.
  const blas::Info fresh = blas::probe(request);
  EXPECT_EQ(info.available, fresh.available) << info.status << " / " << fresh.status;
  EXPECT_EQ(info.name, fresh.name);
  if (!fresh.available) {
    GTEST_SKIP() << "no BLAS installed: " << fresh.status;
  }
  if (request == "blis") {
    EXPECT_NE(info.name.find("BLIS"), std::string::npos) << info.name;
  }
  if (request.empty() || request == "auto") {
    // auto: BLIS, unless it runs its generic configuration and OpenBLAS is installed.
    const blas::Info blis = blas::probe("blis");
    const bool generic = blis.available && blas::runs_generic_blis(blis.name);
    const bool openblas = blas::probe("openblas").available;
    const char* expected = blis.available && !(generic && openblas) ? "BLIS" : "OpenBLAS";
    EXPECT_EQ(info.name.rfind(expected, 0), 0u) << info.name;
  }
  if (request == "openblas") {
    EXPECT_NE(info.name.find("OpenBLAS"), std::string::npos) << info.name;
  }
}

TEST(HostBlas, ProbeLoadsEachLibrarySerial) {
  for (const char* library : {"openblas", "blis"}) {
    const blas::Info info = blas::probe(library);
    if (!info.available) {
      EXPECT_NE(info.status.find("no BLAS found"), std::string::npos) << info.status;
      std::printf("[ SKIPPED  ] %s not installed: %s\n", library, info.status.c_str());
      continue;
    }
    EXPECT_TRUE(info.status.empty()) << info.status;
    EXPECT_NE(info.name.find(std::string(library) == "blis" ? "BLIS" : "OpenBLAS"),
              std::string::npos)
        << info.name;
  }
}

TEST(HostBlas, OnlyABlisNamingItsGenericConfigurationCountsAsGeneric) {
  EXPECT_TRUE(blas::runs_generic_blis("BLIS 0.9.0 generic (serial, /usr/lib/libblis.so.4)"));
  EXPECT_FALSE(blas::runs_generic_blis("BLIS 0.9.0 zen3 (serial, /usr/lib/libblis.so.4)"));
  EXPECT_FALSE(blas::runs_generic_blis("BLIS 0.9.0 skx (serial, /usr/lib/libblis.so.4)"));
  EXPECT_FALSE(blas::runs_generic_blis("OpenBLAS 0.3.21 DYNAMIC_ARCH generic"));
}

TEST(HostBlas, BadRequestsSayWhy) {
  EXPECT_NE(blas::probe("mkl").status.find(
                "TESSERA_BLAS=mkl: not one of auto, openblas, blis, none or a path"),
            std::string::npos);
  const blas::Info missing = blas::probe("/nonexistent/libnoblas.so");
  EXPECT_FALSE(missing.available);
  EXPECT_NE(missing.status.find("cannot load /nonexistent/libnoblas.so"), std::string::npos)
      << missing.status;
  // A real shared object that is no BLAS: the C library this test runs with.
  Dl_info self{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&std::abort), &self), 0);
  const std::string libc = self.dli_fname;
  ASSERT_NE(libc.find('/'), std::string::npos) << libc;
  EXPECT_NE(blas::probe(libc).status.find(libc + " has no cblas_sgemm"), std::string::npos)
      << blas::probe(libc).status;
}

}  // namespace
}  // namespace tessera::ops_test
