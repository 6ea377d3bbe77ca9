// tessera::ops::MoeBuffer: dispatch compared exactly (after sorting within each expert) with a
// reference that sees every PE's input, combine against a weighted sum computed in double.
// P = 1..4, E in {P, 4P, 16P}, k in {1, 2, 8}, fp32 and bf16, int32 and int64 routing, unused
// (-1) slots, a PE that sends nothing, all tokens on one expert under and over the capacity, bad
// configs and bad expert ids, and 20 calls in a row on one buffer without any reset.
#include "tessera/ops/moe.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "harness/run_pes.hpp"
#include "tessera/device/ops/moe.hpp"

namespace tessera::ops_test {
namespace {

namespace td = tessera::device;
using harness::run_pes;
using ops::MoeBuffer;
using ops::MoeConfig;
using ops::MoeDtype;
using ops::MoeHandle;

enum class Routing { random, all_to_expert0 };

// One PE's input of one call: tokens x[T, H], routing idx[T, k], weights w[T, k].
template <class T>
struct Input {
  std::size_t tokens = 0;
  std::vector<T> x;
  std::vector<std::int64_t> idx;
  std::vector<float> w;
};

template <class T>
T from_float(float v) {
  if constexpr (std::is_same_v<T, td::bf16>) {
    return td::ops::to_bf16(v);
  } else {
    return v;
  }
}

// The input of PE `pe` in call `call`: any PE can recompute any other's. A third of the slots
// are unused (-1) when `holes`; PE `silent` (if >= 0) sends no tokens.
template <class T>
Input<T> make_input(std::uint64_t seed, int pe, int call, std::size_t tokens, std::size_t h, int k,
                    int experts, Routing routing, bool holes, int silent) {
  std::mt19937_64 rng(seed * 1000003u + static_cast<std::uint64_t>(pe) * 7919u +
                      static_cast<std::uint64_t>(call) * 104729u);
  Input<T> in;
  in.tokens = pe == silent ? 0 : tokens;
  in.x.resize(in.tokens * h);
  in.idx.assign(in.tokens * static_cast<std::size_t>(k), -1);
  in.w.resize(in.tokens * static_cast<std::size_t>(k));
  std::uniform_real_distribution<float> value(-2.0f, 2.0f), weight(0.05f, 1.0f);
  for (auto& v : in.x) v = from_float<T>(value(rng));
  std::vector<std::int64_t> perm(static_cast<std::size_t>(experts));
  for (std::size_t t = 0; t < in.tokens; ++t) {
    for (std::size_t e = 0; e < perm.size(); ++e) perm[e] = static_cast<std::int64_t>(e);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int j = 0; j < k; ++j) {
      const std::size_t at = t * static_cast<std::size_t>(k) + static_cast<std::size_t>(j);
      in.w[at] = weight(rng);
      if (routing == Routing::all_to_expert0) {
        in.idx[at] = j == 0 ? 0 : -1;
      } else if (!holes || rng() % 3 != 0) {
        in.idx[at] = perm[static_cast<std::size_t>(j)];
      }
    }
  }
  return in;
}

// The scale the test's expert e applies to its rows.
float expert_scale(int e) { return 1.0f + 0.125f * static_cast<float>(e % 13); }

struct Case {
  int pes;
  int experts_per_pe;  // E = pes * experts_per_pe
  int topk;
  MoeDtype dtype;
  bool idx64;
  int calls;
  std::size_t alignment = 1;
};

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return "P" + std::to_string(c.pes) + "_E" + std::to_string(c.pes * c.experts_per_pe) + "_k" +
         std::to_string(c.topk) + "_" + ops::to_string(c.dtype) + (c.idx64 ? "_idx64" : "_idx32") +
         "_calls" + std::to_string(c.calls) + "_align" + std::to_string(c.alignment);
}

// A received row, as the handle describes it.
struct RowKey {
  int src_pe;
  int src_token;
  int slot;
  auto operator<=>(const RowKey&) const = default;
};

// Checks this PE's dispatch result against every PE's input, then runs each local expert
// (scale by expert_scale) into expert_out. Returns "" or the first mismatch.
template <class T>
std::string check_dispatch(const MoeHandle& hd, const std::vector<Input<T>>& all, int me, int k,
                           int local_experts, std::size_t h, std::size_t alignment,
                           std::vector<T>& expert_out) {
  const auto* rows = static_cast<const T*>(hd.expert_x);
  const std::size_t total = hd.rows();
  expert_out.assign(std::max<std::size_t>(total, 1) * h, from_float<T>(0.0f));
  std::size_t received = 0;
  for (std::size_t s = 0; s < all.size(); ++s) {
    for (std::size_t t = 0; t < all[s].tokens; ++t) {
      bool here = false;
      for (int j = 0; j < k; ++j) {
        const std::int64_t e =
            all[s].idx[t * static_cast<std::size_t>(k) + static_cast<std::size_t>(j)];
        here = here || (e >= 0 && e / local_experts == me);
      }
      received += here ? 1 : 0;
    }
  }
  if (static_cast<std::size_t>(hd.recv_tokens[0]) != received) {
    return "received " + std::to_string(hd.recv_tokens[0]) + " tokens, expected " +
           std::to_string(received);
  }
  for (int le = 0; le < local_experts; ++le) {
    const int e = me * local_experts + le;
    std::vector<RowKey> want;
    for (std::size_t s = 0; s < all.size(); ++s) {
      for (std::size_t t = 0; t < all[s].tokens; ++t) {
        for (int j = 0; j < k; ++j) {
          if (all[s].idx[t * static_cast<std::size_t>(k) + static_cast<std::size_t>(j)] == e) {
            want.push_back({static_cast<int>(s), static_cast<int>(t), j});
          }
        }
      }
    }
    const std::int64_t off = hd.expert_offsets[le], count = hd.expert_counts[le];
    if (off % static_cast<std::int64_t>(alignment) != 0) return "segment not aligned";
    if (count != static_cast<std::int64_t>(want.size())) {
      return "expert " + std::to_string(e) + " got " + std::to_string(count) + " rows, expected " +
             std::to_string(want.size());
    }
    if (hd.expert_offsets[le + 1] - off < count) return "segments overlap";
    std::vector<std::pair<RowKey, std::size_t>> got;
    for (std::int64_t r = off; r < off + count; ++r) {
      got.push_back({{hd.src_pe[r], hd.src_token[r], hd.slot[r]}, static_cast<std::size_t>(r)});
    }
    for (std::int64_t r = off + count; r < hd.expert_offsets[le + 1]; ++r) {
      if (hd.src_pe[r] != -1) return "padding row " + std::to_string(r) + " has a source";
    }
    std::sort(got.begin(), got.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < want.size(); ++i) {
      const RowKey& key = want[i];
      if (!(got[i].first == key)) {
        return "expert " + std::to_string(e) + " row " + std::to_string(i) + ": got source (" +
               std::to_string(got[i].first.src_pe) + ", " + std::to_string(got[i].first.src_token) +
               ", " + std::to_string(got[i].first.slot) + "), expected (" +
               std::to_string(key.src_pe) + ", " + std::to_string(key.src_token) + ", " +
               std::to_string(key.slot) + ")";
      }
      const std::size_t r = got[i].second;
      const Input<T>& in = all[static_cast<std::size_t>(key.src_pe)];
      const auto t = static_cast<std::size_t>(key.src_token);
      const float w = in.w[t * static_cast<std::size_t>(k) + static_cast<std::size_t>(key.slot)];
      if (std::memcmp(&hd.weight[r], &w, sizeof(float)) != 0) return "weight differs";
      if (std::memcmp(rows + r * h, in.x.data() + t * h, h * sizeof(T)) != 0) {
        return "expert " + std::to_string(e) + ": row of token " + std::to_string(t) + " from PE " +
               std::to_string(key.src_pe) + " differs";
      }
      for (std::size_t c = 0; c < h; ++c) {
        expert_out[r * h + c] = from_float<T>(td::ops::to_float(rows[r * h + c]) * expert_scale(e));
      }
    }
  }
  return "";
}

// ||y - ref||_inf / ||ref||_inf of this PE's combine result against sum_k w * out in double.
template <class T>
double combine_error(const std::vector<T>& y, const Input<T>& in, int k, std::size_t h) {
  double max_err = 0, max_ref = 0;
  for (std::size_t t = 0; t < in.tokens; ++t) {
    for (std::size_t c = 0; c < h; ++c) {
      double ref = 0;
      for (int j = 0; j < k; ++j) {
        const std::size_t at = t * static_cast<std::size_t>(k) + static_cast<std::size_t>(j);
        const std::int64_t e = in.idx[at];
        if (e < 0) continue;
        const T out =
            from_float<T>(td::ops::to_float(in.x[t * h + c]) * expert_scale(static_cast<int>(e)));
        ref += static_cast<double>(in.w[at]) * td::ops::to_float(out);
      }
      max_ref = std::max(max_ref, std::abs(ref));
      max_err = std::max(max_err, std::abs(ref - td::ops::to_float(y[t * h + c])));
    }
  }
  return max_ref == 0 ? max_err : max_err / max_ref;
}

// Sets TESSERA_CORES (the cores the node's PEs share, which size prefill grids) for a scope;
// set before the PE threads start and cleared after they are joined.
class CoresForTest {
 public:
  explicit CoresForTest(const std::string& value) { ::setenv("TESSERA_CORES", value.c_str(), 1); }
  ~CoresForTest() { ::unsetenv("TESSERA_CORES"); }
  CoresForTest(const CoresForTest&) = delete;
  CoresForTest& operator=(const CoresForTest&) = delete;
};

template <class T>
MoeHandle dispatch(MoeBuffer& buf, Stream& s, const Input<T>& in, bool idx64,
                   std::vector<std::int32_t>& idx32) {
  if (idx64) return buf.dispatch(s, in.x.data(), in.tokens, in.idx.data(), in.w.data());
  idx32.assign(in.idx.begin(), in.idx.end());
  return buf.dispatch(s, in.x.data(), in.tokens, idx32.data(), in.w.data());
}

template <class T>
void run_case(const Case& c, Routing routing, bool holes, int silent) {
  constexpr std::size_t kHidden = 40;
  const std::uint64_t seed =
      static_cast<std::uint64_t>(c.pes * 131 + c.experts_per_pe * 17 + c.topk);
  // Three cores per PE, so the multi-block calls get max_blocks = 3 blocks on any machine.
  const CoresForTest cores(std::to_string(3 * c.pes));
  run_pes(c.pes, [&](Runtime& rt) {
    const int n = rt.n_pes(), me = rt.pe();
    MoeConfig cfg;
    cfg.max_tokens_per_pe = 200;
    cfg.hidden = kHidden;
    cfg.topk = c.topk;
    cfg.num_experts = n * c.experts_per_pe;
    cfg.dtype = c.dtype;
    cfg.expert_alignment = c.alignment;
    cfg.max_blocks = 3;
    MoeBuffer buf(rt, cfg);
    std::vector<std::int32_t> idx32;
    std::vector<T> expert_out, y;
    for (int call = 1; call <= c.calls; ++call) {
      // Alternate the decode path (one block) with multi-block calls.
      const std::size_t tokens = call % 2 == 1 ? 37 + static_cast<std::size_t>(call) : 200;
      std::vector<Input<T>> all;
      for (int p = 0; p < n; ++p) {
        all.push_back(make_input<T>(seed, p, call, tokens, kHidden, c.topk, cfg.num_experts,
                                    routing, holes, silent));
      }
      const Input<T>& mine = all[static_cast<std::size_t>(me)];
      const MoeHandle hd = dispatch(buf, rt.stream(), mine, c.idx64, idx32);
      rt.stream().synchronize();
      ASSERT_EQ(check_dispatch(hd, all, me, c.topk, buf.local_experts(), kHidden, c.alignment,
                               expert_out),
                "")
          << "call " << call << " on PE " << me;
      y.assign(std::max<std::size_t>(mine.tokens, 1) * kHidden, from_float<T>(-1.0f));
      buf.combine(rt.stream(), hd, expert_out.data(), y.data());
      rt.stream().synchronize();
      const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-2;
      ASSERT_LE(combine_error(y, mine, c.topk, kHidden), tol) << "call " << call << " on PE " << me;
    }
  });
}

class Moe : public ::testing::TestWithParam<Case> {};

TEST_P(Moe, DispatchMatchesReferenceAndCombineSumsWeightedExpertOutputs) {
  const Case c = GetParam();
  if (c.dtype == MoeDtype::f32) {
    run_case<float>(c, Routing::random, true, -1);
  } else {
    run_case<td::bf16>(c, Routing::random, true, -1);
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  int i = 0;
  for (int pes = 1; pes <= 4; ++pes) {
    for (int per : {1, 4, 16}) {
      for (int k : {1, 2, 8}) {
        if (k > pes * per) continue;
        const MoeDtype dtype = i % 2 == 0 ? MoeDtype::f32 : MoeDtype::bf16;
        cases.push_back({pes, per, k, dtype, i % 3 == 0, 3, i % 4 == 1 ? std::size_t{4} : 1});
        ++i;
      }
    }
  }
  // 20 calls in a row on one buffer, no reset.
  cases.push_back({4, 4, 8, MoeDtype::bf16, false, 20, 1});
  cases.push_back({3, 16, 2, MoeDtype::f32, true, 20, 8});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Ops, Moe, ::testing::ValuesIn(all_cases()), name_of);

// Combine's weighted row sum (one pass per row over an fp32 buffer, in column chunks) must give,
// bit for bit, 0 + w[0] * row 0 + w[1] * row 1 ... in row order, rounded to T once: for row
// counts up to 2 * kMoeMaxTopk and widths across the 512-column chunks. (A rewrite that adds
// rows in another order, or rounds twice, fails here.)
template <class T>
void check_weighted_sum_bits() {
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> val(-3.0f, 3.0f), wt(0.05f, 1.0f);
  for (const std::size_t h :
       {std::size_t{1}, std::size_t{7}, std::size_t{512}, std::size_t{1100}}) {
    for (int n_rows = 0; n_rows <= 2 * device::ops::kMoeMaxTopk; n_rows += n_rows < 10 ? 1 : 27) {
      std::vector<std::vector<T>> data(static_cast<std::size_t>(n_rows), std::vector<T>(h));
      std::vector<const T*> rows;
      std::vector<float> w;
      for (auto& row : data) {
        for (T& x : row) x = device::ops::detail::moe_from_float<T>(val(rng));
        rows.push_back(row.data());
        w.push_back(wt(rng));
      }
      std::vector<T> got(h);
      device::ops::detail::moe_weighted_sum(device::Block(0, 1), got.data(), rows.data(), w.data(),
                                            n_rows, h);
      for (std::size_t c = 0; c < h; ++c) {
        float want = 0.0f;
        for (int j = 0; j < n_rows; ++j) {
          want += w[static_cast<std::size_t>(j)] *
                  device::to_float(rows[static_cast<std::size_t>(j)][c]);
        }
        const T expect = device::ops::detail::moe_from_float<T>(want);
        ASSERT_EQ(std::memcmp(&got[c], &expect, sizeof(T)), 0)
            << "h " << h << " rows " << n_rows << " column " << c;
      }
    }
  }
}

TEST(MoeCombineSum, ManyRowsPerPassIsBitIdenticalToAPassPerRow) {
  check_weighted_sum_bits<float>();
  check_weighted_sum_bits<device::bf16>();
}

// PEs x blocks never exceed the cores: a prefill grid is this PE's share of the node's cores, at
// most max_blocks; the decode path is one block whatever the cores.
TEST(MoeGrid, PrefillGridIsThePesShareOfTheCores) {
  struct Expect {
    const char* cores;
    int pes, max_blocks, blocks;
  };
  for (const Expect e : {Expect{"2", 2, 4, 1}, Expect{"1", 2, 4, 1}, Expect{"8", 2, 4, 4},
                         Expect{"8", 4, 4, 2}, Expect{"6", 2, 2, 2}, Expect{"7", 3, 8, 2}}) {
    const CoresForTest cores(e.cores);
    run_pes(e.pes, [&](Runtime& rt) {
      MoeConfig cfg;
      cfg.max_tokens_per_pe = 256;
      cfg.hidden = 8;
      cfg.topk = 1;
      cfg.num_experts = rt.n_pes();
      cfg.max_blocks = e.max_blocks;
      MoeBuffer buf(rt, cfg);
      EXPECT_EQ(buf.blocks_for(MoeBuffer::kMoeDecodeTokens), 1);
      EXPECT_EQ(buf.blocks_for(256), e.blocks)
          << "TESSERA_CORES=" << e.cores << " with " << e.pes << " PEs";
    });
  }
}

TEST(MoeGrid, ABadCoreCountIsRejectedByName) {
  const CoresForTest cores("two");
  run_pes(1, [&](Runtime& rt) {
    MoeConfig cfg;
    cfg.max_tokens_per_pe = 4;
    cfg.hidden = 8;
    cfg.topk = 1;
    cfg.num_experts = 1;
    try {
      MoeBuffer buf(rt, cfg);
      ADD_FAILURE() << "expected tessera::Error(InvalidArgument)";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_THAT(e.what(), ::testing::HasSubstr(
                                "TESSERA_CORES must be a whole number of cores, at least 1, got "
                                "'two'"));
    }
  });
}

TEST(MoeRouting, APeThatSendsNothingStillReceivesAndCombines) {
  run_case<float>({4, 4, 2, MoeDtype::f32, false, 4, 1}, Routing::random, false, 1);
}

TEST(MoeRouting, AllTokensOnOneExpertFitWhenTheBoundAllowsIt) {
  // recv_capacity = 4 PEs * 200 tokens: exactly enough for every token on expert 0.
  run_case<td::bf16>({4, 2, 2, MoeDtype::bf16, false, 4, 1}, Routing::all_to_expert0, false, -1);
}

// Runs fn and returns the message of the tessera::Error(invalid_argument) it throws.
template <class Fn>
std::string invalid_argument_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    return e.message();
  }
  ADD_FAILURE() << "expected tessera::Error(InvalidArgument)";
  return "";
}

TEST(MoeCapacity, OverflowFailsOnEveryPeNamingPeExpertAndCountsThenTheBufferStillWorks) {
  using ::testing::HasSubstr;
  run_pes(3, [](Runtime& rt) {
    const int n = rt.n_pes(), me = rt.pe();
    MoeConfig cfg;
    cfg.max_tokens_per_pe = 50;
    cfg.hidden = 16;
    cfg.topk = 2;
    cfg.num_experts = 2 * n;
    cfg.dtype = MoeDtype::f32;
    cfg.recv_capacity = 100;   // under max_tokens * n = 150
    cfg.expert_capacity = 90;  // rows
    MoeBuffer buf(rt, cfg);
    std::vector<std::int32_t> idx32;
    std::vector<float> expert_out, y(50 * 16);
    // 40 tokens per PE, all on expert 0 of PE 0: 120 tokens > 100.
    auto over =
        make_input<float>(7, me, 1, 40, 16, 2, cfg.num_experts, Routing::all_to_expert0, false, -1);
    buf.dispatch(rt.stream(), over.x.data(), over.tokens, over.idx.data(), over.w.data());
    EXPECT_THAT(invalid_argument_message([&] { rt.stream().synchronize(); }),
                HasSubstr("PE 0 would receive 120 tokens, more than its receive capacity of 100 "
                          "tokens (from PE 0: 40, PE 1: 40, PE 2: 40)"));
    // 32 tokens per PE: 96 tokens fit the receive bound, 96 rows overflow the expert bound.
    auto rows =
        make_input<float>(8, me, 1, 32, 16, 2, cfg.num_experts, Routing::all_to_expert0, false, -1);
    buf.dispatch(rt.stream(), rows.x.data(), rows.tokens, rows.idx.data(), rows.w.data());
    EXPECT_THAT(invalid_argument_message([&] { rt.stream().synchronize(); }),
                HasSubstr("the experts of PE 0 would hold 96 rows, more than its expert capacity "
                          "of 90 rows (expert 0: 96 tokens)"));
    // Too many tokens on one PE: every PE names it.
    auto many = make_input<float>(9, me, 1, me == 1 ? 51 : 10, 16, 2, cfg.num_experts,
                                  Routing::random, false, -1);
    buf.dispatch(rt.stream(), many.x.data(), many.tokens, many.idx.data(), many.w.data());
    EXPECT_THAT(invalid_argument_message([&] { rt.stream().synchronize(); }),
                HasSubstr("PE 1 passed 51 tokens, more than max_tokens_per_pe = 50"));
    // A bad expert id on PE 2.
    auto bad = make_input<float>(10, me, 1, 10, 16, 2, cfg.num_experts, Routing::random, false, -1);
    if (me == 2) bad.idx[7] = cfg.num_experts;
    buf.dispatch(rt.stream(), bad.x.data(), bad.tokens, bad.idx.data(), bad.w.data());
    EXPECT_THAT(invalid_argument_message([&] { rt.stream().synchronize(); }),
                HasSubstr("PE 2 topk_idx[3][1] = " + std::to_string(cfg.num_experts) +
                          " is not an expert"));
    // Under both bounds (30 tokens each: 90 tokens, 90 rows): works, and so do later calls.
    for (int call = 2; call <= 4; ++call) {
      std::vector<Input<float>> all;
      for (int p = 0; p < n; ++p) {
        all.push_back(make_input<float>(11, p, call, 30, 16, 2, cfg.num_experts,
                                        call == 2 ? Routing::all_to_expert0 : Routing::random, true,
                                        -1));
      }
      const auto& mine = all[static_cast<std::size_t>(me)];
      const MoeHandle hd = dispatch(buf, rt.stream(), mine, false, idx32);
      rt.stream().synchronize();
      ASSERT_EQ(check_dispatch(hd, all, me, 2, buf.local_experts(), 16, 1, expert_out), "");
      buf.combine(rt.stream(), hd, expert_out.data(), y.data());
      rt.stream().synchronize();
      ASSERT_LE(combine_error(y, mine, 2, 16), 1e-5);
    }
  });
}

TEST(MoeConfigChecks, BadConfigsAreRejectedWithClearErrors) {
  using ::testing::HasSubstr;
  run_pes(3, [](Runtime& rt) {
    MoeConfig cfg;
    cfg.max_tokens_per_pe = 8;
    cfg.hidden = 8;
    cfg.topk = 2;
    cfg.num_experts = 4;
    EXPECT_THAT(invalid_argument_message([&] { MoeBuffer buf(rt, cfg); }),
                HasSubstr("num_experts must be a positive multiple of n_pes so experts split "
                          "evenly over the PEs: got num_experts = 4 with n_pes = 3"));
    cfg.num_experts = 6;
    cfg.topk = 7;
    EXPECT_THAT(invalid_argument_message([&] { MoeBuffer buf(rt, cfg); }),
                HasSubstr("topk must be in [1, min(32, num_experts)]: got topk = 7 with "
                          "num_experts = 6"));
    cfg.topk = 2;
    cfg.hidden = rt.pe() == 1 ? 16 : 8;
    EXPECT_THAT(invalid_argument_message([&] { MoeBuffer buf(rt, cfg); }),
                HasSubstr("PEs disagree on the config"));
    cfg.hidden = 8;
    cfg.dtype = MoeDtype::bf16;
    MoeBuffer buf(rt, cfg);
    std::vector<float> x(8 * 8), w(16);
    std::vector<std::int32_t> idx(16, -1);
    EXPECT_THAT(invalid_argument_message(
                    [&] { buf.dispatch(rt.stream(), x.data(), 8, idx.data(), w.data()); }),
                HasSubstr("dispatch: x is f32 but the buffer was made for bf16"));
    MoeHandle stale;
    std::vector<td::bf16> out(64), y(64);
    EXPECT_THAT(
        invalid_argument_message([&] { buf.combine(rt.stream(), stale, out.data(), y.data()); }),
        HasSubstr("combine: the handle is not the one of this buffer's latest dispatch"));
  });
}

}  // namespace
}  // namespace tessera::ops_test
