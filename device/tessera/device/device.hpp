// Umbrella header of Tessera's device API (namespace tessera::device): groups, tiles, RMA,
// signals, remote atomics and the device barrier. Header-only; depends on the standard library
// and platform.hpp only.
#pragma once

#include "tessera/device/atomic.hpp"
#include "tessera/device/barrier.hpp"
#include "tessera/device/context.hpp"
#include "tessera/device/failure.hpp"
#include "tessera/device/failure_record.hpp"
#include "tessera/device/flat_context.hpp"
#include "tessera/device/grid.hpp"
#include "tessera/device/group.hpp"
#include "tessera/device/order.hpp"
#include "tessera/device/platform.hpp"
#include "tessera/device/rma.hpp"
#include "tessera/device/signal.hpp"
#include "tessera/device/team.hpp"
#include "tessera/device/tile.hpp"
