#include "gpu/gpu_checks.hpp"

#include <cstring>

namespace tessera::detail {

std::string version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string probe_cause(const char* api, DeviceCountResult result, int devices, int driver_version,
                        int runtime_version, int minimum_runtime, const std::string& error_text) {
  const std::string name(api);
  if (runtime_version > 0 && runtime_version < minimum_runtime) {
    return "the " + name + " runtime is too old: this build's runtime is " + name + " " +
           version_string(runtime_version) + ", Tessera needs " + name + " " +
           version_string(minimum_runtime) + " or newer (rebuild with a newer toolkit)";
  }
  const bool driver_behind =
      driver_version > 0 && runtime_version > 0 && driver_version / 1000 < runtime_version / 1000;
  // Without any driver installed the runtime also answers "insufficient driver", and the driver
  // version reads 0: that is no driver, not an old one.
  if ((result == DeviceCountResult::insufficient_driver && driver_version > 0) || driver_behind) {
    return "the " + name + " driver is too old: it supports " + name + " " +
           (driver_version > 0 ? version_string(driver_version) : std::string("(unknown)")) +
           ", this build's runtime is " + name + " " + version_string(runtime_version) +
           " (update the driver, or build with an older toolkit)";
  }
  if (result == DeviceCountResult::no_driver || result == DeviceCountResult::insufficient_driver ||
      driver_version == 0) {
    return "no " + name + " driver is loaded (" + error_text + ")";
  }
  if (result == DeviceCountResult::no_device || (result == DeviceCountResult::ok && devices <= 0)) {
    return "the " + name + " driver " + version_string(driver_version) + " sees no device";
  }
  if (result == DeviceCountResult::other_error) {
    return "the " + name + " device count query failed: " + error_text;
  }
  return "";
}

std::string same_process_device_sharing(const std::vector<PeDevice>& node) {
  for (std::size_t i = 0; i < node.size(); ++i) {
    for (std::size_t j = i + 1; j < node.size(); ++j) {
      if (node[i].pid == node[j].pid && node[i].uuid == node[j].uuid) {
        return "PEs " + std::to_string(node[i].pe) + " and " + std::to_string(node[j].pe) +
               " are threads of one process on the same GPU: their grids are not guaranteed "
               "to be resident together and can deadlock; run each PE as its own process "
               "(tessera-run -np N, or mpirun), or give each thread its own GPU";
      }
    }
  }
  return "";
}

bool map_peer_over_link(bool peer_access, bool native_atomics, int pe, int peer,
                        std::string& note) {
  note.clear();
  if (!peer_access) return false;
  if (native_atomics) return true;
  note = "PE " + std::to_string(pe) + " reaches PE " + std::to_string(peer) +
         "'s GPU by P2P but without native atomics over the link; its heap is not mapped "
         "(signals and barrier arrivals need them), so it is reached through the proxy path";
  return false;
}

VmmLayout vmm_layout(std::size_t bytes, std::size_t hole_offset, std::size_t hole_bytes,
                     std::size_t granularity) {
  const std::size_t g = granularity == 0 ? 1 : granularity;
  const auto round_up = [g](std::size_t v) { return (v + g - 1) / g * g; };
  VmmLayout l;
  const std::size_t hole_end = hole_offset + hole_bytes;
  if (hole_bytes == 0 || hole_offset == 0 || hole_end >= bytes) {
    l.why_whole = "no hole between the heap and its control area was asked for";
  } else if (hole_offset % g != 0 || hole_end % g != 0) {
    l.why_whole = "the allocation granularity (" + std::to_string(g) +
                  " bytes) does not divide the hole's ends (" + std::to_string(hole_offset) + ", " +
                  std::to_string(hole_end) + ")";
  }
  if (!l.why_whole.empty()) {
    l.heap_bytes = round_up(bytes);
    l.reserved = l.heap_bytes;
    return l;
  }
  l.lead = g;
  l.heap_bytes = hole_offset;
  l.control_offset = hole_end;
  l.control_bytes = round_up(bytes - hole_end);
  l.reserved = l.lead + l.control_offset + l.control_bytes + g;
  return l;
}

namespace {

// The co-resident blocks of each GPU kernel on device d: the fewest and the most, a FAIL per
// kernel of which no block fits, a note per kernel whose query failed.
template <class Line>
void report_kernels(const GpuPreflight& p, const GpuDeviceFacts& d, Line& line, bool& ok) {
  const std::string dev = "device " + std::to_string(d.ordinal);
  if (d.kernels.empty()) {
    line(dev + ": no " + p.api + " kernels are compiled into this program");
    return;
  }
  const GpuDeviceFacts::Kernel* fewest = nullptr;
  const GpuDeviceFacts::Kernel* most = nullptr;
  for (const GpuDeviceFacts::Kernel& k : d.kernels) {
    if (k.blocks_per_sm < 0) {
      line("note: " + dev + ": the co-resident blocks of " + k.name + " could not be queried");
      continue;
    }
    if (k.blocks_per_sm == 0) {
      ok = false;
      line("FAIL: " + dev + ": not one " + std::to_string(p.block_threads) + "-thread block of " +
           k.name +
           " fits on a multiprocessor (registers or shared memory): every launch of "
           "it fails");
    }
    if (fewest == nullptr || k.blocks_per_sm < fewest->blocks_per_sm) fewest = &k;
    if (most == nullptr || k.blocks_per_sm > most->blocks_per_sm) most = &k;
  }
  if (fewest == nullptr) return;
  auto blocks = [&d](const GpuDeviceFacts::Kernel& k) {
    return std::to_string(k.blocks_per_sm * d.multiprocessors) + " blocks (" +
           std::to_string(k.blocks_per_sm) + " per multiprocessor) of " + k.name;
  };
  line(dev + ": " + std::to_string(d.kernels.size()) + " kernels of " +
       std::to_string(p.block_threads) + " threads per block; co-resident at once: fewest " +
       blocks(*fewest) + ", most " + blocks(*most) +
       " (a cooperative launch of more blocks fails)");
}

}  // namespace

std::string format_preflight(const GpuPreflight& p, bool& ok) {
  ok = true;
  std::string out;
  const std::string& api = p.api;
  auto line = [&out, &api](const std::string& text) { out += api + ": " + text + "\n"; };
  auto yes = [](bool b) { return std::string(b ? "yes" : "no"); };
  if (p.probe.runtime_version > 0) {  // 0: the runtime is not in this build
    line("driver " +
         (p.probe.driver_version > 0 ? version_string(p.probe.driver_version)
                                     : std::string("none")) +
         ", runtime " + version_string(p.probe.runtime_version));
  }
  if (p.probe.devices <= 0) {
    ok = false;
    line("FAIL: " + p.probe.why_none);
    return out;
  }
  line("MPS control daemon: " + std::string(p.mps ? "running" : "not seen"));
  for (const GpuDeviceFacts& d : p.devices) {
    const std::string dev = "device " + std::to_string(d.ordinal);
    line(dev + ": " + d.name + ", compute mode " + std::to_string(d.compute_mode) + ", MIG " +
         yes(d.mig) + ", cooperative launch " + yes(d.cooperative_launch) +
         ", host native atomics " + yes(d.host_native_atomics) + ", VMM + POSIX fd " +
         yes(d.vmm_posix_fd) + ", GPUDirect RDMA " +
         (d.gpudirect_rdma < 0 ? std::string("n/a") : yes(d.gpudirect_rdma == 1)) +
         ", GPUDirect RDMA with VMM " +
         (d.vmm_gpudirect_rdma < 0 ? std::string("n/a") : yes(d.vmm_gpudirect_rdma == 1)) + ", " +
         std::to_string(d.multiprocessors) + " multiprocessors");
    report_kernels(p, d, line, ok);
    if (!d.cooperative_launch) {
      ok = false;
      line("FAIL: " + dev + " has no cooperative launch (every Tessera kernel needs it)");
    }
    if (d.compute_mode == 2) {
      ok = false;
      line("FAIL: " + dev + " is in compute mode 'prohibited': no process can use it");
    }
    if (d.compute_mode == 3 && !p.mps) {
      line("note: " + dev + " is exclusive-process and no MPS daemon runs: only one PE can use it");
    }
  }
  for (const GpuPairFacts& pair : p.pairs) {
    line("peer " + std::to_string(pair.device) + " -> " + std::to_string(pair.peer) + ": access " +
         yes(pair.access) + ", native atomics " + yes(pair.native_atomics) +
         (pair.access && !pair.native_atomics ? " (not mapped: the proxy path serves it)" : ""));
  }
  if (ok) line("preflight: ok");
  return out;
}

}  // namespace tessera::detail
