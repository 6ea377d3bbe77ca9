// A PE as a real process, for the launcher tests: builds the heap, passes ranks around the
// ring, and optionally dies. Usage: heap_proc [--die-rank R]. Exit 0 when verified.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "tessera/tessera.hpp"

int main(int argc, char** argv) {
  int die_rank = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--die-rank") == 0) die_rank = std::atoi(argv[i + 1]);
  }
  try {
    auto rt = tessera::Runtime::init(tessera::Options::from_env());
    auto buf = rt.alloc<int>(static_cast<std::size_t>(rt.n_pes()));
    for (int pe = 0; pe < rt.n_pes(); ++pe) rt.put(buf.get() + rt.pe(), &pe, sizeof(int), pe);
    rt.barrier();
    for (int pe = 0; pe < rt.n_pes(); ++pe) {
      if (buf[static_cast<std::size_t>(pe)] != rt.pe()) {
        std::fprintf(stderr, "PE %d: slot %d holds %d\n", rt.pe(), pe,
                     buf[static_cast<std::size_t>(pe)]);
        return 1;
      }
    }
    if (rt.pe() == die_rank) std::raise(SIGKILL);  // dies holding mapped heaps of its peers
    rt.barrier();                                  // survivors learn of the death here
    std::printf("PE %d: verified\n", rt.pe());
    return 0;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "heap_proc: %s\n", e.what());
    return e.code() == tessera::ErrorCode::peer_lost ? 42 : 1;
  }
}
