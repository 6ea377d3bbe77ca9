// A communication context's quiet waits for the proxy tickets its own calls took and for no
// other context's (src/shmem/context_tickets.hpp). The ring is played by hand: tickets are taken
// by moving `reserve` as producers do and completed by moving slot states as the proxy does, so
// the cases are exact; no fabric is needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "harness/ring_memory.hpp"
#include "shmem/context_tickets.hpp"
#include "tessera/device.hpp"

namespace td = tessera::device;
using tessera::shmem::ContextTickets;

namespace {

constexpr std::uint32_t kSlots = 8;

class HandRing {
 public:
  HandRing() : memory_(kSlots), ring_(memory_.get()) {
    watch_.my_pe = 0;
    watch_.timeout_ns = 200u * 1000u * 1000u;  // 200 ms: a wait that should not happen fails
    watch_.proxy = ring_;
  }

  td::ProxyChannel* ring() const { return ring_; }
  const td::detail::WaitWatch& watch() const { return watch_; }

  // A producer takes `n` tickets and publishes them; returns the first.
  std::uint64_t take(std::uint64_t n) {
    const std::uint64_t first = ring_->reserve;
    for (std::uint64_t t = first; t < first + n; ++t)
      ring_->slots()[t % kSlots].seq = td::proxy_slot_published(t);
    ring_->reserve = first + n;
    return first;
  }
  // The proxy completes ticket t (its slot free for the next lap); `completed` is left alone,
  // as it is while an earlier ticket is still outstanding.
  void complete(std::uint64_t t) {
    ring_->slots()[t % kSlots].seq = td::proxy_slot_next_lap(t, kSlots);
  }

 private:
  tessera::harness::RingMemory memory_;
  td::ProxyChannel* ring_;
  td::detail::WaitWatch watch_{};
};

// A context's call: the tickets it takes are remembered.
void call(ContextTickets& ctx, HandRing& hand, std::uint64_t tickets) {
  const std::uint64_t begin = ContextTickets::next(hand.ring());
  hand.take(tickets);
  ctx.record(hand.ring(), begin);
}

TEST(ContextTickets, QuietWaitsForItsOwnTicketsNotAnotherContexts) {
  HandRing hand;
  ContextTickets a, b;
  call(a, hand, 2);  // tickets 0, 1
  call(b, hand, 1);  // ticket 2
  call(a, hand, 1);  // ticket 3
  hand.complete(0);
  hand.complete(1);
  hand.complete(3);
  // Ticket 2 (b's) is outstanding: a's quiet returns without it.
  EXPECT_NO_THROW(a.quiet(hand.ring(), hand.watch(), "a's quiet"));
  EXPECT_EQ(a.pending_ranges(), 0u);
  // b's quiet waits for ticket 2, and gives up at the bound while it stays outstanding.
  try {
    b.quiet(hand.ring(), hand.watch(), "b's quiet");
    ADD_FAILURE() << "b's quiet returned with its ticket outstanding";
  } catch (const td::Failure& f) {
    EXPECT_EQ(f.code(), td::FailureCode::timeout);
    EXPECT_NE(std::string(f.what()).find("b's quiet"), std::string::npos) << f.what();
  }
}

TEST(ContextTickets, QuietReturnsOnceItsTicketsCompleteAndForgetsThem) {
  HandRing hand;
  ContextTickets a, b;
  call(b, hand, 1);  // ticket 0, never completed here
  call(a, hand, 3);  // tickets 1..3
  call(a, hand, 0);  // a call that went to a mapped PE: no ticket
  EXPECT_EQ(a.pending_ranges(), 1u);
  for (std::uint64_t t = 1; t <= 3; ++t) hand.complete(t);
  EXPECT_NO_THROW(a.quiet(hand.ring(), hand.watch(), "a's quiet"));
  EXPECT_EQ(a.pending_ranges(), 0u);
  // Nothing left: a second quiet has nothing to wait for, even with ticket 0 outstanding.
  EXPECT_NO_THROW(a.quiet(hand.ring(), hand.watch(), "a's second quiet"));
}

TEST(ContextTickets, ManyInterleavedCallsStayBoundedAndStillCoverEveryTicket) {
  HandRing hand;
  ContextTickets a, b;
  const std::size_t calls = ContextTickets::kMaxRanges + 40;
  for (std::size_t i = 0; i < calls; ++i) {
    call(a, hand, 1);  // ticket 2i
    call(b, hand, 1);  // ticket 2i + 1
    // Completed at once, in order, as a fast proxy would.
    hand.complete(2 * i);
    hand.complete(2 * i + 1);
  }
  EXPECT_LE(a.pending_ranges(), ContextTickets::kMaxRanges);
  // One more of a's tickets, outstanding: the joined ranges still make a's quiet wait for it.
  call(a, hand, 1);
  EXPECT_THROW(a.quiet(hand.ring(), hand.watch(), "a's quiet"), td::Failure);
}

}  // namespace
