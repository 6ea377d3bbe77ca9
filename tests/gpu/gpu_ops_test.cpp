// The fused ops on the cuda backend, on real PEs (processes sharing the GPU): all_gather,
// ag_gemm (push and pull) and gemm_rs with every operand in the symmetric heap (device memory),
// written and read back with Runtime::put/get and checked against a double-precision reference;
// and the stream-ordered host calls of stream_rma.hpp, which a host-compiled file cannot run on a
// GPU stream. The ops' kernels come from libtessera (src/ops is compiled by nvcc), so this file
// itself is host code.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_test_env.hpp"
#include "tessera/device/ops/gemm_tile.hpp"
#include "tessera/ops/ag_gemm.hpp"
#include "tessera/ops/all_gather.hpp"
#include "tessera/ops/gemm_rs.hpp"

namespace tessera::gpu_test {
namespace {

// Deterministic values in [-0.5, 0.5) that every PE can regenerate.
float value(std::size_t seed, std::size_t i, std::size_t j) {
  return static_cast<float>((i * 7 + j * 13 + seed * 29) % 23) / 23.0f - 0.5f;
}

// A heap array of `count` T filled from `host` (device memory on the cuda backend).
template <class T>
Symmetric<T> upload(Runtime& rt, const std::vector<T>& host) {
  Symmetric<T> buf = rt.alloc<T>(host.size());
  rt.put(buf.get(), host.data(), host.size() * sizeof(T), rt.pe());
  return buf;
}

template <class T>
std::vector<T> download(Runtime& rt, const T* p, std::size_t count) {
  std::vector<T> host(count);
  rt.get(host.data(), p, count * sizeof(T), rt.pe());
  return host;
}

// max |C - ref| / max |ref| (the norm the host-backend ops tests use).
double relative_error(const std::vector<float>& c, const std::vector<double>& ref) {
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(c[i]) - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return scale == 0 ? err : err / scale;
}

TEST(CudaOps, AllGatherOneShotAndRingGatherEveryPesChunk) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const int me = rt.pe(), n = rt.n_pes();
  for (const std::size_t bytes : {std::size_t{4096}, std::size_t{1} << 20}) {
    for (const auto algo : {ops::AllGatherAlgo::oneshot, ops::AllGatherAlgo::ring}) {
      std::vector<std::uint8_t> mine(bytes);
      for (std::size_t i = 0; i < bytes; ++i) mine[i] = static_cast<std::uint8_t>(i * 31 + me);
      auto send = upload(rt, mine);
      auto recv = rt.alloc<std::uint8_t>(bytes * static_cast<std::size_t>(n));
      for (int call = 0; call < 3; ++call) {
        ops::all_gather(rt, rt.stream(), send.get(), recv.get(), bytes, algo);
        rt.stream().synchronize();
      }
      const auto seen = download(rt, recv.get(), bytes * static_cast<std::size_t>(n));
      for (int from = 0; from < n; ++from) {
        for (std::size_t i = 0; i < bytes; i += 997) {
          ASSERT_EQ(seen[static_cast<std::size_t>(from) * bytes + i],
                    static_cast<std::uint8_t>(i * 31 + from))
              << "byte " << i << " of PE " << from << ", " << bytes << " bytes, "
              << ops::to_string(algo);
        }
      }
      rt.barrier();
    }
  }
}

void check_ag_gemm(ops::GemmDtype dtype, ops::AgGemmVariant variant) {
  auto rt = Runtime::init(gpu_options());
  const int me = rt.pe(), n = rt.n_pes();
  const std::size_t m = 96 * static_cast<std::size_t>(n), n_local = 80, k = 72;
  const std::size_t m_local = m / static_cast<std::size_t>(n);
  ops::AgGemmOptions options;
  options.variant = variant;
  ops::AgGemm op(rt, m, n_local, k, dtype, options);
  std::vector<float> a(m * k), b(k * n_local);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t p = 0; p < k; ++p) a[i * k + p] = value(1, i, p);
  for (std::size_t p = 0; p < k; ++p)
    for (std::size_t j = 0; j < n_local; ++j) b[p * n_local + j] = value(2 + me, p, j);
  if (dtype == ops::GemmDtype::bf16) {  // the reference multiplies what the GPU multiplies
    for (float& v : a) v = device::ops::to_float(device::ops::to_bf16(v));
    for (float& v : b) v = device::ops::to_float(device::ops::to_bf16(v));
  }
  std::vector<double> ref(m * n_local, 0.0);
  auto c = rt.alloc<float>(m * n_local);
  const std::size_t row0 = static_cast<std::size_t>(me) * m_local;
  double tolerance = 1e-5;
  if (dtype == ops::GemmDtype::f32) {
    const std::vector<float> shard(a.begin() + static_cast<std::ptrdiff_t>(row0 * k),
                                   a.begin() + static_cast<std::ptrdiff_t>((row0 + m_local) * k));
    auto a_dev = upload(rt, shard);
    auto b_dev = upload(rt, b);
    for (int call = 0; call < 3; ++call) op.run(rt.stream(), a_dev.get(), b_dev.get(), c.get());
    rt.stream().synchronize();
  } else {
    tolerance = 1e-2;
    std::vector<device::bf16> a16(m_local * k), b16(k * n_local);
    for (std::size_t i = 0; i < a16.size(); ++i) {
      a16[i] = device::ops::to_bf16(a[row0 * k + i]);
    }
    for (std::size_t i = 0; i < b16.size(); ++i) b16[i] = device::ops::to_bf16(b[i]);
    auto a_dev = upload(rt, a16);
    auto b_dev = upload(rt, b16);
    for (int call = 0; call < 3; ++call) op.run(rt.stream(), a_dev.get(), b_dev.get(), c.get());
    rt.stream().synchronize();
  }
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t p = 0; p < k; ++p)
      for (std::size_t j = 0; j < n_local; ++j)
        ref[i * n_local + j] += static_cast<double>(a[i * k + p]) * b[p * n_local + j];
  const double err = relative_error(download(rt, c.get(), m * n_local), ref);
  EXPECT_LE(err, tolerance) << ops::to_string(dtype) << " " << ops::to_string(op.variant());
  rt.barrier();
}

TEST(CudaOps, AgGemmPushMatchesTheReference) {
  TESSERA_SKIP_WITHOUT_CUDA();
  check_ag_gemm(ops::GemmDtype::f32, ops::AgGemmVariant::push);
  check_ag_gemm(ops::GemmDtype::bf16, ops::AgGemmVariant::push);
}

TEST(CudaOps, AgGemmAutomaticMatchesTheReference) {
  TESSERA_SKIP_WITHOUT_CUDA();
  check_ag_gemm(ops::GemmDtype::f32, ops::AgGemmVariant::automatic);
  check_ag_gemm(ops::GemmDtype::bf16, ops::AgGemmVariant::automatic);
}

TEST(CudaOps, GemmRsMatchesTheReference) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  const int me = rt.pe(), n = rt.n_pes();
  const std::size_t m = 64 * static_cast<std::size_t>(n), n_cols = 96, k_local = 40;
  const std::size_t m_local = m / static_cast<std::size_t>(n);
  ops::GemmRs op(rt, m, n_cols, k_local, ops::GemmDtype::f32);
  // PE q holds columns [q * k_local, (q + 1) * k_local) of the global A and those rows of B.
  auto a_of = [&](int q) {
    std::vector<float> a(m * k_local);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t p = 0; p < k_local; ++p)
        a[i * k_local + p] = value(3, i, static_cast<std::size_t>(q) * k_local + p);
    return a;
  };
  auto b_of = [&](int q) {
    std::vector<float> b(k_local * n_cols);
    for (std::size_t p = 0; p < k_local; ++p)
      for (std::size_t j = 0; j < n_cols; ++j)
        b[p * n_cols + j] = value(4, static_cast<std::size_t>(q) * k_local + p, j);
    return b;
  };
  auto a_dev = upload(rt, a_of(me));
  auto b_dev = upload(rt, b_of(me));
  auto c = rt.alloc<float>(m_local * n_cols);
  for (int call = 0; call < 3; ++call) op.run(rt.stream(), a_dev.get(), b_dev.get(), c.get());
  rt.stream().synchronize();
  std::vector<double> ref(m_local * n_cols, 0.0);
  for (int q = 0; q < n; ++q) {
    const auto a = a_of(q), b = b_of(q);
    for (std::size_t i = 0; i < m_local; ++i)
      for (std::size_t p = 0; p < k_local; ++p)
        for (std::size_t j = 0; j < n_cols; ++j)
          ref[i * n_cols + j] +=
              static_cast<double>(a[(static_cast<std::size_t>(me) * m_local + i) * k_local + p]) *
              b[p * n_cols + j];
  }
  EXPECT_LE(relative_error(download(rt, c.get(), m_local * n_cols), ref), 1e-5);
  rt.barrier();
}

// This file is compiled by the host compiler, so its *_on_stream calls have no GPU code: on the
// cuda backend's stream they must say so instead of touching device memory from the host.
TEST(CudaOps, StreamOrderedHostCallsFromAHostCompiledFileAreABackendError) {
  TESSERA_SKIP_WITHOUT_CUDA();
  auto rt = Runtime::init(gpu_options());
  auto sig = rt.alloc<std::uint64_t>(1);
  try {
    signal_on_stream(rt.stream(), rt.device_context(), sig.get(), 1, device::SignalOp::add,
                     rt.pe());
    FAIL() << "signal_on_stream did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::backend);
    EXPECT_NE(e.message().find("nvcc"), std::string::npos) << e.message();
  }
  rt.barrier();
}

}  // namespace
}  // namespace tessera::gpu_test
