// The proxy engine (DESIGN §6): the thread that drains this PE's descriptor ring
// (tessera/device/proxy_wire.hpp) into operations on the libfabric endpoint (fabric_endpoint.hpp)
// and keeps polling the completion queue for the PE's whole life, so peers' operations on this
// PE's heap make progress on manual-progress providers. See fabric.hpp.
//
// Two producer lanes (issue 18 item 2). A lane is a ProxyChannel of its own: its `reserve`
// counter, its slots, its `completed` word. The device lane is the ring the runtime allocated
// (pinned host memory mapped into the GPU on GPU backends): only device code takes tickets there.
// The host lane is ordinary host memory owned here: only host threads (Runtime::put/get through
// ProxyHostProducer) take tickets there. So no word is ever the target of read-modify-writes by
// both the CPU and the GPU, which PCIe hosts without hostNativeAtomicSupported do not make atomic;
// the proxy itself only loads and stores. Ordering between the lanes is the fences' (a fenced
// descriptor of either lane starts once every started descriptor of both lanes completed) and
// the host calls' own (each waits for its descriptor before returning).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/failure_code.hpp"
#include "runtime/proxy_ring.hpp"
#include "tessera/error.hpp"
#include "transport/descriptor.hpp"
#include "transport/fabric.hpp"
#include "transport/fabric_endpoint.hpp"
#include "transport/proxy_host_producer.hpp"
#include "transport/proxy_idle.hpp"

namespace tessera::detail {
namespace {

namespace platform = device::platform;
using device::Scope;
using device::Sem;

using device::ProxyAmo;
using device::ProxyDescriptor;
using device::ProxyOp;
using device::ProxyWord;
using Clock = std::chrono::steady_clock;

constexpr int kFlushStage = 2;  // Op::stage of the atomic read that confirms delivery

// One descriptor in flight. `fi` comes first: providers with FI_CONTEXT mode own it while the
// operation runs, and completions hand its address back.
struct Lane;
struct Op {
  FabricOpContext fi;
  Lane* lane = nullptr;  // the lane whose ticket this is
  std::uint64_t ticket = 0;
  ProxyDescriptor d{};
  int stage = 0;            // put_signal: 0 = data, 1 = signal; kFlushStage: delivery check
  std::uint64_t sent = 0;   // bytes of d.bytes posted and completed so far
  std::uint64_t chunk = 0;  // bytes of the chunk in flight
  std::uint64_t operand = 0;
  std::uint64_t compare = 0;
  std::uint64_t result = 0;
  Clock::time_point started;               // when the proxy took it from the ring
  std::unique_ptr<FabricRegion> local_mr;  // FI_MR_LOCAL registration of a buffer outside the heap
  void* local_desc = nullptr;
};

// One producer lane and the proxy's progress through it.
struct Lane {
  device::ProxyChannel* ch = nullptr;
  std::uint32_t n_slots = 0;
  Op* ops = nullptr;               // n_slots in-flight records, slot t % n_slots for ticket t
  std::vector<std::uint8_t> done;  // per slot: its ticket completed, `completed` not yet past it
  std::uint64_t next = 0;          // next ticket to start
  std::uint64_t completed = 0;     // tickets below it are complete
  const char* name = "";           // "device", "host"
};

// The host lane's slots: host calls wait for their own descriptor, so this bounds how many host
// threads have one in flight at once (a further thread waits, bounded, for a free slot).
constexpr std::uint32_t kHostLaneSlots = 64;

class ProxyTransport final : public FabricTransport {
 public:
  explicit ProxyTransport(const FabricRequest& r)
      : pe_(r.pe),
        timeout_(r.timeout),
        log_(r.log),
        placement_(r.placement),
        ring_(r.ring),
        host_lane_(make_host_proxy_ring(device::ProxyChannel::kHeaderBytes +
                                        kHostLaneSlots * sizeof(ProxyDescriptor))),
        producer_(static_cast<device::ProxyChannel*>(host_lane_.host), r.pe, r.timeout,
                  reinterpret_cast<const std::uint64_t*>(r.control) + device::Context::kAbortWord),
        bounds_{r.n_pes, r.heap_bytes, r.control_offset, r.control_bytes},
        heap_reg_(heap_registration(r.memory, r.device)),
        endpoint_(r.bootstrap, r.pe, r.n_pes, r.provider, r.segment, r.control,
                  SegmentRegions{r.heap_bytes, r.control_offset, r.control_bytes}, &r.placement,
                  heap_reg_) {
    provider_mr_.mr_local = endpoint_.mr_local();
    provider_mr_.mr_hmem = endpoint_.mr_hmem();
    provider_mr_.hmem = endpoint_.hmem();
    provider_mr_.name = endpoint_.provider();
    lanes_[0].ch = ring_;
    lanes_[0].n_slots = device::ProxyChannel::slots_for(r.ring_bytes);
    lanes_[0].name = "device";
    lanes_[1].ch = static_cast<device::ProxyChannel*>(host_lane_.host);
    lanes_[1].n_slots = kHostLaneSlots;
    lanes_[1].name = "host";
    n_ops_ = lanes_[0].n_slots + lanes_[1].n_slots;
    ops_ = std::make_unique<Op[]>(n_ops_);
    Op* ops = ops_.get();
    for (Lane& lane : lanes_) {
      lane.ch->n_slots = lane.n_slots;
      for (std::uint32_t i = 0; i < lane.n_slots; ++i)
        lane.ch->slots()[i].seq = device::proxy_slot_free(i);
      lane.ops = ops;
      ops += lane.n_slots;
      lane.done.assign(lane.n_slots, 0);
    }
    block_on_cq_ = endpoint_.cq_waits();
    if (endpoint_.mr_local()) {
      ops_mr_ =
          endpoint_.register_region(ops_.get(), sizeof(Op) * n_ops_, 2, endpoint_.mr_endpoint());
      ops_desc_ = ops_mr_->desc();
    }
    if (!endpoint_.delivery_complete() && endpoint_.provider() != "shm") {
      TESSERA_LOG(log_, warn,
                  "fabric: provider " << endpoint_.provider()
                                      << " does not offer FI_DELIVERY_COMPLETE; put_signal "
                                         "signals after the write's transmit completion");
    }
    TESSERA_LOG(log_, info,
                "fabric: provider " << endpoint_.provider() << ", domain " << nic() << ", "
                                    << lanes_[0].n_slots << " device and " << lanes_[1].n_slots
                                    << " host ring slots");
    std::atomic_thread_fence(std::memory_order_release);
    thread_ = std::thread([this] { run(); });
  }

  ~ProxyTransport() override { stop(); }

  std::string provider() const override { return endpoint_.provider(); }
  std::string nic() const override { return endpoint_.nic(); }

  // Every descriptor of either lane pushed before the call (loads only: the device lane's
  // counters are read, never modified, by host code).
  void drain() override {
    std::uint64_t end[2];
    for (int i = 0; i < 2; ++i)
      end[i] = platform::atomic_load(&lanes_[i].ch->reserve, Sem::acquire, Scope::system);
    try {
      device::detail::bounded_wait(
          producer_.watch(), "drain",
          [&] {
            throw_failure();
            if (!thread_.joinable()) return true;
            for (int i = 0; i < 2; ++i) {
              if (platform::atomic_load(&lanes_[i].ch->completed, Sem::acquire, Scope::system) <
                  end[i])
                return false;
            }
            return true;
          },
          [&] {
            throw Error(ErrorCode::timeout, pe_,
                        "the network proxy did not complete its operations within " +
                            std::to_string(timeout_.count()) + " ms");
          });
    } catch (const device::Failure& f) {
      throw Error(detail::error_code(f.code()), pe_, f.what());
    }
  }

  void remote_copy(ProxyOp op, int pe, std::uint64_t remote_offset, void* local,
                   std::size_t bytes) override {
    producer_.copy(op, pe, remote_offset, local, bytes,
                   op == ProxyOp::get ? "Runtime::get" : "Runtime::put");
  }

  void register_static_data(Bootstrap& bootstrap, char* base, std::size_t bytes) override {
    std::uint64_t key = 0;
    on_proxy_thread([&] { key = endpoint_.register_static_data(base, bytes); });
    struct Card {
      std::uint64_t key, base;
    };
    std::vector<Card> cards(static_cast<std::size_t>(bounds_.n_pes));
    cards[static_cast<std::size_t>(pe_)] = {key, reinterpret_cast<std::uintptr_t>(base)};
    bootstrap.allgather(cards.data(), sizeof(Card));
    on_proxy_thread([&] {
      for (int p = 0; p < bounds_.n_pes; ++p) {
        const Card& c = cards[static_cast<std::size_t>(p)];
        endpoint_.set_static_peer(p, c.key, c.base);
      }
      bounds_.static_bytes = bytes;
    });
    // No PE issues a static data descriptor before every PE registered its segment.
    bootstrap.barrier();
  }

  void stop() noexcept override {
    stop_.store(true, std::memory_order_release);
    if (thread_.joinable()) thread_.join();
    // Nothing runs any more: registrations of local buffers go before the endpoint.
    for (std::uint32_t i = 0; i < n_ops_; ++i) ops_[i].local_mr.reset();
    ops_mr_.reset();
  }

 private:
  void throw_failure() const {
    const std::uint32_t f = platform::atomic_load(&ring_->failure, Sem::acquire, Scope::system);
    if (f == 0) return;
    const auto code = static_cast<device::FailureCode>(f - 1);
    throw Error(detail::error_code(code), pe_, ring_->message);
  }

  // Records the first failure, in both lanes, for device code and host calls; the proxy issues
  // nothing more.
  void fail(device::FailureCode code, const std::string& message) {
    if (failed_) return;
    failed_ = true;
    TESSERA_LOG(log_, warn, "fabric proxy: " << message);
    for (Lane& lane : lanes_) {
      device::ProxyChannel* ch = lane.ch;
      const std::size_t n = std::min(message.size(), sizeof(ch->message) - 1);
      std::memcpy(ch->message, message.data(), n);
      ch->message[n] = '\0';
      platform::atomic_store(&ch->failure, static_cast<std::uint32_t>(code) + 1, Sem::release,
                             Scope::system);
    }
  }

  // Runs `task` on the proxy thread, which alone uses the endpoint (FI_THREAD_DOMAIN), and
  // returns once it ran; inline when the thread no longer runs. Bounded by the job's timeout.
  // Rethrows what the task threw.
  void on_proxy_thread(const std::function<void()>& task) {
    std::unique_lock<std::mutex> lock(task_mutex_);
    if (!thread_.joinable()) {
      task();
      return;
    }
    std::exception_ptr error;
    bool done = false;
    task_ = [&] {
      try {
        task();
      } catch (...) {
        error = std::current_exception();
      }
      done = true;
    };
    task_pending_.store(true, std::memory_order_release);
    if (timeout_.count() == 0) {
      task_done_.wait(lock, [&] { return done; });
    } else if (!task_done_.wait_for(lock, timeout_, [&] { return done; })) {
      // The thread may still take the request later: leave it a task that does nothing.
      task_ = [] {};
      throw Error(ErrorCode::timeout, pe_,
                  "the network proxy thread did not take a request within " +
                      std::to_string(timeout_.count()) + " ms");
    }
    if (error) std::rethrow_exception(error);
  }

  // The proxy thread's side of on_proxy_thread.
  void run_task() {
    std::lock_guard<std::mutex> lock(task_mutex_);
    task_pending_.store(false, std::memory_order_relaxed);
    if (task_) task_();
    task_ = nullptr;
    task_done_.notify_all();
  }

  // Polls the CQ and the ring until stopped, waiting between polls as ProxyIdlePolicy says.
  void run() {
    bind_thread(placement_);
    std::uint32_t turns = 0;
    auto last_work = Clock::now();
    bool cold = false;
    while (!stop_.load(std::memory_order_acquire)) {
      if (task_pending_.load(std::memory_order_acquire)) run_task();
      // Cold: block on the CQ where the provider can wake us (kColdNap bounds the ring's wait).
      bool busy = poll(cold && block_on_cq_);
      if (!failed_) busy = issue() || busy;
      publish();
      if ((++turns & 1023u) == 0 && !failed_) check_ages();
      cold = false;
      if (busy) {
        last_work = Clock::now();
        continue;
      }
      switch (ProxyIdlePolicy::next(Clock::now() - last_work, outstanding_ > 0)) {
        case ProxyWait::spin:
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
          break;
        case ProxyWait::yield:
          std::this_thread::yield();
          break;
        case ProxyWait::warm_nap:
          std::this_thread::sleep_for(ProxyIdlePolicy::kWarmNap);
          break;
        case ProxyWait::cold_nap:
          if (block_on_cq_) {
            cold = true;
          } else {
            std::this_thread::sleep_for(ProxyIdlePolicy::kColdNap);
          }
          break;
      }
    }
  }

  // An operation the NIC has not completed within half the job's timeout means its target is
  // gone (a vanished tcp peer is retried, not refused): PeerLost naming it, before the waiting
  // device code's own timeout.
  void check_ages() {
    if (timeout_.count() == 0 || outstanding_ == 0) return;
    const auto limit = std::max<Timeout>(timeout_ / 2, Timeout(1000));
    const auto now = Clock::now();
    for (const Lane& lane : lanes_) {
      for (std::uint64_t t = lane.completed; t < lane.next; ++t) {
        const Op& op = lane.ops[t % lane.n_slots];
        if (lane.done[t % lane.n_slots] != 0 || now - op.started <= limit) continue;
        fail(device::FailureCode::peer_lost,
             "PeerLost: PE " + std::to_string(op.d.pe) + " did not complete a " +
                 to_string(op.d.op) + " from PE " + std::to_string(pe_) + " within " +
                 std::to_string(limit.count()) + " ms: its endpoint is gone or unreachable");
        return;
      }
    }
  }

  // Reads completions (which also drives the provider's progress); true when there were any.
  // `block`: wait up to ProxyIdlePolicy::kColdNap on the CQ's wait object for one first.
  bool poll(bool block) {
    constexpr int kBlockMs =
        std::chrono::duration_cast<std::chrono::milliseconds>(ProxyIdlePolicy::kColdNap).count();
    static_assert(kBlockMs >= 1, "a blocking CQ read counts milliseconds");
    void* contexts[32];
    const FabricCompletions c = endpoint_.read_completions(contexts, 32, block ? kBlockMs : 0);
    switch (c.kind) {
      case FabricCompletions::done:
        for (int i = 0; i < c.count; ++i) on_completion(*static_cast<Op*>(contexts[i]));
        return true;
      case FabricCompletions::none:
        return false;
      case FabricCompletions::wait_failed:
        // The wait object does not work as hoped: poll and nap from now on instead.
        TESSERA_LOG(log_, info,
                    "fabric: fi_cq_sread returned " << c.text << "; the idle proxy naps instead");
        block_on_cq_ = false;
        return false;
      case FabricCompletions::op_failed: {
        const Op* op = static_cast<const Op*>(c.failed_context);
        const int target = op != nullptr ? op->d.pe : -1;
        const std::string what = op != nullptr ? to_string(op->d.op) : "operation";
        if (c.connection_lost) {
          fail(device::FailureCode::peer_lost, "PeerLost: PE " + std::to_string(target) +
                                                   " is unreachable: " + what + " from PE " +
                                                   std::to_string(pe_) + " failed with " + c.text);
        } else {
          fail(device::FailureCode::transport, what + " from PE " + std::to_string(pe_) +
                                                   " to PE " + std::to_string(target) +
                                                   " failed: " + c.text);
        }
        return true;
      }
      case FabricCompletions::read_failed:
        fail(device::FailureCode::transport, c.text);
        return true;
    }
    return true;
  }

  // The descriptor at the head of `lane` when it is published, else null.
  static const ProxyDescriptor* head(const Lane& lane) {
    const ProxyDescriptor* slot = &lane.ch->slots()[lane.next % lane.n_slots];
    if (platform::atomic_load(&slot->seq, Sem::acquire, Scope::system) !=
        device::proxy_slot_published(lane.next))
      return nullptr;
    return slot;
  }

  // Starts ready descriptors, each lane in ticket order, the lanes in turn; true when it did
  // anything. While a lane's head waits for earlier descriptors, no lane starts anything, so the
  // other lane's traffic cannot keep that fence waiting forever.
  bool issue() {
    bool busy = false;
    while (!retry_.empty()) {
      Op* op = retry_.front();
      const int rc = post(*op);
      if (FabricEndpoint::again(rc)) return busy;
      retry_.pop_front();
      busy = true;
      if (rc != 0) return busy;
    }
    if (outstanding_ > 0) {
      for (const Lane& lane : lanes_) {
        const ProxyDescriptor* d = head(lane);
        if (d != nullptr && lane.next < lane.completed + lane.n_slots &&
            device::proxy_waits_for_earlier(*d))
          return busy;
      }
    }
    // Alternate which lane goes first, so neither waits behind a full window of the other's.
    first_lane_ ^= 1u;
    for (unsigned k = 0; k < 2; ++k) {
      Lane& lane = lanes_[(first_lane_ + k) & 1u];
      if (!issue_lane(lane, busy)) return busy;
    }
    return busy;
  }

  // Starts `lane`'s ready descriptors; false when the proxy must stop issuing this turn (a fence
  // waits, the provider is busy, or a failure).
  bool issue_lane(Lane& lane, bool& busy) {
    for (;;) {
      // A slot's in-flight record is reused only once the completed prefix passed its last use.
      if (lane.next >= lane.completed + lane.n_slots) return true;
      const ProxyDescriptor* slot = head(lane);
      if (slot == nullptr) return true;
      const ProxyDescriptor& d = *slot;
      if (device::proxy_waits_for_earlier(d) && outstanding_ > 0) return false;
      Op& op = lane.ops[lane.next % lane.n_slots];
      op.lane = &lane;
      op.ticket = lane.next;
      op.d = d;
      op.stage = 0;
      op.sent = 0;
      op.result = 0;
      op.started = Clock::now();
      ++lane.next;
      ++outstanding_;
      busy = true;
      const std::string bad = validate_descriptor(op.d, bounds_);
      if (!bad.empty()) {
        fail(device::FailureCode::invalid_argument, "network proxy of PE " + std::to_string(pe_) +
                                                        " rejected a descriptor: " + bad + " (" +
                                                        lane.name + " lane)");
        return false;
      }
      if (op.d.pe == pe_ && op.d.op != ProxyOp::fence) {
        fail(device::FailureCode::invalid_argument, "network proxy of PE " + std::to_string(pe_) +
                                                        ": a descriptor targets this PE itself");
        return false;
      }
      if (op.d.op == ProxyOp::fence) {
        complete(op);
        continue;
      }
      if (!prepare_local(op)) return false;
      const int rc = post(op);
      if (FabricEndpoint::again(rc)) {
        retry_.push_back(&op);
        return false;
      }
      if (rc != 0) return false;
    }
  }

  // The descriptor of a put/get's local buffer, registering it when the provider asks
  // (local_registration: FI_MR_LOCAL for any buffer, FI_MR_HMEM for device memory).
  bool prepare_local(Op& op) {
    op.local_mr.reset();
    op.local_desc = nullptr;
    if (op.d.bytes == 0 || (!endpoint_.mr_local() && !endpoint_.mr_hmem())) return true;
    void* local = reinterpret_cast<void*>(static_cast<std::uintptr_t>(op.d.local));
    void* heap_desc = endpoint_.local_desc(local, op.d.bytes);
    int device = -1;
    // Only a GPU job has device buffers; a host job never asks the GPU runtime.
    const HeapMemory memory = heap_reg_.hmem && heap_desc == nullptr
                                  ? local_buffer_memory(local, &device)
                                  : HeapMemory::host;
    const LocalRegistration r = local_registration(op.d.bytes, heap_desc != nullptr, memory, device,
                                                   heap_reg_, provider_mr_);
    // Distinct keys per lane and ticket (4 + 2 * ticket + lane), clear of the heap's (0, 1),
    // ops_' (2) and the static data's (3).
    const std::uint64_t key = 4 + 2 * op.ticket + (op.lane == &lanes_[1] ? 1 : 0);
    try {
      switch (r.action) {
        case LocalRegistration::none:
          return true;
        case LocalRegistration::heap:
          op.local_desc = heap_desc;
          return true;
        case LocalRegistration::register_host:
          op.local_mr = endpoint_.register_region(local, op.d.bytes, key, false);
          break;
        case LocalRegistration::register_hmem:
          op.local_mr = endpoint_.register_region(local, op.d.bytes, key, false, r.where);
          break;
        case LocalRegistration::refuse:
          fail(device::FailureCode::invalid_argument, r.error);
          return false;
      }
      op.local_desc = op.local_mr->desc();
    } catch (const Error& e) {
      fail(device::FailureCode::transport, e.message());
      return false;
    }
    return true;
  }

  // Posts the current step of `op`: 0, a value FabricEndpoint::again answers true for (retry
  // later), or a failure (recorded).
  int post(Op& op) {
    const ProxyDescriptor& d = op.d;
    const RemoteRegion region =
        (d.flags & device::kProxyStaticData) != 0 ? RemoteRegion::static_data : RemoteRegion::heap;
    int rc = 0;
    const bool data_stage = (d.op == ProxyOp::put || d.op == ProxyOp::get ||
                             (d.op == ProxyOp::put_signal && op.stage == 0));
    if (op.stage == kFlushStage) {
      rc = endpoint_.fetch_atomic(&op.fi, &op.operand, &op.result, ops_desc_, d.pe, 0,
                                  ProxyWord::u64, ProxyAmo::load);
    } else if (data_stage) {
      op.chunk = std::min<std::uint64_t>(d.bytes - op.sent, endpoint_.max_msg());
      char* local = reinterpret_cast<char*>(static_cast<std::uintptr_t>(d.local)) + op.sent;
      const std::uint64_t offset = d.remote_offset + op.sent;
      if (d.op == ProxyOp::get) {
        rc = endpoint_.read(&op.fi, local, op.chunk, op.local_desc, d.pe, offset, region);
      } else {
        rc = endpoint_.write(&op.fi, local, op.chunk, op.local_desc, d.pe, offset, region);
      }
    } else if (d.op == ProxyOp::put_signal || d.op == ProxyOp::signal) {
      op.operand = d.value;
      const ProxyAmo amo =
          device::proxy_signal_op(d) == device::SignalOp::add ? ProxyAmo::add : ProxyAmo::store;
      rc = endpoint_.atomic(&op.fi, &op.operand, ops_desc_, d.pe, d.signal_offset, ProxyWord::u64,
                            amo, region);
    } else {
      op.operand = d.value;
      op.compare = d.compare;
      if (d.op == ProxyOp::atomic) {
        rc = endpoint_.atomic(&op.fi, &op.operand, ops_desc_, d.pe, d.remote_offset, d.word, d.amo,
                              region);
      } else if (d.op == ProxyOp::fetch_atomic) {
        rc = endpoint_.fetch_atomic(&op.fi, &op.operand, &op.result, ops_desc_, d.pe,
                                    d.remote_offset, d.word, d.amo, region);
      } else {
        rc = endpoint_.compare_atomic(&op.fi, &op.operand, &op.compare, &op.result, ops_desc_, d.pe,
                                      d.remote_offset, d.word, region);
      }
    }
    if (rc == 0 || FabricEndpoint::again(rc)) return rc;
    const bool lost = FabricEndpoint::connection_lost(rc);
    const std::string text = std::string(to_string(d.op)) + " from PE " + std::to_string(pe_) +
                             " to PE " + std::to_string(d.pe) + ": posting failed with " +
                             FabricEndpoint::error_text(rc);
    fail(lost ? device::FailureCode::peer_lost : device::FailureCode::transport,
         lost ? "PeerLost: PE " + std::to_string(d.pe) + " is unreachable: " + text : text);
    return rc;
  }

  void on_completion(Op& op) {
    const ProxyDescriptor& d = op.d;
    if (op.stage == kFlushStage) {
      complete(op);
      return;
    }
    const bool data_stage = (d.op == ProxyOp::put || d.op == ProxyOp::get ||
                             (d.op == ProxyOp::put_signal && op.stage == 0));
    if (data_stage) {
      op.sent += op.chunk;
      const bool more = op.sent < d.bytes;
      if (!more && d.op == ProxyOp::put_signal) op.stage = 1;
      if (more || d.op == ProxyOp::put_signal) {
        const int rc = post(op);
        if (FabricEndpoint::again(rc)) retry_.push_back(&op);
        return;
      }
    }
    // Without delivery completion, a write or atomic may still sit in the target's queue: an
    // atomic read behind it (executed by the target, which runs a peer's commands in order)
    // completes only once it landed. (A plain read may be served without the target, by CMA.)
    if (!endpoint_.delivery_complete() && d.op != ProxyOp::get && d.op != ProxyOp::fetch_atomic &&
        d.op != ProxyOp::compare_atomic) {
      op.stage = kFlushStage;
      const int rc = post(op);
      if (FabricEndpoint::again(rc)) retry_.push_back(&op);
      return;
    }
    complete(op);
  }

  void complete(Op& op) {
    Lane& lane = *op.lane;
    ProxyDescriptor* slot = &lane.ch->slots()[op.ticket % lane.n_slots];
    op.local_mr.reset();
    if ((op.d.flags & device::kProxyCollect) != 0) {
      platform::atomic_store(&slot->value, device::proxy_result_bits(op.d.word, op.result),
                             Sem::relaxed, Scope::system);
      platform::atomic_store(&slot->seq, device::proxy_slot_result(op.ticket), Sem::release,
                             Scope::system);
    } else {
      platform::atomic_store(&slot->seq, device::proxy_slot_next_lap(op.ticket, lane.n_slots),
                             Sem::release, Scope::system);
    }
    lane.done[op.ticket % lane.n_slots] = 1;
    --outstanding_;
  }

  void publish() {
    for (Lane& lane : lanes_) {
      const std::uint64_t before = lane.completed;
      while (lane.completed < lane.next && lane.done[lane.completed % lane.n_slots] != 0) {
        lane.done[lane.completed % lane.n_slots] = 0;
        ++lane.completed;
      }
      if (lane.completed != before)
        platform::atomic_store(&lane.ch->completed, lane.completed, Sem::release, Scope::system);
    }
  }

  int pe_;
  Timeout timeout_;
  Logger log_;
  Placement placement_;
  device::ProxyChannel* ring_;  // the device lane's channel (the runtime's ring)
  ProxyRing host_lane_;         // the host lane's memory (ordinary host memory)
  ProxyHostProducer producer_;  // host calls' descriptors (Runtime::put/get), on the host lane
  ProxyBounds bounds_;
  HeapRegistration heap_reg_;  // how the heap is registered (GPU memory: FI_HMEM)
  FabricEndpoint endpoint_;
  ProviderMrMode provider_mr_;  // what the provider's mr_mode asks of local buffers
  Lane lanes_[2];               // [0] device lane, [1] host lane
  unsigned first_lane_ = 0;     // the lane issue() serves first this turn
  std::uint32_t n_ops_ = 0;     // records in ops_: both lanes' slots
  std::unique_ptr<Op[]> ops_;
  std::unique_ptr<FabricRegion> ops_mr_;
  void* ops_desc_ = nullptr;
  std::deque<Op*> retry_;
  std::uint64_t outstanding_ = 0;  // started and not complete, both lanes
  bool failed_ = false;
  bool block_on_cq_ = false;  // an idle proxy waits on the CQ's wait object (Endpoint::cq_waits)
  std::atomic<bool> stop_{false};
  // A request for the proxy thread (on_proxy_thread): guarded by task_mutex_, flagged by
  // task_pending_, its end signalled through task_done_.
  std::mutex task_mutex_;
  std::function<void()> task_;
  std::atomic<bool> task_pending_{false};
  std::condition_variable task_done_;
  std::thread thread_;
};

}  // namespace

bool fabric_available() { return true; }

std::unique_ptr<FabricTransport> make_fabric_transport(const FabricRequest& request) {
  auto transport = std::make_unique<ProxyTransport>(request);
  // No PE issues an operation before every PE has registered its heap.
  request.bootstrap.barrier();
  return transport;
}

}  // namespace tessera::detail
