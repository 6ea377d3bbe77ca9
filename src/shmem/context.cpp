// Communication contexts: shmem_ctx_create & co. and the shmem_ctx_* forms of every RMA, AMO and
// put-with-signal routine. A context is a team (its PE numbering) plus its options; its
// operations are the default routines' on the world PE its team names. On a node every
// operation has completed when its call returns, so there a context's quiet has nothing to wait
// for. Proxied operations (other nodes) share this PE's one proxy ring; each created context
// remembers the tickets its calls took (context_tickets.hpp), and its quiet waits for those
// alone; its fence is that quiet (ordering by completion, which holds back no other context). The
// default context's quiet (shmem_quiet) completes every operation of the PE, and its fence
// orders every earlier proxied operation of the PE before the later ones.
#include <cstdio>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "shmem/context_tickets.hpp"
#include "shmem/state.hpp"
#include "shmem/teams.hpp"

// A context's object. Destroyed contexts stay allocated (until shmem_finalize) with `live`
// false, so a use after shmem_ctx_destroy is refused with a message instead of reading freed
// memory.
struct tessera_shmem_ctx {
  shmem_team_t team = SHMEM_TEAM_INVALID;
  long options = 0;
  bool live = true;
  bool is_default = false;
  // The proxy tickets of this context's calls not yet waited for (unused by the default one).
  tessera::shmem::ContextTickets tickets;
};

namespace tessera::shmem {
namespace {

tessera_shmem_ctx g_default_ctx{nullptr, 0, true, true, {}};

// Every context this process made; guarded by g_contexts_mutex (contexts may be made and
// destroyed from any thread under SHMEM_THREAD_MULTIPLE).
std::mutex g_contexts_mutex;
std::vector<std::unique_ptr<tessera_shmem_ctx>> g_contexts;

constexpr long kKnownOptions = SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE;

// Ends the job for SHMEM_CTX_INVALID or a destroyed context.
const tessera_shmem_ctx& usable_ctx(const char* routine, shmem_ctx_t ctx) {
  state(routine);
  if (ctx == SHMEM_CTX_INVALID) die(routine, "the context is SHMEM_CTX_INVALID");
  if (!ctx->live) die(routine, "context " + ptr_text(ctx) + " was destroyed (shmem_ctx_destroy)");
  return *ctx;
}

// For the routines that perform no operation on SHMEM_CTX_INVALID (OpenSHMEM 1.5:
// shmem_ctx_destroy, _fence and _quiet; PEs outside a team get that context from
// shmem_team_create_ctx): nullptr for it, otherwise usable_ctx's context.
const tessera_shmem_ctx* ctx_unless_invalid(const char* routine, shmem_ctx_t ctx) {
  return ctx == SHMEM_CTX_INVALID ? nullptr : &usable_ctx(routine, ctx);
}

int make_ctx(const char* routine, shmem_team_t team, long options, shmem_ctx_t* out) {
  state(routine);
  if (out == nullptr) die(routine, "ctx is NULL");
  *out = SHMEM_CTX_INVALID;
  if ((options & ~kKnownOptions) != 0 || !usable_team(team)) return -1;
  auto made = std::make_unique<tessera_shmem_ctx>();
  made->team = team;
  made->options = options;
  const std::lock_guard<std::mutex> lock(g_contexts_mutex);
  g_contexts.push_back(std::move(made));
  *out = g_contexts.back().get();
  return 0;
}

}  // namespace

std::string ptr_text(const void* p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}

int ctx_world_pe(const char* routine, shmem_ctx_t ctx, int pe) {
  const tessera_shmem_ctx& c = usable_ctx(routine, ctx);
  if (c.is_default || c.team == SHMEM_TEAM_WORLD) return pe;
  if (pe < 0 || pe >= c.team->team.size) {
    die(routine, "PE " + std::to_string(pe) + " is outside the context's team of " +
                     std::to_string(c.team->team.size) + " PEs");
  }
  return c.team->team.pe(pe);
}

// Runs `call` (a default routine) on the world PE that `pe` names in `ctx`; for a created
// context, remembers the proxy tickets the call took, for shmem_ctx_quiet.
template <class Call>
auto in_context(const char* routine, shmem_ctx_t ctx, int pe, Call&& call) {
  const int world_pe = ctx_world_pe(routine, ctx, pe);
  device::ProxyChannel* ring = ctx->is_default ? nullptr : state(routine).ctx.proxy;
  if (ring == nullptr) return call(world_pe);
  const std::uint64_t begin = ContextTickets::next(ring);
  if constexpr (std::is_void_v<decltype(call(world_pe))>) {
    call(world_pe);
    ctx->tickets.record(ring, begin);
  } else {
    auto result = call(world_pe);
    ctx->tickets.record(ring, begin);
    return result;
  }
}

void release_contexts() {
  const std::lock_guard<std::mutex> lock(g_contexts_mutex);
  g_contexts.clear();
}

}  // namespace tessera::shmem

namespace ts = tessera::shmem;

extern "C" {

shmem_ctx_t const SHMEM_CTX_DEFAULT = &ts::g_default_ctx;

int shmem_ctx_create(long options, shmem_ctx_t* ctx) {
  return ts::make_ctx("shmem_ctx_create", SHMEM_TEAM_WORLD, options, ctx);
}

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t* ctx) {
  return ts::make_ctx("shmem_team_create_ctx", team, options, ctx);
}

void shmem_ctx_destroy(shmem_ctx_t ctx) {
  const tessera_shmem_ctx* c = ts::ctx_unless_invalid("shmem_ctx_destroy", ctx);
  if (c == nullptr) return;
  if (c->is_default) ts::die("shmem_ctx_destroy", "SHMEM_CTX_DEFAULT cannot be destroyed");
  shmem_ctx_quiet(ctx);
  const std::lock_guard<std::mutex> lock(ts::g_contexts_mutex);
  ctx->live = false;
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t* team) {
  ts::state("shmem_ctx_get_team");
  if (team == nullptr) ts::die("shmem_ctx_get_team", "team is NULL");
  *team = SHMEM_TEAM_INVALID;
  if (ctx == SHMEM_CTX_INVALID) return -1;
  const tessera_shmem_ctx& c = ts::usable_ctx("shmem_ctx_get_team", ctx);
  *team = c.is_default ? SHMEM_TEAM_WORLD : c.team;
  return 0;
}

namespace tessera::shmem {
namespace {

// shmem_ctx_fence and _quiet: no operation on SHMEM_CTX_INVALID; on the default context the PE's
// (`whole_pe`: shmem_fence or shmem_quiet); on a created one its own proxied operations complete
// (the rest completed on return). A created context's fence is ordered by completing: its earlier
// operations are delivered before any later one starts, and no other context's operations are
// held back or waited for.
void complete(const char* routine, shmem_ctx_t ctx, void (*whole_pe)()) {
  const tessera_shmem_ctx* c = ctx_unless_invalid(routine, ctx);
  if (c == nullptr) return;
  if (c->is_default) {
    whole_pe();
    return;
  }
  const State& s = state(routine);
  if (s.ctx.proxy == nullptr) return;
  guarded(routine,
          [&] { ctx->tickets.quiet(s.ctx.proxy, device::detail::watch_of(s.ctx), routine); });
}

}  // namespace
}  // namespace tessera::shmem

void shmem_ctx_fence(shmem_ctx_t ctx) { ts::complete("shmem_ctx_fence", ctx, shmem_fence); }

void shmem_ctx_quiet(shmem_ctx_t ctx) { ts::complete("shmem_ctx_quiet", ctx, shmem_quiet); }

// The context forms: the routine shmem_X on the world PE the context's team names, with the
// proxy tickets it took remembered for the context's quiet (in_context).
#define TESSERA_CTX_RUN(ROUTINE, ...) \
  ts::in_context(ROUTINE, ctx, pe, [&](int world_pe) { return __VA_ARGS__; })

// One context form: RET shmem_ctx_NAME(shmem_ctx_t ctx, PARAMS..., int pe) is
// shmem_NAME(ARGS..., pe) on the context (NAME is expanded first, so it may be a naming macro's
// call below).
#define TESSERA_CTX_FORM(RET, NAME, PARAMS, ARGS) TESSERA_CTX_FORM_(RET, NAME, PARAMS, ARGS)
#define TESSERA_CTX_FORM_(RET, NAME, PARAMS, ARGS)                                                \
  RET shmem_ctx_##NAME(shmem_ctx_t ctx, TESSERA_CTX_UNPAREN PARAMS, int pe) {                     \
    return TESSERA_CTX_RUN("shmem_ctx_" #NAME, shmem_##NAME(TESSERA_CTX_UNPAREN ARGS, world_pe)); \
  }
#define TESSERA_CTX_UNPAREN(...) __VA_ARGS__

// How the RMA routines of one element type are named: N(K, OP, SUFFIX) for OP put, get, iput or
// iget: shmem_TYPENAME_OP (K the TYPENAME), shmem_OPSIZE (K the size in bits), shmem_OPmem.
#define TESSERA_CTX_TYPED(K, OP, SUFFIX) K##_##OP##SUFFIX
#define TESSERA_CTX_SIZED(K, OP, SUFFIX) OP##K##SUFFIX
#define TESSERA_CTX_MEM(K, OP, SUFFIX) OP##mem##SUFFIX

// The contiguous RMA and put-with-signal routines on elements of type T, named by N.
#define TESSERA_CTX_CONTIGUOUS(N, K, T)                                                            \
  TESSERA_CTX_FORM(void, N(K, put, ), (T * dest, const T* source, size_t nelems),                  \
                   (dest, source, nelems))                                                         \
  TESSERA_CTX_FORM(void, N(K, get, ), (T * dest, const T* source, size_t nelems),                  \
                   (dest, source, nelems))                                                         \
  TESSERA_CTX_FORM(void, N(K, put, _nbi), (T * dest, const T* source, size_t nelems),              \
                   (dest, source, nelems))                                                         \
  TESSERA_CTX_FORM(void, N(K, get, _nbi), (T * dest, const T* source, size_t nelems),              \
                   (dest, source, nelems))                                                         \
  TESSERA_CTX_FORM(                                                                                \
      void, N(K, put, _signal),                                                                    \
      (T * dest, const T* source, size_t nelems, uint64_t* sig_addr, uint64_t signal, int sig_op), \
      (dest, source, nelems, sig_addr, signal, sig_op))                                            \
  TESSERA_CTX_FORM(                                                                                \
      void, N(K, put, _signal_nbi),                                                                \
      (T * dest, const T* source, size_t nelems, uint64_t* sig_addr, uint64_t signal, int sig_op), \
      (dest, source, nelems, sig_addr, signal, sig_op))
// The strided ones (typed and sized only).
#define TESSERA_CTX_STRIDED(N, K, T)                                                         \
  TESSERA_CTX_FORM(void, N(K, iput, ),                                                       \
                   (T * dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems), \
                   (dest, source, dst, sst, nelems))                                         \
  TESSERA_CTX_FORM(void, N(K, iget, ),                                                       \
                   (T * dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems), \
                   (dest, source, dst, sst, nelems))

TESSERA_CTX_CONTIGUOUS(TESSERA_CTX_MEM, , void)

#define TESSERA_CTX_TYPED_RMA(NAME, TYPE, UNUSED)                            \
  TESSERA_CTX_CONTIGUOUS(TESSERA_CTX_TYPED, NAME, TYPE)                      \
  TESSERA_CTX_STRIDED(TESSERA_CTX_TYPED, NAME, TYPE)                         \
  TESSERA_CTX_FORM(void, NAME##_p, (TYPE * dest, TYPE value), (dest, value)) \
  TESSERA_CTX_FORM(TYPE, NAME##_g, (const TYPE* source), (source))
#define TESSERA_CTX_SIZED_RMA(BITS, BYTES, UNUSED)      \
  TESSERA_CTX_CONTIGUOUS(TESSERA_CTX_SIZED, BITS, void) \
  TESSERA_CTX_STRIDED(TESSERA_CTX_SIZED, BITS, void)
TESSERA_SHMEM_RMA_TYPES_WITH(TESSERA_CTX_TYPED_RMA, )
TESSERA_SHMEM_RMA_SIZES_WITH(TESSERA_CTX_SIZED_RMA, )

// The AMOs on elements of type TYPE, by family (TESSERA_SHMEM_<FAMILY>_AMO_ROUTINES).
#define TESSERA_CTX_EXTENDED_AMO(NAME, TYPE, UNUSED)                                      \
  TESSERA_CTX_FORM(TYPE, NAME##_atomic_fetch, (const TYPE* source), (source))             \
  TESSERA_CTX_FORM(void, NAME##_atomic_set, (TYPE * dest, TYPE value), (dest, value))     \
  TESSERA_CTX_FORM(TYPE, NAME##_atomic_swap, (TYPE * dest, TYPE value), (dest, value))    \
  TESSERA_CTX_FORM(void, NAME##_atomic_fetch_nbi, (TYPE * fetch, const TYPE* source),     \
                   (fetch, source))                                                       \
  TESSERA_CTX_FORM(void, NAME##_atomic_swap_nbi, (TYPE * fetch, TYPE * dest, TYPE value), \
                   (fetch, dest, value))
#define TESSERA_CTX_STANDARD_AMO(NAME, TYPE, UNUSED)                                               \
  TESSERA_CTX_EXTENDED_AMO(NAME, TYPE, UNUSED)                                                     \
  TESSERA_CTX_FORM(TYPE, NAME##_atomic_compare_swap, (TYPE * dest, TYPE cond, TYPE value),         \
                   (dest, cond, value))                                                            \
  TESSERA_CTX_FORM(TYPE, NAME##_atomic_fetch_inc, (TYPE * dest), (dest))                           \
  TESSERA_CTX_FORM(void, NAME##_atomic_inc, (TYPE * dest), (dest))                                 \
  TESSERA_CTX_FORM(TYPE, NAME##_atomic_fetch_add, (TYPE * dest, TYPE value), (dest, value))        \
  TESSERA_CTX_FORM(void, NAME##_atomic_add, (TYPE * dest, TYPE value), (dest, value))              \
  TESSERA_CTX_FORM(void, NAME##_atomic_compare_swap_nbi,                                           \
                   (TYPE * fetch, TYPE * dest, TYPE cond, TYPE value), (fetch, dest, cond, value)) \
  TESSERA_CTX_FORM(void, NAME##_atomic_fetch_inc_nbi, (TYPE * fetch, TYPE * dest), (fetch, dest))  \
  TESSERA_CTX_FORM(void, NAME##_atomic_fetch_add_nbi, (TYPE * fetch, TYPE * dest, TYPE value),     \
                   (fetch, dest, value))
// fetch_OP, OP and fetch_OP_nbi for each bitwise OP.
#define TESSERA_CTX_BITWISE_OP(NAME, TYPE, OP)                                                    \
  TESSERA_CTX_FORM(TYPE, NAME##_atomic_fetch_##OP, (TYPE * dest, TYPE value), (dest, value))      \
  TESSERA_CTX_FORM(void, NAME##_atomic_##OP, (TYPE * dest, TYPE value), (dest, value))            \
  TESSERA_CTX_FORM(void, NAME##_atomic_fetch_##OP##_nbi, (TYPE * fetch, TYPE * dest, TYPE value), \
                   (fetch, dest, value))
#define TESSERA_CTX_BITWISE_AMO(NAME, TYPE, UNUSED) \
  TESSERA_SHMEM_BITWISE_OPS(NAME, TYPE, TESSERA_CTX_BITWISE_OP)
TESSERA_SHMEM_STANDARD_AMO_TYPES_WITH(TESSERA_CTX_STANDARD_AMO, )
TESSERA_SHMEM_FLOAT_AMO_TYPES_WITH(TESSERA_CTX_EXTENDED_AMO, )
TESSERA_SHMEM_BITWISE_AMO_TYPES_WITH(TESSERA_CTX_BITWISE_AMO, )

}  // extern "C"
