// The state behind a Runtime. Internal: shared by the host library's translation units (the
// facade in runtime.cpp, the transport side in transport/runtime_transport.cpp, op_support.cpp);
// other code reaches it through RuntimeAccess, and the ops through op_support.hpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "heap/heap_segment.hpp"
#include "heap/symmetric_heap.hpp"
#include "runtime/abort_word.hpp"
#include "runtime/backend_selection.hpp"
#include "runtime/collective_check.hpp"
#include "runtime/log.hpp"
#include "runtime/op_cache.hpp"
#include "runtime/peer_watch.hpp"
#include "runtime/proxy_ring.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"
#include "transport/fabric.hpp"
#include "transport/topology.hpp"

namespace tessera::detail {

class RuntimeImpl {
 public:
  // Collective: selects the backend and the bootstrap, forms the job (job.hpp), builds and maps
  // the heaps, starts the transport and the peer watch.
  explicit RuntimeImpl(const Options& options);
  ~RuntimeImpl();
  RuntimeImpl(const RuntimeImpl&) = delete;
  RuntimeImpl& operator=(const RuntimeImpl&) = delete;

  // Collective unless `collective` is false (teardown while an exception unwinds: peers are
  // not waited for, they see this PE leave).
  void finalize(bool collective = true);
  bool finalized() const { return finalized_; }

  // This PE's place in the collective-call sequence (collective_check.hpp), after the abort
  // word: throws Error(peer_lost) first when the job is aborting.
  void check_collective(CollectiveKind kind, const char* what, std::uint64_t a = 0,
                        std::uint64_t b = 0);
  // The same for an op's call, named by the op (op_support.hpp).
  void check_op_call(std::string_view call, const char* what);

  // The control area's abort word (0: the job is not aborting); see Context::kAbortWord.
  std::uint64_t abort_word() const { return abort_.load(); }
  // Throws Error(peer_lost) naming the PE when the abort word is set.
  void check_not_aborting(const char* what) const { abort_.check_not_aborting(pe_, what); }
  // Waits (bounded) until every operation this PE handed to the network proxy completed; a
  // failure is rethrown with "<what>: " in front. Needs fabric_.
  void drain_proxy(const char* what);
  // The peer watch saw PE `pe`'s process end: set the abort word, tell the bootstrap.
  void peer_died(int pe);

  void* malloc(std::size_t bytes, std::size_t align, CollectiveKind kind);
  void free(void* ptr);

  bool in_heap(const void* p, std::size_t bytes) const;
  std::size_t heap_offset(const void* p) const {
    return static_cast<std::size_t>(static_cast<const char*>(p) - base());
  }
  char* base() const { return peer_base_[static_cast<std::size_t>(pe_)]; }
  // Address of `offset` on `pe`: throws Error(invalid_argument) for a PE outside the job,
  // Error(transport) when the PE's heap is not mapped here.
  char* peer_address(int pe, std::size_t offset, const char* what) const;
  void check_heap_range(const void* p, std::size_t bytes, const char* what) const;
  // check_heap_range, and in checked mode: [p, p + bytes) lies inside one live allocation.
  void check_allocation(const void* p, std::size_t bytes, const char* what);
  [[noreturn]] void fail(ErrorCode code, const std::string& message) const;
  // Finalize's first step: when the stream still has work, says so, waits for it at most
  // TESSERA_TIMEOUT + 1 s, and past that sets the abort word so this PE's device waits end.
  void finish_stream_work();
  // Drops fault_records_ (the segment is about to be released).
  void forget_fault_records() noexcept;
  // True when this job starts the network transport (if this build has one): some PE cannot map
  // some other PE. Every PE answers alike. In src/transport/runtime_transport.cpp.
  bool network_transport_wanted() const;
  // Chooses the transport to every PE and, when some PE of the job has a peer it cannot map,
  // starts the network proxy on every PE (collective). In src/transport/runtime_transport.cpp.
  void start_transport();

  Options options_;
  std::shared_ptr<Bootstrap> bootstrap_;
  Logger log_;
  // Where the job's PEs run (from form_job).
  int pe_ = 0;
  int n_pes_ = 1;
  int node_ = 0;
  int node_pe_ = 0;
  int node_size_ = 1;
  std::vector<int> node_of_pe_;
  std::vector<std::string> node_names_;
  Backend backend_ = Backend::host;
  std::unique_ptr<ExecutionBackend> execution_;  // what backend_ names, chosen at init

  int device_ = -1;                       // the GPU of this PE (cuda backend), else -1
  std::unique_ptr<HeapSegment> segment_;  // this PE's heap memory and its mapped peers
  std::vector<char*> peer_base_;          // per PE; null where not mapped (segment's table)
  // Memory for the network proxy's descriptor ring, allocated at init (see proxy_ring.hpp).
  ProxyRing proxy_ring_;
  // The allocator and its device-readable table (in the control area's pages after the first).
  std::unique_ptr<SymmetricHeap> heap_;
  CollectiveSequence collectives_;
  // Counters of the device barrier (Context's control_page): this PE's control area, at
  // control_offset_ of its segment or (the GPUs' IPC path) an allocation of its own.
  std::uint64_t* control_page_ = nullptr;
  std::size_t control_offset_ = 0;  // the control page's segment offset (proxy descriptors)
  AbortWord abort_;                 // in control_page_'s page
  // Watches this machine's other PE processes (null when there are none).
  std::unique_ptr<PeerWatch> peer_watch_;
  std::atomic<bool> job_done_{false};    // finalize's last barrier passed: peers may exit
  std::atomic<bool> finalizing_{false};  // in the goodbye collective: a peer exit is not news
  // How this PE reaches each PE, and the network proxy (null when no PE of the job needs one).
  std::vector<Transport> transports_;
  Placement placement_;
  std::unique_ptr<FabricTransport> fabric_;
  // The PE's default stream; its threads are joined at finalize, before the heap goes away.
  std::unique_ptr<Stream> stream_;
  // The ops' per-Runtime state; cleared at finalize.
  OpCache op_cache_;
  // This PE's heap mappings as the fault reporter knows them (host backend), dropped before the
  // segment is released.
  std::vector<int> fault_records_;
  bool finalized_ = false;
};

}  // namespace tessera::detail
