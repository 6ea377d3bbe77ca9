// Which bootstrap forms the job: the one the application passed, or the one the launcher's
// environment names (MPI/PMI variables, TESSERA_UNIQUE_ID or torchrun's RANK/WORLD_SIZE), else a
// single-PE job. Internal.
#pragma once

#include <memory>

#include "tessera/bootstrap.hpp"
#include "tessera/runtime.hpp"

namespace tessera::detail {

// Throws Error(invalid_argument) for BootstrapKind::threads without Options::bootstrap.
std::shared_ptr<Bootstrap> select_bootstrap(const Options& options);

}  // namespace tessera::detail
