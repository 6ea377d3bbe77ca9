// `#include <tessera/device.hpp>`: everything a kernel author needs (see device/device.hpp).
#pragma once

#include "tessera/device/device.hpp"
