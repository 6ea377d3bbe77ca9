// The tcp bootstrap: jobs of threads in this process, raw sockets that attack rank 0, timeouts,
// lost peers, the environment, and tessera-run started as a real process.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/socket.hpp"
#include "harness/sibling_binary.hpp"
#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"

extern char** environ;

namespace {

// Executables of this build, beside this test (tests/harness/sibling_binary.hpp).
const std::string kTesseraRun = tessera::harness::sibling_binary("tessera-run");
const std::string kTcpBootstrapProc = tessera::harness::sibling_binary("tcp_bootstrap_proc");

using namespace std::chrono_literals;
using tessera::Bootstrap;
using tessera::Error;
using tessera::ErrorCode;
using tessera::Timeout;
using tessera::UniqueId;
namespace detail = tessera::detail;

constexpr Timeout generous = 30s;

// Runs body(bootstrap) for ranks 0..n-1 of one job, one thread per rank; returns each rank's
// exception (null when it finished). `timeouts` holds one per rank; empty means generous ones.
std::vector<std::exception_ptr> run_job(int n, const std::function<void(Bootstrap&)>& body,
                                        std::vector<Timeout> timeouts = {}) {
  timeouts.resize(static_cast<std::size_t>(n), generous);
  UniqueId id = UniqueId::create();
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        auto b = tessera::make_tcp_bootstrap(id, r, n, timeouts[static_cast<std::size_t>(r)]);
        body(*b);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

void expect_no_errors(const std::vector<std::exception_ptr>& errors) {
  for (std::size_t r = 0; r < errors.size(); ++r) {
    if (!errors[r]) continue;
    try {
      std::rethrow_exception(errors[r]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << r << " threw: " << e.what();
    }
  }
}

// Runs fn and returns the tessera::Error it threw; fails the test when it threw nothing.
template <typename Fn>
std::optional<Error> error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a tessera::Error";
  return std::nullopt;
}

std::uint8_t pattern(int rank, std::size_t i) {
  return static_cast<std::uint8_t>((rank * 29 + i * 13 + (i >> 11)) & 0xff);
}

void check_allgather(Bootstrap& b, std::size_t bytes_per_rank) {
  const auto n = static_cast<std::size_t>(b.size());
  const auto me = static_cast<std::size_t>(b.rank());
  std::vector<std::uint8_t> buf(n * bytes_per_rank, 0);
  for (std::size_t i = 0; i < bytes_per_rank; ++i) {
    buf[me * bytes_per_rank + i] = pattern(b.rank(), i);
  }
  b.allgather(buf.data(), bytes_per_rank);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < bytes_per_rank; ++i) {
      if (buf[r * bytes_per_rank + i] != pattern(static_cast<int>(r), i)) {
        FAIL() << "rank " << b.rank() << ": allgather of " << bytes_per_rank << " bytes, byte " << i
               << " of rank " << r << " is " << int{buf[r * bytes_per_rank + i]} << ", expected "
               << int{pattern(static_cast<int>(r), i)};
      }
    }
  }
}

class TcpJob : public ::testing::TestWithParam<int> {};

TEST_P(TcpJob, EveryRankSeesItsRankAndSize) {
  const int n = GetParam();
  std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
  expect_no_errors(run_job(n, [&](Bootstrap& b) {
    EXPECT_EQ(b.size(), n);
    EXPECT_STREQ(b.name(), "tcp");
    seen[static_cast<std::size_t>(b.rank())]++;
  }));
  for (int r = 0; r < n; ++r) EXPECT_EQ(seen[static_cast<std::size_t>(r)].load(), 1) << r;
}

TEST_P(TcpJob, AllgatherDeliversEveryRanksBytesSmallAndMultiMiB) {
  expect_no_errors(run_job(GetParam(), [](Bootstrap& b) {
    check_allgather(b, 1);
    check_allgather(b, 40);
    check_allgather(b, 3 * 1024 * 1024 + 7);
    check_allgather(b, 0);
    b.barrier();
    check_allgather(b, 5);
  }));
}

TEST_P(TcpJob, TaggedSendRecvArrivesWhenReceivedOutOfOrder) {
  expect_no_errors(run_job(GetParam(), [](Bootstrap& b) {
    const int n = b.size();
    const int right = (b.rank() + 1) % n;
    const int left = (b.rank() + n - 1) % n;
    for (int tag = 0; tag < 4; ++tag) {
      std::int64_t v = b.rank() * 100 + tag;
      b.send(right, &v, sizeof v, tag);
    }
    for (int tag = 3; tag >= 0; --tag) {
      std::int64_t v = -1;
      b.recv(left, &v, sizeof v, tag);
      EXPECT_EQ(v, left * 100 + tag) << "rank " << b.rank() << " tag " << tag;
    }
    // Two messages with one tag keep their order.
    std::int32_t first = 1, second = 2;
    b.send(right, &first, sizeof first, 42);
    b.send(right, &second, sizeof second, 42);
    std::int32_t a = 0, c = 0;
    b.recv(left, &a, sizeof a, 42);
    b.recv(left, &c, sizeof c, 42);
    EXPECT_EQ(a, 1);
    EXPECT_EQ(c, 2);
    b.barrier();
  }));
}

INSTANTIATE_TEST_SUITE_P(Sizes, TcpJob, ::testing::Values(1, 2, 4, 5));

TEST(TcpBootstrap, LargeMessagesBothWaysDoNotDeadlock) {
  expect_no_errors(run_job(2, [](Bootstrap& b) {
    const int peer = 1 - b.rank();
    std::vector<std::uint8_t> out(16 * 1024 * 1024, static_cast<std::uint8_t>(b.rank() + 1));
    std::vector<std::uint8_t> in(out.size(), 0);
    b.send(peer, out.data(), out.size(), 1);
    b.recv(peer, in.data(), in.size(), 1);
    EXPECT_EQ(in.front(), peer + 1);
    EXPECT_EQ(in.back(), peer + 1);
  }));
}

TEST(TcpBootstrap, RecvOfTheWrongSizeNamesBothSizes) {
  auto errors = run_job(2, [](Bootstrap& b) {
    std::uint64_t v = 7;
    if (b.rank() == 1) {
      b.send(0, &v, sizeof v, 5);
      b.barrier();
      return;
    }
    std::uint32_t small = 0;
    auto e = error_of([&] { b.recv(1, &small, sizeof small, 5); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::invalid_argument);
    EXPECT_NE(e->message().find("asked for 4 bytes"), std::string::npos) << e->what();
    EXPECT_NE(e->message().find("has 8 bytes"), std::string::npos) << e->what();
    b.barrier();
  });
  expect_no_errors(errors);
}

TEST(TcpBootstrap, PeerOutsideTheJobIsInvalidArgument) {
  expect_no_errors(run_job(1, [](Bootstrap& b) {
    int v = 0;
    auto e = error_of([&] { b.send(1, &v, sizeof v, 0); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::invalid_argument);
    e = error_of([&] { b.recv(-1, &v, sizeof v, 0); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::invalid_argument);
    // A rank may talk to itself.
    int sent = 11, got = 0;
    b.send(0, &sent, sizeof sent, 3);
    b.recv(0, &got, sizeof got, 3);
    EXPECT_EQ(got, 11);
  }));
}

TEST(TcpBootstrap, BadRankOrSizeIsInvalidArgument) {
  UniqueId id = UniqueId::create();
  for (auto [rank, size] : {std::pair{2, 2}, std::pair{-1, 2}, std::pair{0, 0}}) {
    auto e = error_of([&, r = rank, s = size] { tessera::make_tcp_bootstrap(id, r, s, 1s); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::invalid_argument) << e->what();
  }
}

// --- UniqueId ---------------------------------------------------------------------------------

TEST(UniqueId, RoundTripsThroughItsText) {
  UniqueId id = UniqueId::create("127.0.0.1");
  EXPECT_EQ(id.host, "127.0.0.1");
  EXPECT_NE(id.port, 0);
  std::string text = id.to_string();
  EXPECT_EQ(text.size(), id.host.size() + 1 + std::to_string(id.port).size() + 1 + 32);
  UniqueId back = UniqueId::parse(text);
  EXPECT_EQ(back.host, id.host);
  EXPECT_EQ(back.port, id.port);
  EXPECT_EQ(back.token, id.token);
  EXPECT_NE(UniqueId::create().token, id.token) << "two ids drew the same random token";
}

TEST(UniqueId, ParseRejectsMalformedText) {
  const std::string token(32, 'a');
  const std::vector<std::string> bad = {
      "",
      "127.0.0.1",
      "127.0.0.1:5000",
      "127.0.0.1:5000:" + token + ":x",
      "localhost:5000:" + token,
      "127.0.0.256:5000:" + token,
      ":5000:" + token,
      "127.0.0.1::" + token,
      "127.0.0.1:0:" + token,
      "127.0.0.1:65536:" + token,
      "127.0.0.1:-1:" + token,
      "127.0.0.1:+80:" + token,
      "127.0.0.1:80x:" + token,
      "127.0.0.1:5000:" + std::string(31, 'a'),
      "127.0.0.1:5000:" + std::string(33, 'a'),
      "127.0.0.1:5000:" + std::string(31, 'a') + "g",
      "127.0.0.1:5000:" + std::string(32, ' '),
  };
  for (const std::string& text : bad) {
    auto e = error_of([&] { UniqueId::parse(text); });
    ASSERT_TRUE(e) << text;
    EXPECT_EQ(e->code(), ErrorCode::invalid_argument) << text;
    EXPECT_NE(e->message().find("malformed"), std::string::npos) << e->what();
  }
  UniqueId upper = UniqueId::parse("10.1.2.3:80:" + std::string(32, 'F'));
  EXPECT_EQ(upper.token[0], 0xff);
  EXPECT_EQ(upper.port, 80);
}

// --- frame codec ------------------------------------------------------------------------------

TEST(FrameHeader, RoundTripsEveryField) {
  detail::FrameHeader h{detail::FrameKind::collective, -17, 6, (std::uint64_t{1} << 30)};
  auto bytes = detail::encode_frame_header(h);
  auto d = detail::decode_frame_header(bytes.data(), bytes.size());
  ASSERT_TRUE(d.header) << d.error;
  EXPECT_EQ(d.header->kind, h.kind);
  EXPECT_EQ(d.header->tag, h.tag);
  EXPECT_EQ(d.header->source, h.source);
  EXPECT_EQ(d.header->length, h.length);
}

TEST(FrameHeader, RefusesBadMagicUnknownKindOversizedAndShortInput) {
  detail::FrameHeader h{detail::FrameKind::data, 0, 1, 8};
  auto good = detail::encode_frame_header(h);

  auto bad_magic = good;
  bad_magic[0] ^= 1;
  EXPECT_FALSE(detail::decode_frame_header(bad_magic.data(), bad_magic.size()).header);

  auto bad_kind = good;
  bad_kind[4] = 99;
  EXPECT_FALSE(detail::decode_frame_header(bad_kind.data(), bad_kind.size()).header);

  h.length = detail::max_frame_bytes + 1;
  auto oversized = detail::encode_frame_header(h);
  auto d = detail::decode_frame_header(oversized.data(), oversized.size());
  EXPECT_FALSE(d.header);
  EXPECT_NE(d.error.find("exceeds"), std::string::npos) << d.error;

  h.length = 8;
  h.source = -3;
  auto negative = detail::encode_frame_header(h);
  EXPECT_FALSE(detail::decode_frame_header(negative.data(), negative.size()).header);

  EXPECT_FALSE(detail::decode_frame_header(good.data(), good.size() - 1).header);
  EXPECT_FALSE(detail::decode_frame_header(nullptr, 0).header);
}

// --- security: connections without the token ------------------------------------------------

detail::Fd connect_to_root(const UniqueId& id) {
  return detail::connect_tcp(detail::resolve_ipv4(id.host, -1), id.port,
                             detail::Deadline::after(20s), -1, "rank 0");
}

void write_bytes(const detail::Fd& fd, const std::vector<std::uint8_t>& bytes) {
  auto r = detail::write_all(fd.get(), bytes.data(), bytes.size(), detail::Deadline::after(10s));
  ASSERT_EQ(r.status, detail::IoStatus::ok);
}

std::vector<std::uint8_t> hello(const std::array<std::uint8_t, 16>& token, int rank, int size) {
  std::vector<std::uint8_t> body(26, 0);
  std::memcpy(body.data(), token.data(), 16);
  detail::put_u32(body.data() + 16, static_cast<std::uint32_t>(rank));
  detail::put_u32(body.data() + 20, static_cast<std::uint32_t>(size));
  detail::put_u16(body.data() + 24, 1);
  return detail::make_frame(detail::FrameKind::hello, 0, rank, body.data(), body.size());
}

// True when the other end closes `fd` within the bound.
bool closed_by_peer(const detail::Fd& fd, std::chrono::milliseconds bound) {
  auto deadline = detail::Deadline::after(bound);
  for (;;) {
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, deadline.poll_ms()) == 0 && deadline.expired()) return false;
    std::uint8_t byte = 0;
    auto r = detail::read_some(fd.get(), &byte, 1);
    if (r.status == detail::IoStatus::closed) return true;
    if (r.status == detail::IoStatus::ok) return false;  // rank 0 never answers an intruder
  }
}

TEST(TcpSecurity, ConnectionsWithoutTheTokenAreDroppedAndTheJobStillForms) {
  UniqueId id = UniqueId::create();
  std::unique_ptr<Bootstrap> root;
  std::exception_ptr root_error;
  std::thread root_thread([&] {
    try {
      root = tessera::make_tcp_bootstrap(id, 0, 2, generous);
    } catch (...) {
      root_error = std::current_exception();
    }
  });

  auto wrong_token = id.token;
  wrong_token[3] ^= 0x40;
  detail::Fd impostor = connect_to_root(id);
  write_bytes(impostor, hello(wrong_token, 1, 2));

  detail::Fd garbage = connect_to_root(id);
  write_bytes(garbage, std::vector<std::uint8_t>(64, 0xab));

  detail::Fd oversized = connect_to_root(id);
  auto huge = detail::encode_frame_header({detail::FrameKind::hello, 0, 1, std::uint64_t{1} << 40});
  write_bytes(oversized, std::vector<std::uint8_t>(huge.begin(), huge.end()));

  detail::Fd too_long_hello = connect_to_root(id);
  auto long_frame = hello(id.token, 1, 2);
  long_frame.push_back(0);
  detail::put_u32(long_frame.data() + 16, 27);  // a length within the cap, but not a HELLO's
  write_bytes(too_long_hello, long_frame);

  // A header that promises a HELLO and then stalls must not hold the job up.
  detail::Fd truncated = connect_to_root(id);
  auto partial = hello(id.token, 1, 2);
  partial.resize(detail::frame_header_bytes + 10);
  write_bytes(truncated, partial);

  EXPECT_TRUE(closed_by_peer(impostor, 20s)) << "wrong token was not dropped";
  EXPECT_TRUE(closed_by_peer(garbage, 20s)) << "garbage was not dropped";
  EXPECT_TRUE(closed_by_peer(oversized, 20s)) << "oversized frame was not dropped";
  EXPECT_TRUE(closed_by_peer(too_long_hello, 20s)) << "mis-sized HELLO was not dropped";

  std::unique_ptr<Bootstrap> member;
  std::exception_ptr member_error;
  std::thread member_thread([&] {
    try {
      member = tessera::make_tcp_bootstrap(id, 1, 2, generous);
    } catch (...) {
      member_error = std::current_exception();
    }
  });
  root_thread.join();
  member_thread.join();
  expect_no_errors({root_error, member_error});
  ASSERT_TRUE(root && member);
  EXPECT_TRUE(closed_by_peer(truncated, 20s)) << "the stalled connection outlived init";

  std::vector<std::int32_t> parts(2);
  std::thread t([&] {
    parts[1] = 1;
    member->allgather(parts.data(), sizeof parts[0]);
  });
  std::vector<std::int32_t> root_parts{100, 0};
  root->allgather(root_parts.data(), sizeof root_parts[0]);
  t.join();
  EXPECT_EQ(root_parts[1], 1);
  EXPECT_EQ(parts[0], 100);
}

TEST(TcpSecurity, ATokenHolderWithTheWrongSizeFailsTheRoot) {
  UniqueId id = UniqueId::create();
  std::optional<Error> root_error;
  std::thread root_thread(
      [&] { root_error = error_of([&] { tessera::make_tcp_bootstrap(id, 0, 2, generous); }); });
  detail::Fd confused = connect_to_root(id);
  write_bytes(confused, hello(id.token, 1, 3));
  root_thread.join();
  ASSERT_TRUE(root_error);
  EXPECT_EQ(root_error->code(), ErrorCode::bootstrap);
  EXPECT_NE(root_error->message().find("rank 1 says the job has 3 ranks"), std::string::npos)
      << root_error->what();
}

// --- timeouts and lost peers ------------------------------------------------------------------

TEST(TcpTimeout, RootThrowsWhenRankOneNeverJoins) {
  UniqueId id = UniqueId::create();
  auto start = std::chrono::steady_clock::now();
  auto e = error_of([&] { tessera::make_tcp_bootstrap(id, 0, 2, 1s); });
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ErrorCode::timeout) << e->what();
  EXPECT_EQ(e->pe(), 0);
  EXPECT_NE(e->message().find("HELLO"), std::string::npos) << e->what();
  EXPECT_NE(e->message().find("rank(s) 1"), std::string::npos) << e->what();
  EXPECT_GE(elapsed, 1s);
  EXPECT_LT(elapsed, 10s);
}

TEST(TcpTimeout, MemberThrowsWhenTheRootNeverListens) {
  UniqueId id = UniqueId::create();
  auto e = error_of([&] { tessera::make_tcp_bootstrap(id, 1, 2, 1s); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), ErrorCode::timeout) << e->what();
  EXPECT_NE(e->message().find("rank 0"), std::string::npos) << e->what();
}

TEST(TcpTimeout, RecvThatNoOneAnswersTimesOut) {
  // Rank 0 waits 1 s for a message rank 1 never sends; rank 1 stays up (a closed link would be
  // PeerLost) until rank 0 reports back after its timeout.
  auto errors = run_job(2,
                        [](Bootstrap& b) {
                          int v = 0;
                          if (b.rank() == 0) {
                            auto e = error_of([&] { b.recv(1, &v, sizeof v, 77); });
                            ASSERT_TRUE(e);
                            EXPECT_EQ(e->code(), ErrorCode::timeout);
                            EXPECT_NE(e->message().find("tag 77 from rank 1"), std::string::npos)
                                << e->what();
                            b.send(1, &v, sizeof v, 78);
                          } else {
                            b.recv(0, &v, sizeof v, 78);
                          }
                        },
                        {1s, generous});
  expect_no_errors(errors);
}

TEST(TcpPeerLost, APeerThatLeavesMidCollectiveIsNamed) {
  auto errors = run_job(2, [](Bootstrap& b) {
    b.barrier();
    if (b.rank() == 1) return;  // its bootstrap closes while rank 0 enters an allgather
    std::vector<std::uint64_t> parts(2, 0);
    auto e = error_of([&] { b.allgather(parts.data(), sizeof parts[0]); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::peer_lost) << e->what();
    EXPECT_NE(e->message().find("rank 1 closed its bootstrap connection"), std::string::npos)
        << e->what();
  });
  expect_no_errors(errors);
}

// --- the environment --------------------------------------------------------------------------

// Sets and unsets variables for one test and restores them after. Tests run one at a time and
// these run no threads while the environment changes.
class EnvGuard {
 public:
  using Vars = std::map<std::string, std::optional<std::string>>;

  explicit EnvGuard(Vars vars) {
    static const char* const all[] = {
        "TESSERA_UNIQUE_ID", "TESSERA_RANK",          "TESSERA_SIZE", "RANK",
        "WORLD_SIZE",        "MASTER_ADDR",           "MASTER_PORT",  "TORCHELASTIC_RUN_ID",
        "TESSERA_TOKEN",     "TESSERA_BOOTSTRAP_PORT"};
    for (const char* name : all) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      ::unsetenv(name);
    }
    for (const auto& [name, value] : vars) {
      if (!saved_.count(name)) {
        const char* old = std::getenv(name.c_str());
        saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      }
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ~EnvGuard() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(TcpFromEnv, TorchrunVariablesFormASingleRankJob) {
  std::uint16_t free_port = UniqueId::create().port;
  EnvGuard env(EnvGuard::Vars{{"RANK", "0"},
                              {"WORLD_SIZE", "1"},
                              {"MASTER_ADDR", "localhost"},
                              {"MASTER_PORT", "29500"},
                              {"TESSERA_BOOTSTRAP_PORT", std::to_string(free_port)}});
  auto b = tessera::make_tcp_bootstrap_from_env(5s);
  EXPECT_EQ(b->rank(), 0);
  EXPECT_EQ(b->size(), 1);
  std::uint32_t v = 9;
  b->allgather(&v, sizeof v);
  EXPECT_EQ(v, 9u);
}

TEST(TcpFromEnv, TesseraVariablesWin) {
  UniqueId id = UniqueId::create();
  EnvGuard env(EnvGuard::Vars{{"TESSERA_UNIQUE_ID", id.to_string()},
                              {"TESSERA_RANK", "0"},
                              {"TESSERA_SIZE", "1"},
                              {"RANK", "5"}});
  auto b = tessera::make_tcp_bootstrap_from_env(5s);
  EXPECT_EQ(b->rank(), 0);
  EXPECT_EQ(b->size(), 1);
}

TEST(TcpFromEnv, MissingVariablesAreListed) {
  {
    EnvGuard env(EnvGuard::Vars{});
    auto e = error_of([] { tessera::make_tcp_bootstrap_from_env(1s); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::bootstrap);
    EXPECT_EQ(e->pe(), -1);
    EXPECT_NE(e->message().find("MASTER_ADDR"), std::string::npos) << e->what();
  }
  {
    EnvGuard env(EnvGuard::Vars{{"RANK", "0"}, {"WORLD_SIZE", "2"}});
    auto e = error_of([] { tessera::make_tcp_bootstrap_from_env(1s); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::bootstrap);
    EXPECT_NE(e->message().find("missing: MASTER_ADDR, MASTER_PORT"), std::string::npos)
        << e->what();
  }
  {
    EnvGuard env(EnvGuard::Vars{{"TESSERA_RANK", "0"}});
    auto e = error_of([] { tessera::make_tcp_bootstrap_from_env(1s); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::bootstrap);
    EXPECT_NE(e->message().find("missing: TESSERA_UNIQUE_ID, TESSERA_SIZE"), std::string::npos)
        << e->what();
  }
}

TEST(TcpFromEnv, BadNumbersAreInvalidArgument) {
  const std::vector<std::map<std::string, std::optional<std::string>>> cases = {
      {{"RANK", "0"}, {"WORLD_SIZE", "two"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1"}},
      {{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1"}},
      {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "99999"}},
      {{"TESSERA_UNIQUE_ID", "nonsense"}, {"TESSERA_RANK", "0"}, {"TESSERA_SIZE", "1"}},
      {{"TESSERA_UNIQUE_ID", UniqueId::create().to_string()},
       {"TESSERA_RANK", "-1"},
       {"TESSERA_SIZE", "1"}},
  };
  for (const auto& vars : cases) {
    EnvGuard env(vars);
    auto e = error_of([] { tessera::make_tcp_bootstrap_from_env(1s); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::invalid_argument) << e->what();
  }
}

// --- real processes ---------------------------------------------------------------------------

struct Finished {
  int status = 0;
  std::string output;  // stdout and stderr together
};

// Runs argv with `extra_env` added to this process's environment; captures its output.
Finished spawn_and_wait(const std::vector<std::string>& argv,
                        const std::vector<std::string>& extra_env = {}) {
  int pipe_fds[2];
  EXPECT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TESSERA_", 8) != 0) env_strings.emplace_back(*e);
  }
  for (const std::string& e : extra_env) env_strings.push_back(e);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  Finished f;
  EXPECT_EQ(rc, 0) << "cannot start " << argv[0];
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n > 0) {
      f.output.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_fds[0]);
  if (rc == 0) ::waitpid(pid, &f.status, 0);
  return f;
}

const std::string tessera_run = kTesseraRun;
const std::string proc = kTcpBootstrapProc;

TEST(TesseraRun, GivesEveryRankItsVariablesAndNodeId) {
  Finished f = spawn_and_wait(
      {tessera_run, "-np", "4", "--node-ids", "a,a,b,b", proc, "node-ids", "a,a,b,b"});
  ASSERT_TRUE(WIFEXITED(f.status)) << f.output;
  EXPECT_EQ(WEXITSTATUS(f.status), 0) << f.output;
}

TEST(TesseraRun, RunsTheChecksAsFiveProcesses) {
  Finished f = spawn_and_wait({tessera_run, "-np", "5", proc, "check"});
  ASSERT_TRUE(WIFEXITED(f.status)) << f.output;
  EXPECT_EQ(WEXITSTATUS(f.status), 0) << f.output;
}

TEST(TesseraRun, ReportsTheRankThatExitsNonZero) {
  Finished f = spawn_and_wait({tessera_run, "-np", "4", proc, "fail-rank2"});
  ASSERT_TRUE(WIFEXITED(f.status)) << f.output;
  EXPECT_EQ(WEXITSTATUS(f.status), 3) << f.output;
  EXPECT_NE(f.output.find("rank 2"), std::string::npos) << f.output;
  EXPECT_NE(f.output.find("exited with status 3"), std::string::npos) << f.output;
}

TEST(TesseraRun, ReportsTheRankKilledByASignal) {
  Finished f = spawn_and_wait({tessera_run, "-np", "3", proc, "abort-rank1"});
  ASSERT_TRUE(WIFEXITED(f.status)) << f.output;
  EXPECT_NE(WEXITSTATUS(f.status), 0) << f.output;
  EXPECT_NE(f.output.find("rank 1"), std::string::npos) << f.output;
  EXPECT_NE(f.output.find("killed by signal " + std::to_string(SIGABRT)), std::string::npos)
      << f.output;
}

TEST(TesseraRun, KillsRanksThatOutliveTheGracePeriod) {
  auto start = std::chrono::steady_clock::now();
  Finished f = spawn_and_wait({tessera_run, "-np", "4", "--grace", "1", proc, "hang-after-fail"});
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(WIFEXITED(f.status)) << f.output;
  EXPECT_EQ(WEXITSTATUS(f.status), 3) << f.output;
  EXPECT_NE(f.output.find("rank 3"), std::string::npos) << f.output;
  EXPECT_NE(f.output.find("sent by tessera-run"), std::string::npos) << f.output;
  EXPECT_LT(elapsed, 30s);
}

TEST(TesseraRun, TorchrunStyleVariablesFormAJobOfProcesses) {
  // Two processes started as torchrun would start them, without tessera-run.
  std::uint16_t port = UniqueId::create().port;
  std::vector<std::string> common = {"WORLD_SIZE=2", "MASTER_ADDR=localhost", "MASTER_PORT=29500",
                                     "TORCHELASTIC_RUN_ID=test-run",
                                     "TESSERA_BOOTSTRAP_PORT=" + std::to_string(port)};
  Finished results[2];
  std::thread ranks[2];
  for (int r = 0; r < 2; ++r) {
    ranks[r] = std::thread([&, r] {
      auto env = common;
      env.push_back("RANK=" + std::to_string(r));
      results[r] = spawn_and_wait({proc, "check"}, env);
    });
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(WIFEXITED(results[r].status)) << results[r].output;
    EXPECT_EQ(WEXITSTATUS(results[r].status), 0) << "rank " << r << ": " << results[r].output;
  }
}

TEST(TesseraRun, RejectsUsageErrors) {
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{tessera_run, proc},
        std::vector<std::string>{tessera_run, "-np", "0", proc},
        std::vector<std::string>{tessera_run, "-np", "2"},
        std::vector<std::string>{tessera_run, "-np", "2", "--node-ids", "a", proc}}) {
    Finished f = spawn_and_wait(argv);
    ASSERT_TRUE(WIFEXITED(f.status)) << f.output;
    EXPECT_EQ(WEXITSTATUS(f.status), 2) << f.output;
    EXPECT_NE(f.output.find("usage"), std::string::npos) << f.output;
  }
}

}  // namespace
