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

// A created context's quiet: its own proxied operations complete (the rest completed on return).
void quiet_own(const char* routine, shmem_ctx_t ctx) {
  const State& s = state(routine);
  if (s.ctx.proxy == nullptr) return;
  guarded(routine,
          [&] { ctx->tickets.quiet(s.ctx.proxy, device::detail::watch_of(s.ctx), routine); });
}

}  // namespace
}  // namespace tessera::shmem

void shmem_ctx_fence(shmem_ctx_t ctx) {
  const tessera_shmem_ctx* c = ts::ctx_unless_invalid("shmem_ctx_fence", ctx);
  if (c == nullptr) return;
  if (c->is_default) {
    shmem_fence();
    return;
  }
  // Ordered by completing: the context's earlier operations are delivered before any later one
  // starts, and no other context's operations are held back or waited for.
  ts::quiet_own("shmem_ctx_fence", ctx);
}

void shmem_ctx_quiet(shmem_ctx_t ctx) {
  const tessera_shmem_ctx* c = ts::ctx_unless_invalid("shmem_ctx_quiet", ctx);
  if (c == nullptr) return;
  if (c->is_default) {
    shmem_quiet();
    return;
  }
  ts::quiet_own("shmem_ctx_quiet", ctx);
}

// The context forms: the routine shmem_X on the world PE the context's team names, with the
// proxy tickets it took remembered for the context's quiet (in_context).
#define TESSERA_CTX_RUN(ROUTINE, ...) \
  ts::in_context(ROUTINE, ctx, pe, [&](int world_pe) { return __VA_ARGS__; })

void shmem_ctx_putmem(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems, int pe) {
  TESSERA_CTX_RUN("shmem_ctx_putmem", shmem_putmem(dest, source, nelems, world_pe));
}
void shmem_ctx_getmem(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems, int pe) {
  TESSERA_CTX_RUN("shmem_ctx_getmem", shmem_getmem(dest, source, nelems, world_pe));
}
void shmem_ctx_putmem_nbi(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems, int pe) {
  TESSERA_CTX_RUN("shmem_ctx_putmem_nbi", shmem_putmem_nbi(dest, source, nelems, world_pe));
}
void shmem_ctx_getmem_nbi(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems, int pe) {
  TESSERA_CTX_RUN("shmem_ctx_getmem_nbi", shmem_getmem_nbi(dest, source, nelems, world_pe));
}
void shmem_ctx_putmem_signal(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems,
                             uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) {
  TESSERA_CTX_RUN("shmem_ctx_putmem_signal",
                  shmem_putmem_signal(dest, source, nelems, sig_addr, signal, sig_op, world_pe));
}
void shmem_ctx_putmem_signal_nbi(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems,
                                 uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) {
  TESSERA_CTX_RUN(
      "shmem_ctx_putmem_signal_nbi",
      shmem_putmem_signal_nbi(dest, source, nelems, sig_addr, signal, sig_op, world_pe));
}

#define TESSERA_SHMEM_DEFINE_CTX_RMA(NAME, TYPE)                                                  \
  void shmem_ctx_##NAME##_put(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, size_t nelems,     \
                              int pe) {                                                           \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_put",                                                    \
                    shmem_##NAME##_put(dest, source, nelems, world_pe));                          \
  }                                                                                               \
  void shmem_ctx_##NAME##_get(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, size_t nelems,     \
                              int pe) {                                                           \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_get",                                                    \
                    shmem_##NAME##_get(dest, source, nelems, world_pe));                          \
  }                                                                                               \
  void shmem_ctx_##NAME##_put_nbi(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, size_t nelems, \
                                  int pe) {                                                       \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_put_nbi",                                                \
                    shmem_##NAME##_put_nbi(dest, source, nelems, world_pe));                      \
  }                                                                                               \
  void shmem_ctx_##NAME##_get_nbi(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, size_t nelems, \
                                  int pe) {                                                       \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_get_nbi",                                                \
                    shmem_##NAME##_get_nbi(dest, source, nelems, world_pe));                      \
  }                                                                                               \
  void shmem_ctx_##NAME##_iput(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, ptrdiff_t dst,    \
                               ptrdiff_t sst, size_t nelems, int pe) {                            \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_iput",                                                   \
                    shmem_##NAME##_iput(dest, source, dst, sst, nelems, world_pe));               \
  }                                                                                               \
  void shmem_ctx_##NAME##_iget(shmem_ctx_t ctx, TYPE* dest, const TYPE* source, ptrdiff_t dst,    \
                               ptrdiff_t sst, size_t nelems, int pe) {                            \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_iget",                                                   \
                    shmem_##NAME##_iget(dest, source, dst, sst, nelems, world_pe));               \
  }                                                                                               \
  void shmem_ctx_##NAME##_p(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe) {                    \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_p", shmem_##NAME##_p(dest, value, world_pe));            \
  }                                                                                               \
  TYPE shmem_ctx_##NAME##_g(shmem_ctx_t ctx, const TYPE* source, int pe) {                        \
    return TESSERA_CTX_RUN("shmem_ctx_" #NAME "_g", shmem_##NAME##_g(source, world_pe));          \
  }                                                                                               \
  void shmem_ctx_##NAME##_put_signal(shmem_ctx_t ctx, TYPE* dest, const TYPE* source,             \
                                     size_t nelems, uint64_t* sig_addr, uint64_t signal,          \
                                     int sig_op, int pe) {                                        \
    TESSERA_CTX_RUN(                                                                              \
        "shmem_ctx_" #NAME "_put_signal",                                                         \
        shmem_##NAME##_put_signal(dest, source, nelems, sig_addr, signal, sig_op, world_pe));     \
  }                                                                                               \
  void shmem_ctx_##NAME##_put_signal_nbi(shmem_ctx_t ctx, TYPE* dest, const TYPE* source,         \
                                         size_t nelems, uint64_t* sig_addr, uint64_t signal,      \
                                         int sig_op, int pe) {                                    \
    TESSERA_CTX_RUN(                                                                              \
        "shmem_ctx_" #NAME "_put_signal_nbi",                                                     \
        shmem_##NAME##_put_signal_nbi(dest, source, nelems, sig_addr, signal, sig_op, world_pe)); \
  }
TESSERA_SHMEM_RMA_TYPES(TESSERA_SHMEM_DEFINE_CTX_RMA)
#undef TESSERA_SHMEM_DEFINE_CTX_RMA

#define TESSERA_SHMEM_DEFINE_CTX_SIZED_RMA(BITS, BYTES)                                          \
  void shmem_ctx_put##BITS(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems,       \
                           int pe) {                                                             \
    TESSERA_CTX_RUN("shmem_ctx_put" #BITS, shmem_put##BITS(dest, source, nelems, world_pe));     \
  }                                                                                              \
  void shmem_ctx_get##BITS(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems,       \
                           int pe) {                                                             \
    TESSERA_CTX_RUN("shmem_ctx_get" #BITS, shmem_get##BITS(dest, source, nelems, world_pe));     \
  }                                                                                              \
  void shmem_ctx_put##BITS##_nbi(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems, \
                                 int pe) {                                                       \
    TESSERA_CTX_RUN("shmem_ctx_put" #BITS "_nbi",                                                \
                    shmem_put##BITS##_nbi(dest, source, nelems, world_pe));                      \
  }                                                                                              \
  void shmem_ctx_get##BITS##_nbi(shmem_ctx_t ctx, void* dest, const void* source, size_t nelems, \
                                 int pe) {                                                       \
    TESSERA_CTX_RUN("shmem_ctx_get" #BITS "_nbi",                                                \
                    shmem_get##BITS##_nbi(dest, source, nelems, world_pe));                      \
  }                                                                                              \
  void shmem_ctx_iput##BITS(shmem_ctx_t ctx, void* dest, const void* source, ptrdiff_t dst,      \
                            ptrdiff_t sst, size_t nelems, int pe) {                              \
    TESSERA_CTX_RUN("shmem_ctx_iput" #BITS,                                                      \
                    shmem_iput##BITS(dest, source, dst, sst, nelems, world_pe));                 \
  }                                                                                              \
  void shmem_ctx_iget##BITS(shmem_ctx_t ctx, void* dest, const void* source, ptrdiff_t dst,      \
                            ptrdiff_t sst, size_t nelems, int pe) {                              \
    TESSERA_CTX_RUN("shmem_ctx_iget" #BITS,                                                      \
                    shmem_iget##BITS(dest, source, dst, sst, nelems, world_pe));                 \
  }                                                                                              \
  void shmem_ctx_put##BITS##_signal(shmem_ctx_t ctx, void* dest, const void* source,             \
                                    size_t nelems, uint64_t* sig_addr, uint64_t signal,          \
                                    int sig_op, int pe) {                                        \
    TESSERA_CTX_RUN(                                                                             \
        "shmem_ctx_put" #BITS "_signal",                                                         \
        shmem_put##BITS##_signal(dest, source, nelems, sig_addr, signal, sig_op, world_pe));     \
  }                                                                                              \
  void shmem_ctx_put##BITS##_signal_nbi(shmem_ctx_t ctx, void* dest, const void* source,         \
                                        size_t nelems, uint64_t* sig_addr, uint64_t signal,      \
                                        int sig_op, int pe) {                                    \
    TESSERA_CTX_RUN(                                                                             \
        "shmem_ctx_put" #BITS "_signal_nbi",                                                     \
        shmem_put##BITS##_signal_nbi(dest, source, nelems, sig_addr, signal, sig_op, world_pe)); \
  }
TESSERA_SHMEM_RMA_SIZES(TESSERA_SHMEM_DEFINE_CTX_SIZED_RMA)
#undef TESSERA_SHMEM_DEFINE_CTX_SIZED_RMA

#define TESSERA_SHMEM_DEFINE_CTX_EXTENDED_AMO(NAME, TYPE)                                       \
  TYPE shmem_ctx_##NAME##_atomic_fetch(shmem_ctx_t ctx, const TYPE* source, int pe) {           \
    return TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_fetch",                                  \
                           shmem_##NAME##_atomic_fetch(source, world_pe));                      \
  }                                                                                             \
  void shmem_ctx_##NAME##_atomic_set(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe) {         \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_set",                                           \
                    shmem_##NAME##_atomic_set(dest, value, world_pe));                          \
  }                                                                                             \
  TYPE shmem_ctx_##NAME##_atomic_swap(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe) {        \
    return TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_swap",                                   \
                           shmem_##NAME##_atomic_swap(dest, value, world_pe));                  \
  }                                                                                             \
  void shmem_ctx_##NAME##_atomic_fetch_nbi(shmem_ctx_t ctx, TYPE* fetch, const TYPE* source,    \
                                           int pe) {                                            \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_fetch_nbi",                                     \
                    shmem_##NAME##_atomic_fetch_nbi(fetch, source, world_pe));                  \
  }                                                                                             \
  void shmem_ctx_##NAME##_atomic_swap_nbi(shmem_ctx_t ctx, TYPE* fetch, TYPE* dest, TYPE value, \
                                          int pe) {                                             \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_swap_nbi",                                      \
                    shmem_##NAME##_atomic_swap_nbi(fetch, dest, value, world_pe));              \
  }

#define TESSERA_SHMEM_DEFINE_CTX_STANDARD_AMO(NAME, TYPE)                                          \
  TESSERA_SHMEM_DEFINE_CTX_EXTENDED_AMO(NAME, TYPE)                                                \
  TYPE shmem_ctx_##NAME##_atomic_compare_swap(shmem_ctx_t ctx, TYPE* dest, TYPE cond, TYPE value,  \
                                              int pe) {                                            \
    return TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_compare_swap",                              \
                           shmem_##NAME##_atomic_compare_swap(dest, cond, value, world_pe));       \
  }                                                                                                \
  TYPE shmem_ctx_##NAME##_atomic_fetch_inc(shmem_ctx_t ctx, TYPE* dest, int pe) {                  \
    return TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_fetch_inc",                                 \
                           shmem_##NAME##_atomic_fetch_inc(dest, world_pe));                       \
  }                                                                                                \
  void shmem_ctx_##NAME##_atomic_inc(shmem_ctx_t ctx, TYPE* dest, int pe) {                        \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_inc", shmem_##NAME##_atomic_inc(dest, world_pe));  \
  }                                                                                                \
  TYPE shmem_ctx_##NAME##_atomic_fetch_add(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe) {      \
    return TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_fetch_add",                                 \
                           shmem_##NAME##_atomic_fetch_add(dest, value, world_pe));                \
  }                                                                                                \
  void shmem_ctx_##NAME##_atomic_add(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe) {            \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_add",                                              \
                    shmem_##NAME##_atomic_add(dest, value, world_pe));                             \
  }                                                                                                \
  void shmem_ctx_##NAME##_atomic_compare_swap_nbi(shmem_ctx_t ctx, TYPE* fetch, TYPE* dest,        \
                                                  TYPE cond, TYPE value, int pe) {                 \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_compare_swap_nbi",                                 \
                    shmem_##NAME##_atomic_compare_swap_nbi(fetch, dest, cond, value, world_pe));   \
  }                                                                                                \
  void shmem_ctx_##NAME##_atomic_fetch_inc_nbi(shmem_ctx_t ctx, TYPE* fetch, TYPE* dest, int pe) { \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_fetch_inc_nbi",                                    \
                    shmem_##NAME##_atomic_fetch_inc_nbi(fetch, dest, world_pe));                   \
  }                                                                                                \
  void shmem_ctx_##NAME##_atomic_fetch_add_nbi(shmem_ctx_t ctx, TYPE* fetch, TYPE* dest,           \
                                               TYPE value, int pe) {                               \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_fetch_add_nbi",                                    \
                    shmem_##NAME##_atomic_fetch_add_nbi(fetch, dest, value, world_pe));            \
  }

#define TESSERA_SHMEM_DEFINE_CTX_BITWISE_OP(NAME, TYPE, OP)                                    \
  TYPE shmem_ctx_##NAME##_atomic_fetch_##OP(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe) { \
    return TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_fetch_" #OP,                            \
                           shmem_##NAME##_atomic_fetch_##OP(dest, value, world_pe));           \
  }                                                                                            \
  void shmem_ctx_##NAME##_atomic_##OP(shmem_ctx_t ctx, TYPE* dest, TYPE value, int pe) {       \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_" #OP,                                         \
                    shmem_##NAME##_atomic_##OP(dest, value, world_pe));                        \
  }                                                                                            \
  void shmem_ctx_##NAME##_atomic_fetch_##OP##_nbi(shmem_ctx_t ctx, TYPE* fetch, TYPE* dest,    \
                                                  TYPE value, int pe) {                        \
    TESSERA_CTX_RUN("shmem_ctx_" #NAME "_atomic_fetch_" #OP "_nbi",                            \
                    shmem_##NAME##_atomic_fetch_##OP##_nbi(fetch, dest, value, world_pe));     \
  }
#define TESSERA_SHMEM_DEFINE_CTX_BITWISE_AMO(NAME, TYPE) \
  TESSERA_SHMEM_DEFINE_CTX_BITWISE_OP(NAME, TYPE, and)   \
  TESSERA_SHMEM_DEFINE_CTX_BITWISE_OP(NAME, TYPE, or)    \
  TESSERA_SHMEM_DEFINE_CTX_BITWISE_OP(NAME, TYPE, xor)

TESSERA_SHMEM_STANDARD_AMO_TYPES(TESSERA_SHMEM_DEFINE_CTX_STANDARD_AMO)
TESSERA_SHMEM_FLOAT_AMO_TYPES(TESSERA_SHMEM_DEFINE_CTX_EXTENDED_AMO)
TESSERA_SHMEM_BITWISE_AMO_TYPES(TESSERA_SHMEM_DEFINE_CTX_BITWISE_AMO)
#undef TESSERA_SHMEM_DEFINE_CTX_EXTENDED_AMO
#undef TESSERA_SHMEM_DEFINE_CTX_STANDARD_AMO
#undef TESSERA_SHMEM_DEFINE_CTX_BITWISE_OP
#undef TESSERA_SHMEM_DEFINE_CTX_BITWISE_AMO
#undef TESSERA_CTX_RUN

}  // extern "C"
