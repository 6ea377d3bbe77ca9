// The addresses kernels written in Python (Triton) need, as small host arrays: the heap-base
// table and the kernel Context's fields.
#pragma once

#include <nanobind/nanobind.h>

#include "tessera/runtime.hpp"

namespace tessera::python {

namespace nb = nanobind;

// Field order of Runtime.device_context(), one int64 each; exported as
// tessera.DEVICE_CONTEXT_FIELDS. Pointers are addresses as this process (and its kernels) see them.
// Appending keeps indices stable; never reorder.
inline constexpr const char* kDeviceContextFields[] = {
    "my_pe",         // this PE
    "n_pes",         // PEs in the job
    "heap_size",     // bytes of every PE's heap
    "timeout_ns",    // bound of every wait; 0 = forever
    "flags",         // device::ContextFlags (bit 0: checked mode)
    "peer_base",     // address of the n_pes heap-base table (null entries: not mapped)
    "control_page",  // the control page: barrier counters, abort word (word 16)
    "proxy",         // this PE's network proxy ring, or 0
    "allocations",   // the allocator's live-block table, or 0
};

nb::object heap_bases(const Runtime& rt);
nb::object device_context_array(const Runtime& rt);
nb::tuple device_context_fields();

}  // namespace tessera::python
