// The diagnostic of a failure record (failure_record.hpp), built by the describe_* functions the
// C++ device API reports with, so a Triton kernel's failure reads like a C++ kernel's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/device/barrier.hpp"
#include "tessera/device/context.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/device/failure_record.hpp"
#include "tessera/device/impl/check.hpp"
#include "tessera/device/impl/wait.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/proxy.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/device/team.hpp"

namespace tessera::device::detail {

// "<what> on team (start a, stride b, size c) on PE p", the way the team barrier names itself.
TESSERA_COLD inline void name_team_call(Message& m, const Context& ctx, const char* what,
                                        const std::uint64_t* a) {
  m << what << " on team (start " << static_cast<std::int64_t>(a[0]) << ", stride "
    << static_cast<std::int64_t>(a[1]) << ", size " << static_cast<std::int64_t>(a[2]) << ") on PE "
    << ctx.my_pe;
}

// A team_not_member record (start, stride, size, my_rank, has barrier words): the message of the
// C++ team barrier's entry check.
TESSERA_COLD inline void describe_team_not_member(Message& m, const Context& ctx, const char* what,
                                                  const std::uint64_t* a) {
  name_team_call(m, ctx, what, a);
  m << ": ";
  if (a[4] == 0) {
    m << "the team has no workspace for its barrier words (make it with team_world, team_node "
         "or team_split_strided)";
  } else {
    m << "this PE is not a member of the team (my_rank " << static_cast<std::int64_t>(a[3])
      << "); only members call it";
  }
}

// A team_barrier_timeout record (n, arrivals seen, start, stride, size, barrier words): the
// message of the C++ team barrier's timeout, naming the members that have not entered barrier n
// (their seen words, kSeen = 16 words into the barrier words, as the C++ TeamBarrierWords).
TESSERA_COLD inline void describe_team_barrier_record(Message& m, const Context& ctx,
                                                      const char* what, const std::uint64_t* a) {
  const std::uint64_t n = a[0], seen = a[1];
  const Team team{static_cast<int>(a[2]), static_cast<int>(a[3]), static_cast<int>(a[4])};
  const auto* words = reinterpret_cast<const std::uint64_t*>(a[5]);
  name_team_call(m, ctx, what, &a[2]);
  m << " timed out after " << static_cast<std::uint64_t>(ctx.timeout_ns / 1000000)
    << " ms in barrier #" << n << ": arrival counter (team workspace, heap offset "
    << static_cast<std::uint64_t>(ctx.heap_offset(words))
    << ") awaited (value >= " << n * static_cast<std::uint64_t>(team.size) << "), saw " << seen
    << "; not yet entered by PE";
  int listed = 0;
  for (int r = 0; r < team.size; ++r) {
    const std::uint64_t entered =
        platform::atomic_load(words + 16 + r, Sem::relaxed, Scope::system);
    if (entered >= n) continue;
    if (listed < 16) {
      m << (listed == 0 ? " " : ", ") << team.pe(r) << " (team rank " << r << ", at #" << entered
        << ")";
    }
    ++listed;
  }
  if (listed > 16) m << " and " << (listed - 16) << " more";
  if (listed == 0) m << " none (their arrivals are still in flight)";
}

// Writes the diagnostic of the complete record `rec` (FailureRecord::kWords words) of the PE of
// `ctx` into `m` and its code into `code`. False, with a description of what is wrong, when the
// record holds a kind, call, role or comparison this version does not know. Host code: the
// host reads records after the kernel.
TESSERA_COLD inline bool describe_failure_record(Message& m, const Context& ctx,
                                                 const std::uint64_t* rec, FailureCode& code) {
  using R = FailureRecord;
  const std::uint64_t op = rec[R::kOp];
  const std::uint64_t* a = &rec[R::kArgs];
  if (op >= kFailureOpCount) {
    m << "failure record on PE " << ctx.my_pe << " names an unknown call (" << op << ")";
    return false;
  }
  const char* what = kFailureOps[op];
  switch (static_cast<FailureKind>(rec[R::kKind])) {
    case FailureKind::wait_timeout:
      if (a[1] > static_cast<std::uint64_t>(Cmp::le)) break;
      code = FailureCode::timeout;
      describe_wait_timeout(m, ctx, what, reinterpret_cast<const std::uint64_t*>(a[0]),
                            static_cast<Cmp>(a[1]), a[2], a[3], static_cast<int>(a[4]));
      return true;
    case FailureKind::barrier_timeout:
      code = FailureCode::timeout;
      describe_barrier_timeout(m, ctx, what, a[0], a[1]);
      return true;
    case FailureKind::aborted:
      code = FailureCode::peer_lost;
      describe_abort(m, ctx.my_pe, what, a[0]);
      return true;
    case FailureKind::pe_out_of_range:
      code = FailureCode::invalid_argument;
      describe_pe_out_of_range(m, ctx.my_pe, ctx.n_pes, what, static_cast<int>(a[0]));
      return true;
    case FailureKind::pe_not_mapped:
      code = FailureCode::transport;
      describe_pe_not_mapped(m, ctx.my_pe, what, static_cast<int>(a[0]), ctx.proxy != nullptr);
      return true;
    case FailureKind::outside_heap:
      if (a[2] >= kFailureRoleCount) break;
      code = FailureCode::invalid_argument;
      describe_outside_heap(m, ctx, reinterpret_cast<const void*>(a[0]),
                            static_cast<std::size_t>(a[1]), what, kFailureRoles[a[2]]);
      return true;
    case FailureKind::misaligned:
      // The alignment is a power of two: anything else is a record this version cannot read.
      if (a[2] >= kFailureRoleCount || a[1] == 0 || (a[1] & (a[1] - 1)) != 0) break;
      code = FailureCode::invalid_argument;
      describe_misaligned(m, ctx, reinterpret_cast<const void*>(a[0]),
                          static_cast<std::size_t>(a[1]), what, kFailureRoles[a[2]]);
      return true;
    case FailureKind::proxy_timeout:
      code = FailureCode::timeout;
      describe_proxy_timeout(m, ctx.my_pe, ctx.timeout_ns, what, a[0], a[1]);
      return true;
    case FailureKind::proxy_failed:
      if (rec[R::kCode] > static_cast<std::uint64_t>(FailureCode::peer_lost)) break;
      code = static_cast<FailureCode>(rec[R::kCode]);
      if (ctx.proxy != nullptr && ctx.proxy->message[0] != '\0') {
        m << ctx.proxy->message;
      } else {
        m << what << " on PE " << ctx.my_pe << ": the network proxy failed";
      }
      return true;
    case FailureKind::team_not_member:
      code = FailureCode::invalid_argument;
      describe_team_not_member(m, ctx, what, a);
      return true;
    case FailureKind::team_barrier_timeout:
      code = FailureCode::timeout;
      describe_team_barrier_record(m, ctx, what, a);
      return true;
    case FailureKind::some_timeout: {
      const std::uint64_t cmp = a[2] & 0xFF, shown = a[2] >> 8;
      if (cmp > static_cast<std::uint64_t>(Cmp::le) || shown > 4) break;
      std::uint64_t index[4] = {};
      for (std::uint64_t j = 0; j < shown; ++j)
        index[j] = (a[4 + j / 2] >> (32 * (j % 2))) & 0xFFFFFFFFu;
      code = FailureCode::timeout;
      describe_some_timeout(m, ctx, what, reinterpret_cast<const std::uint64_t*>(a[0]),
                            a[1] & 0xFFFFFFFFu, a[1] >> 32, true, static_cast<Cmp>(cmp), a[3],
                            index, &a[6], static_cast<std::size_t>(shown));
      return true;
    }
  }
  m << what << " on PE " << ctx.my_pe << ": failure record of unknown kind " << rec[R::kKind]
    << " (operands " << a[0] << ", " << a[1] << ", " << a[2] << ")";
  return false;
}

}  // namespace tessera::device::detail
