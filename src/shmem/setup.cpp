// Setup, exit and queries; ordering, completion and the world barriers; accessibility.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "shmem/state.hpp"
#include "shmem/teams.hpp"

namespace tessera::shmem {
namespace {

// Owned here, never destroyed at exit: a program that skips shmem_finalize must not run a
// collective teardown from a static destructor.
State* g_state = nullptr;

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

State* current_state() noexcept { return g_state; }

}  // namespace tessera::shmem

using tessera::shmem::die;
using tessera::shmem::guarded;
using tessera::shmem::state;
using tessera::shmem::State;

extern "C" {

void shmem_init(void) {
  if (tessera::shmem::g_state != nullptr) return;
  auto s = std::make_unique<State>();
  guarded("shmem_init", [&] {
    s->runtime = tessera::Runtime::init(tessera::shmem::shmem_options());
    s->ctx = s->runtime.device_context();
  });
  tessera::shmem::g_state = s.release();
  guarded("shmem_init", [] { tessera::shmem::init_predefined_teams(*tessera::shmem::g_state); });
}

int shmem_init_thread(int requested, int* provided) {
  (void)requested;
  shmem_init();
  if (provided != nullptr) *provided = SHMEM_THREAD_SINGLE;
  return 0;
}

void shmem_query_thread(int* provided) {
  state("shmem_query_thread");
  if (provided != nullptr) *provided = SHMEM_THREAD_SINGLE;
}

void shmem_finalize(void) {
  State& s = state("shmem_finalize");
  tessera::shmem::barrier_all(s, "shmem_finalize");
  tessera::shmem::release_predefined_teams();
  guarded("shmem_finalize", [&] { s.runtime.finalize(); });
  delete tessera::shmem::g_state;
  tessera::shmem::g_state = nullptr;
}

void shmem_global_exit(int status) {
  std::fflush(nullptr);
  // The launcher sees this PE leave and ends the others: mpirun on any early exit, tessera-run
  // on a non-zero status.
  std::_Exit(status);
}

int shmem_my_pe(void) { return state("shmem_my_pe").ctx.my_pe; }
int shmem_n_pes(void) { return state("shmem_n_pes").ctx.n_pes; }

int shmem_pe_accessible(int pe) {
  const State& s = state("shmem_pe_accessible");
  if (pe < 0 || pe >= s.ctx.n_pes) return 0;
  return s.ctx.is_mapped(pe) || s.ctx.via_proxy(pe) ? 1 : 0;
}

int shmem_addr_accessible(const void* addr, int pe) {
  const State& s = state("shmem_addr_accessible");
  return s.ctx.in_heap(addr, 1) && shmem_pe_accessible(pe) ? 1 : 0;
}

void* shmem_ptr(const void* dest, int pe) {
  const State& s = state("shmem_ptr");
  if (!s.ctx.in_heap(dest, 1) || pe < 0 || pe >= s.ctx.n_pes) return nullptr;
  return s.ctx.ptr(const_cast<void*>(dest), pe);
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
