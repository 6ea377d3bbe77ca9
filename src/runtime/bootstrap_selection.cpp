#include "runtime/bootstrap_selection.hpp"

#include <cstdlib>
#include <string>

#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return (value != nullptr && *value != '\0') ? value : nullptr;
}

}  // namespace

std::shared_ptr<Bootstrap> select_bootstrap(const Options& o) {
  if (o.bootstrap) return o.bootstrap;
  BootstrapKind kind = o.bootstrap_kind;
  const char* mpi_size = env("OMPI_COMM_WORLD_SIZE");
  if (mpi_size == nullptr) mpi_size = env("PMI_SIZE");
  if (mpi_size == nullptr) mpi_size = env("PMIX_SIZE");
  if (kind == BootstrapKind::automatic) {
    if (mpi_size != nullptr || env("PMIX_RANK") != nullptr) {
      kind = BootstrapKind::mpi;
      if (!mpi_bootstrap_available() && mpi_size != nullptr && std::string(mpi_size) == "1")
        kind = BootstrapKind::single;
    } else if (env("TESSERA_UNIQUE_ID") != nullptr ||
               (env("RANK") != nullptr && env("WORLD_SIZE") != nullptr &&
                env("MASTER_ADDR") != nullptr)) {
      kind = BootstrapKind::tcp;
    } else {
      kind = BootstrapKind::single;
    }
  }
  switch (kind) {
    case BootstrapKind::mpi:
      return make_mpi_bootstrap(nullptr, o.timeout);
    case BootstrapKind::tcp:
      return make_tcp_bootstrap_from_env(o.timeout);
    case BootstrapKind::single:
      return make_threads_bootstrap(make_threads_group(1), 0, o.timeout);
    case BootstrapKind::threads:
      throw Error(ErrorCode::invalid_argument, -1,
                  "the threads bootstrap needs Options::bootstrap from make_threads_bootstrap");
    case BootstrapKind::automatic:
      break;
  }
  throw Error(ErrorCode::internal, -1, "no bootstrap selected");
}

}  // namespace tessera::detail
