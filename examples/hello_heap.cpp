// hello_heap: each PE writes its rank into its right neighbour's symmetric buffer, all PEs
// meet at a barrier, and each checks that its left neighbour's rank arrived.
//
//   mpirun -np 4 --oversubscribe ./hello_heap        (MPI bootstrap)
//   tessera-run -np 4 ./hello_heap                   (tcp bootstrap)
#include <cstdio>
#include <exception>

#include "tessera/tessera.hpp"

int main() {
  try {
    auto rt = tessera::Runtime::init(tessera::Options::from_env());
    const int me = rt.pe();
    const int n = rt.n_pes();
    const int right = (me + 1) % n;
    const int left = (me + n - 1) % n;

    auto inbox = rt.alloc<int>(1);
    inbox[0] = -1;
    rt.barrier();  // every inbox is initialised before anyone writes into it

    rt.put(inbox.get(), &me, sizeof(me), right);
    rt.barrier();  // every put is complete and visible

    const bool ok = inbox[0] == left;
    std::printf("PE %d of %d (node %d, %s bootstrap): inbox holds %d, expected %d from PE %d: %s\n",
                me, n, rt.node(), rt.bootstrap().name(), inbox[0], left, left,
                ok ? "verified" : "WRONG");
    std::fflush(stdout);
    inbox.reset();
    rt.finalize();
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hello_heap: %s\n", e.what());
    return 1;
  }
}
