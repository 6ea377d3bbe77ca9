#include "tessera/runtime.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <sstream>

#include "runtime/cuda_backend.hpp"
#include "runtime/hip_backend.hpp"
#include "runtime/runtime_impl.hpp"
#include "tessera/device/platform.hpp"
#include "transport/proxy_remote_copy.hpp"

namespace tessera {
namespace detail {

namespace platform = device::platform;
using device::Scope;
using device::Sem;

namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return (value != nullptr && *value != '\0') ? value : nullptr;
}

std::shared_ptr<Bootstrap> select_bootstrap(const Options& o) {
  if (o.bootstrap) return o.bootstrap;
  BootstrapKind kind = o.bootstrap_kind;
  const char* mpi_size = env("OMPI_COMM_WORLD_SIZE");
  if (mpi_size == nullptr) mpi_size = env("PMI_SIZE");
  if (mpi_size == nullptr) mpi_size = env("PMIX_SIZE");
  if (kind == BootstrapKind::automatic) {
    if (mpi_size != nullptr || env("PMIX_RANK") != nullptr) {
      kind = BootstrapKind::mpi;
      if (!mpi_bootstrap_available() && mpi_size != nullptr && std::string(mpi_size) == "1")
        kind = BootstrapKind::single;
    } else if (env("TESSERA_UNIQUE_ID") != nullptr ||
               (env("RANK") != nullptr && env("WORLD_SIZE") != nullptr &&
                env("MASTER_ADDR") != nullptr)) {
      kind = BootstrapKind::tcp;
    } else {
      kind = BootstrapKind::single;
    }
  }
  switch (kind) {
    case BootstrapKind::mpi:
      return make_mpi_bootstrap(nullptr, o.timeout);
    case BootstrapKind::tcp:
      return make_tcp_bootstrap_from_env(o.timeout);
    case BootstrapKind::single:
      return make_threads_bootstrap(make_threads_group(1), 0, o.timeout);
    case BootstrapKind::threads:
      throw Error(ErrorCode::invalid_argument, -1,
                  "the threads bootstrap needs Options::bootstrap from make_threads_bootstrap");
    case BootstrapKind::automatic:
      break;
  }
  throw Error(ErrorCode::internal, -1, "no bootstrap selected");
}

// The backend asked for, resolved: `automatic` is the GPU backend (cuda, then hip) that this
// build has and that sees a device, else host. `gpu_devices` is the chosen GPU backend's device
// count. Throws Error(backend) when the one asked for cannot run here.
Backend select_backend(Backend asked, int& gpu_devices) {
  switch (asked) {
    case Backend::host:
      return Backend::host;
    case Backend::hip: {
      const hip::Probe probe = hip::probe();
      gpu_devices = probe.devices;
      if (probe.devices > 0) return Backend::hip;
      throw Error(ErrorCode::backend, -1,
                  "backend 'hip' was asked for (TESSERA_BACKEND=hip), but no HIP device is "
                  "usable: " +
                      probe.why_none);
    }
    case Backend::cuda:
    case Backend::automatic: {
      const cuda::Probe probe = cuda::probe();
      gpu_devices = probe.devices;
      if (probe.devices > 0) return Backend::cuda;
      if (asked == Backend::automatic) {
        const hip::Probe hip_probe = hip::probe();
        gpu_devices = hip_probe.devices;
        return hip_probe.devices > 0 ? Backend::hip : Backend::host;
      }
      throw Error(ErrorCode::backend, -1,
                  "backend 'cuda' was asked for (TESSERA_BACKEND=cuda), but no CUDA device is "
                  "usable: " +
                      probe.why_none);
    }
  }
  throw Error(ErrorCode::internal, -1, "unknown backend");
}

std::string host_node_id(const Options& o) {
  if (!o.node_id.empty()) return o.node_id;
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

// What each PE tells the others at init. pid, pid_namespace and boot_id say which PEs are
// processes this PE can watch (same machine, same pid namespace; see PeerWatch).
struct PeInfo {
  char node_id[240];
  std::uint64_t heap_size;
  std::uint32_t backend;
  std::uint32_t checked;
  std::uint32_t p2p;
  std::uint32_t pid;
  std::uint64_t pid_namespace;
  char boot_id[40];
};

std::uint64_t pid_namespace() {
  struct stat st {};
  if (::stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_ino);
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

// "0,2-4,7" for a sorted list of PEs.
std::string pe_list(const std::vector<int>& pes) {
  std::string out;
  for (std::size_t i = 0; i < pes.size();) {
    std::size_t j = i;
    while (j + 1 < pes.size() && pes[j + 1] == pes[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(pes[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(pes[j]);
    }
    i = j + 1;
  }
  return out;
}

// Groups PEs by the value they reported: "PEs 0,2-3 passed X; PE 1 passed Y".
template <class T, class Describe>
std::string describe_disagreement(const std::vector<T>& values, Describe describe) {
  std::map<T, std::vector<int>> groups;
  for (std::size_t pe = 0; pe < values.size(); ++pe)
    groups[values[pe]].push_back(static_cast<int>(pe));
  std::string out;
  for (const auto& [value, pes] : groups) {
    if (!out.empty()) out += "; ";
    out += (pes.size() == 1 ? "PE " : "PEs ") + pe_list(pes) + " " + describe(value);
  }
  return out;
}

std::string hex(const void* p) {
  std::ostringstream s;
  s << p;
  return s.str();
}

}  // namespace

RuntimeImpl::RuntimeImpl(const Options& options) : options_(options) {
  if (options_.heap_size == 0) {
    throw Error(ErrorCode::invalid_argument, -1, "heap size must be positive");
  }
  int gpu_devices = 0;
  backend_ = select_backend(options_.backend, gpu_devices);
  bootstrap_ = select_bootstrap(options_);
  pe_ = bootstrap_->rank();
  n_pes_ = bootstrap_->size();
  log_ = Logger(options_.log_level, pe_);

  // Learn every PE's node and heap size; all must agree on the size.
  const std::string node_id = host_node_id(options_);
  if (node_id.size() >= sizeof(PeInfo::node_id)) {
    fail(ErrorCode::invalid_argument, "node id '" + node_id + "' is longer than " +
                                          std::to_string(sizeof(PeInfo::node_id) - 1) + " bytes");
  }
  std::vector<PeInfo> infos(static_cast<std::size_t>(n_pes_));
  PeInfo& mine = infos[static_cast<std::size_t>(pe_)];
  std::memset(&mine, 0, sizeof(mine));
  std::memcpy(mine.node_id, node_id.c_str(), node_id.size());
  mine.heap_size = options_.heap_size;
  mine.backend = static_cast<std::uint32_t>(backend_);
  mine.checked = options_.checked ? 1 : 0;
  mine.p2p = options_.p2p ? 1 : 0;
  mine.pid = static_cast<std::uint32_t>(::getpid());
  mine.pid_namespace = pid_namespace();
  const std::string boot = boot_id();
  std::memcpy(mine.boot_id, boot.c_str(), std::min(boot.size(), sizeof(mine.boot_id) - 1));
  bootstrap_->allgather(infos.data(), sizeof(PeInfo));
  std::vector<std::uint64_t> sizes;
  for (const auto& info : infos) sizes.push_back(info.heap_size);
  if (std::adjacent_find(sizes.begin(), sizes.end(), std::not_equal_to<>()) != sizes.end()) {
    fail(ErrorCode::invalid_argument, "PEs disagree on the heap size (TESSERA_HEAP_SIZE): " +
                                          describe_disagreement(sizes, [](std::uint64_t v) {
                                            return "asked for " + std::to_string(v) + " bytes";
                                          }));
  }

  std::vector<std::uint32_t> backends;
  for (const auto& info : infos) backends.push_back(info.backend);
  if (std::adjacent_find(backends.begin(), backends.end(), std::not_equal_to<>()) !=
      backends.end()) {
    fail(ErrorCode::backend,
         "PEs chose different backends (set TESSERA_BACKEND, or make a GPU visible to every "
         "PE): " +
             describe_disagreement(backends, [](std::uint32_t v) {
               return std::string("chose ") + to_string(static_cast<Backend>(v));
             }));
  }

  std::vector<std::uint32_t> p2ps;
  for (const auto& info : infos) p2ps.push_back(info.p2p);
  if (std::adjacent_find(p2ps.begin(), p2ps.end(), std::not_equal_to<>()) != p2ps.end()) {
    fail(ErrorCode::invalid_argument,
         "PEs disagree on mapping peers (TESSERA_P2P): " +
             describe_disagreement(p2ps, [](std::uint32_t v) {
               return std::string(v != 0 ? "maps its node's peers" : "set TESSERA_P2P=0");
             }));
  }

  // Nodes are numbered in order of their first PE.
  node_of_pe_.resize(static_cast<std::size_t>(n_pes_));
  std::vector<int> node_pes;
  for (int p = 0; p < n_pes_; ++p) {
    std::string name(infos[static_cast<std::size_t>(p)].node_id);
    auto it = std::find(node_names_.begin(), node_names_.end(), name);
    if (it == node_names_.end()) it = node_names_.insert(node_names_.end(), name);
    node_of_pe_[static_cast<std::size_t>(p)] = static_cast<int>(it - node_names_.begin());
  }
  node_ = node_of_pe_[static_cast<std::size_t>(pe_)];
  for (int p = 0; p < n_pes_; ++p) {
    if (node_of_pe_[static_cast<std::size_t>(p)] == node_) {
      if (p == pe_) node_pe_ = static_cast<int>(node_pes.size());
      node_pes.push_back(p);
    }
  }
  node_size_ = static_cast<int>(node_pes.size());

  // Build the heap and map the node's peers. Each segment is the user heap followed, at a
  // page-aligned offset, by the runtime's control area: the same offset on every PE, outside
  // everything malloc hands out and every device heap check. Its first page holds the words
  // peers write (device barrier, abort word); the pages after it this PE's allocation table.
  const std::size_t control_offset = (options_.heap_size + 4095) / 4096 * 4096;
  const std::size_t segment_bytes = control_offset + 4096 + device::AllocationTable::kBytes;
  // TESSERA_P2P=0 maps no peer: every other PE is reached through the network proxy.
  const std::vector<int> mapped_pes = options_.p2p ? node_pes : std::vector<int>{pe_};
  const SegmentRequest request{*bootstrap_, pe_,           n_pes_,
                               mapped_pes,  segment_bytes, options_.timeout};
  if (backend_ == Backend::cuda) {
    device_ = cuda::select_device(node_pe_, gpu_devices, pe_);
    segment_ = cuda::make_heap_segment(request, device_);
    proxy_ring_ = cuda::make_proxy_ring(ProxyRing::kBytes, device_, pe_);
  } else if (backend_ == Backend::hip) {
    device_ = hip::select_device(node_pe_, gpu_devices, pe_);
    segment_ = hip::make_heap_segment(request, device_);
    proxy_ring_ = hip::make_proxy_ring(ProxyRing::kBytes, device_, pe_);
  } else {
    segment_ = make_host_heap_segment(request);
    proxy_ring_ = make_host_proxy_ring(ProxyRing::kBytes);
  }
  peer_base_ = segment_->peer_bases();
  allocator_ = Allocator(0, options_.heap_size);
  // The control area starts zeroed (a fresh memfd, or device memory the segment zeroed); the
  // barrier below publishes that to peers.
  static_assert(device::Context::kBarrierWordsBytes <= 4096, "peers write one page");
  barrier_words_ = reinterpret_cast<std::uint64_t*>(base() + control_offset);
  allocation_table_ = reinterpret_cast<std::uint64_t*>(base() + control_offset + 4096);
  stream_ =
      backend_ == Backend::cuda  ? std::make_unique<Stream>(pe_, cuda::make_stream(device_, pe_))
      : backend_ == Backend::hip ? std::make_unique<Stream>(pe_, hip::make_stream(device_, pe_))
                                 : std::make_unique<Stream>(pe_);
  start_transport(control_offset, segment_bytes);
  bootstrap_->barrier();
  // Watch the PEs that are other processes of this machine: when one ends without leaving the
  // job, this PE's waits end with PeerLost naming it.
  std::vector<PeerWatch::Peer> watched;
  for (int p = 0; p < n_pes_; ++p) {
    const PeInfo& info = infos[static_cast<std::size_t>(p)];
    if (p == pe_ || info.pid == mine.pid || info.pid_namespace != mine.pid_namespace ||
        info.pid_namespace == 0 || boot.empty() ||
        std::strncmp(info.boot_id, mine.boot_id, sizeof(mine.boot_id)) != 0) {
      continue;
    }
    watched.push_back({p, static_cast<pid_t>(info.pid)});
  }
  if (!watched.empty()) {
    peer_watch_ = std::make_unique<PeerWatch>(std::move(watched), [this](int p) { peer_died(p); });
  }
  TESSERA_LOG(log_, info,
              "init: " << n_pes_ << " PEs, bootstrap " << bootstrap_->name() << ", node '"
                       << node_id << "' (" << node_size_ << " PEs here, node PE " << node_pe_
                       << "), heap " << options_.heap_size << " bytes at " << hex(base())
                       << ", backend " << to_string(backend_)
                       << (device_ >= 0 ? ", device " + std::to_string(device_) : std::string())
                       << ", " << segment_->kind());
}

RuntimeImpl::~RuntimeImpl() {
  try {
    finalize();
  } catch (const Error& e) {
    TESSERA_LOG(log_, warn, "finalize in destructor failed: " << e.message());
  }
}

void RuntimeImpl::finalize(bool collective) {
  if (finalized_) return;
  finalized_ = true;
  // A job that is aborting (a PE failed or died) has no collective goodbye: the peers it would
  // wait for may never come.
  if (abort_word() != 0) collective = false;
  // Kernels still running touch the heap: let them finish (their waits are bounded) first.
  if (stream_) {
    try {
      stream_->synchronize();
    } catch (const Error& e) {
      TESSERA_LOG(log_, warn,
                  "finalize: a failure on the default stream was never reported by "
                  "Stream::synchronize(): "
                      << e.message());
    }
    stream_.reset();
  }
  // Peers may still be reading this heap until they too reach finalize; the network proxy
  // finishes this PE's operations first, and serves the peers' until the barrier.
  try {
    if (fabric_ && collective) fabric_->drain();
    finalizing_.store(true);
    if (collective) check_collective(CollectiveKind::finalize, "finalize");
  } catch (...) {
    peer_watch_.reset();
    fabric_.reset();
    if (segment_) segment_->release();
    peer_base_.assign(peer_base_.size(), nullptr);
    if (bootstrap_) bootstrap_->abort();
    bootstrap_.reset();
    throw;
  }
  // Peers past the last barrier may exit at once: their ends are no loss any more.
  job_done_.store(true);
  peer_watch_.reset();
  fabric_.reset();
  if (segment_) segment_->release();
  std::fill(peer_base_.begin(), peer_base_.end(), nullptr);
  if (!collective) bootstrap_->abort();
  bootstrap_.reset();
  TESSERA_LOG(log_, info,
              (collective ? "finalized" : "left the job without finalizing collectively"));
}

void RuntimeImpl::fail(ErrorCode code, const std::string& message) const {
  throw Error(code, pe_, message);
}

void RuntimeImpl::check_collective(CollectiveKind kind, const char* what, std::uint64_t a,
                                   std::uint64_t b) {
  check_not_aborting(what);
  struct Call {
    std::uint64_t seq, kind, a, b;
    auto operator<=>(const Call&) const = default;
  };
  std::vector<Call> calls(static_cast<std::size_t>(n_pes_));
  const std::uint64_t seq = ++collective_seq_;
  calls[static_cast<std::size_t>(pe_)] = {seq, static_cast<std::uint64_t>(kind), a, b};
  bootstrap_->allgather(calls.data(), sizeof(Call));
  const bool same =
      std::all_of(calls.begin(), calls.end(), [&](const Call& c) { return c == calls.front(); });
  if (same) return;
  // "called malloc #3 with bytes=64, align=64": the call's kind, its sequence number on that PE,
  // and its arguments.
  auto describe = [&](const Call& c) {
    const std::string number = " #" + std::to_string(c.seq);
    switch (static_cast<CollectiveKind>(c.kind)) {
      case CollectiveKind::malloc:
      case CollectiveKind::calloc:
        return std::string("called ") +
               (c.kind == static_cast<std::uint64_t>(CollectiveKind::malloc) ? "malloc"
                                                                             : "calloc") +
               number + " with bytes=" + std::to_string(c.a) + ", align=" + std::to_string(c.b);
      case CollectiveKind::free:
        return "called free" + number +
               (c.a == ~std::uint64_t{0} ? std::string(" with a pointer outside the heap")
                                         : " with offset=" + std::to_string(c.a));
      case CollectiveKind::barrier:
        return "called barrier" + number;
      case CollectiveKind::finalize:
        return "called finalize" + number;
      case CollectiveKind::all_gather_setup:
        return "called ops::all_gather (first call on its recv buffer)" + number;
      case CollectiveKind::moe_buffer:
        return "called ops::MoeBuffer creation" + number;
    }
    return "called an unknown collective (kind " + std::to_string(c.kind) + ")" + number;
  };
  fail(ErrorCode::invalid_argument, std::string(what) + ": PEs made different collective calls: " +
                                        describe_disagreement(calls, describe));
}

std::uint64_t RuntimeImpl::abort_word() const {
  if (barrier_words_ == nullptr || segment_ == nullptr) return 0;
  std::uint64_t* word = &barrier_words_[device::Context::kAbortWord];
  if (backend_ == Backend::host) return platform::atomic_load(word, Sem::acquire, Scope::system);
  std::uint64_t value = 0;
  segment_->copy(&value, word, sizeof(value));
  return value;
}

void RuntimeImpl::check_not_aborting(const char* what) const {
  const std::uint64_t word = abort_word();
  if (word == 0) return;
  const int culprit = device::abort_pe(word);
  fail(ErrorCode::peer_lost, std::string(what) + ": the job is aborting: PE " +
                                 std::to_string(culprit) +
                                 (device::abort_reason(word) == device::AbortReason::died
                                      ? " is lost (its process ended)"
                                      : " failed and aborted the job (its own message says why)"));
}

void RuntimeImpl::peer_died(int pe) {
  if (job_done_.load()) return;
  // In finalize's goodbye collective a peer that already passed it may exit before this PE has
  // seen it complete; interrupting the collective then would fail a clean finalize. A peer that
  // died before contributing still fails the collective (bounded by TESSERA_TIMEOUT).
  if (finalizing_.load()) {
    TESSERA_LOG(log_, info, "PE " << pe << " ended while this PE finalizes");
    return;
  }
  TESSERA_LOG(log_, warn, "PE " << pe << " is lost: its process ended");
  if (barrier_words_ != nullptr && segment_ != nullptr) {
    std::uint64_t* word = &barrier_words_[device::Context::kAbortWord];
    const std::uint64_t value = device::encode_abort(pe, device::AbortReason::died);
    if (backend_ == Backend::host) {
      platform::atomic_compare_exchange(word, std::uint64_t{0}, value, Sem::acq_rel, Scope::system);
    } else if (abort_word() == 0) {
      segment_->copy(word, &value, sizeof(value));
    }
  }
  if (bootstrap_) bootstrap_->peer_lost(pe);
}

void RuntimeImpl::publish_allocations() {
  using Table = device::AllocationTable;
  const std::vector<Allocator::Block> blocks = allocator_.blocks();
  const bool fits = blocks.size() <= Table::kCapacity;
  std::vector<std::uint64_t> body(Table::kEntries +
                                  (fits ? blocks.size() * Table::kWordsPerEntry : 0));
  body[Table::kCount] = fits ? blocks.size() : Table::kOverflow;
  if (fits) {
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      std::uint64_t* entry = &body[Table::kEntries + i * Table::kWordsPerEntry];
      entry[0] = blocks[i].offset;
      entry[1] = blocks[i].bytes;
      entry[2] = blocks[i].index;
    }
  }
  // A seqlock: odd while the body changes, so device readers retry instead of trusting a mix.
  std::uint64_t* table = allocation_table_;
  const std::uint64_t odd = ++allocation_version_;
  const std::uint64_t even = ++allocation_version_;
  if (backend_ == Backend::host) {
    platform::atomic_store(&table[Table::kVersion], odd, Sem::relaxed, Scope::system);
    platform::fence(Sem::release, Scope::system);
    for (std::size_t i = Table::kCount; i < body.size(); ++i)
      platform::atomic_store(&table[i], body[i], Sem::relaxed, Scope::system);
    platform::atomic_store(&table[Table::kVersion], even, Sem::release, Scope::system);
    return;
  }
  segment_->copy(&table[Table::kVersion], &odd, sizeof(odd));
  segment_->copy(&table[Table::kCount], &body[Table::kCount],
                 (body.size() - Table::kCount) * sizeof(std::uint64_t));
  segment_->copy(&table[Table::kVersion], &even, sizeof(even));
}

void* RuntimeImpl::malloc(std::size_t bytes, std::size_t align, CollectiveKind kind) {
  if (finalized_) fail(ErrorCode::invalid_argument, "malloc after finalize");
  const char* what = kind == CollectiveKind::calloc ? "calloc" : "malloc";
  check_collective(kind, what, bytes, align);
  if (align == 0 || (align & (align - 1)) != 0 || align > kHeapAlignment) {
    fail(ErrorCode::invalid_argument,
         std::string(what) + ": alignment must be a power of two of at most " +
             std::to_string(kHeapAlignment) + " bytes, got " + std::to_string(align));
  }
  if (bytes == 0) return nullptr;
  std::optional<std::size_t> offset;
  {
    std::lock_guard lock(alloc_mu_);
    offset = allocator_.allocate(bytes, align);
    if (offset) publish_allocations();
  }
  if (!offset) {
    fail(ErrorCode::out_of_memory,
         std::string(what) + ": symmetric heap exhausted: requested " + std::to_string(bytes) +
             " bytes (align " + std::to_string(align) + "), free " +
             std::to_string(allocator_.free_bytes()) + " bytes, largest free block " +
             std::to_string(allocator_.largest_free()) + " bytes of a " +
             std::to_string(options_.heap_size) +
             "-byte heap; raise TESSERA_HEAP_SIZE or free blocks");
  }
  TESSERA_LOG(log_, trace, what << "(" << bytes << ", " << align << ") -> offset " << *offset);
  return base() + *offset;
}

void RuntimeImpl::free(void* ptr) {
  if (ptr == nullptr) return;
  if (finalized_) return;  // the whole heap is gone already
  const bool inside = in_heap(ptr, 1);
  const std::uint64_t offset = inside ? heap_offset(ptr) : ~std::uint64_t{0};
  check_collective(CollectiveKind::free, "free", offset);
  if (!inside) {
    fail(ErrorCode::invalid_argument, "free: pointer " + hex(ptr) +
                                          " is not in the symmetric heap [" + hex(base()) + ", +" +
                                          std::to_string(options_.heap_size) + ")");
  }
  bool released;
  {
    std::lock_guard lock(alloc_mu_);
    released = allocator_.release(offset);
    if (released) publish_allocations();
  }
  if (!released) {
    fail(ErrorCode::invalid_argument,
         "free: heap offset " + std::to_string(offset) +
             " is not the start of a live block (double free, or a pointer into a block)");
  }
  TESSERA_LOG(log_, trace, "free(offset " << offset << ")");
}

bool RuntimeImpl::in_heap(const void* p, std::size_t bytes) const {
  if (finalized_) return false;
  auto a = reinterpret_cast<std::uintptr_t>(p);
  auto b = reinterpret_cast<std::uintptr_t>(base());
  return a >= b && bytes <= options_.heap_size && a - b <= options_.heap_size - bytes;
}

void RuntimeImpl::check_heap_range(const void* p, std::size_t bytes, const char* what) const {
  if (in_heap(p, bytes)) return;
  std::string where = "pointer " + hex(p);
  if (in_heap(p, 1)) where += " (heap offset " + std::to_string(heap_offset(p)) + ")";
  fail(ErrorCode::invalid_argument, std::string(what) + ": " + where + " + " +
                                        std::to_string(bytes) +
                                        " bytes is not inside the symmetric heap [" + hex(base()) +
                                        ", +" + std::to_string(options_.heap_size) + ")");
}

void RuntimeImpl::check_allocation(const void* p, std::size_t bytes, const char* what) {
  check_heap_range(p, bytes, what);
  if (!options_.checked) return;
  const std::size_t offset = heap_offset(p);
  std::optional<std::size_t> block;
  std::size_t block_bytes = 0;
  std::uint64_t index = 0;
  {
    std::lock_guard lock(alloc_mu_);
    block = allocator_.block_containing(offset);
    if (block) {
      block_bytes = allocator_.block_size(*block);
      for (const auto& b : allocator_.blocks()) {
        if (b.offset == *block) index = b.index;
      }
    }
  }
  const std::string range =
      "[heap offset " + std::to_string(offset) + ", +" + std::to_string(bytes) + " bytes)";
  if (!block) {
    fail(ErrorCode::invalid_argument,
         std::string(what) + ": " + range +
             " is not inside any live allocation of the symmetric heap (freed, or never "
             "allocated)");
  }
  if (bytes > block_bytes - (offset - *block)) {
    fail(ErrorCode::invalid_argument,
         std::string(what) + ": " + range + " runs past the end of its allocation #" +
             std::to_string(index) + " [offset " + std::to_string(*block) + ", +" +
             std::to_string(block_bytes) + " bytes) by " +
             std::to_string(offset + bytes - (*block + block_bytes)) + " bytes");
  }
}

char* RuntimeImpl::peer_address(int pe, std::size_t offset, const char* what) const {
  if (finalized_) fail(ErrorCode::invalid_argument, std::string(what) + " after finalize");
  if (pe < 0 || pe >= n_pes_) {
    fail(ErrorCode::invalid_argument, std::string(what) + ": PE " + std::to_string(pe) +
                                          " is outside [0, " + std::to_string(n_pes_) + ")");
  }
  char* peer = peer_base_[static_cast<std::size_t>(pe)];
  if (peer == nullptr) {
    fail(ErrorCode::transport,
         std::string(what) + ": PE " + std::to_string(pe) + " is on node '" +
             node_names_[static_cast<std::size_t>(node_of_pe_[static_cast<std::size_t>(pe)])] +
             "' and this PE on node '" + node_names_[static_cast<std::size_t>(node_)] +
             "'; its heap is not mapped here and reaching it needs the network transport");
  }
  return peer + offset;
}

void symmetric_free(RuntimeImpl& rt, void* ptr) {
  // Called from destructors: while an exception unwinds, peers may never reach the matching
  // free, so the block is left to the heap's teardown instead of risking a hang.
  if (rt.finalized() || std::uncaught_exceptions() > 0) return;
  try {
    rt.free(ptr);
  } catch (const Error& e) {
    TESSERA_LOG(rt.log_, warn, "freeing a Symmetric<T> failed: " << e.message());
  }
}

}  // namespace detail

bool backend_available(Backend backend) noexcept {
  switch (backend) {
    case Backend::automatic:
    case Backend::host:
      return true;
    case Backend::cuda:
      try {
        return detail::cuda::probe().devices > 0;
      } catch (...) {
        return false;
      }
    case Backend::hip:
      try {
        return detail::hip::probe().devices > 0;
      } catch (...) {
        return false;
      }
  }
  return false;
}

Runtime::Runtime(std::shared_ptr<detail::RuntimeImpl> impl) : impl_(std::move(impl)) {}
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&& o) noexcept {
  if (this != &o) {
    if (impl_) {
      try {
        impl_->finalize();
      } catch (...) {  // a move-assignment cannot throw; the destructor path logs it
      }
    }
    impl_ = std::move(o.impl_);
  }
  return *this;
}
Runtime::~Runtime() {
  if (impl_) {
    try {
      impl_->finalize(std::uncaught_exceptions() == 0);
    } catch (const Error& e) {
      TESSERA_LOG(impl_->log_, warn, "finalize in ~Runtime failed: " << e.message());
    }
  }
}

Runtime Runtime::init(const Options& options) {
  return Runtime(std::make_shared<detail::RuntimeImpl>(options));
}

void Runtime::finalize() {
  if (!impl_) return;
  auto impl = std::move(impl_);
  impl->finalize();
}

detail::RuntimeImpl& Runtime::impl() const {
  if (!impl_) throw Error(ErrorCode::invalid_argument, -1, "the Runtime is not initialized");
  return *impl_;
}

int Runtime::pe() const { return impl().pe_; }
int Runtime::n_pes() const { return impl().n_pes_; }
int Runtime::node_pe() const { return impl().node_pe_; }
int Runtime::node_size() const { return impl().node_size_; }
int Runtime::node() const { return impl().node_; }
Backend Runtime::backend() const { return impl().backend_; }
const Options& Runtime::options() const { return impl().options_; }
Bootstrap& Runtime::bootstrap() { return *impl().bootstrap_; }

void Runtime::barrier() {
  // The bootstrap's own synchronisation orders memory in practice; the fences make the promise
  // independent of how a bootstrap is built.
  device::platform::fence(device::Sem::acq_rel, device::Scope::system);
  // Operations this PE handed to the network proxy complete before the barrier, too.
  auto& rt = impl();
  if (rt.finalized_) rt.fail(ErrorCode::invalid_argument, "barrier after finalize");
  if (rt.fabric_) rt.fabric_->drain();
  // Carries the call's kind and sequence number, so a PE that calls barrier while another calls
  // malloc (or finalize) is told so instead of pairing the wrong calls.
  rt.check_collective(detail::CollectiveKind::barrier, "barrier");
  device::platform::fence(device::Sem::acq_rel, device::Scope::system);
}

device::Context Runtime::device_context() const {
  const auto& rt = impl();
  device::Context ctx{};
  ctx.my_pe = rt.pe_;
  ctx.n_pes = rt.n_pes_;
  ctx.peer_base = rt.segment_ ? rt.segment_->device_peer_table() : rt.peer_base_.data();
  ctx.heap_size = rt.options_.heap_size;
  ctx.timeout_ns = static_cast<std::uint64_t>(rt.options_.timeout.count()) * 1000000ull;
  ctx.flags = rt.options_.checked ? device::kCheckedMode : 0u;
  ctx.barrier_words = rt.barrier_words_;
  ctx.proxy = rt.fabric_ ? static_cast<device::ProxyChannel*>(rt.proxy_ring_.device) : nullptr;
  ctx.allocations = rt.allocation_table_;
  return ctx;
}

Stream& Runtime::stream() const {
  auto& rt = impl();
  if (!rt.stream_) rt.fail(ErrorCode::invalid_argument, "stream() after finalize");
  return *rt.stream_;
}

std::size_t Runtime::heap_size() const { return impl().options_.heap_size; }

void* Runtime::malloc(std::size_t bytes, std::size_t align) {
  return impl().malloc(bytes, align, detail::CollectiveKind::malloc);
}

void* Runtime::calloc(std::size_t count, std::size_t size, std::size_t align) {
  if (size != 0 && count > ~std::size_t{0} / size) {
    impl().fail(ErrorCode::invalid_argument, "calloc: " + std::to_string(count) + " x " +
                                                 std::to_string(size) + " bytes overflows");
  }
  void* p = impl().malloc(count * size, align, detail::CollectiveKind::calloc);
  if (p != nullptr) impl().segment_->zero(p, count * size);
  barrier();  // no peer writes into the block before this PE has zeroed it
  return p;
}

void Runtime::free(void* ptr) { impl().free(ptr); }

std::size_t Runtime::heap_free_bytes() const { return impl().allocator_.free_bytes(); }
std::size_t Runtime::heap_largest_free() const { return impl().allocator_.largest_free(); }

void* Runtime::heap_base() const { return impl().base(); }

std::size_t Runtime::heap_offset(const void* ptr) const {
  auto& rt = impl();
  rt.check_heap_range(ptr, 1, "heap_offset");
  return rt.heap_offset(ptr);
}

bool Runtime::in_heap(const void* ptr, std::size_t bytes) const {
  return impl().in_heap(ptr, bytes);
}

void* Runtime::ptr(const void* local, int pe) const {
  auto& rt = impl();
  rt.check_heap_range(local, 1, "ptr");
  if (pe < 0 || pe >= rt.n_pes_) {
    rt.fail(ErrorCode::invalid_argument,
            "ptr: PE " + std::to_string(pe) + " is outside [0, " + std::to_string(rt.n_pes_) + ")");
  }
  char* peer = rt.peer_base_[static_cast<std::size_t>(pe)];
  return peer == nullptr ? nullptr : peer + rt.heap_offset(local);
}

void Runtime::put(void* dst, const void* src, std::size_t bytes, int pe) {
  auto& rt = impl();
  rt.check_allocation(dst, bytes, "put destination");
  if (detail::remote_copy_via_proxy(rt, device::ProxyOp::put, pe, rt.heap_offset(dst),
                                    const_cast<void*>(src), bytes)) {
    return;
  }
  char* remote = rt.peer_address(pe, rt.heap_offset(dst), "put");
  if (bytes > 0) rt.segment_->copy(remote, src, bytes);
}

void Runtime::get(void* dst, const void* src, std::size_t bytes, int pe) {
  auto& rt = impl();
  rt.check_allocation(src, bytes, "get source");
  if (detail::remote_copy_via_proxy(rt, device::ProxyOp::get, pe, rt.heap_offset(src), dst,
                                    bytes)) {
    return;
  }
  const char* remote = rt.peer_address(pe, rt.heap_offset(src), "get");
  if (bytes > 0) rt.segment_->copy(dst, remote, bytes);
}

}  // namespace tessera
