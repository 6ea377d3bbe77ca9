// One PE of a 2-PE job whose PE 0 writes where no heap tile may reach, as a real process under
// tessera-run, for guard_test. Usage: guard_proc MODE
//   overrun      PE 0 puts 1024 bytes into PE 1's heap starting 512 bytes before its end
//   overrun-own  PE 0 puts the same tile into its own heap (the self transport)
//   underrun     PE 0 puts 128 bytes into PE 1's heap starting 64 bytes before its start
//   signal-below PE 0 signals a word 8 bytes before PE 1's heap
//   host-put     PE 0 calls the host Runtime::put with a destination past the heap's end
// Every PE then meets in a host barrier, which ends with PeerLost on PE 1 if a stray write set
// its abort word, and prints "guard_proc PE p: <what happened>". Exits 0 only when nothing
// went wrong.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/device.hpp"
#include "tessera/launch.hpp"
#include "tessera/tessera.hpp"

namespace td = tessera::device;

namespace {

constexpr std::uint64_t kPattern = 3;  // what the stray tile writes

int run(const std::string& mode) {
  auto rt = tessera::Runtime::init(tessera::Options::from_env());
  const int me = rt.pe();
  rt.barrier();
  const auto ctx = rt.device_context();
  char* base = static_cast<char*>(rt.heap_base());
  const std::size_t heap = rt.heap_size();
  std::vector<std::uint64_t> src(128, kPattern);
  const std::uint64_t* from = src.data();
  std::printf("guard_proc PE %d: armed\n", me);
  std::fflush(stdout);
  if (me == 0 && (mode == "overrun" || mode == "overrun-own")) {
    auto* dst = reinterpret_cast<std::uint64_t*>(base + heap - 512);
    const int target = mode == "overrun" ? 1 : 0;
    tessera::launch(rt.stream(), 1, [=](td::Block g) {
      td::put(g, ctx, td::make_tile(dst, 128), td::make_tile(from, 128), target);
    });
  } else if (me == 0 && mode == "underrun") {
    auto* dst = reinterpret_cast<std::uint64_t*>(base - 64);
    tessera::launch(rt.stream(), 1, [=](td::Block g) {
      td::put(g, ctx, td::make_tile(dst, 16), td::make_tile(from, 16), 1);
    });
  } else if (me == 0 && mode == "signal-below") {
    auto* sig = reinterpret_cast<std::uint64_t*>(base - 8);
    tessera::launch(rt.stream(), 1,
                    [=](td::Block) { td::signal(ctx, sig, kPattern, td::SignalOp::set, 1); });
  } else if (me == 0 && mode == "host-put") {
    rt.put(base + heap - 8, src.data(), 64, 1);
  } else if (mode != "overrun" && mode != "overrun-own" && mode != "underrun" &&
             mode != "signal-below" && mode != "host-put") {
    std::fprintf(stderr, "guard_proc: unknown mode '%s'\n", mode.c_str());
    return 2;
  }
  rt.stream().synchronize();
  rt.barrier();
  std::printf("guard_proc PE %d: no error\n", me);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: guard_proc overrun|overrun-own|underrun|signal-below|host-put\n");
    return 2;
  }
  try {
    return run(argv[1]);
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "guard_proc PE %d: %s\n", e.pe(), e.what());
    std::fflush(stderr);
    return 1;
  }
}
