// The libfabric endpoint wrapper: the only file that includes <rdma/*.h>. See fabric_endpoint.hpp.
#include "transport/fabric_endpoint.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::detail {
namespace {

using device::ProxyAmo;
using device::ProxyWord;

static_assert(sizeof(fi_context2) <= sizeof(FabricOpContext) &&
                  alignof(fi_context2) <= alignof(FabricOpContext),
              "FabricOpContext holds a provider's fi_context2");

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

// The libfabric objects of one endpoint with its segment registered (the heap and, when the
// segment has one, the control area's peer-written page: two regions, see SegmentRegions), whose
// address, keys and base every PE learnt. Built collectively.
class Endpoint {
 public:
  struct Peer {
    fi_addr_t addr = FI_ADDR_UNSPEC;
    std::uint64_t key = 0;           // its heap's
    std::uint64_t control_key = 0;   // its control page's (when the segment has one)
    std::uint64_t base = 0;          // its heap's address (0 without FI_MR_VIRT_ADDR)
    std::uint64_t control_base = 0;  // its control page's (0 without FI_MR_VIRT_ADDR)
    std::uint64_t static_key = 0;    // its static data region (register_static_data), if any
    std::uint64_t static_base = 0;
  };

  Endpoint(Bootstrap& bootstrap, int pe, int n_pes, const std::string& provider, char* segment,
           char* control, const SegmentRegions& regions, const Placement* placement,
           const HeapRegistration& heap = HeapRegistration{})
      : pe_(pe), segment_(segment), control_(control), regions_(regions) {
    choose_info(provider, placement, heap);
    fi_info* fi = info_.get();
    mr_local_ = (fi->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    mr_hmem_ = (fi->domain_attr->mr_mode & FI_MR_HMEM) != 0;
    hmem_ = (fi->caps & FI_HMEM) != 0;
    virt_addr_ = (fi->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    prov_key_ = (fi->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
    mr_endpoint_ = (fi->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0;
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

    heap_mr_ = register_region(segment, regions.heap_bytes, prov_key_ ? 0 : 1, mr_endpoint_, heap);
    heap_desc_ = fi_mr_desc(heap_mr_.get());
    if (regions.control_bytes != 0) {
      control_mr_ = register_region(control, regions.control_bytes, 0, mr_endpoint_, heap);
      control_desc_ = fi_mr_desc(control_mr_.get());
    }

    struct Card {
      std::uint8_t addr[232];
      std::uint64_t addr_len;
      std::uint64_t key;
      std::uint64_t control_key;
      std::uint64_t base;
      std::uint64_t control_base;
    };
    std::vector<Card> cards(static_cast<std::size_t>(n_pes));
    Card& mine = cards[static_cast<std::size_t>(pe)];
    std::memset(&mine, 0, sizeof(mine));
    std::size_t len = sizeof(mine.addr);
    check(fi_getname(&ep->fid, mine.addr, &len), "fi_getname");
    mine.addr_len = len;
    mine.key = fi_mr_key(heap_mr_.get());
    mine.control_key = control_mr_ ? fi_mr_key(control_mr_.get()) : 0;
    mine.base = reinterpret_cast<std::uintptr_t>(segment);
    mine.control_base = reinterpret_cast<std::uintptr_t>(control);
    bootstrap.allgather(cards.data(), sizeof(Card));
    peers_.resize(static_cast<std::size_t>(n_pes));
    for (int p = 0; p < n_pes; ++p) {
      const Card& c = cards[static_cast<std::size_t>(p)];
      Peer& peer = peers_[static_cast<std::size_t>(p)];
      const int inserted = fi_av_insert(av, c.addr, 1, &peer.addr, 0, nullptr);
      if (inserted != 1) fail_setup(pe, "fi_av_insert of PE " + std::to_string(p), inserted);
      peer.key = c.key;
      peer.control_key = c.control_key;
      peer.base = virt_addr_ ? c.base : 0;
      peer.control_base = virt_addr_ ? c.control_base : 0;
    }
  }

  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  ~Endpoint() {
    // Registrations go before the endpoint they may be bound to; the rest in reverse order.
    static_mr_.reset();
    control_mr_.reset();
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
      // fi_mr_attr names a CUDA device; ROCR memory has no device field (libfabric finds the
      // agent from the address).
      if (where.iface == HeapMemory::cuda) attr.device.cuda = where.device;
      const int rc = fi_mr_regattr(domain_.get(), &attr, 0, &mr);
      if (rc != 0) {
        // Keys 0 and 1 are the heap's and the control page's (see the constructor), 3 the static
        // data's; the proxy's buffers use others.
        fail_setup(pe_,
                   std::string("fi_mr_regattr of ") +
                       (key <= 1 ? "the segment" : "a local buffer") + " in " + describe(where) +
                       " on provider " + provider(),
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

  // The descriptor of local memory [p, p + bytes): the heap's, the control page's or the static
  // data's, or null (no FI_MR_LOCAL, or outside all).
  void* local_desc(const void* p, std::size_t bytes) const {
    switch (regions_.region_holding(segment_, control_, p, bytes)) {
      case SegmentRegions::kHeap:
        return heap_desc_;
      case SegmentRegions::kControl:
        return control_desc_;
      default:
        break;
    }
    const SegmentRegions statics{static_bytes_, 0, 0};
    return statics.region_holding(static_region_, nullptr, p, bytes) == SegmentRegions::kHeap
               ? static_desc_
               : nullptr;
  }

  // Registers the static data segment (host memory) under key 3 where the application picks
  // keys (clear of the heap's 1, the control page's 0, the proxy's records' 2 and its buffers' 4
  // and up); its key.
  std::uint64_t register_static_data(void* p, std::size_t bytes) {
    if (static_mr_) throw Error(ErrorCode::internal, pe_, "static data registered twice");
    static_mr_ = register_region(p, bytes, prov_key_ ? 0 : 3, mr_endpoint_);
    static_desc_ = fi_mr_desc(static_mr_.get());
    static_region_ = static_cast<char*>(p);
    static_bytes_ = bytes;
    return fi_mr_key(static_mr_.get());
  }

  void set_static_peer(int pe, std::uint64_t key, std::uint64_t base) {
    Peer& peer = peers_[static_cast<std::size_t>(pe)];
    peer.static_key = key;
    peer.static_base = virt_addr_ ? base : 0;
  }

  // The target address of `offset` in `region` on `pe`, and the key of the registration that
  // holds it. A segment offset past the heap is in the control page's registration. With
  // FI_MR_VIRT_ADDR the address is the region's base on that PE plus the offset in the region,
  // else the offset in the region alone.
  std::uint64_t remote(int pe, std::uint64_t offset, RemoteRegion region) const {
    const Peer& peer = peers_[static_cast<std::size_t>(pe)];
    if (region == RemoteRegion::static_data) return peer.static_base + offset;
    const std::uint64_t in_region = regions_.offset_in_region(offset);
    if (!virt_addr_) return in_region;
    return (regions_.region_of(offset) == SegmentRegions::kControl ? peer.control_base
                                                                   : peer.base) +
           in_region;
  }
  std::uint64_t region_key(int pe, std::uint64_t offset, RemoteRegion region) const {
    const Peer& peer = peers_[static_cast<std::size_t>(pe)];
    if (region == RemoteRegion::static_data) return peer.static_key;
    return regions_.region_of(offset) == SegmentRegions::kControl ? peer.control_key : peer.key;
  }
  const Peer& peer(int pe) const { return peers_[static_cast<std::size_t>(pe)]; }

  fi_info* info() const { return info_.get(); }
  fid_ep* ep() const { return ep_.get(); }
  fid_cq* cq() const { return cq_.get(); }
  // True when the CQ has a wait object (fi_cq_sread blocks until the provider has work).
  bool cq_waits() const { return cq_waits_; }
  bool mr_local() const { return mr_local_; }
  bool mr_hmem() const { return mr_hmem_; }
  bool hmem() const { return hmem_; }
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
  bool mr_hmem_ = false;  // FI_MR_HMEM: device buffers need a registration and its descriptor
  bool hmem_ = false;     // FI_HMEM granted: device buffers may be passed at all
  bool virt_addr_ = false;
  bool prov_key_ = false;     // FI_MR_PROV_KEY: the provider picks registration keys
  bool mr_endpoint_ = false;  // FI_MR_ENDPOINT: registrations are bound to the endpoint
  bool cq_waits_ = false;
  std::size_t max_msg_ = 0;
  Fid<fid_fabric> fabric_;
  Fid<fid_domain> domain_;
  Fid<fid_cq> cq_;
  Fid<fid_av> av_;
  Fid<fid_ep> ep_;
  char* segment_ = nullptr;  // this PE's heap
  char* control_ = nullptr;  // this PE's control page
  SegmentRegions regions_;
  Fid<fid_mr> heap_mr_;
  void* heap_desc_ = nullptr;
  Fid<fid_mr> control_mr_;  // the control area's peer-written page, when the segment has one
  void* control_desc_ = nullptr;
  Fid<fid_mr> static_mr_;  // the static data segment, once registered
  void* static_desc_ = nullptr;
  char* static_region_ = nullptr;
  std::size_t static_bytes_ = 0;
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

}  // namespace

class FabricEndpoint::Impl : public Endpoint {
 public:
  using Endpoint::Endpoint;
};

FabricRegion::~FabricRegion() {
  if (mr_ != nullptr) fi_close(&static_cast<fid_mr*>(mr_)->fid);
}

void* FabricRegion::desc() const { return fi_mr_desc(static_cast<fid_mr*>(mr_)); }

FabricEndpoint::FabricEndpoint(Bootstrap& bootstrap, int pe, int n_pes, const std::string& provider,
                               char* segment, char* control, const SegmentRegions& regions,
                               const Placement* placement, const HeapRegistration& heap)
    : impl_(std::make_unique<Impl>(bootstrap, pe, n_pes, provider, segment, control, regions,
                                   placement, heap)) {}

FabricEndpoint::~FabricEndpoint() = default;

std::unique_ptr<FabricRegion> FabricEndpoint::register_region(void* p, std::size_t bytes,
                                                              std::uint64_t key, bool bind_ep,
                                                              const HeapRegistration& where) {
  return std::make_unique<FabricRegion>(
      impl_->register_region(p, bytes, key, bind_ep, where).release());
}

std::unique_ptr<FabricRegion> FabricEndpoint::register_region(void* p, std::size_t bytes,
                                                              std::uint64_t key, bool bind_ep) {
  return std::make_unique<FabricRegion>(impl_->register_region(p, bytes, key, bind_ep).release());
}

void* FabricEndpoint::local_desc(const void* p, std::size_t bytes) const {
  return impl_->local_desc(p, bytes);
}

std::uint64_t FabricEndpoint::register_static_data(void* p, std::size_t bytes) {
  return impl_->register_static_data(p, bytes);
}

void FabricEndpoint::set_static_peer(int pe, std::uint64_t key, std::uint64_t base) {
  impl_->set_static_peer(pe, key, base);
}

int FabricEndpoint::write(FabricOpContext* context, const void* local, std::size_t bytes,
                          void* desc, int pe, std::uint64_t remote_offset, RemoteRegion region) {
  const auto& peer = impl_->peer(pe);
  iovec iov{const_cast<void*>(local), bytes};
  fi_rma_iov rma{impl_->remote(pe, remote_offset, region), bytes,
                 impl_->region_key(pe, remote_offset, region)};
  fi_msg_rma msg{};
  msg.msg_iov = &iov;
  msg.desc = &desc;
  msg.iov_count = 1;
  msg.addr = peer.addr;
  msg.rma_iov = &rma;
  msg.rma_iov_count = 1;
  msg.context = context;
  const std::uint64_t flags =
      FI_COMPLETION | (impl_->delivery_complete() ? FI_DELIVERY_COMPLETE : 0);
  return static_cast<int>(fi_writemsg(impl_->ep(), &msg, flags));
}

int FabricEndpoint::read(FabricOpContext* context, void* local, std::size_t bytes, void* desc,
                         int pe, std::uint64_t remote_offset, RemoteRegion region) {
  const auto& peer = impl_->peer(pe);
  return static_cast<int>(fi_read(impl_->ep(), local, bytes, desc, peer.addr,
                                  impl_->remote(pe, remote_offset, region),
                                  impl_->region_key(pe, remote_offset, region), context));
}

int FabricEndpoint::atomic(FabricOpContext* context, const void* operand, void* desc, int pe,
                           std::uint64_t remote_offset, ProxyWord word, ProxyAmo amo,
                           RemoteRegion region) {
  const auto& peer = impl_->peer(pe);
  return static_cast<int>(fi_atomic(
      impl_->ep(), operand, 1, desc, peer.addr, impl_->remote(pe, remote_offset, region),
      impl_->region_key(pe, remote_offset, region), datatype_of(word), op_of(amo), context));
}

int FabricEndpoint::fetch_atomic(FabricOpContext* context, const void* operand, void* result,
                                 void* desc, int pe, std::uint64_t remote_offset, ProxyWord word,
                                 ProxyAmo amo, RemoteRegion region) {
  const auto& peer = impl_->peer(pe);
  return static_cast<int>(fi_fetch_atomic(impl_->ep(), operand, 1, desc, result, desc, peer.addr,
                                          impl_->remote(pe, remote_offset, region),
                                          impl_->region_key(pe, remote_offset, region),
                                          datatype_of(word), op_of(amo), context));
}

int FabricEndpoint::compare_atomic(FabricOpContext* context, const void* operand,
                                   const void* compare, void* result, void* desc, int pe,
                                   std::uint64_t remote_offset, ProxyWord word,
                                   RemoteRegion region) {
  const auto& peer = impl_->peer(pe);
  return static_cast<int>(fi_compare_atomic(
      impl_->ep(), operand, 1, desc, compare, desc, result, desc, peer.addr,
      impl_->remote(pe, remote_offset, region), impl_->region_key(pe, remote_offset, region),
      datatype_of(word), FI_CSWAP, context));
}

bool FabricEndpoint::again(int rc) { return rc == -FI_EAGAIN; }

std::string FabricEndpoint::error_text(int rc) { return fi_error(rc); }

bool FabricEndpoint::connection_lost(int rc) { return is_connection_error(rc < 0 ? -rc : rc); }

FabricCompletions FabricEndpoint::read_completions(void** contexts, int max, int block_ms) {
  FabricCompletions out;
  fi_cq_entry entries[32];
  const auto n_max = static_cast<std::size_t>(std::min(max, 32));
  fid_cq* cq = impl_->cq();
  const ssize_t n = block_ms > 0 ? fi_cq_sread(cq, entries, n_max, nullptr, block_ms)
                                 : fi_cq_read(cq, entries, n_max);
  if (n > 0) {
    for (ssize_t i = 0; i < n; ++i) contexts[i] = entries[i].op_context;
    out.kind = FabricCompletions::done;
    out.count = static_cast<int>(n);
    return out;
  }
  if (n == -FI_EAGAIN) return out;
  if (block_ms > 0 && n != -FI_EAVAIL) {
    // A timeout or an interruption; anything else means the wait object does not work.
    if (n != -FI_ETIMEDOUT && n != -FI_ECANCELED && n != -FI_EINTR) {
      out.kind = FabricCompletions::wait_failed;
      out.text = fi_error(static_cast<int>(n));
    }
    return out;
  }
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    if (fi_cq_readerr(cq, &err, 0) < 0) {
      out.kind = FabricCompletions::read_failed;
      out.text = "fi_cq_readerr failed";
      return out;
    }
    const char* detail = fi_cq_strerror(cq, err.prov_errno, err.err_data, nullptr, 0);
    out.kind = FabricCompletions::op_failed;
    out.failed_context = err.op_context;
    out.connection_lost = is_connection_error(err.err);
    out.text = fi_error(err.err) + " (" + (detail ? detail : "") + ")";
    return out;
  }
  out.kind = FabricCompletions::read_failed;
  out.text = "fi_cq_read failed: " + fi_error(static_cast<int>(n));
  return out;
}

int FabricEndpoint::read_one() {
  fi_cq_entry entry;
  return static_cast<int>(fi_cq_read(impl_->cq(), &entry, 1));
}

void FabricEndpoint::check(int rc, const char* what) const { impl_->check(rc, what); }

bool FabricEndpoint::cq_waits() const { return impl_->cq_waits(); }
bool FabricEndpoint::mr_local() const { return impl_->mr_local(); }
bool FabricEndpoint::mr_hmem() const { return impl_->mr_hmem(); }
bool FabricEndpoint::hmem() const { return impl_->hmem(); }
bool FabricEndpoint::mr_endpoint() const {
  return (impl_->info()->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0;
}
bool FabricEndpoint::delivery_complete() const { return impl_->delivery_complete(); }
std::size_t FabricEndpoint::max_msg() const { return impl_->max_msg(); }
std::string FabricEndpoint::provider() const { return impl_->provider(); }
std::string FabricEndpoint::nic() const { return impl_->nic(); }

}  // namespace tessera::detail
