// The MPI bootstrap as real processes under mpirun (np 1, 2, 4). This program includes <mpi.h>
// because it tests the wrapper against the MPI it wraps: user communicators, traffic isolation
// and who initialises MPI.
//
// With --tessera-initialises-mpi, main leaves MPI alone: the first make_mpi_bootstrap must
// initialise it with MPI_THREAD_MULTIPLE and finalise it at exit (mpirun fails the job when a
// rank exits without MPI_Finalize).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

namespace {

using tessera::Bootstrap;
using tessera::Error;
using tessera::ErrorCode;

// Generous enough for a loaded 2-core CI machine, short enough that a hang fails the test.
constexpr tessera::Timeout kTimeout{60000};

// Destroyed after the atexit MPI_Finalize in --tessera-initialises-mpi mode (it is constructed
// before MPI is initialised), so its destructor must not call MPI.
std::unique_ptr<Bootstrap> g_outlives_mpi;

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

std::uint8_t pattern(int rank, std::size_t i) {
  return static_cast<std::uint8_t>((static_cast<std::size_t>(rank) * 131u + i * 7u) & 0xffu);
}

TEST(MpiBootstrap, RankAndSizeMatchWorld) {
  auto boot = tessera::make_mpi_bootstrap(nullptr, kTimeout);
  EXPECT_STREQ(boot->name(), "mpi");
  EXPECT_EQ(boot->rank(), world_rank());
  EXPECT_EQ(boot->size(), world_size());
  EXPECT_TRUE(tessera::mpi_bootstrap_available());
}

TEST(MpiBootstrap, AllgatherFillsEveryRanksPart) {
  for (const tessera::Timeout timeout : {kTimeout, tessera::Timeout{0}}) {
    auto boot = tessera::make_mpi_bootstrap(nullptr, timeout);
    const int n = boot->size();
    for (const std::size_t bytes :
         {std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{3} << 20}) {
      std::vector<std::uint8_t> buf(bytes * static_cast<std::size_t>(n), 0xee);
      for (std::size_t i = 0; i < bytes; ++i) {
        buf[static_cast<std::size_t>(boot->rank()) * bytes + i] = pattern(boot->rank(), i);
      }
      boot->allgather(buf.data(), bytes);
      std::size_t wrong = 0;
      int first_bad_rank = -1;
      for (int r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < bytes; ++i) {
          if (buf[static_cast<std::size_t>(r) * bytes + i] != pattern(r, i)) {
            if (wrong++ == 0) first_bad_rank = r;
          }
        }
      }
      EXPECT_EQ(wrong, 0u) << bytes << " bytes per rank, timeout " << timeout.count()
                           << " ms; first wrong part from rank " << first_bad_rank;
    }
  }
}

// Every rank adds 1 to a counter on rank 0 before the barrier; after it, every rank must see
// all the additions of this round.
TEST(MpiBootstrap, BarrierOrdersEveryRanksWork) {
  for (const tessera::Timeout timeout : {kTimeout, tessera::Timeout{0}}) {
    auto boot = tessera::make_mpi_bootstrap(nullptr, timeout);
    MPI_Win win = MPI_WIN_NULL;
    int* counter = nullptr;
    const MPI_Aint window_bytes = world_rank() == 0 ? static_cast<MPI_Aint>(sizeof(int)) : 0;
    ASSERT_EQ(
        MPI_Win_allocate(window_bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &counter, &win),
        MPI_SUCCESS);
    if (world_rank() == 0) *counter = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const int one = 1;
    for (int round = 1; round <= 20; ++round) {
      int before = 0;
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
      MPI_Fetch_and_op(&one, &before, MPI_INT, 0, 0, MPI_SUM, win);
      MPI_Win_unlock(0, win);
      boot->barrier();
      int seen = 0;
      MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
      MPI_Fetch_and_op(nullptr, &seen, MPI_INT, 0, 0, MPI_NO_OP, win);
      MPI_Win_unlock(0, win);
      EXPECT_GE(seen, round * boot->size()) << "round " << round;
      // Nobody may add for the next round before everyone has read this one.
      boot->barrier();
    }
    MPI_Win_free(&win);
  }
}

TEST(MpiBootstrap, RecvTakesMessagesOutOfTagOrder) {
  for (const tessera::Timeout timeout : {kTimeout, tessera::Timeout{0}}) {
    auto boot = tessera::make_mpi_bootstrap(nullptr, timeout);
    const int to = (boot->rank() + 1) % boot->size();
    const int from = (boot->rank() + boot->size() - 1) % boot->size();
    // Small enough to be sent eagerly: the sends complete before their receives are posted.
    for (int tag = 1; tag <= 3; ++tag) {
      const std::int64_t value = boot->rank() * 100 + tag;
      boot->send(to, &value, sizeof(value), tag);
    }
    for (const int tag : {3, 1, 2}) {
      std::int64_t value = -1;
      boot->recv(from, &value, sizeof(value), tag);
      EXPECT_EQ(value, from * 100 + tag) << "tag " << tag;
    }
    boot->barrier();
  }
}

TEST(MpiBootstrap, MessagesWithOneTagArriveInOrder) {
  auto boot = tessera::make_mpi_bootstrap(nullptr, kTimeout);
  const int to = (boot->rank() + 1) % boot->size();
  const int from = (boot->rank() + boot->size() - 1) % boot->size();
  for (int i = 0; i < 8; ++i) boot->send(to, &i, sizeof(i), 7);
  for (int i = 0; i < 8; ++i) {
    int value = -1;
    boot->recv(from, &value, sizeof(value), 7);
    EXPECT_EQ(value, i);
  }
  boot->barrier();
}

TEST(MpiBootstrap, LargeMessageReachesPeer) {
  auto boot = tessera::make_mpi_bootstrap(nullptr, kTimeout);
  const std::size_t bytes = std::size_t{2} << 20;
  std::vector<std::uint8_t> out(bytes);
  std::vector<std::uint8_t> in(bytes, 0);
  for (std::size_t i = 0; i < bytes; ++i) out[i] = pattern(boot->rank(), i);
  // Even ranks send first and odd ranks receive first, so rendezvous sends cannot deadlock.
  const int rank = boot->rank();
  const int n = boot->size();
  if (n == 1) GTEST_SKIP() << "needs two ranks";
  const int partner = rank % 2 == 0 ? rank + 1 : rank - 1;
  if (partner >= n) {
    boot->barrier();
    return;
  }
  if (rank % 2 == 0) {
    boot->send(partner, out.data(), bytes, 11);
    boot->recv(partner, in.data(), bytes, 12);
  } else {
    boot->recv(partner, in.data(), bytes, 11);
    boot->send(partner, out.data(), bytes, 12);
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < bytes; ++i) wrong += in[i] != pattern(partner, i) ? 1 : 0;
  EXPECT_EQ(wrong, 0u);
  boot->barrier();
}

TEST(MpiBootstrap, RecvOfWrongSizeThrowsNamingBothSizes) {
  for (const tessera::Timeout timeout : {kTimeout, tessera::Timeout{0}}) {
    auto boot = tessera::make_mpi_bootstrap(nullptr, timeout);
    const int to = (boot->rank() + 1) % boot->size();
    const int from = (boot->rank() + boot->size() - 1) % boot->size();
    const std::vector<std::uint8_t> hundred(100, 1);
    boot->send(to, hundred.data(), hundred.size(), 21);
    boot->send(to, hundred.data(), hundred.size(), 22);
    std::vector<std::uint8_t> in(200);
    try {
      boot->recv(from, in.data(), 64, 21);
      ADD_FAILURE() << "a 64-byte recv of a 100-byte message did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::bootstrap);
      EXPECT_EQ(e.pe(), boot->rank());
      EXPECT_NE(e.message().find("expected 64 bytes"), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("holds 100 bytes"), std::string::npos) << e.what();
    }
    EXPECT_THROW(boot->recv(from, in.data(), 200, 22), Error);
    // The mismatched messages were consumed: the channel still works.
    const int value = 42 + boot->rank();
    boot->send(to, &value, sizeof(value), 21);
    int got = 0;
    boot->recv(from, &got, sizeof(got), 21);
    EXPECT_EQ(got, 42 + from);
    boot->barrier();
  }
}

TEST(MpiBootstrap, BadPeerOrTagIsInvalidArgument) {
  auto boot = tessera::make_mpi_bootstrap(nullptr, kTimeout);
  int value = 0;
  try {
    boot->send(boot->size(), &value, sizeof(value), 1);
    ADD_FAILURE() << "send to rank size() did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
  try {
    boot->recv(-1, &value, sizeof(value), 1);
    ADD_FAILURE() << "recv from rank -1 did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
  EXPECT_THROW(boot->send(0, &value, sizeof(value), -3), Error);
}

TEST(MpiBootstrap, RecvWithNoSenderTimesOut) {
  auto boot = tessera::make_mpi_bootstrap(nullptr, tessera::Timeout{200});
  int value = 0;
  const auto start = std::chrono::steady_clock::now();
  try {
    boot->recv((boot->rank() + 1) % boot->size(), &value, sizeof(value), 999);
    ADD_FAILURE() << "recv with no sender returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::timeout);
    EXPECT_NE(e.message().find("did not complete within 0.2 s"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  boot->barrier();
}

// Rank 0 enters a barrier alone and times out; the others enter it afterwards, which completes
// rank 0's abandoned request, so the job stays consistent.
TEST(MpiBootstrap, BarrierWithAMissingRankTimesOut) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  // The timeout is each rank's own: only rank 0's is short.
  auto boot =
      tessera::make_mpi_bootstrap(nullptr, world_rank() == 0 ? tessera::Timeout{300} : kTimeout);
  if (boot->rank() == 0) {
    try {
      boot->barrier();
      ADD_FAILURE() << "barrier without the other ranks returned";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::timeout);
      EXPECT_EQ(e.pe(), 0);
      EXPECT_NE(e.message().find("mpi bootstrap: barrier did not complete within 0.3 s"),
                std::string::npos)
          << e.what();
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (boot->rank() != 0) boot->barrier();
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(MpiBootstrap, UserCommunicatorHalvesAreSeparateJobs) {
  const int n = world_size();
  const int color = world_rank() * 2 / n;  // lower half 0, upper half 1
  MPI_Comm half = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, color, world_rank(), &half), MPI_SUCCESS);
  int half_rank = -1;
  int half_size = 0;
  MPI_Comm_rank(half, &half_rank);
  MPI_Comm_size(half, &half_size);
  {
    auto boot = tessera::make_mpi_bootstrap(&half, kTimeout);
    EXPECT_EQ(boot->rank(), half_rank);
    EXPECT_EQ(boot->size(), half_size);

    std::vector<int> world_ranks(static_cast<std::size_t>(half_size), -1);
    world_ranks[static_cast<std::size_t>(half_rank)] = world_rank();
    boot->allgather(world_ranks.data(), sizeof(int));
    const int first = color == 0 ? 0 : n / 2;
    for (int r = 0; r < half_size; ++r) {
      EXPECT_EQ(world_ranks[static_cast<std::size_t>(r)], first + r) << "half rank " << r;
    }

    // Same peer, same tag on the application's communicator and on Tessera's: each receive
    // gets the message sent on its own communicator.
    const int to = (half_rank + 1) % half_size;
    const int from = (half_rank + half_size - 1) % half_size;
    const int app_value = 1000 + world_rank();
    const int tessera_value = 2000 + world_rank();
    MPI_Request app_send = MPI_REQUEST_NULL;
    MPI_Isend(&app_value, 1, MPI_INT, to, 5, half, &app_send);
    boot->send(to, &tessera_value, sizeof(tessera_value), 5);
    int got_tessera = 0;
    boot->recv(from, &got_tessera, sizeof(got_tessera), 5);
    int got_app = 0;
    MPI_Recv(&got_app, 1, MPI_INT, from, 5, half, MPI_STATUS_IGNORE);
    MPI_Wait(&app_send, MPI_STATUS_IGNORE);
    EXPECT_EQ(got_tessera, 2000 + first + from);
    EXPECT_EQ(got_app, 1000 + first + from);
    boot->barrier();
  }
  MPI_Comm_free(&half);
}

// A Runtime that ends and a later one in the same process: MPI must still be usable.
TEST(MpiBootstrap, SecondBootstrapAfterFirstIsDestroyedWorks) {
  for (int round = 0; round < 3; ++round) {
    auto boot = tessera::make_mpi_bootstrap(nullptr, kTimeout);
    int value = boot->rank();
    std::vector<int> all(static_cast<std::size_t>(boot->size()));
    all[static_cast<std::size_t>(boot->rank())] = value;
    boot->allgather(all.data(), sizeof(int));
    for (int r = 0; r < boot->size(); ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], r);
  }
  int finalized = 1;
  MPI_Finalized(&finalized);
  EXPECT_EQ(finalized, 0);
}

TEST(MpiBootstrap, NullCommunicatorIsInvalidArgument) {
  MPI_Comm none = MPI_COMM_NULL;
  try {
    tessera::make_mpi_bootstrap(&none, kTimeout);
    ADD_FAILURE() << "MPI_COMM_NULL was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
}

// Ranks other than 0 print only failures, each line prefixed with the rank, so the log of a
// 4-rank run stays readable.
class FailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() != nullptr ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }
  void OnTestEnd(const testing::TestInfo& info) override {
    if (info.result()->Failed()) {
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
    }
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  bool tessera_initialises = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--tessera-initialises-mpi") == 0) tessera_initialises = true;
  }
  testing::InitGoogleTest(&argc, argv);

  if (tessera_initialises) {
    int initialised = 1;
    MPI_Initialized(&initialised);
    if (initialised) {
      std::fprintf(stderr, "FAIL: MPI initialised before Tessera was asked to\n");
      return 1;
    }
    g_outlives_mpi = tessera::make_mpi_bootstrap(nullptr, kTimeout);
    MPI_Initialized(&initialised);
    int level = -1;
    MPI_Query_thread(&level);
    if (!initialised || level != MPI_THREAD_MULTIPLE) {
      std::fprintf(stderr,
                   "FAIL: make_mpi_bootstrap left MPI initialised=%d thread level=%d (want %d)\n",
                   initialised, level, MPI_THREAD_MULTIPLE);
      return 1;
    }
  } else {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  }

  const int rank = world_rank();
  if (rank != 0) {
    testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  const int failed = RUN_ALL_TESTS();
  // A rank that failed must not leave the others waiting in a later collective.
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!tessera_initialises) MPI_Finalize();
  // In --tessera-initialises-mpi mode MPI_Finalize runs at exit, after main returns.
  return any_failed != 0 ? 1 : 0;
}
