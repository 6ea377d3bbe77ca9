#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

namespace tessera {

bool mpi_bootstrap_available() { return false; }

std::unique_ptr<Bootstrap> make_mpi_bootstrap(const void*, Timeout) {
  throw Error(ErrorCode::bootstrap, -1,
              "Tessera was built without MPI (TESSERA_ENABLE_MPI=OFF or MPI not found)");
}

}  // namespace tessera
