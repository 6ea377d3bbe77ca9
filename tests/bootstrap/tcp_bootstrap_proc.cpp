// One rank of a tcp-bootstrap job started by tessera-run (make_tcp_bootstrap_from_env). Exits 0
// when every check passes, 1 on a mismatch or error. Modes (first argument):
//   check (default)      allgather of small and multi-MiB parts, barrier, tagged send/recv
//   node-ids A,B,...     TESSERA_NODE_ID of rank r equals the r-th listed id
//   fail-rank2           rank 2 exits with status 3 after init; the others exit 0
//   abort-rank1          rank 1 aborts (SIGABRT) after init; the others exit 0
//   hang-after-fail      rank 2 exits 3, rank 3 blocks until killed; the others exit 0
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

namespace {

int failures = 0;

void expect(bool ok, int rank, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "tcp_bootstrap_proc rank %d: FAILED %s\n", rank, what.c_str());
  ++failures;
}

std::uint8_t pattern(int rank, std::size_t i) {
  return static_cast<std::uint8_t>((rank * 131 + i * 7 + (i >> 9)) & 0xff);
}

void check_allgather(tessera::Bootstrap& b, std::size_t bytes_per_rank) {
  const int n = b.size();
  std::vector<std::uint8_t> buf(bytes_per_rank * static_cast<std::size_t>(n), 0);
  for (std::size_t i = 0; i < bytes_per_rank; ++i) {
    buf[static_cast<std::size_t>(b.rank()) * bytes_per_rank + i] = pattern(b.rank(), i);
  }
  b.allgather(buf.data(), bytes_per_rank);
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < bytes_per_rank; ++i) {
      std::uint8_t seen = buf[static_cast<std::size_t>(r) * bytes_per_rank + i];
      if (seen != pattern(r, i)) {
        expect(false, b.rank(),
               "allgather of " + std::to_string(bytes_per_rank) + " bytes: byte " +
                   std::to_string(i) + " of rank " + std::to_string(r) + " is " +
                   std::to_string(seen) + ", expected " + std::to_string(pattern(r, i)));
        return;
      }
    }
  }
}

void check_send_recv(tessera::Bootstrap& b) {
  const int n = b.size();
  const int right = (b.rank() + 1) % n;
  const int left = (b.rank() + n - 1) % n;
  // Two tags sent in one order and received in the other: the first lands in the stash.
  std::int64_t a = 1000 + b.rank();
  std::vector<std::int32_t> big(100000, b.rank());
  b.send(right, &a, sizeof a, 7);
  b.send(right, big.data(), big.size() * sizeof big[0], 9);
  std::vector<std::int32_t> got_big(big.size(), -1);
  std::int64_t got_a = -1;
  b.recv(left, got_big.data(), got_big.size() * sizeof got_big[0], 9);
  b.recv(left, &got_a, sizeof got_a, 7);
  expect(got_a == 1000 + left, b.rank(),
         "tag 7 from rank " + std::to_string(left) + " carried " + std::to_string(got_a));
  expect(got_big.front() == left && got_big.back() == left, b.rank(),
         "tag 9 from rank " + std::to_string(left) + " carried rank " +
             std::to_string(got_big.front()));
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "check";
  int rank = -1;
  try {
    auto b = tessera::make_tcp_bootstrap_from_env(tessera::Timeout(std::chrono::seconds(60)));
    rank = b->rank();
    // Started by tessera-run (TESSERA_*) or as torchrun would start it (RANK, WORLD_SIZE).
    const char* env_rank =
        std::getenv("TESSERA_RANK") ? std::getenv("TESSERA_RANK") : std::getenv("RANK");
    const char* env_size =
        std::getenv("TESSERA_SIZE") ? std::getenv("TESSERA_SIZE") : std::getenv("WORLD_SIZE");
    expect(env_rank != nullptr && std::to_string(b->rank()) == env_rank, rank, "rank");
    expect(env_size != nullptr && std::to_string(b->size()) == env_size, rank, "size");
    expect(std::strcmp(b->name(), "tcp") == 0, rank, "name");

    if (mode == "check") {
      check_allgather(*b, 1);
      check_allgather(*b, 24);
      check_allgather(*b, 3 * 1024 * 1024 + 5);
      b->barrier();
      check_send_recv(*b);
      b->barrier();
    } else if (mode == "node-ids" && argc > 2) {
      std::vector<std::string> ids;
      std::string list = argv[2];
      for (std::size_t start = 0;;) {
        std::size_t comma = list.find(',', start);
        ids.push_back(list.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      const char* node = std::getenv("TESSERA_NODE_ID");
      expect(static_cast<int>(ids.size()) == b->size(), rank, "node id count");
      expect(node != nullptr && rank < static_cast<int>(ids.size()) &&
                 ids[static_cast<std::size_t>(rank)] == node,
             rank, std::string("TESSERA_NODE_ID is ") + (node ? node : "unset"));
      b->barrier();
    } else if (mode == "fail-rank2") {
      b->barrier();
      if (rank == 2) return 3;
    } else if (mode == "abort-rank1") {
      b->barrier();
      if (rank == 1) std::abort();
    } else if (mode == "hang-after-fail") {
      b->barrier();
      if (rank == 2) return 3;
      if (rank == 3) {
        for (;;) ::pause();  // only tessera-run's SIGKILL ends this rank
      }
    } else {
      std::fprintf(stderr, "tcp_bootstrap_proc: unknown mode \"%s\"\n", mode.c_str());
      return 1;
    }
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tcp_bootstrap_proc rank %d: %s\n", rank, e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
