// The decisions a GPU backend makes from what the runtime reports, as pure functions of plain
// values, so the true cause of every refusal is tested without a GPU (tests/gpu/
// backend_select_test.cpp feeds them fake inputs). No GPU header here: compiled into the core.
// Internal.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::detail {

// What a probe of one GPU runtime found. `devices` > 0 means usable; otherwise `why_none` says
// why, naming the cause (not built, no driver, driver too old, no device).
struct GpuProbe {
  int devices = 0;
  int driver_version = 0;   // 1000 * major + 10 * minor (CUDA's encoding); 0: no driver
  int runtime_version = 0;  // the runtime this build linked, same encoding
  std::string why_none;
};

// How a device-count query ended, in the runtime-independent terms the cause is chosen from.
enum class DeviceCountResult { ok, no_driver, insufficient_driver, no_device, other_error };

// The cause for a probe that found no usable device, or "" when `devices` > 0 and the versions
// fit. `api` is "CUDA" or "HIP"; `error_text` the runtime's own string for the failure.
// A driver whose version is below the runtime's major version cannot run this build (a static
// CUDA 13 runtime on a CUDA 12 driver reports "no device" otherwise, the wrong cause).
// A runtime older than `minimum_runtime` (what this code is written for) is named first.
std::string probe_cause(const char* api, DeviceCountResult result, int devices, int driver_version,
                        int runtime_version, int minimum_runtime, const std::string& error_text);

// "X.Y" of a 1000 * major + 10 * minor version.
std::string version_string(int version);

// One PE of this node as the GPU backend sees it: its process and its device.
struct PeDevice {
  int pe = -1;
  std::uint64_t pid = 0;
  std::array<unsigned char, 16> uuid{};
};

// Same-process PEs (threads) on one GPU can deadlock: their grids are not guaranteed
// co-resident, and a device-wide wait of one waits for the other's kernels. Returns "" when no
// two PEs of `node` share both a process and a device, else the error naming both PEs.
std::string same_process_device_sharing(const std::vector<PeDevice>& node);

// Whether this PE maps a P2P-reachable peer's heap for load/store: only when the link also has
// native atomics, which signals, barrier arrivals, the abort CAS and sub-word copies need.
// Without them the peer is treated as unreachable (the proxy path), and `note` says so.
bool map_peer_over_link(bool peer_access, bool native_atomics, int pe, int peer, std::string& note);

// Issue 17 item 1: where the VMM path puts a PE's segment. The runtime asks for `bytes` with a
// hole [hole_offset, hole_offset + hole_bytes) between the heap and its control area. When both
// ends of the hole fall on the allocation granularity, the heap and the control area are two
// allocations mapped into one reserved range, and the hole (plus one granule before the heap and
// one after the control area) stays reserved but unmapped: a kernel's tile that runs off the
// heap, in either direction, faults instead of reaching a control word or a neighbour. Otherwise
// (granularity coarser than the hole's alignment, no hole asked for) one allocation backs the
// whole segment, hole included, as on the IPC path; `why_whole` says why.
struct VmmLayout {
  std::size_t lead = 0;            // unmapped bytes before the heap (the mapping's base is here)
  std::size_t heap_bytes = 0;      // the first allocation, at the base
  std::size_t control_offset = 0;  // the second allocation, from the base; 0 when there is none
  std::size_t control_bytes = 0;
  std::size_t reserved = 0;  // the whole reservation, guards included
  std::string why_whole;     // empty when split
  bool split() const { return control_bytes != 0; }
  // The segment's size as peers compare it: from the base to the end of what is mapped.
  std::size_t segment_bytes() const {
    return split() ? control_offset + control_bytes : heap_bytes;
  }
};
VmmLayout vmm_layout(std::size_t bytes, std::size_t hole_offset, std::size_t hole_bytes,
                     std::size_t granularity);

// Preflight facts of one device, as `tessera-info --gpu` reports them.
struct GpuDeviceFacts {
  int ordinal = 0;
  std::string name;
  int compute_mode = 0;  // 0 default, 1 exclusive thread, 2 prohibited, 3 exclusive process
  bool mig = false;      // a MIG instance (the runtime names it "... MIG ...")
  bool cooperative_launch = false;
  bool host_native_atomics = false;
  bool vmm_posix_fd = false;  // the heap's VMM path (CUDA only)
  int gpudirect_rdma = -1;    // GPUDirect RDMA (the runtime's attribute): 1, 0, -1 n/a (HIP)
  // GPUDirect RDMA on VMM memory, which the heap's VMM path needs to be registered with a NIC:
  // 1, 0, -1 n/a (a runtime without the VMM path)
  int vmm_gpudirect_rdma = -1;
  int multiprocessors = 0;
  // Per GPU kernel of the process (the library's, gpu_kernel_record.hpp): how many of its
  // blocks (of the launch glue's width) one multiprocessor holds at once; -1: the query failed.
  struct Kernel {
    std::string name;
    int blocks_per_sm = -1;
  };
  std::vector<Kernel> kernels;
};

// Per ordered pair of devices: load/store peer access and native atomics over the link.
struct GpuPairFacts {
  int device = 0;
  int peer = 0;
  bool access = false;
  bool native_atomics = false;
};

struct GpuPreflight {
  std::string api;  // "CUDA" or "HIP"
  GpuProbe probe;
  bool mps = false;       // an MPS control daemon's pipe is visible
  int block_threads = 0;  // threads per block of every launch (the launch glue's)
  std::vector<GpuDeviceFacts> devices;
  std::vector<GpuPairFacts> pairs;
};

// The report of one runtime's preflight, a line per fact; `ok` false (with the cause in a line
// starting "FAIL:") when this runtime cannot run Tessera here: no device (the probe's true
// cause), a device without cooperative launch, one whose compute mode prohibits contexts, or a
// kernel of which not one block fits on a multiprocessor (every launch of it would fail).
// Peers without native atomics and hosts without native atomics are reported, not failed (the
// proxy path and the host-side ring lane cover them).
std::string format_preflight(const GpuPreflight& preflight, bool& ok);

}  // namespace tessera::detail
