// What the team collectives' host launchers (all_reduce, reduce_scatter, all_to_all(_v),
// broadcast) share: the team's epoch count, the argument checks, the dtype switch, and the
// first-call agreement check, which runs on the host for a team spanning the job and on the
// stream (device code, in the call's kernel) for every other team. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>

#include "tessera/device/failure.hpp"
#include "tessera/device/numeric.hpp"
#include "tessera/device/ops/all_reduce.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/launch.hpp"
#include "tessera/ops/all_reduce.hpp"
#include "tessera/runtime.hpp"
#include "tessera/team.hpp"

namespace tessera::ops::support {

// The collective a call descriptor names.
enum class CollectiveKind : std::uint64_t {
  all_reduce = 1,
  reduce_scatter,
  all_to_all,
  all_to_all_v,
  broadcast
};

// What every member of a team must agree on for one call: the same on every member or the call
// is a mismatch. `variant` is the resolved algorithm (all_reduce, reduce_scatter) or the root
// (broadcast); `dtype`, `op` the enum values; `recv_offset` the heap offset of recv.
struct CallDescriptor {
  std::uint64_t kind = 0, count = 0, dtype = 0, op = 0, variant = 0, recv_offset = 0;
  static constexpr std::size_t kWords = 6;
  TESSERA_HOST_DEVICE bool operator==(const CallDescriptor& o) const {
    return kind == o.kind && count == o.count && dtype == o.dtype && op == o.op &&
           variant == o.variant && recv_offset == o.recv_offset;
  }
  auto key() const { return std::tie(kind, count, dtype, op, variant, recv_offset); }
};
static_assert(sizeof(CallDescriptor) == CallDescriptor::kWords * sizeof(std::uint64_t));
static_assert(std::is_trivially_copyable_v<CallDescriptor>, "passed to kernels by value");

// "ops::all_reduce(7 x f32, sum, one_shot, recv @64)": the call as mismatch messages name it, on
// the host and in device code alike.
TESSERA_HOST_DEVICE inline void describe_call(device::detail::Message& m, const CallDescriptor& c) {
  constexpr const char* kKinds[] = {"?",          "all_reduce",   "reduce_scatter",
                                    "all_to_all", "all_to_all_v", "broadcast"};
  constexpr const char* kDtypes[] = {"f32", "bf16", "f16", "i32", "i64"};
  constexpr const char* kOps[] = {"sum", "max", "min", "prod"};
  constexpr const char* kAllReduceAlgos[] = {"automatic", "one_shot", "two_shot", "ring", "atomic"};
  constexpr const char* kReduceScatterAlgos[] = {"automatic", "one_shot", "ring"};
  const auto kind = static_cast<CollectiveKind>(c.kind);
  m << "ops::" << kKinds[c.kind < 6 ? c.kind : 0] << "(";
  if (kind != CollectiveKind::all_to_all_v) m << c.count << " x ";
  m << (c.dtype < 5 ? kDtypes[c.dtype] : "?");
  if (kind == CollectiveKind::all_reduce || kind == CollectiveKind::reduce_scatter) {
    m << ", " << (c.op < 4 ? kOps[c.op] : "?") << ", ";
    if (kind == CollectiveKind::all_reduce) {
      m << (c.variant < 5 ? kAllReduceAlgos[c.variant] : "?");
    } else {
      m << (c.variant < 3 ? kReduceScatterAlgos[c.variant] : "?");
    }
  }
  if (kind == CollectiveKind::broadcast) m << ", root " << c.variant;
  // reduce_scatter's recv is this member's alone (in place its offset differs between members).
  if (kind != CollectiveKind::reduce_scatter) m << ", recv @" << c.recv_offset;
  m << ")";
}

// The agreement records of a team's workspace: after the AllReduceWorkspace part, two sets (used
// by alternate checks, so a member that has finished check n and starts check n + 1 never
// overwrites a record another member still reads for check n) of one record of 8 words per
// member (a signal word, then the member's CallDescriptor), written by that member.
struct CallRecords {
  static constexpr std::size_t kWords = 8;
  std::uint64_t* words = nullptr;
  int team_size = 0;

  TESSERA_HOST_DEVICE static constexpr std::size_t bytes_for(int team_size) {
    return 2 * static_cast<std::size_t>(team_size) * kWords * sizeof(std::uint64_t);
  }
  TESSERA_HOST_DEVICE static CallRecords from(void* workspace, int team_size) {
    return CallRecords{
        reinterpret_cast<std::uint64_t*>(static_cast<unsigned char*>(workspace) +
                                         device::ops::AllReduceWorkspace::bytes_for(team_size)),
        team_size};
  }
  // The record of member `rank` in the set check number `check` uses.
  TESSERA_HOST_DEVICE std::uint64_t* of(int rank, std::uint64_t check) const {
    const std::size_t set = static_cast<std::size_t>(check % 2);
    return words +
           (set * static_cast<std::size_t>(team_size) + static_cast<std::size_t>(rank)) * kWords;
  }
};

// The epoch count of a team's collectives, in this PE's copy of the team's workspace after the
// CallRecords (a 64-byte line): every collective on the team takes its epochs from it on the
// stream (CallEpochs), so a captured call takes new ones on every replay.
TESSERA_HOST_DEVICE inline device::DeviceEpoch team_epoch_count(void* workspace, int team_size) {
  return device::DeviceEpoch{reinterpret_cast<std::uint64_t*>(
      static_cast<unsigned char*>(workspace) +
      device::ops::AllReduceWorkspace::bytes_for(team_size) + CallRecords::bytes_for(team_size))};
}
inline constexpr std::size_t kTeamEpochBytes = 64;
static_assert(device::DeviceEpoch::kWords * sizeof(std::uint64_t) <= kTeamEpochBytes);

// Bytes of workspace the team makers give a team of up to `n_pes` members.
constexpr std::size_t team_workspace_bytes(int n_pes) {
  return device::ops::AllReduceWorkspace::bytes_for(n_pes) + CallRecords::bytes_for(n_pes) +
         kTeamEpochBytes;
}

// The epochs one call of a team collective uses, taken on the device when the call's kernel
// runs: `count` of them from the team's epoch count.
struct CallEpochs {
  device::DeviceEpoch team;
  std::uint64_t count = 0;
  // The number before the call's first epoch (the call uses first(g) + 1 ... first(g) + count).
  template <class G>
  TESSERA_KERNEL_CODE std::uint64_t first(G g) const {
    return team.next(g, count) - count;
  }
};
static_assert(std::is_trivially_copyable_v<CallEpochs>, "passed to kernels by value");

// Device side of the first-call check on a team that does not span the job: every member sends
// its descriptor to every member (record signal = `epoch`, the call's first epoch; `check` the
// number of earlier checks on the team, which picks the record set), waits for
// everyone's and compares. On a mismatch every member reports the same invalid_argument failure,
// naming the team and the first two calls that differ, and returns false; the call must then end.
template <class G>
TESSERA_KERNEL_CODE bool agree_on_call(G g, const device::Context& ctx, const Team& team,
                                       const CallDescriptor& call, std::uint64_t check,
                                       std::uint64_t epoch, const char* what) {
  const CallRecords records = CallRecords::from(team.workspace, team.size);
  const int r = team.my_rank, m = team.size;
  std::uint64_t* mine = records.of(r, check);
  if (g.rank() == 0) {
    const std::uint64_t fields[] = {call.kind, call.count,   call.dtype,
                                    call.op,   call.variant, call.recv_offset};
    for (std::size_t i = 0; i < CallDescriptor::kWords; ++i) mine[1 + i] = fields[i];
  }
  g.sync();
  for (int k = 1; k < m; ++k) {
    device::put_signal(
        g, ctx, device::make_tile(mine + 1, CallDescriptor::kWords),
        device::make_tile(static_cast<const std::uint64_t*>(mine + 1), CallDescriptor::kWords),
        mine, epoch, device::SignalOp::set, team.pe((r + k) % m));
  }
  for (int k = 1; k < m; ++k) {
    const int j = (r + m - k) % m;
    device::detail::wait_from(g, ctx, records.of(j, check), device::Cmp::ge, epoch, team.pe(j),
                              "collective waiting for a member's call description");
  }
  auto read = [&](int j) {
    const std::uint64_t* w = records.of(j, check) + 1;
    return CallDescriptor{w[0], w[1], w[2], w[3], w[4], w[5]};
  };
  const CallDescriptor first = read(0);
  for (int j = 1; j < m; ++j) {
    const CallDescriptor other = read(j);
    if (other == first) continue;
    if (g.rank() == 0) {
      device::detail::Message msg;
      msg << what << ": PEs made different collective calls on team (start " << team.start
          << ", stride " << team.stride << ", size " << team.size << "): PE " << team.pe(0)
          << " called ";
      describe_call(msg, first);
      msg << "; PE " << team.pe(j) << " called ";
      describe_call(msg, other);
      device::platform::report_failure(device::FailureCode::invalid_argument, msg.c_str());
    }
    return false;
  }
  return true;
}

// Per Runtime (its OpCache): the calls each team has already checked for agreement, and how many
// checks on the stream it has made. (The epochs are counted on the device: team_epoch_count.)
class TeamEpochs {
 public:
  // True when the call has not been seen on the team yet (when `record`: and marks it seen).
  bool first_call(const void* workspace, const CallDescriptor& call, bool record = true);
  // Counts a check on the stream on the team; returns the number of checks before it.
  std::uint64_t next_check(const void* workspace);
  // Drops what this PE counted on the team of `workspace`: a team maker gives a workspace whose
  // words are zero (the block may have been another team's, freed since), so its counts start
  // at zero too.
  void forget(const void* workspace);

 private:
  using Key = std::tuple<const void*, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
                         std::uint64_t, std::uint64_t>;
  std::mutex mu_;
  std::map<const void*, std::uint64_t> checks_;
  std::set<Key> seen_;
};

// The Runtime's TeamEpochs.
TeamEpochs& team_epochs(Runtime& rt);

// How a call is checked for agreement: `check_on_stream` true when the kernel must run
// agree_on_call first (a team that does not span the job, first time this call is made; a
// captured call so checks on every replay); a team spanning the job is checked here,
// collectively on the host (detail::check_op_call), and throws Error(invalid_argument) naming
// every PE's call on a mismatch; that first call cannot be captured (it refuses, naming `what`,
// when `stream` is capturing).
struct Agreement {
  bool check_on_stream = false;
  std::uint64_t check = 0;  // the check's number on the team (agree_on_call)
};
static_assert(std::is_trivially_copyable_v<Agreement>, "passed to kernels by value");
Agreement agree(Runtime& rt, const Stream& stream, const Team& team, const CallDescriptor& call,
                const char* what);

// A collective kernel's first step: true when the call may go on (agreed on the host, or
// agree_on_call on the stream found every member making the same call at first_epoch + 1).
template <class G>
TESSERA_KERNEL_CODE bool call_agreed(G g, const device::Context& ctx, const Team& team,
                                     const CallDescriptor& call, Agreement check,
                                     std::uint64_t first_epoch, const char* what) {
  return !check.check_on_stream ||
         agree_on_call(g, ctx, team, call, check.check, first_epoch + 1, what);
}

[[noreturn]] void fail(int pe, const char* what, const std::string& message);

// "team (start 0, stride 2, size 3)".
std::string describe(const Team& team);

// Throws unless this PE is a member of `team`, the team has its workspace, and every member's
// heap is load/store reachable from this PE.
void check_team(Runtime& rt, const Team& team, const char* what);

// Throws unless `p` (named `name`) lies in a live symmetric heap block holding `elems` elements
// of `dtype` from p (`elems_name`: how the message names that number, "count").
void check_heap_buffer(Runtime& rt, const void* p, std::size_t elems, const char* elems_name,
                       Dtype dtype, const char* what, const char* name);

// Throws when `op` is prod on a floating dtype.
void check_reduce_op(int pe, Dtype dtype, ReduceOp op, const char* what);

// True when [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes);

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with the element type of `dtype`, on the host: the ops launch one kernel per
// element type, since a kernel switching over every type inside takes the device compiler about
// 1.5x as long (ptxas, sm_90) as the per-type kernels together, and needs the registers of its
// largest branch.
template <class F>
void with_dtype_on_host(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::f32:
      f(Tag<float>{});
      break;
    case Dtype::bf16:
      f(Tag<device::bf16>{});
      break;
    case Dtype::f16:
      f(Tag<device::half>{});
      break;
    case Dtype::i32:
      f(Tag<std::int32_t>{});
      break;
    case Dtype::i64:
      f(Tag<std::int64_t>{});
      break;
  }
}

// Calls f(Tag<W>{}) with the unsigned word as wide as one element of `dtype`: for the ops that
// only move elements (all_to_all, broadcast), which need one kernel per element size.
template <class F>
void with_word_of(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::bf16:
    case Dtype::f16:
      f(Tag<std::uint16_t>{});
      break;
    case Dtype::f32:
    case Dtype::i32:
      f(Tag<std::uint32_t>{});
      break;
    case Dtype::i64:
      f(Tag<std::uint64_t>{});
      break;
  }
}

// How launch_per_dtype picks the kernel's type parameter from a Dtype.
enum class DtypeSplit {
  element,  // one kernel per element type (float, bf16, half, int32, int64): the reductions
  word      // one kernel per element size (uint16/32/64): the ops that only move elements
};

namespace detail {

// An argument of launch_per_dtype as the kernel of element type T takes it: an untyped buffer
// (void*, const void*) becomes T* or const T*, anything else passes unchanged.
template <class T, class A>
auto as_typed(A arg) {
  if constexpr (std::is_same_v<A, void*>) {
    return static_cast<T*>(arg);
  } else if constexpr (std::is_same_v<A, const void*>) {
    return static_cast<const T*>(arg);
  } else {
    return arg;
  }
}

}  // namespace detail

// Launches Kernel<T>{} on `stream` with `grid` blocks, T chosen from `dtype` on the host as
// `split` says (with_dtype_on_host / with_word_of); every void* / const void* argument reaches
// the kernel as T* / const T*. The one place the collectives split their kernels by type: the
// set of kernels instantiated is Kernel<T> for each T of the split, nothing else.
template <template <class> class Kernel, DtypeSplit split = DtypeSplit::element, class... Args>
void launch_per_dtype(Stream& stream, int grid, Dtype dtype, Args... args) {
  auto go = [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch(stream, grid, Kernel<T>{}, detail::as_typed<T>(args)...);
  };
  if constexpr (split == DtypeSplit::element) {
    with_dtype_on_host(dtype, go);
  } else {
    with_word_of(dtype, go);
  }
}

// The last steps of every team collective: `call` agreed on (agree), then Kernel<T>(ctx, team,
// workspace, args..., CallEpochs of `epochs` epochs, call, agreement) launched on one block
// (launch_per_dtype). The kernel takes its epochs on the stream (CallEpochs::first), so the call
// may be captured and replayed.
template <template <class> class Kernel, DtypeSplit split = DtypeSplit::element, class... Args>
void launch_team_collective(Runtime& rt, Stream& stream, const Team& team,
                            const CallDescriptor& call, const char* what, std::uint64_t epochs,
                            Dtype dtype, Args... args) {
  const Agreement agreement = agree(rt, stream, team, call, what);
  const CallEpochs call_epochs{team_epoch_count(team.workspace, team.size), epochs};
  const auto ws = device::ops::AllReduceWorkspace::from(team.workspace, team.size);
  launch_per_dtype<Kernel, split>(stream, 1, dtype, rt.device_context(), team, ws, args...,
                                  call_epochs, call, agreement);
}

// The descriptor of a call on this PE.
CallDescriptor make_call(CollectiveKind kind, std::size_t count, Dtype dtype, ReduceOp op,
                         std::uint64_t variant, std::size_t recv_offset);

}  // namespace tessera::ops::support
