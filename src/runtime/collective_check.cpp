#include "runtime/collective_check.hpp"

#include <algorithm>
#include <array>
#include <compare>
#include <string>
#include <vector>

#include "runtime/disagreement.hpp"
#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

// A call as the PEs exchange it; all-zero padding so equal calls compare equal bytewise too.
struct Call {
  std::uint64_t seq = 0, kind = 0, a = 0, b = 0;
  std::array<char, CollectiveSequence::kMaxOpName + 1> op{};
  auto operator<=>(const Call&) const = default;
};

// "called malloc #3 with bytes=64, align=64": the call's kind, its sequence number on that PE,
// and its arguments.
std::string describe(const Call& c) {
  const std::string number = " #" + std::to_string(c.seq);
  switch (static_cast<CollectiveKind>(c.kind)) {
    case CollectiveKind::malloc:
    case CollectiveKind::calloc:
      return std::string("called ") +
             (c.kind == static_cast<std::uint64_t>(CollectiveKind::malloc) ? "malloc" : "calloc") +
             number + " with bytes=" + std::to_string(c.a) + ", align=" + std::to_string(c.b);
    case CollectiveKind::free:
      return "called free" + number +
             (c.a == ~std::uint64_t{0} ? std::string(" with a pointer outside the heap")
                                       : " with offset=" + std::to_string(c.a));
    case CollectiveKind::barrier:
      return "called barrier" + number;
    case CollectiveKind::finalize:
      return "called finalize" + number;
    case CollectiveKind::op:
      return "called " + std::string(c.op.begin(), std::find(c.op.begin(), c.op.end(), '\0')) +
             number;
  }
  return "called an unknown collective (kind " + std::to_string(c.kind) + ")" + number;
}

}  // namespace

void CollectiveSequence::check(Bootstrap& bootstrap, int pe, int n_pes, CollectiveKind kind,
                               std::string_view op_name, const char* what, std::uint64_t a,
                               std::uint64_t b) {
  std::vector<Call> calls(static_cast<std::size_t>(n_pes));
  Call& mine = calls[static_cast<std::size_t>(pe)];
  mine.seq = ++calls_;
  mine.kind = static_cast<std::uint64_t>(kind);
  mine.a = a;
  mine.b = b;
  op_name.copy(mine.op.data(), std::min(op_name.size(), kMaxOpName));
  try {
    bootstrap.allgather(calls.data(), sizeof(Call));
  } catch (const Error& e) {
    // The exchange is how the call is made, not what the caller called: name the call first.
    throw Error(e.code(), pe, std::string(what) + ": " + e.message());
  }
  const bool same =
      std::all_of(calls.begin(), calls.end(), [&](const Call& c) { return c == calls.front(); });
  if (same) return;
  throw Error(ErrorCode::invalid_argument, pe,
              std::string(what) + ": PEs made different collective calls: " +
                  describe_disagreement(calls, describe));
}

}  // namespace tessera::detail
