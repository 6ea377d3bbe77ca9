// Setup, exit and queries; ordering, completion and the world barriers; accessibility.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <unistd.h>

#include "shmem/state.hpp"
#include "shmem/teams.hpp"

namespace tessera::shmem {
namespace {

Options shmem_options() {
  Options options = Options::from_env();
  // OpenSHMEM programs load and store symmetric memory from host code, which a GPU heap does not
  // allow: the C API runs on the host backend.
  if (options.backend == Backend::automatic) options.backend = Backend::host;
  if (options.backend != Backend::host) {
    die("shmem_init",
        std::string("the OpenSHMEM host API needs a host-memory heap, but TESSERA_BACKEND asks "
                    "for '") +
            to_string(options.backend) + "'; unset it or set TESSERA_BACKEND=host");
  }
  return options;
}

}  // namespace

// Owned here, never destroyed at exit: a program that skips shmem_finalize must not run a
// collective teardown from a static destructor.
State* g_state = nullptr;

}  // namespace tessera::shmem

using tessera::shmem::die;
using tessera::shmem::guarded;
using tessera::shmem::state;
using tessera::shmem::State;

extern "C" {

void shmem_init(void) {
  if (tessera::shmem::g_state != nullptr) return;
  auto s = std::make_unique<State>();
  const tessera::Options options = tessera::shmem::shmem_options();
  // Static data moves onto shared memory before the runtime starts its threads.
  s->statics.move_onto_shared_memory();
  guarded("shmem_init", [&] {
    s->runtime = tessera::Runtime::init(options);
    s->ctx = s->runtime.device_context();
    s->log = tessera::detail::Logger(s->runtime.options().log_level, s->ctx.my_pe);
    s->statics.connect(s->runtime, s->ctx);
    if (!s->statics.enabled()) {
      TESSERA_LOG(s->log, info,
                  "static and global data are not symmetric: " << s->statics.why_not());
    }
  });
  tessera::shmem::g_state = s.release();
  guarded("shmem_init", [] { tessera::shmem::init_predefined_teams(*tessera::shmem::g_state); });
}

int shmem_init_thread(int requested, int* provided) {
  // Every level is safe: the routines keep no unguarded per-PE state between calls (the heap's
  // block table and the context list have their own locks; RMA and AMOs go straight to the
  // device API, which any thread may call). So the level asked for is the level given.
  if (requested < SHMEM_THREAD_SINGLE) return -1;
  const int level = requested > SHMEM_THREAD_MULTIPLE ? SHMEM_THREAD_MULTIPLE : requested;
  shmem_init();
  tessera::shmem::g_state->thread_level = level;
  if (provided != nullptr) *provided = level;
  return 0;
}

void shmem_query_thread(int* provided) {
  const State& s = state("shmem_query_thread");
  if (provided != nullptr) *provided = s.thread_level;
}

void shmem_finalize(void) {
  State& s = state("shmem_finalize");
  tessera::shmem::barrier_all(s, "shmem_finalize");
  tessera::shmem::release_predefined_teams();
  tessera::shmem::release_contexts();
  s.statics.disconnect();
  guarded("shmem_finalize", [&] { s.runtime.finalize(); });
  delete tessera::shmem::g_state;
  tessera::shmem::g_state = nullptr;
}

void shmem_global_exit(int status) {
  std::fflush(nullptr);
  // Under tessera-run: hand `status` to the launcher first, which then exits with it and ends
  // the other ranks at once (they would otherwise report this PE lost, with status 1).
  if (const char* fd_text = std::getenv("TESSERA_RUN_EXIT_FD"); fd_text != nullptr) {
    const int fd = std::atoi(fd_text);
    const ssize_t written = ::write(fd, &status, sizeof(status));
    static_cast<void>(written);  // nothing more to do when it failed: exit with status below
  }
  // Under mpirun: MPI_Abort with `status`, which mpirun returns as the job's status. The other
  // bootstraps return, and this process exits with `status` (alone, that is the job's status).
  if (State* s = tessera::shmem::g_state; s != nullptr) {
    try {
      s->runtime.bootstrap().end_job(status);
    } catch (...) {
      // Leaving anyway: the status below is the one to report.
    }
  }
  std::_Exit(status);
}

int shmem_my_pe(void) { return state("shmem_my_pe").ctx.my_pe; }

void shmem_pcontrol(const int level, ...) {
  // Levels 0 (off), 1 (default) and 2+ (implementation's own): Tessera's profiling (TESSERA_DEBUG,
  // the job report) is configured by the environment, so the level only needs to be accepted.
  static_cast<void>(level);
}
int shmem_n_pes(void) { return state("shmem_n_pes").ctx.n_pes; }

int shmem_pe_accessible(int pe) {
  const State& s = state("shmem_pe_accessible");
  if (pe < 0 || pe >= s.ctx.n_pes) return 0;
  return s.ctx.is_mapped(pe) || s.ctx.via_proxy(pe) ? 1 : 0;
}

int shmem_addr_accessible(const void* addr, int pe) {
  const State& s = state("shmem_addr_accessible");
  if (s.ctx.in_heap(addr, 1)) return shmem_pe_accessible(pe);
  // Static data: reachable where the PE's data segment is mapped (PEs of this node), or through
  // the network proxy.
  return s.statics.holds(addr, 1) && s.statics.reaches(pe) ? 1 : 0;
}

void* shmem_ptr(const void* dest, int pe) {
  const State& s = state("shmem_ptr");
  if (pe < 0 || pe >= s.ctx.n_pes) return nullptr;
  if (s.ctx.in_heap(dest, 1)) return s.ctx.ptr(const_cast<void*>(dest), pe);
  if (s.statics.holds(dest, 1)) return s.statics.context().ptr(const_cast<void*>(dest), pe);
  return nullptr;
}

void shmem_info_get_version(int* major, int* minor) {
  if (major != nullptr) *major = SHMEM_MAJOR_VERSION;
  if (minor != nullptr) *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char* name) {
  if (name == nullptr) return;
  std::strncpy(name, SHMEM_VENDOR_STRING, SHMEM_MAX_NAME_LEN - 1);
  name[SHMEM_MAX_NAME_LEN - 1] = '\0';
}

void shmem_fence(void) {
  State& s = state("shmem_fence");
  guarded("shmem_fence", [&] { tessera::device::fence(s.ctx); });
}

void shmem_quiet(void) {
  State& s = state("shmem_quiet");
  guarded("shmem_quiet", [&] { tessera::device::quiet(s.ctx); });
}

void shmem_barrier_all(void) {
  tessera::shmem::barrier_all(state("shmem_barrier_all"), "shmem_barrier_all");
}

void shmem_sync_all(void) {
  State& s = state("shmem_sync_all");
  guarded("shmem_sync_all", [&] { s.runtime.barrier(); });
}

}  // extern "C"
