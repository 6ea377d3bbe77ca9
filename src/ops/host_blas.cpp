// The host BLAS wrapper (tessera/device/ops/impl/host_blas.hpp): the one file that calls a BLAS's
// C API. The library is opened with dlopen on first use, so libtessera has no link-time BLAS
// dependency and a machine without one keeps the portable kernel.
#include "tessera/device/ops/impl/host_blas.hpp"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/log.hpp"

namespace tessera::device::host_blas {
namespace {

// The CBLAS enumerators (their values are fixed by the CBLAS interface).
constexpr int kRowMajor = 101;
constexpr int kNoTrans = 111;

using SgemmFn = void (*)(int order, int transa, int transb, int m, int n, int k, float alpha,
                         const float* a, int lda, const float* b, int ldb, float beta, float* c,
                         int ldc);
// cblas_sbgemm takes bf16 as its bit pattern (OpenBLAS's bfloat16 is a 16-bit integer).
using SbgemmFn = void (*)(int order, int transa, int transb, int m, int n, int k, float alpha,
                          const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb,
                          float beta, float* c, int ldc);
using SetThreadsFn = void (*)(int);
using ConfigFn = const char* (*)();
using BlisArchIdFn = int (*)();
using BlisArchStringFn = const char* (*)(int);

struct Loaded {
  Info info;
  SgemmFn sgemm = nullptr;
  SbgemmFn sbgemm = nullptr;
  // OpenBLAS's calls from several threads at once gave wrong products here (Debian's 0.3.21, its
  // serial build: gemm_ar's producer_consumer push, whose blocks multiply concurrently, was wrong
  // in about 1 run of 12), so its calls take one lock per process. BLIS is thread-safe.
  bool one_call_at_a_time = false;
};

std::mutex& openblas_lock() {
  static std::mutex mu;
  return mu;
}

// Where Debian puts the flavours of each library: the serial build in its own folder (not on the
// loader's path), the default one (an alternative) under its soname.
std::vector<std::string> candidates(const std::string& library) {
  std::vector<std::string> out;
#ifdef TESSERA_LIBRARY_ARCHITECTURE
  const std::string dir = std::string("/usr/lib/") + TESSERA_LIBRARY_ARCHITECTURE + "/";
#else
  const std::string dir = "/usr/lib/";
#endif
  if (library == "openblas") {
    out = {dir + "openblas-serial/libopenblas.so.0", "libopenblas.so.0", "libopenblas.so"};
  } else if (library == "blis") {
    out = {dir + "blis-serial/libblis.so.4", "libblis.so.4", "libblis.so"};
  }
  return out;
}

// Opens `path` and resolves what the wrapper calls; on failure `why` says what was missing.
bool open_library(const std::string& path, Loaded& out, std::string& why) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    why = "cannot load " + path + ": " + (err != nullptr ? err : "unknown dlopen error");
    return false;
  }
  auto sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
  if (sgemm == nullptr) {
    why = path + " has no cblas_sgemm";
    dlclose(handle);
    return false;
  }
  out.sgemm = sgemm;
  out.sbgemm = reinterpret_cast<SbgemmFn>(dlsym(handle, "cblas_sbgemm"));
  out.info.available = true;
  out.info.has_sbgemm = out.sbgemm != nullptr;
  // One thread per call: the host backend's blocks are the parallelism.
  const bool serial = path.find("-serial/") != std::string::npos;
  if (auto openblas_threads =
          reinterpret_cast<SetThreadsFn>(dlsym(handle, "openblas_set_num_threads"))) {
    openblas_threads(1);
    out.one_call_at_a_time = true;
    auto config = reinterpret_cast<ConfigFn>(dlsym(handle, "openblas_get_config"));
    out.info.name = config != nullptr ? config() : "OpenBLAS";
  } else if (auto blis_threads =
                 reinterpret_cast<SetThreadsFn>(dlsym(handle, "bli_thread_set_num_threads"))) {
    blis_threads(1);
    auto version = reinterpret_cast<ConfigFn>(dlsym(handle, "bli_info_get_version_str"));
    auto arch_id = reinterpret_cast<BlisArchIdFn>(dlsym(handle, "bli_arch_query_id"));
    auto arch_name = reinterpret_cast<BlisArchStringFn>(dlsym(handle, "bli_arch_string"));
    out.info.name = std::string("BLIS ") + (version != nullptr ? version() : "?");
    if (arch_id != nullptr && arch_name != nullptr)
      out.info.name += std::string(" ") + arch_name(arch_id());
  } else {
    out.info.name = path;  // an unknown CBLAS: its own threading is its business
  }
  out.info.name += serial ? " (serial, " + path + ")" : " (" + path + ", threads set to 1)";
  // The handle stays open for the life of the process: the function pointers point into it.
  return true;
}

// The first of `paths` that opens, or one with info.available false and the reasons appended
// to `why`.
Loaded open_first(const std::vector<std::string>& paths, std::string& why) {
  Loaded out;
  for (const std::string& path : paths) {
    std::string this_why;
    if (open_library(path, out, this_why)) return out;
    why += (why.empty() ? "" : "; ") + this_why;
  }
  return out;
}

// TESSERA_BLAS=auto. BLIS first: it can be called from every block at once, where OpenBLAS calls
// are serialized. But a BLIS that knows no kernels for this CPU runs its generic configuration,
// several times slower than OpenBLAS (31-37 against 197-222 GFLOP/s sgemm on the CI machine's
// Cooperlake cores, whose CPUID Debian's BLIS 0.9.0 maps to "generic"), so then OpenBLAS, if
// installed, is taken instead.
Loaded load_auto() {
  std::string why;
  Loaded blis = open_first(candidates("blis"), why);
  if (blis.info.available && !runs_generic_blis(blis.info.name)) return blis;
  Loaded openblas = open_first(candidates("openblas"), why);
  if (openblas.info.available) {
    if (blis.info.available) openblas.info.name += "; taken over " + blis.info.name;
    return openblas;
  }
  if (blis.info.available) return blis;
  Loaded none;
  none.info.status = "TESSERA_BLAS=auto: no BLAS found (" + why + ")";
  return none;
}

Loaded load(const std::string& request) {
  Loaded out;
  if (request == "none") {
    out.info.status = "TESSERA_BLAS=none: the portable kernel";
    return out;
  }
  if (request.empty() || request == "auto") return load_auto();
  std::vector<std::string> paths;
  if (request.find('/') != std::string::npos) {
    paths = {request};
  } else if (request == "openblas" || request == "blis") {
    paths = candidates(request);
  } else {
    out.info.status = "TESSERA_BLAS=" + request +
                      ": not one of auto, openblas, blis, none or a path to a CBLAS library";
    return out;
  }
  std::string why;
  out = open_first(paths, why);
  if (!out.info.available)
    out.info.status = "TESSERA_BLAS=" + request + ": no BLAS found (" + why + ")";
  return out;
}

const Loaded& process_blas() {
  static const Loaded loaded = [] {
    const char* env = std::getenv("TESSERA_BLAS");
    const std::string request = env != nullptr ? env : "";
    Loaded l = load(request);
    // An explicit request that failed is a configuration mistake worth a line; auto without a
    // BLAS is the documented fallback.
    if (!l.info.available && !request.empty() && request != "auto" && request != "none") {
      const tessera::detail::Logger log;
      TESSERA_LOG(log, warn, l.info.status << "; gemm_tile uses its portable kernel");
    }
    return l;
  }();
  return loaded;
}

bool fits_int(std::size_t v) { return v <= static_cast<std::size_t>(INT_MAX); }

bool dims_fit(std::size_t m, std::size_t n, std::size_t k, std::size_t lda, std::size_t ldb,
              std::size_t ldc) {
  return fits_int(m) && fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) &&
         fits_int(ldc);
}

}  // namespace

bool runs_generic_blis(const std::string& name) {
  return name.rfind("BLIS ", 0) == 0 && name.find(" generic") != std::string::npos;
}

const Info& info() { return process_blas().info; }

Info probe(const std::string& request) { return load(request).info; }

bool sgemm(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
           const float* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  const Loaded& blas = process_blas();
  if (blas.sgemm == nullptr || !dims_fit(m, n, k, lda, ldb, ldc)) return false;
  std::unique_lock<std::mutex> lock;
  if (blas.one_call_at_a_time) lock = std::unique_lock<std::mutex>(openblas_lock());
  blas.sgemm(kRowMajor, kNoTrans, kNoTrans, static_cast<int>(m), static_cast<int>(n),
             static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb),
             accumulate ? 1.0f : 0.0f, c, static_cast<int>(ldc));
  return true;
}

bool sbgemm(std::size_t m, std::size_t n, std::size_t k, const bf16* a, std::size_t lda,
            const bf16* b, std::size_t ldb, float* c, std::size_t ldc, bool accumulate) {
  const Loaded& blas = process_blas();
  if (blas.sbgemm == nullptr || !dims_fit(m, n, k, lda, ldb, ldc)) return false;
  static_assert(sizeof(bf16) == sizeof(std::uint16_t), "bf16 is its 16 bits");
  std::unique_lock<std::mutex> lock;
  if (blas.one_call_at_a_time) lock = std::unique_lock<std::mutex>(openblas_lock());
  blas.sbgemm(kRowMajor, kNoTrans, kNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, reinterpret_cast<const std::uint16_t*>(a),
              static_cast<int>(lda), reinterpret_cast<const std::uint16_t*>(b),
              static_cast<int>(ldb), accumulate ? 1.0f : 0.0f, c, static_cast<int>(ldc));
  return true;
}

}  // namespace tessera::device::host_blas
