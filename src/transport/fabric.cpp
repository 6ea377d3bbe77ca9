// libfabric wrapper: the only file that includes <rdma/*.h>. See fabric.hpp.
#include "transport/fabric.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <set>
#include <thread>

#include "runtime/failure_code.hpp"
#include "tessera/error.hpp"
#include "transport/descriptor.hpp"
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

// --- RAII handles ---

struct FidCloser {
  template <class T>
  void operator()(T* p) const {
    if (p != nullptr) fi_close(&p->fid);
  }
};
template <class T>
using Fid = std::unique_ptr<T, FidCloser>;

struct InfoDeleter {
  void operator()(fi_info* p) const { fi_freeinfo(p); }
};
using Info = std::unique_ptr<fi_info, InfoDeleter>;

std::string fi_error(int code) { return fi_strerror(code < 0 ? -code : code); }

[[noreturn]] void fail_setup(int pe, const std::string& what, int code) {
  throw Error(
      ErrorCode::transport, pe,
      "libfabric " + what + " failed: " + fi_error(code) + " (" + std::to_string(code) + ")");
}

constexpr std::uint64_t kMrModes =
    FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;

fi_hmem_iface hmem_iface(HeapMemory memory) {
  switch (memory) {
    case HeapMemory::host:
      return FI_HMEM_SYSTEM;
    case HeapMemory::cuda:
      return FI_HMEM_CUDA;
    case HeapMemory::rocr:
      return FI_HMEM_ROCR;
  }
  return FI_HMEM_SYSTEM;
}

// A heap in GPU memory needs FI_HMEM, and the provider may then ask for its registrations
// (FI_MR_HMEM), which the endpoint makes anyway.
Info make_hints(const std::string& provider, bool delivery_complete, const HeapRegistration& heap) {
  Info hints(fi_allocinfo());
  if (!hints) throw Error(ErrorCode::out_of_memory, -1, "fi_allocinfo failed");
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_RMA | FI_ATOMIC | (heap.hmem ? FI_HMEM : 0);
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = static_cast<int>(kMrModes | (heap.hmem ? FI_MR_HMEM : 0));
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  if (delivery_complete) hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
  if (!provider.empty()) hints->fabric_attr->prov_name = strdup(provider.c_str());
  return hints;
}

// "tcp;ofi_rxm (lo), shm (shm), ..." for every RDM provider fi_getinfo offers, whatever its caps.
std::string offered_providers() {
  Info hints(fi_allocinfo());
  hints->ep_attr->type = FI_EP_RDM;
  fi_info* raw = nullptr;
  if (fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &raw) != 0 || !raw)
    return "none";
  Info all(raw);
  std::set<std::string> seen;
  std::string out;
  for (fi_info* i = raw; i != nullptr; i = i->next) {
    std::string caps;
    if (i->caps & FI_RMA) caps += "RMA";
    if (i->caps & FI_ATOMIC) caps += caps.empty() ? "ATOMIC" : "+ATOMIC";
    if (i->caps & FI_HMEM) caps += caps.empty() ? "HMEM" : "+HMEM";
    std::string line = std::string(i->fabric_attr->prov_name) + " (" + i->domain_attr->name +
                       (caps.empty() ? "" : ", " + caps) + ")";
    if (seen.insert(line).second) out += (out.empty() ? "" : ", ") + line;
  }
  return out;
}

// The libfabric objects of one endpoint with one registered region, whose address, key and base
// every PE learnt. Built collectively.
class Endpoint {
 public:
  struct Peer {
    fi_addr_t addr = FI_ADDR_UNSPEC;
    std::uint64_t key = 0;
    std::uint64_t base = 0;
  };

  Endpoint(Bootstrap& bootstrap, int pe, int n_pes, const std::string& provider, char* region,
           std::size_t region_bytes, const Placement* placement,
           const HeapRegistration& heap = HeapRegistration{})
      : pe_(pe) {
    choose_info(provider, placement, heap);
    fi_info* fi = info_.get();
    mr_local_ = (fi->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    virt_addr_ = (fi->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    const bool prov_key = (fi->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
    const bool mr_endpoint = (fi->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0;
    max_msg_ = fi->ep_attr->max_msg_size == 0
                   ? (std::size_t{1} << 30)
                   : std::min<std::size_t>(fi->ep_attr->max_msg_size, std::size_t{1} << 30);

    fid_fabric* fabric = nullptr;
    check(fi_fabric(fi->fabric_attr, &fabric, nullptr), "fi_fabric");
    fabric_.reset(fabric);
    fid_domain* domain = nullptr;
    check(fi_domain(fabric, fi, &domain, nullptr), "fi_domain");
    domain_.reset(domain);
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_CONTEXT;
    cq_attr.size = 4096;
    fid_cq* cq = nullptr;
    // Over tcp an idle proxy blocks on the CQ's wait object (the sockets), so a peer's data
    // wakes it at once (proxy_idle.hpp); other providers' targets are served by polling.
    if (provider_name().find("tcp") != std::string::npos) {
      cq_attr.wait_obj = FI_WAIT_UNSPEC;
      if (fi_cq_open(domain, &cq_attr, &cq, nullptr) == 0) cq_waits_ = true;
    }
    if (!cq_waits_) {
      cq_attr.wait_obj = FI_WAIT_NONE;
      check(fi_cq_open(domain, &cq_attr, &cq, nullptr), "fi_cq_open");
    }
    cq_.reset(cq);
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    av_attr.count = static_cast<std::size_t>(n_pes);
    fid_av* av = nullptr;
    check(fi_av_open(domain, &av_attr, &av, nullptr), "fi_av_open");
    av_.reset(av);
    fid_ep* ep = nullptr;
    check(fi_endpoint(domain, fi, &ep, nullptr), "fi_endpoint");
    ep_.reset(ep);
    check(fi_ep_bind(ep, &av->fid, 0), "fi_ep_bind(av)");
    check(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
    check(fi_enable(ep), "fi_enable");

    heap_mr_ = register_region(region, region_bytes, prov_key ? 0 : 1, mr_endpoint, heap);
    heap_desc_ = fi_mr_desc(heap_mr_.get());
    region_ = region;
    region_bytes_ = region_bytes;

    struct Card {
      std::uint8_t addr[232];
      std::uint64_t addr_len;
      std::uint64_t key;
      std::uint64_t base;
    };
    std::vector<Card> cards(static_cast<std::size_t>(n_pes));
    Card& mine = cards[static_cast<std::size_t>(pe)];
    std::memset(&mine, 0, sizeof(mine));
    std::size_t len = sizeof(mine.addr);
    check(fi_getname(&ep->fid, mine.addr, &len), "fi_getname");
    mine.addr_len = len;
    mine.key = fi_mr_key(heap_mr_.get());
    mine.base = reinterpret_cast<std::uintptr_t>(region);
    bootstrap.allgather(cards.data(), sizeof(Card));
    peers_.resize(static_cast<std::size_t>(n_pes));
    for (int p = 0; p < n_pes; ++p) {
      const Card& c = cards[static_cast<std::size_t>(p)];
      Peer& peer = peers_[static_cast<std::size_t>(p)];
      const int inserted = fi_av_insert(av, c.addr, 1, &peer.addr, 0, nullptr);
      if (inserted != 1) fail_setup(pe, "fi_av_insert of PE " + std::to_string(p), inserted);
      peer.key = c.key;
      peer.base = virt_addr_ ? c.base : 0;
    }
  }

  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  ~Endpoint() {
    // Registrations go before the endpoint they may be bound to; the rest in reverse order.
    heap_mr_.reset();
    ep_.reset();
    av_.reset();
    cq_.reset();
    domain_.reset();
    fabric_.reset();
  }

  // Registers [p, p + bytes) in the memory `where` says (host memory unless told).
  Fid<fid_mr> register_region(void* p, std::size_t bytes, std::uint64_t key, bool bind_ep,
                              const HeapRegistration& where = HeapRegistration{}) {
    fid_mr* mr = nullptr;
    const std::uint64_t access = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    if (where.hmem) {
      iovec iov{p, bytes};
      fi_mr_attr attr{};
      attr.mr_iov = &iov;
      attr.iov_count = 1;
      attr.access = access;
      attr.requested_key = key;
      attr.iface = hmem_iface(where.iface);
      if (where.iface == HeapMemory::cuda) attr.device.cuda = where.device;
      const int rc = fi_mr_regattr(domain_.get(), &attr, 0, &mr);
      if (rc != 0) {
        fail_setup(pe_,
                   "fi_mr_regattr of the heap in " + describe(where) + " on provider " + provider(),
                   rc);
      }
    } else {
      check(fi_mr_reg(domain_.get(), p, bytes, access, 0, key, 0, &mr, nullptr), "fi_mr_reg");
    }
    Fid<fid_mr> out(mr);
    if (bind_ep) {
      check(fi_mr_bind(mr, &ep_->fid, 0), "fi_mr_bind");
      check(fi_mr_enable(mr), "fi_mr_enable");
    }
    return out;
  }

  // The descriptor of local memory [p, p + bytes): the heap's, or null (no FI_MR_LOCAL).
  void* local_desc(const void* p, std::size_t bytes) const {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto b = reinterpret_cast<std::uintptr_t>(region_);
    if (a >= b && bytes <= region_bytes_ && a - b <= region_bytes_ - bytes) return heap_desc_;
    return nullptr;
  }

  std::uint64_t remote(int pe, std::uint64_t offset) const {
    return peers_[static_cast<std::size_t>(pe)].base + offset;
  }
  const Peer& peer(int pe) const { return peers_[static_cast<std::size_t>(pe)]; }

  fi_info* info() const { return info_.get(); }
  fid_ep* ep() const { return ep_.get(); }
  fid_cq* cq() const { return cq_.get(); }
  // True when the CQ has a wait object (fi_cq_sread blocks until the provider has work).
  bool cq_waits() const { return cq_waits_; }
  bool mr_local() const { return mr_local_; }
  bool delivery_complete() const { return delivery_complete_; }
  std::size_t max_msg() const { return max_msg_; }
  std::string provider() const { return provider_name(); }
  std::string nic() const {
    if (info_->nic != nullptr && info_->nic->device_attr != nullptr &&
        info_->nic->device_attr->name != nullptr)
      return info_->nic->device_attr->name;
    return info_->domain_attr->name;
  }

  void check(int rc, const char* what) const {
    if (rc != 0) fail_setup(pe_, what, rc);
  }

 private:
  std::string provider_name() const { return info_->fabric_attr->prov_name; }

  void choose_info(const std::string& provider, const Placement* placement,
                   const HeapRegistration& heap) {
    fi_info* raw = nullptr;
    delivery_complete_ = true;
    Info hints = make_hints(provider, true, heap);
    int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &raw);
    if (rc != 0 || raw == nullptr) {
      delivery_complete_ = false;
      hints = make_hints(provider, false, heap);
      rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints.get(), &raw);
    }
    if (rc != 0 || raw == nullptr) {
      // A GPU heap needs FI_HMEM: there is no host-staged fallback (it would copy every byte
      // through the proxy thread), so say what is missing and what is offered.
      throw Error(ErrorCode::transport, pe_,
                  std::string("no libfabric provider offers an RDM endpoint with RMA and atomics") +
                      (heap.hmem ? " and FI_HMEM for a heap in " + describe(heap) : "") +
                      (provider.empty() ? std::string()
                                        : " for TESSERA_FABRIC_PROVIDER='" + provider + "'") +
                      " (fi_getinfo: " + fi_error(rc) +
                      "); RDM providers offered: " + offered_providers());
    }
    Info all(raw);
    // The nearest NIC wins; among equals, libfabric's order (best first).
    fi_info* best = raw;
    int best_distance = 2;
    for (fi_info* i = raw; i != nullptr; i = i->next) {
      const std::string name = (i->nic && i->nic->device_attr && i->nic->device_attr->name)
                                   ? i->nic->device_attr->name
                                   : i->domain_attr->name;
      const int d = placement != nullptr ? nic_distance(*placement, name) : 1;
      if (d < best_distance) {
        best = i;
        best_distance = d;
      }
    }
    info_.reset(fi_dupinfo(best));
    // shm (libfabric 1.17) corrupts concurrent atomics under FI_DELIVERY_COMPLETE; it runs each
    // peer's commands in order, so a signal queued after a write still lands after it.
    if (std::string(info_->fabric_attr->prov_name) == "shm") {
      delivery_complete_ = false;
      info_->tx_attr->op_flags &= ~static_cast<std::uint64_t>(FI_DELIVERY_COMPLETE);
    }
  }

  int pe_;
  Info info_;
  bool delivery_complete_ = false;
  bool mr_local_ = false;
  bool virt_addr_ = false;
  bool cq_waits_ = false;
  std::size_t max_msg_ = 0;
  Fid<fid_fabric> fabric_;
  Fid<fid_domain> domain_;
  Fid<fid_cq> cq_;
  Fid<fid_av> av_;
  Fid<fid_ep> ep_;
  Fid<fid_mr> heap_mr_;
  void* heap_desc_ = nullptr;
  char* region_ = nullptr;
  std::size_t region_bytes_ = 0;
  std::vector<Peer> peers_;
};

fi_datatype datatype_of(ProxyWord w) {
  switch (w) {
    case ProxyWord::i32:
      return FI_INT32;
    case ProxyWord::u32:
      return FI_UINT32;
    case ProxyWord::i64:
      return FI_INT64;
    case ProxyWord::u64:
      return FI_UINT64;
  }
  return FI_UINT64;
}

fi_op op_of(ProxyAmo a) {
  switch (a) {
    case ProxyAmo::add:
      return FI_SUM;
    case ProxyAmo::and_:
      return FI_BAND;
    case ProxyAmo::or_:
      return FI_BOR;
    case ProxyAmo::xor_:
      return FI_BXOR;
    case ProxyAmo::min:
      return FI_MIN;
    case ProxyAmo::max:
      return FI_MAX;
    case ProxyAmo::exchange:
    case ProxyAmo::store:
      return FI_ATOMIC_WRITE;
    case ProxyAmo::load:
      return FI_ATOMIC_READ;
  }
  return FI_ATOMIC_WRITE;
}

bool is_connection_error(int err) {
  switch (err) {
    case FI_ECONNRESET:
    case FI_ECONNREFUSED:
    case FI_ECONNABORTED:
    case FI_ENOTCONN:
    case FI_EHOSTUNREACH:
    case FI_ETIMEDOUT:
    case EPIPE:
    case FI_ESHUTDOWN:
    case FI_EIO:
    case FI_ENETDOWN:
    case FI_ENETUNREACH:
      return true;
    default:
      return false;
  }
}

constexpr int kFlushStage = 2;  // Op::stage of the atomic read that confirms delivery

// One descriptor in flight. `fi` comes first: providers with FI_CONTEXT mode own it while the
// operation runs, and completions hand its address back.
struct Op {
  fi_context2 fi;
  std::uint64_t ticket = 0;
  ProxyDescriptor d{};
  int stage = 0;            // put_signal: 0 = data, 1 = signal; kFlushStage: delivery check
  std::uint64_t sent = 0;   // bytes of d.bytes posted and completed so far
  std::uint64_t chunk = 0;  // bytes of the chunk in flight
  std::uint64_t operand = 0;
  std::uint64_t compare = 0;
  std::uint64_t result = 0;
  Clock::time_point started;  // when the proxy took it from the ring
  Fid<fid_mr> local_mr;       // FI_MR_LOCAL registration of a buffer outside the heap
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
          endpoint_.register_region(ops_.get(), sizeof(Op) * n_slots_, 2,
                                    (endpoint_.info()->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0);
      ops_desc_ = fi_mr_desc(ops_mr_.get());
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
    fi_cq_entry entries[32];
    constexpr int kBlockMs =
        std::chrono::duration_cast<std::chrono::milliseconds>(ProxyIdlePolicy::kColdNap).count();
    static_assert(kBlockMs >= 1, "fi_cq_sread counts milliseconds");
    const ssize_t n = block ? fi_cq_sread(endpoint_.cq(), entries, 32, nullptr, kBlockMs)
                            : fi_cq_read(endpoint_.cq(), entries, 32);
    if (n > 0) {
      for (ssize_t i = 0; i < n; ++i) on_completion(*static_cast<Op*>(entries[i].op_context));
      return true;
    }
    if (n == -FI_EAGAIN) return false;
    if (block && n != -FI_EAVAIL) {
      // A timeout or an interruption; anything else means the wait object does not work as
      // hoped: poll and nap from now on instead.
      if (n != -FI_ETIMEDOUT && n != -FI_ECANCELED && n != -FI_EINTR) {
        TESSERA_LOG(log_, info,
                    "fabric: fi_cq_sread returned " << fi_error(static_cast<int>(n))
                                                    << "; the idle proxy naps instead");
        block_on_cq_ = false;
      }
      return false;
    }
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      if (fi_cq_readerr(endpoint_.cq(), &err, 0) < 0) {
        fail(device::FailureCode::transport, "fi_cq_readerr failed");
        return true;
      }
      const Op* op = static_cast<const Op*>(err.op_context);
      const int target = op != nullptr ? op->d.pe : -1;
      const char* detail = fi_cq_strerror(endpoint_.cq(), err.prov_errno, err.err_data, nullptr, 0);
      const std::string what = op != nullptr ? to_string(op->d.op) : "operation";
      if (is_connection_error(err.err)) {
        fail(device::FailureCode::peer_lost,
             "PeerLost: PE " + std::to_string(target) + " is unreachable: " + what + " from PE " +
                 std::to_string(pe_) + " failed with " + fi_error(err.err) + " (" +
                 (detail ? detail : "") + ")");
      } else {
        fail(device::FailureCode::transport,
             what + " from PE " + std::to_string(pe_) + " to PE " + std::to_string(target) +
                 " failed: " + fi_error(err.err) + " (" + (detail ? detail : "") + ")");
      }
      return true;
    }
    fail(device::FailureCode::transport, "fi_cq_read failed: " + fi_error(static_cast<int>(n)));
    return true;
  }

  // Starts ready descriptors in ticket order; true when it did anything.
  bool issue() {
    bool busy = false;
    while (!retry_.empty()) {
      Op* op = retry_.front();
      const int rc = post(*op);
      if (rc == -FI_EAGAIN) return busy;
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
      if (rc == -FI_EAGAIN) {
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
      op.local_desc = fi_mr_desc(op.local_mr.get());
    } catch (const Error& e) {
      fail(device::FailureCode::transport, e.message());
      return false;
    }
    return true;
  }

  // Posts the current step of `op`: 0, -FI_EAGAIN (retry later) or a failure (recorded).
  int post(Op& op) {
    const ProxyDescriptor& d = op.d;
    const auto& peer = endpoint_.peer(d.pe);
    fid_ep* ep = endpoint_.ep();
    ssize_t rc = 0;
    if (op.stage == kFlushStage) {
      rc = fi_fetch_atomic(ep, &op.operand, 1, ops_desc_, &op.result, ops_desc_, peer.addr,
                           endpoint_.remote(d.pe, 0), peer.key, FI_UINT64, FI_ATOMIC_READ, &op.fi);
      if (rc == 0 || rc == -FI_EAGAIN) return static_cast<int>(rc);
    }
    const bool data_stage = (d.op == ProxyOp::put || d.op == ProxyOp::get ||
                             (d.op == ProxyOp::put_signal && op.stage == 0));
    if (op.stage == kFlushStage) {
      // a failed flush read: reported below
    } else if (data_stage) {
      op.chunk = std::min<std::uint64_t>(d.bytes - op.sent, endpoint_.max_msg());
      char* local = reinterpret_cast<char*>(static_cast<std::uintptr_t>(d.local)) + op.sent;
      const std::uint64_t raddr = endpoint_.remote(d.pe, d.remote_offset + op.sent);
      if (d.op == ProxyOp::get) {
        rc = fi_read(ep, local, op.chunk, op.local_desc, peer.addr, raddr, peer.key, &op.fi);
      } else {
        iovec iov{local, op.chunk};
        void* desc = op.local_desc;
        fi_rma_iov rma{raddr, op.chunk, peer.key};
        fi_msg_rma msg{};
        msg.msg_iov = &iov;
        msg.desc = &desc;
        msg.iov_count = 1;
        msg.addr = peer.addr;
        msg.rma_iov = &rma;
        msg.rma_iov_count = 1;
        msg.context = &op.fi;
        const std::uint64_t flags =
            FI_COMPLETION | (endpoint_.delivery_complete() ? FI_DELIVERY_COMPLETE : 0);
        rc = fi_writemsg(ep, &msg, flags);
      }
    } else if (d.op == ProxyOp::put_signal || d.op == ProxyOp::signal) {
      op.operand = d.value;
      const fi_op fop =
          device::proxy_signal_op(d) == device::SignalOp::add ? FI_SUM : FI_ATOMIC_WRITE;
      rc = fi_atomic(ep, &op.operand, 1, ops_desc_, peer.addr,
                     endpoint_.remote(d.pe, d.signal_offset), peer.key, FI_UINT64, fop, &op.fi);
    } else {
      op.operand = d.value;
      op.compare = d.compare;
      const std::uint64_t raddr = endpoint_.remote(d.pe, d.remote_offset);
      const fi_datatype dt = datatype_of(d.word);
      if (d.op == ProxyOp::atomic) {
        rc = fi_atomic(ep, &op.operand, 1, ops_desc_, peer.addr, raddr, peer.key, dt, op_of(d.amo),
                       &op.fi);
      } else if (d.op == ProxyOp::fetch_atomic) {
        rc = fi_fetch_atomic(ep, &op.operand, 1, ops_desc_, &op.result, ops_desc_, peer.addr, raddr,
                             peer.key, dt, op_of(d.amo), &op.fi);
      } else {
        rc = fi_compare_atomic(ep, &op.operand, 1, ops_desc_, &op.compare, ops_desc_, &op.result,
                               ops_desc_, peer.addr, raddr, peer.key, dt, FI_CSWAP, &op.fi);
      }
    }
    if (rc == 0 || rc == -FI_EAGAIN) return static_cast<int>(rc);
    const int err = static_cast<int>(-rc);
    const std::string text = std::string(to_string(d.op)) + " from PE " + std::to_string(pe_) +
                             " to PE " + std::to_string(d.pe) + ": posting failed with " +
                             fi_error(err);
    fail(is_connection_error(err) ? device::FailureCode::peer_lost : device::FailureCode::transport,
         is_connection_error(err)
             ? "PeerLost: PE " + std::to_string(d.pe) + " is unreachable: " + text
             : text);
    return static_cast<int>(rc);
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
        if (rc == -FI_EAGAIN) retry_.push_back(&op);
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
      if (rc == -FI_EAGAIN) retry_.push_back(&op);
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
  Endpoint endpoint_;
  std::uint32_t n_slots_ = 0;
  std::unique_ptr<Op[]> ops_;
  Fid<fid_mr> ops_mr_;
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

std::vector<double> fabric_raw_write_times(Bootstrap& bootstrap, const std::string& provider,
                                           int from, int to, std::size_t bytes, int rounds,
                                           Timeout) {
  const int pe = bootstrap.rank();
  const bool active = pe == from || pe == to;
  std::vector<char> buffer(active ? std::max<std::size_t>(bytes, 64) : 64, 1);
  Endpoint endpoint(bootstrap, pe, bootstrap.size(), provider, buffer.data(), buffer.size(),
                    nullptr);
  std::vector<double> times;
  std::atomic<bool> done{false};
  std::thread progress;
  if (pe != from) {
    // Targets of manual-progress providers must read their queue for writes to land.
    progress = std::thread([&] {
      fi_cq_entry entry;
      while (!done.load(std::memory_order_acquire)) {
        if (fi_cq_read(endpoint.cq(), &entry, 1) == -FI_EAGAIN) std::this_thread::yield();
      }
    });
  }
  bootstrap.barrier();
  if (pe == from) {
    void* desc = endpoint.local_desc(buffer.data(), bytes);
    const auto& peer = endpoint.peer(to);
    fi_context2 context{};
    for (int r = 0; r < rounds; ++r) {
      const auto t0 = Clock::now();
      iovec iov{buffer.data(), bytes};
      fi_rma_iov rma{endpoint.remote(to, 0), bytes, peer.key};
      fi_msg_rma msg{};
      msg.msg_iov = &iov;
      msg.desc = &desc;
      msg.iov_count = 1;
      msg.addr = peer.addr;
      msg.rma_iov = &rma;
      msg.rma_iov_count = 1;
      msg.context = &context;
      const std::uint64_t flags =
          FI_COMPLETION | (endpoint.delivery_complete() ? FI_DELIVERY_COMPLETE : 0);
      ssize_t rc;
      fi_cq_entry entry;
      while ((rc = fi_writemsg(endpoint.ep(), &msg, flags)) == -FI_EAGAIN)
        fi_cq_read(endpoint.cq(), &entry, 1);
      if (rc != 0) endpoint.check(static_cast<int>(rc), "fi_writemsg");
      for (;;) {
        const ssize_t n = fi_cq_read(endpoint.cq(), &entry, 1);
        if (n == 1) break;
        if (n != -FI_EAGAIN) endpoint.check(static_cast<int>(n), "fi_cq_read");
      }
      times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  }
  bootstrap.barrier();
  done.store(true, std::memory_order_release);
  if (progress.joinable()) progress.join();
  return times;
}

}  // namespace tessera::detail
