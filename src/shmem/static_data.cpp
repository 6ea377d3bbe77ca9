#include "shmem/static_data.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "heap/fd_exchange.hpp"
#include "tessera/error.hpp"
#include "transport/proxy_remote_copy.hpp"

namespace tessera::shmem {
namespace {

std::uintptr_t page_bytes() { return static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE)); }
std::uintptr_t page_down(std::uintptr_t a) { return a & ~(page_bytes() - 1); }
std::uintptr_t page_up(std::uintptr_t a) { return page_down(a + page_bytes() - 1); }

// What dl_iterate_phdr's first entry (the executable) says about its writable data.
struct ProgramHeaders {
  bool seen = false;
  int writable_loads = 0;
  std::uintptr_t load_address = 0;
  std::uintptr_t data_begin = 0, data_end = 0;
  std::uintptr_t relro_end = 0;
};

int read_executable(dl_phdr_info* info, std::size_t, void* out) {
  auto& h = *static_cast<ProgramHeaders*>(out);
  h.seen = true;
  h.load_address = info->dlpi_addr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) != 0 && ph.p_memsz > 0) {
      ++h.writable_loads;
      h.data_begin = begin;
      h.data_end = begin + ph.p_memsz;
    } else if (ph.p_type == PT_GNU_RELRO) {
      h.relro_end = begin + ph.p_memsz;
    }
  }
  return 1;  // the first entry is the executable: stop there
}

bool all_zero(const char* p, std::size_t bytes) {
  const auto* w = reinterpret_cast<const std::uint64_t*>(p);
  for (std::size_t i = 0; i < bytes / sizeof(std::uint64_t); ++i)
    if (w[i] != 0) return false;
  return true;
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

DataSegment find_data_segment(std::string& why) {
  ProgramHeaders h;
  ::dl_iterate_phdr(read_executable, &h);
  if (!h.seen || h.writable_loads == 0) {
    why = "the executable has no writable data segment";
    return {};
  }
  if (h.writable_loads > 1) {
    why = "the executable has " + std::to_string(h.writable_loads) +
          " writable segments; static symmetric data supports executables with one (the usual "
          "layout of GNU ld and lld)";
    return {};
  }
  // The loader made [page_down(begin), page_down(relro_end)) read-only; the page holding RELRO's
  // end, and what follows, stays writable.
  std::uintptr_t begin = page_down(h.data_begin);
  if (h.relro_end > begin && h.relro_end <= h.data_end) begin = page_down(h.relro_end);
  const std::uintptr_t end = page_up(h.data_end);
  DataSegment segment;
  segment.begin = reinterpret_cast<char*>(begin);
  segment.bytes = end - begin;
  segment.load_offset = begin - h.load_address;
  return segment;
}

void StaticData::move_onto_shared_memory() {
  disconnect();
  segment_ = {};
  fd_ = detail::Fd();
  if (const char* knob = std::getenv("TESSERA_SHMEM_STATIC");
      knob != nullptr && std::strcmp(knob, "0") == 0) {
    why_ = "TESSERA_SHMEM_STATIC=0 turned it off";
    return;
  }
  std::string why;
  DataSegment segment = find_data_segment(why);
  if (segment.bytes == 0) {
    why_ = why;
    return;
  }
  detail::Fd fd(::memfd_create("tessera-static-data", MFD_CLOEXEC));
  if (!fd.valid() || ::ftruncate(fd.get(), static_cast<off_t>(segment.bytes)) != 0) {
    why_ = "cannot make shared memory for the executable's data (" + std::to_string(segment.bytes) +
           " bytes): " + errno_text();
    return;
  }
  void* staging = ::mmap(nullptr, segment.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (staging == MAP_FAILED) {
    why_ = "cannot map shared memory for the executable's data: " + errno_text();
    return;
  }
  // Copy the segment, leaving zero pages (most of .bss) as the memfd's holes. Read through
  // /proc/self/mem, not by loads: the segment holds more than the program's objects (a
  // sanitizer's poisoned redzones between globals), and the kernel reads it as it is.
  const std::size_t page = page_bytes();
  detail::Fd self(::open("/proc/self/mem", O_RDONLY | O_CLOEXEC));
  std::vector<char> chunk(64 * page);
  bool copied = self.valid();
  for (std::size_t at = 0; copied && at < segment.bytes; at += chunk.size()) {
    const std::size_t bytes = std::min(chunk.size(), segment.bytes - at);
    const auto where = static_cast<off_t>(reinterpret_cast<std::uintptr_t>(segment.begin) + at);
    copied = ::pread(self.get(), chunk.data(), bytes, where) == static_cast<ssize_t>(bytes);
    for (std::size_t p = 0; copied && p < bytes; p += page) {
      if (!all_zero(chunk.data() + p, page))
        std::memcpy(static_cast<char*>(staging) + at + p, chunk.data() + p, page);
    }
  }
  if (!copied) {
    why_ = "cannot read the executable's data through /proc/self/mem: " + errno_text();
    ::munmap(staging, segment.bytes);
    return;
  }
  // From the copy to the mapping below nothing may write the segment: this thread does not, and
  // the runtime has started no thread yet. The mapping replaces the old pages in one step.
  void* moved = ::mmap(segment.begin, segment.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                       fd.get(), 0);
  if (moved == MAP_FAILED) {
    // The old pages may be gone: the program's statics cannot be trusted any more.
    std::fprintf(stderr,
                 "tessera shmem: shmem_init: cannot move the executable's data (%zu bytes at %p) "
                 "onto shared memory: %s\n",
                 segment.bytes, static_cast<void*>(segment.begin), errno_text().c_str());
    std::_Exit(EXIT_FAILURE);
  }
  ::munmap(staging, segment.bytes);
  segment_ = segment;
  fd_ = std::move(fd);
  why_.clear();
}

void StaticData::connect(Runtime& runtime, const device::Context& heap) {
  // Every PE's layout, or a failure (bytes 0), so all PEs decide alike whether to go on.
  struct Layout {
    std::uint64_t bytes, load_offset;
  };
  const int me = heap.my_pe, n = heap.n_pes;
  std::vector<Layout> layouts(static_cast<std::size_t>(n));
  layouts[static_cast<std::size_t>(me)] = {segment_.bytes, segment_.load_offset};
  runtime.bootstrap().allgather(layouts.data(), sizeof(Layout));
  const Layout mine = layouts[static_cast<std::size_t>(me)];
  for (int p = 0; p < n; ++p) {
    const Layout& other = layouts[static_cast<std::size_t>(p)];
    if (other.bytes == 0) {
      if (why_.empty()) why_ = "PE " + std::to_string(p) + " could not share its static data";
      return;
    }
    if (other.bytes != mine.bytes || other.load_offset != mine.load_offset) {
      why_ = "PE " + std::to_string(p) + "'s executable data segment (" +
             std::to_string(other.bytes) + " bytes) differs from PE " + std::to_string(me) +
             "'s (" + std::to_string(mine.bytes) + " bytes): the PEs do not run the same program";
      return;
    }
  }
  // The segments travel to exactly the PEs whose heaps are mapped here, as the heaps did.
  std::vector<int> mapped;
  for (int p = 0; p < n; ++p)
    if (heap.is_mapped(p)) mapped.push_back(p);
  std::vector<detail::Fd> fds =
      detail::exchange_node_fds(runtime.bootstrap(), mapped, fd_.get(), runtime.options().timeout);
  bases_.assign(static_cast<std::size_t>(n), nullptr);
  bases_[static_cast<std::size_t>(me)] = segment_.begin;
  for (std::size_t i = 0; i < mapped.size(); ++i) {
    if (!fds[i].valid()) continue;
    peers_.push_back(detail::map_heap(fds[i].get(), segment_.bytes, 0, 0, me, mapped[i]));
    bases_[static_cast<std::size_t>(mapped[i])] = peers_.back().base();
  }
  // The PEs not mapped here (other nodes, or TESSERA_P2P=0) are reached through the network
  // proxy, as their heaps are: every PE registers its segment as the transport's second region,
  // and this Context's descriptors say so (kStaticDataContext -> kProxyStaticData).
  const bool via_proxy =
      detail::register_static_data_with_proxy(runtime, segment_.begin, segment_.bytes);
  ctx_ = heap;
  ctx_.peer_base = bases_.data();
  ctx_.heap_size = segment_.bytes;
  ctx_.proxy = via_proxy ? heap.proxy : nullptr;
  ctx_.flags |= device::kStaticDataContext;
  ctx_.allocations = nullptr;
}

void StaticData::disconnect() noexcept {
  ctx_ = device::Context{};
  peers_.clear();
  bases_.clear();
  why_ = "shmem_init has not run";
}

}  // namespace tessera::shmem
