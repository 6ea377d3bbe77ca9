// The state behind a Runtime: its init sequence, finalize, and the checked heap calls the facade
// (runtime.cpp) forwards to.
#include "runtime/runtime_impl.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <sstream>

#include "heap/memfd.hpp"
#include "runtime/backend_selection.hpp"
#include "runtime/bootstrap_selection.hpp"
#include "runtime/fault_report.hpp"
#include "runtime/job.hpp"

namespace tessera::detail {
namespace {

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
  execution_ = select_backend(options_.backend);
  backend_ = execution_->kind();
  bootstrap_ = select_bootstrap(options_);
  pe_ = bootstrap_->rank();
  n_pes_ = bootstrap_->size();
  log_ = Logger(options_.log_level, pe_);

  // Learn every PE's node; all must agree on the heap size, the backend and TESSERA_P2P.
  JobLayout job = form_job(*bootstrap_, options_, backend_);
  node_ = job.node;
  node_pe_ = job.node_pe;
  node_size_ = static_cast<int>(job.node_pes.size());
  node_of_pe_ = std::move(job.node_of_pe);
  node_names_ = std::move(job.node_names);

  // Build the heap and map the node's peers. Each segment is the user heap, a hole of
  // kGuardBytes (inaccessible on the host backend; unmapped on the GPUs' VMM path, issue 17),
  // then the runtime's control area: at the same offset on every PE, outside everything malloc
  // hands out and every device heap check, and out of reach of a tile that runs off the heap's
  // end. Its first page holds the words peers write (device barrier, abort word); the pages
  // after it this PE's allocation table and the failure record of its kernels
  // (device/failure_record.hpp). On a GPU the hole starts on a 2 MiB boundary, where the VMM
  // path can end one allocation and, past the hole, start the control area's.
  const std::size_t end_alignment = backend_ == Backend::host ? 4096 : kHeapAlignment;
  const std::size_t heap_end =
      (options_.heap_size + end_alignment - 1) / end_alignment * end_alignment;
  control_offset_ = heap_end + kGuardBytes;
  const std::size_t segment_bytes = control_offset_ + device::kControlAreaBytes;
  // TESSERA_P2P=0 maps no peer: every other PE is reached through the network proxy.
  const std::vector<int> mapped_pes = options_.p2p ? job.node_pes : std::vector<int>{pe_};
  SegmentRequest request{*bootstrap_,      pe_,      n_pes_,     mapped_pes, segment_bytes,
                         options_.timeout, heap_end, kGuardBytes};
  device_ = execution_->select_device(node_pe_, pe_);
  segment_ = execution_->make_heap_segment(request);
  for (const std::string& note : segment_->notes()) TESSERA_LOG(log_, info, "init: " << note);
  proxy_ring_ = execution_->make_proxy_ring(ProxyRing::kBytes, pe_);
  peer_base_ = segment_->peer_bases();
  // The control area starts zeroed (a fresh memfd, or device memory the segment zeroed); the
  // barrier below publishes that to peers.
  static_assert(device::Context::kBarrierWordsBytes <= 4096, "peers write one page");
  const bool host_memory = execution_->host_memory();
  control_page_ = segment_->peer_controls()[static_cast<std::size_t>(pe_)];
  abort_ = AbortWord(&control_page_[device::Context::kAbortWord], segment_.get(), host_memory);
  // The allocation table's entries: memory the host writes and device code reads, made like the
  // proxy ring's (ordinary host memory, or pinned host memory mapped into the device).
  TableMemoryMaker make_table_entries = [this](std::size_t bytes) {
    const ProxyRing m = execution_->make_proxy_ring(bytes, pe_);
    return TableMemory{static_cast<std::uint64_t*>(m.host), static_cast<std::uint64_t*>(m.device),
                       m.owner};
  };
  heap_ = std::make_unique<SymmetricHeap>(options_.heap_size,
                                          control_page_ + 4096 / sizeof(std::uint64_t), *segment_,
                                          host_memory, std::move(make_table_entries));
  stream_ = execution_->make_stream(pe_);
  start_transport();
  segment_->seal_hole();  // no registration covers the hole (the NIC has heap and control page)
  bootstrap_->barrier();
  // Watch the PEs that are other processes of this machine: when one ends without leaving the
  // job, this PE's waits end with PeerLost naming it.
  if (!job.watchable.empty()) {
    peer_watch_ =
        std::make_unique<PeerWatch>(std::move(job.watchable), [this](int p) { peer_died(p); });
  }
  // A stray access of a host-backend kernel or host call faults in a guard page (or elsewhere):
  // the reporter names the heap it missed, relative to this PE's mappings.
  if (backend_ == Backend::host) {
    for (int p = 0; p < n_pes_; ++p) {
      const char* peer = peer_base_[static_cast<std::size_t>(p)];
      if (peer == nullptr) continue;
      fault_records_.push_back(
          remember_heap_mapping(pe_, p, peer, options_.heap_size, peer + segment_->bytes()));
    }
    install_fault_reporter();
  }
  TESSERA_LOG(log_, info,
              "init: " << n_pes_ << " PEs, bootstrap " << bootstrap_->name() << ", node '"
                       << job.node_id << "' (" << node_size_ << " PEs here, node PE " << node_pe_
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
  // The ops' state names heap blocks, which go with the heap; with finalized_ set, nothing in
  // it frees collectively any more.
  op_cache_.clear();
  // A job that is aborting (a PE failed or died) has no collective goodbye: the peers it would
  // wait for may never come.
  if (abort_word() != 0) collective = false;
  // Kernels still running touch the heap: let them finish (their waits are bounded) first.
  if (stream_) {
    finish_stream_work();
    try {
      stream_->synchronize();
    } catch (const Error& e) {
      TESSERA_LOG(log_, warn,
                  "finalize: a failure on the default stream was never reported by "
                  "Stream::synchronize(): "
                      << e.message());
    }
    stream_.reset();
    // A kernel that failed meanwhile aborted the job: no collective goodbye then either.
    if (abort_word() != 0) collective = false;
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
    forget_fault_records();
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
  forget_fault_records();
  // An exported GPU heap is freed only once every peer has closed its import of it (freeing
  // memory another process still has open is undefined): close, barrier, then free.
  if (segment_ && collective && !execution_->host_memory()) {
    segment_->close_peers();
    try {
      bootstrap_->barrier();
    } catch (const Error& e) {
      TESSERA_LOG(log_, warn,
                  "finalize: the barrier after closing the peers' heaps failed: "
                      << e.message() << "; freeing this PE's heap anyway");
      collective = false;
    }
  }
  if (segment_) segment_->release();
  std::fill(peer_base_.begin(), peer_base_.end(), nullptr);
  if (!collective) bootstrap_->abort();
  bootstrap_.reset();
  TESSERA_LOG(log_, info,
              (collective ? "finalized" : "left the job without finalizing collectively"));
}

void RuntimeImpl::finish_stream_work() {
  const std::size_t pending = stream_->in_flight();
  if (pending == 0) return;
  // Said before waiting, so a user whose kernels wait for something that never comes learns
  // why finalize takes long, and what to change.
  const auto timeout = options_.timeout;
  TESSERA_LOG(log_, warn,
              "finalize: the stream still has "
                  << pending
                  << " operation(s) in flight (kernels not synchronized); call "
                     "stream.synchronize() before finalize. Waiting for them "
                  << (timeout.count() == 0 ? std::string("without a bound (TESSERA_TIMEOUT=0)")
                                           : "(their waits end within TESSERA_TIMEOUT, " +
                                                 std::to_string(timeout.count()) + " ms)"));
  if (timeout.count() == 0) return;
  // A wait that times out reports itself; the margin lets it. Past that the abort word ends
  // every wait of this PE (one may have started late, or the work may be a kernel that spins).
  const auto bound = timeout + std::chrono::milliseconds(1000);
  if (stream_->wait_idle(bound)) return;
  TESSERA_LOG(log_, warn,
              "finalize: the stream's " << stream_->in_flight()
                                        << " operation(s) did not finish within " << bound.count()
                                        << " ms; ending this PE's waits");
  abort_.mark_failed(pe_);
}

void RuntimeImpl::forget_fault_records() noexcept {
  for (int record : fault_records_) forget_heap_mapping(record);
  fault_records_.clear();
}

void RuntimeImpl::fail(ErrorCode code, const std::string& message) const {
  throw Error(code, pe_, message);
}

void RuntimeImpl::check_collective(CollectiveKind kind, const char* what, std::uint64_t a,
                                   std::uint64_t b) {
  check_not_aborting(what);
  collectives_.check(*bootstrap_, pe_, n_pes_, kind, {}, what, a, b);
}

void RuntimeImpl::drain_proxy(const char* what) {
  try {
    fabric_->drain();
  } catch (const Error& e) {
    throw Error(e.code(), pe_, std::string(what) + ": " + e.message());
  }
}

void RuntimeImpl::check_op_call(std::string_view call, const char* what) {
  check_not_aborting(what);
  collectives_.check(*bootstrap_, pe_, n_pes_, CollectiveKind::op, call, what);
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
  abort_.mark_died(pe);
  if (bootstrap_) bootstrap_->peer_lost(pe);
}

void* RuntimeImpl::malloc(std::size_t bytes, std::size_t align, CollectiveKind kind) {
  if (finalized_) fail(ErrorCode::invalid_argument, "malloc after finalize");
  const char* what = kind == CollectiveKind::calloc ? "calloc" : "malloc";
  check_collective(kind, what, bytes, align);
  // Host heaps are mapped aligned to heap_mapping_alignment (up to 1 GiB); GPU
  // heaps to kHeapAlignment.
  const std::size_t max_align = backend_ == Backend::host
                                    ? detail::heap_mapping_alignment(options_.heap_size)
                                    : kHeapAlignment;
  if (align == 0 || (align & (align - 1)) != 0 || align > max_align) {
    fail(ErrorCode::invalid_argument,
         std::string(what) + ": alignment must be a power of two of at most " +
             std::to_string(max_align) + " bytes, got " + std::to_string(align));
  }
  if (bytes == 0) return nullptr;
  const std::optional<std::size_t> offset = heap_->allocate(bytes, align);
  if (!offset) {
    fail(ErrorCode::out_of_memory,
         std::string(what) + ": symmetric heap exhausted: requested " + std::to_string(bytes) +
             " bytes (align " + std::to_string(align) + "), free " +
             std::to_string(heap_->free_bytes()) + " bytes, largest free block " +
             std::to_string(heap_->largest_free()) + " bytes of a " +
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
  // Every operation this PE handed to the network proxy completes before its free's exchange,
  // and no PE's free returns before every PE's exchange: so a block freed here and allocated
  // again is never written by a proxied put, signal or atomic issued before the free (a kernel
  // that ends without a quiet leaves those in flight once its stream is synchronized).
  if (fabric_) drain_proxy("free");
  check_collective(CollectiveKind::free, "free", offset);
  if (!inside) {
    fail(ErrorCode::invalid_argument, "free: pointer " + hex(ptr) +
                                          " is not in the symmetric heap [" + hex(base()) + ", +" +
                                          std::to_string(options_.heap_size) + ")");
  }
  if (!heap_->release(offset)) {
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
  const std::optional<Allocator::Block> block = heap_->block_containing(offset);
  const std::string range =
      "[heap offset " + std::to_string(offset) + ", +" + std::to_string(bytes) + " bytes)";
  if (!block) {
    fail(ErrorCode::invalid_argument,
         std::string(what) + ": " + range +
             " is not inside any live allocation of the symmetric heap (freed, or never "
             "allocated)");
  }
  if (bytes > block->bytes - (offset - block->offset)) {
    fail(ErrorCode::invalid_argument,
         std::string(what) + ": " + range + " runs past the end of its allocation #" +
             std::to_string(block->index) + " [offset " + std::to_string(block->offset) + ", +" +
             std::to_string(block->bytes) + " bytes) by " +
             std::to_string(offset + bytes - (block->offset + block->bytes)) + " bytes");
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

}  // namespace tessera::detail
