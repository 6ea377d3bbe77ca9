// Stand-in for builds without libfabric: no network transport. Peers on other nodes stay
// unreachable, and device calls on them fail with a transport error naming the cause.
#include "tessera/error.hpp"
#include "transport/fabric.hpp"

namespace tessera::detail {

bool fabric_available() { return false; }

std::unique_ptr<FabricTransport> make_fabric_transport(const FabricRequest& request) {
  throw Error(ErrorCode::transport, request.pe,
              "this build of Tessera has no libfabric (TESSERA_ENABLE_FABRIC=OFF or not found)");
}

std::vector<double> fabric_raw_write_times(Bootstrap& bootstrap, const std::string&, int, int,
                                           std::size_t, int, Timeout) {
  throw Error(ErrorCode::transport, bootstrap.rank(),
              "this build of Tessera has no libfabric (TESSERA_ENABLE_FABRIC=OFF or not found)");
}

}  // namespace tessera::detail
