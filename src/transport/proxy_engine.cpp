// The proxy engine (DESIGN §6): the thread that drains this PE's descriptor ring
// (tessera/device/proxy_wire.hpp) into operations on the libfabric endpoint (fabric_endpoint.hpp)
// and keeps polling the completion queue for the PE's whole life, so peers' operations on this
// PE's heap make progress on manual-progress providers. See fabric.hpp.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/failure_code.hpp"
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
struct Op {
  FabricOpContext fi;
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

class ProxyTransport final : public FabricTransport {
 public:
  explicit ProxyTransport(const FabricRequest& r)
      : pe_(r.pe),
        timeout_(r.timeout),
        log_(r.log),
        placement_(r.placement),
        ring_(r.ring),
        producer_(r.ring, r.pe, r.timeout,
                  reinterpret_cast<const std::uint64_t*>(r.segment + r.control_offset) +
                      device::Context::kAbortWord),
        bounds_{r.n_pes, r.heap_bytes, r.control_offset, r.control_bytes},
        endpoint_(r.bootstrap, r.pe, r.n_pes, r.provider, r.segment, r.segment_bytes, &r.placement,
                  heap_registration(r.memory, r.device)) {
    n_slots_ = device::ProxyChannel::slots_for(r.ring_bytes);
    ring_->n_slots = n_slots_;
    for (std::uint32_t i = 0; i < n_slots_; ++i) ring_->slots()[i].seq = device::proxy_slot_free(i);
    ops_ = std::make_unique<Op[]>(n_slots_);
    block_on_cq_ = endpoint_.cq_waits();
    done_.assign(n_slots_, 0);
    if (endpoint_.mr_local()) {
      ops_mr_ =
          endpoint_.register_region(ops_.get(), sizeof(Op) * n_slots_, 2, endpoint_.mr_endpoint());
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
                                    << n_slots_ << " ring slots");
    std::atomic_thread_fence(std::memory_order_release);
    thread_ = std::thread([this] { run(); });
  }

  ~ProxyTransport() override { stop(); }

  std::string provider() const override { return endpoint_.provider(); }
  std::string nic() const override { return endpoint_.nic(); }

  void drain() override {
    const std::uint64_t end = platform::atomic_load(&ring_->reserve, Sem::acquire, Scope::system);
    try {
      device::detail::bounded_wait(
          producer_.watch(), "drain",
          [&] {
            throw_failure();
            return platform::atomic_load(&ring_->completed, Sem::acquire, Scope::system) >= end ||
                   !thread_.joinable();
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

  void stop() noexcept override {
    stop_.store(true, std::memory_order_release);
    if (thread_.joinable()) thread_.join();
    // Nothing runs any more: registrations of local buffers go before the endpoint.
    for (std::uint32_t i = 0; i < n_slots_; ++i) ops_[i].local_mr.reset();
    ops_mr_.reset();
  }

 private:
  void throw_failure() const {
    const std::uint32_t f = platform::atomic_load(&ring_->failure, Sem::acquire, Scope::system);
    if (f == 0) return;
    const auto code = static_cast<device::FailureCode>(f - 1);
    throw Error(detail::error_code(code), pe_, ring_->message);
  }

  // Records the first failure for device code and host calls; the proxy issues nothing more.
  void fail(device::FailureCode code, const std::string& message) {
    if (failed_) return;
    failed_ = true;
    TESSERA_LOG(log_, warn, "fabric proxy: " << message);
    const std::size_t n = std::min(message.size(), sizeof(ring_->message) - 1);
    std::memcpy(ring_->message, message.data(), n);
    ring_->message[n] = '\0';
    platform::atomic_store(&ring_->failure, static_cast<std::uint32_t>(code) + 1, Sem::release,
                           Scope::system);
  }

  // Polls the CQ and the ring until stopped, waiting between polls as ProxyIdlePolicy says.
  void run() {
    bind_thread(placement_);
    std::uint32_t turns = 0;
    auto last_work = Clock::now();
    bool cold = false;
    while (!stop_.load(std::memory_order_acquire)) {
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
    for (std::uint64_t t = completed_; t < next_; ++t) {
      const Op& op = ops_[t % n_slots_];
      if (done_[t % n_slots_] != 0 || now - op.started <= limit) continue;
      fail(device::FailureCode::peer_lost,
           "PeerLost: PE " + std::to_string(op.d.pe) + " did not complete a " + to_string(op.d.op) +
               " from PE " + std::to_string(pe_) + " within " + std::to_string(limit.count()) +
               " ms: its endpoint is gone or unreachable");
      return;
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

  // Starts ready descriptors in ticket order; true when it did anything.
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
    for (;;) {
      // A slot's in-flight record is reused only once the completed prefix passed its last use.
      if (next_ >= completed_ + n_slots_) return busy;
      ProxyDescriptor* slot = &ring_->slots()[next_ % n_slots_];
      if (platform::atomic_load(&slot->seq, Sem::acquire, Scope::system) !=
          device::proxy_slot_published(next_))
        return busy;
      const ProxyDescriptor& d = *slot;
      if (device::proxy_waits_for_earlier(d) && outstanding_ > 0) return busy;
      Op& op = ops_[next_ % n_slots_];
      op.ticket = next_;
      op.d = d;
      op.stage = 0;
      op.sent = 0;
      op.result = 0;
      op.started = Clock::now();
      ++next_;
      ++outstanding_;
      busy = true;
      const std::string bad = validate_descriptor(op.d, bounds_);
      if (!bad.empty()) {
        fail(device::FailureCode::invalid_argument,
             "network proxy of PE " + std::to_string(pe_) + " rejected a descriptor: " + bad);
        return busy;
      }
      if (op.d.pe == pe_ && op.d.op != ProxyOp::fence) {
        fail(device::FailureCode::invalid_argument, "network proxy of PE " + std::to_string(pe_) +
                                                        ": a descriptor targets this PE itself");
        return busy;
      }
      if (op.d.op == ProxyOp::fence) {
        complete(op);
        continue;
      }
      if (!prepare_local(op)) return busy;
      const int rc = post(op);
      if (FabricEndpoint::again(rc)) {
        retry_.push_back(&op);
        return busy;
      }
      if (rc != 0) return busy;
    }
  }

  // FI_MR_LOCAL: registers a put/get buffer that is not in the heap.
  bool prepare_local(Op& op) {
    op.local_mr.reset();
    op.local_desc = nullptr;
    if (!endpoint_.mr_local() || op.d.bytes == 0) return true;
    const void* local = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(op.d.local));
    op.local_desc = endpoint_.local_desc(local, op.d.bytes);
    if (op.local_desc != nullptr) return true;
    try {
      op.local_mr =
          endpoint_.register_region(const_cast<void*>(local), op.d.bytes, 3 + op.ticket, false);
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
        rc = endpoint_.read(&op.fi, local, op.chunk, op.local_desc, d.pe, offset);
      } else {
        rc = endpoint_.write(&op.fi, local, op.chunk, op.local_desc, d.pe, offset);
      }
    } else if (d.op == ProxyOp::put_signal || d.op == ProxyOp::signal) {
      op.operand = d.value;
      const ProxyAmo amo =
          device::proxy_signal_op(d) == device::SignalOp::add ? ProxyAmo::add : ProxyAmo::store;
      rc = endpoint_.atomic(&op.fi, &op.operand, ops_desc_, d.pe, d.signal_offset, ProxyWord::u64,
                            amo);
    } else {
      op.operand = d.value;
      op.compare = d.compare;
      if (d.op == ProxyOp::atomic) {
        rc = endpoint_.atomic(&op.fi, &op.operand, ops_desc_, d.pe, d.remote_offset, d.word, d.amo);
      } else if (d.op == ProxyOp::fetch_atomic) {
        rc = endpoint_.fetch_atomic(&op.fi, &op.operand, &op.result, ops_desc_, d.pe,
                                    d.remote_offset, d.word, d.amo);
      } else {
        rc = endpoint_.compare_atomic(&op.fi, &op.operand, &op.compare, &op.result, ops_desc_, d.pe,
                                      d.remote_offset, d.word);
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
    ProxyDescriptor* slot = &ring_->slots()[op.ticket % n_slots_];
    op.local_mr.reset();
    if ((op.d.flags & device::kProxyCollect) != 0) {
      platform::atomic_store(&slot->value, device::proxy_result_bits(op.d.word, op.result),
                             Sem::relaxed, Scope::system);
      platform::atomic_store(&slot->seq, device::proxy_slot_result(op.ticket), Sem::release,
                             Scope::system);
    } else {
      platform::atomic_store(&slot->seq, device::proxy_slot_next_lap(op.ticket, n_slots_),
                             Sem::release, Scope::system);
    }
    done_[op.ticket % n_slots_] = 1;
    --outstanding_;
  }

  void publish() {
    const std::uint64_t before = completed_;
    while (completed_ < next_ && done_[completed_ % n_slots_] != 0) {
      done_[completed_ % n_slots_] = 0;
      ++completed_;
    }
    if (completed_ != before)
      platform::atomic_store(&ring_->completed, completed_, Sem::release, Scope::system);
  }

  int pe_;
  Timeout timeout_;
  Logger log_;
  Placement placement_;
  device::ProxyChannel* ring_;
  ProxyHostProducer producer_;  // host calls' descriptors (Runtime::put/get)
  ProxyBounds bounds_;
  FabricEndpoint endpoint_;
  std::uint32_t n_slots_ = 0;
  std::unique_ptr<Op[]> ops_;
  std::unique_ptr<FabricRegion> ops_mr_;
  void* ops_desc_ = nullptr;
  std::vector<std::uint8_t> done_;
  std::deque<Op*> retry_;
  std::uint64_t next_ = 0;       // next ticket to start
  std::uint64_t completed_ = 0;  // tickets below it are complete
  std::uint64_t outstanding_ = 0;
  bool failed_ = false;
  bool block_on_cq_ = false;  // an idle proxy waits on the CQ's wait object (Endpoint::cq_waits)
  std::atomic<bool> stop_{false};
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
