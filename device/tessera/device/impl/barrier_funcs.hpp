// Bodies of barrier.hpp. One algorithm for the whole-job barrier and the team barrier, over the
// words of a BarrierSite: the n-th barrier on a member adds 1 (release, system scope) to the
// arrival counter of every member and waits until its own counter reaches n * members (acquire).
// A member cannot enter barrier n + 1 before every member entered barrier n, so the counter
// reaches n * members only once all members have arrived at barrier n, however far ahead the
// fast ones are. The team barrier's words are described at TeamBarrierWords (team.hpp); the
// whole job's are Context::kBarrier* in the control area.
#pragma once

#include <type_traits>

#include "tessera/device/barrier.hpp"
#include "tessera/device/impl/check.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"

namespace tessera::device {
namespace detail {

// The diagnostic of barrier #n timing out with the arrival counter at `seen`: names the PEs that
// have not entered it (from the kBarrierSeen words they write before arriving). Shared with the
// host's reading of a failure record (failure_record.hpp).
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_barrier_timeout(
    Message& m, const Context& ctx, const char* what, std::uint64_t n, std::uint64_t seen) {
  const std::uint64_t target = n * static_cast<std::uint64_t>(ctx.n_pes);
  m << what << " on PE " << ctx.my_pe << " timed out after "
    << static_cast<std::uint64_t>(ctx.timeout_ns / 1000000) << " ms in barrier #" << n
    << ": arrival counter (control area) awaited (value >= " << target << "), saw " << seen;
  if (ctx.n_pes <= Context::kBarrierSeenPes) {
    m << "; not yet entered by PE";
    int listed = 0;
    for (int pe = 0; pe < ctx.n_pes; ++pe) {
      const std::uint64_t entered = platform::atomic_load(
          &ctx.control_page[Context::kBarrierSeen + static_cast<std::size_t>(pe)], Sem::relaxed,
          Scope::system);
      if (entered >= n) continue;
      if (listed < 16) m << (listed == 0 ? " " : ", ") << pe << " (at #" << entered << ")";
      ++listed;
    }
    if (listed > 16) m << " and " << (listed - 16) << " more";
    if (listed == 0) m << " none (their arrivals are still in flight)";
  }
}

// The words one barrier runs on, as this PE addresses them, and the members it runs over. A
// team's words lie at the same heap offset on every member; the whole job's in every PE's
// control page, which peers reach through Context::peer_control.
struct BarrierSite {
  std::uint64_t* arrivals;  // this PE's arrival counter
  std::uint64_t* entered;   // this PE's count of barriers entered
  std::uint64_t* seen;      // member rank 0's seen word (member r's is seen + r)
  int seen_members;         // members r < seen_members have a seen word
  std::uint64_t* occupant;  // checked mode: occupant, then the last launch that entered
  Team members;             // world PEs taking part, my_rank this PE's rank
  bool team;                // a team barrier (named with its team in diagnostics)
  bool control;             // the words are in ctx.control_page (else in the heap)
};

// This PE's barrier word `word` of site `s` as mapped PE `pe` addresses it (failing as
// translate does when `pe` is not mapped here).
TESSERA_HOST_DEVICE inline std::uint64_t* site_word(const Context& ctx, const BarrierSite& s,
                                                    std::uint64_t* word, int pe, const char* what) {
  if (!s.control) return translate(ctx, word, pe, what);
  peer_heap(ctx, pe, what);
  return ctx.control_word(static_cast<std::size_t>(word - ctx.control_page), pe);
}

// The segment offset a proxy descriptor names for this PE's barrier word `word` of site `s`.
TESSERA_HOST_DEVICE inline std::uint64_t site_wire_offset(const Context& ctx, const BarrierSite& s,
                                                          const std::uint64_t* word) {
  return s.control ? ctx.control_wire_offset(static_cast<std::size_t>(word - ctx.control_page))
                   : static_cast<std::uint64_t>(ctx.heap_offset(word));
}

TESSERA_HOST_DEVICE inline BarrierSite world_site(const Context& ctx) {
  std::uint64_t* cp = ctx.control_page;
  BarrierSite s{};
  s.arrivals = &cp[Context::kBarrierArrivals];
  s.entered = &cp[Context::kBarrierEntered];
  s.seen = &cp[Context::kBarrierSeen];
  s.seen_members = ctx.n_pes < Context::kBarrierSeenPes ? ctx.n_pes : Context::kBarrierSeenPes;
  s.occupant = &cp[Context::kBarrierOccupant];
  s.members.start = 0;
  s.members.stride = 1;
  s.members.size = ctx.n_pes;
  s.members.my_rank = ctx.my_pe;
  s.team = false;
  s.control = true;
  return s;
}

TESSERA_HOST_DEVICE inline BarrierSite team_site(std::uint64_t* words, const Team& team) {
  BarrierSite s{};
  s.arrivals = &words[TeamBarrierWords::kArrivals];
  s.entered = &words[TeamBarrierWords::kEntered];
  s.seen = &words[TeamBarrierWords::kSeen];
  s.seen_members = team.size;
  s.occupant = &words[TeamBarrierWords::kOccupant];
  s.members = team;
  s.team = true;
  s.control = false;
  return s;
}

// "<what> on team (start a, stride b, size c) on PE p" or "<what> on PE p".
TESSERA_COLD TESSERA_HOST_DEVICE inline void name_barrier(Message& m, const Context& ctx,
                                                          const BarrierSite& s, const char* what) {
  m << what;
  if (s.team) {
    m << " on team (start " << s.members.start << ", stride " << s.members.stride << ", size "
      << s.members.size << ")";
  }
  m << " on PE " << ctx.my_pe;
}

// The group that entered a barrier, for the one-group check: its kind (1 thread, 2 warp, 3
// block) in bits 60-61, its block's index in bits 20-51, its thread or warp index in its block
// in bits 0-19. Never 0.
template <class G>
TESSERA_HOST_DEVICE std::uint64_t group_tag(const G& g) {
  std::uint64_t kind = 1, block = static_cast<std::uint32_t>(platform::block_index()), sub = 0;
  if constexpr (std::is_same_v<G, Block>) {
    kind = 3;
    block = static_cast<std::uint32_t>(g.block_id());
  } else if constexpr (std::is_same_v<G, Warp>) {
    kind = 2;
    sub = static_cast<std::uint64_t>(platform::thread_in_block() / platform::warp_size());
  } else {
    sub = static_cast<std::uint64_t>(platform::thread_in_block());
  }
  return kind << 60 | block << 20 | (sub & 0xfffffu);
}

TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_group(Message& m, std::uint64_t tag) {
  const std::uint64_t kind = tag >> 60, block = (tag >> 20) & 0xffffffffu, sub = tag & 0xfffffu;
  if (kind == 1) m << "thread " << sub << " of ";
  if (kind == 2) m << "warp " << sub << " of ";
  m << "block " << block;
}

TESSERA_NORETURN TESSERA_COLD TESSERA_HOST_DEVICE inline void report_second_group(
    const Context& ctx, const BarrierSite& s, const char* what, std::uint64_t first,
    std::uint64_t second, bool one_launch) {
  Message m;
  name_barrier(m, ctx, s, what);
  m << " entered by ";
  describe_group(m, first);
  m << " and ";
  describe_group(m, second);
  m << (one_launch ? " of one launch" : " at once")
    << ": a barrier is entered by one group per PE at a time (one Thread, Warp or Block, not "
       "every block of a grid; grid_sync syncs the blocks of one launch)";
  platform::report_failure(FailureCode::invalid_argument, m.c_str());
}

// Checked mode, on entry: claims the occupant word for this group, and fails when another group
// of this PE is inside the barrier now. Groups entering one after another (a rotating leader:
// the blocks of one launch taking turns, each entering alone) are successive barriers, which is
// fine; only entry by a second group while the first is inside is wrong. The last launch word
// only words the report ("of one launch" when the group inside came from the same launch).
TESSERA_HOST_DEVICE inline void claim_barrier(const Context& ctx, const BarrierSite& s,
                                              const char* what, std::uint64_t tag) {
  const std::uint64_t launch = platform::launch_id();
  std::uint64_t* last_launch = s.occupant + 1;
  const std::uint64_t inside = platform::atomic_compare_exchange(s.occupant, std::uint64_t{0}, tag,
                                                                 Sem::acq_rel, Scope::device);
  if (inside != 0) {
    const bool same_launch =
        launch != 0 && platform::atomic_load(last_launch, Sem::relaxed, Scope::device) == launch;
    report_second_group(ctx, s, what, inside, tag, same_launch);
  }
  platform::atomic_store(last_launch, launch, Sem::relaxed, Scope::device);
}

// The diagnostic of a team barrier timing out: the team, the barrier's number, the counter
// awaited and seen, and the members that have not entered it.
TESSERA_COLD TESSERA_HOST_DEVICE inline void describe_team_barrier_timeout(
    Message& m, const Context& ctx, const BarrierSite& s, const char* what, std::uint64_t n,
    std::uint64_t seen) {
  const std::uint64_t target = n * static_cast<std::uint64_t>(s.members.size);
  name_barrier(m, ctx, s, what);
  m << " timed out after " << static_cast<std::uint64_t>(ctx.timeout_ns / 1000000)
    << " ms in barrier #" << n << ": arrival counter (team workspace, heap offset "
    << static_cast<std::uint64_t>(ctx.heap_offset(s.arrivals)) << ") awaited (value >= " << target
    << "), saw " << seen << "; not yet entered by PE";
  int listed = 0;
  for (int r = 0; r < s.members.size; ++r) {
    const std::uint64_t entered = platform::atomic_load(s.seen + r, Sem::relaxed, Scope::system);
    if (entered >= n) continue;
    if (listed < 16) {
      m << (listed == 0 ? " " : ", ") << s.members.pe(r) << " (team rank " << r << ", at #"
        << entered << ")";
    }
    ++listed;
  }
  if (listed > 16) m << " and " << (listed - 16) << " more";
  if (listed == 0) m << " none (their arrivals are still in flight)";
}

// Waits for the barrier's arrivals; on timeout names the members that have not entered barrier
// n (from the seen words they write before arriving).
TESSERA_KERNEL_CODE inline void barrier_wait(const Context& ctx, const BarrierSite& s,
                                             std::uint64_t n, const char* what) {
  const std::uint64_t target = n * static_cast<std::uint64_t>(s.members.size);
  SpinPacer pacer(ctx, what);
  for (std::uint32_t spins = 0;; ++spins) {
    if (platform::atomic_load(s.arrivals, Sem::acquire, Scope::system) >= target) return;
    if (!pacer.pause_and_check(spins)) continue;
    const std::uint64_t seen = platform::atomic_load(s.arrivals, Sem::acquire, Scope::system);
    if (seen >= target) return;
    broadcast_abort(ctx);
    Message m;
    if (s.team) {
      describe_team_barrier_timeout(m, ctx, s, what, n, seen);
    } else {
      describe_barrier_timeout(m, ctx, what, n, seen);
    }
    platform::report_failure(FailureCode::timeout, m.c_str());
  }
}

// Run by one thread of the entering group: counts this barrier, notes it in every member's seen
// word, arrives at every member, waits for all arrivals.
TESSERA_KERNEL_CODE inline void barrier_arrive_and_wait(const Context& ctx, const BarrierSite& s,
                                                        const char* what) {
  const Team& t = s.members;
  const std::uint64_t n =
      platform::atomic_fetch_add(s.entered, std::uint64_t{1}, Sem::relaxed, Scope::device) + 1;
  std::uint64_t* my_seen = t.my_rank < s.seen_members ? s.seen + t.my_rank : nullptr;
  for (int i = 0; i < t.size; ++i) {
    const int pe = t.pe((t.my_rank + i) % t.size);
    if (use_proxy(ctx, pe, what)) {
      if (my_seen != nullptr) {
        proxy_push(
            ctx,
            encode_proxy_atomic<std::uint64_t>(ProxyOp::atomic, ProxyAmo::store, pe,
                                               site_wire_offset(ctx, s, my_seen), n, 0, false),
            what);
      }
      proxy_push(
          ctx,
          encode_proxy_atomic<std::uint64_t>(ProxyOp::atomic, ProxyAmo::add, pe,
                                             site_wire_offset(ctx, s, s.arrivals), 1, 0, true),
          what);
      continue;
    }
    // For diagnostics only: which barrier this PE has entered, ordered before its arrival.
    if (my_seen != nullptr)
      platform::atomic_store(site_word(ctx, s, my_seen, pe, what), n, Sem::relaxed, Scope::system);
    platform::atomic_fetch_add(site_word(ctx, s, s.arrivals, pe, what), std::uint64_t{1},
                               Sem::release, Scope::system);
  }
  barrier_wait(ctx, s, n, what);
}

// Run by one thread of the entering group once its barrier's site is known (the whole job's or
// a team's): in checked mode it claims the site for the group, then arrives and waits, then
// gives the claim back.
template <class G>
TESSERA_KERNEL_CODE void barrier_at_site(G g, const Context& ctx, const BarrierSite& s,
                                         const char* what) {
  const std::uint64_t tag = ctx.checked() ? group_tag(g) : 0;
  if (ctx.checked()) claim_barrier(ctx, s, what, tag);
  barrier_arrive_and_wait(ctx, s, what);
  if (ctx.checked())
    platform::atomic_store(s.occupant, std::uint64_t{0}, Sem::release, Scope::device);
}

template <class G>
TESSERA_KERNEL_CODE void barrier_impl(G g, const Context& ctx, const char* what) {
  g.sync();
  if (g.rank() == 0) {
    if (ctx.control_page == nullptr) {
      Message m;
      m << what << " on PE " << ctx.my_pe
        << ": the Context has no barrier counters (make it with Runtime::device_context())";
      platform::report_failure(FailureCode::invalid_argument, m.c_str());
    }
    check_abort(ctx, what);
    barrier_at_site(g, ctx, world_site(ctx), what);
  }
  g.sync();
}

template <class G>
TESSERA_KERNEL_CODE void team_barrier_impl(G g, const Context& ctx, const Team& team,
                                           const char* what) {
  g.sync();
  if (g.rank() == 0) {
    std::uint64_t* words = TeamBarrierWords::words(team);
    if (words == nullptr || !team.is_member() || team.rank_of(ctx.my_pe) != team.my_rank) {
      Message m;
      m << what << " on team (start " << team.start << ", stride " << team.stride << ", size "
        << team.size << ") on PE " << ctx.my_pe << ": ";
      if (words == nullptr) {
        m << "the team has no workspace for its barrier words (make it with team_world, "
             "team_node or team_split_strided)";
      } else {
        m << "this PE is not a member of the team (my_rank " << team.my_rank
          << "); only members call it";
      }
      platform::report_failure(FailureCode::invalid_argument, m.c_str());
    }
    check_abort(ctx, what);
    barrier_at_site(g, ctx, team_site(words, team), what);
  }
  g.sync();
}

}  // namespace detail

template <class G>
TESSERA_KERNEL_CODE void barrier(G g, const Context& ctx) {
  quiet(g, ctx);
  detail::barrier_impl(g, ctx, "barrier");
}

template <class G>
TESSERA_KERNEL_CODE void barrier_all(G g, const Context& ctx) {
  quiet(g, ctx);
  detail::barrier_impl(g, ctx, "barrier_all");
}

template <class G>
TESSERA_KERNEL_CODE void sync_all(G g, const Context& ctx) {
  detail::barrier_impl(g, ctx, "sync_all");
}

template <class G>
TESSERA_KERNEL_CODE void sync(G g, const Context& ctx) {
  detail::barrier_impl(g, ctx, "sync");
}

template <class G>
TESSERA_KERNEL_CODE void barrier(G g, const Context& ctx, const Team& team) {
  quiet(g, ctx);
  detail::team_barrier_impl(g, ctx, team, "barrier");
}

template <class G>
TESSERA_KERNEL_CODE void team_sync(G g, const Context& ctx, const Team& team) {
  detail::team_barrier_impl(g, ctx, team, "team_sync");
}

}  // namespace tessera::device
