// Umbrella header of Tessera's host API.
#pragma once

#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"
#include "tessera/heap.hpp"
#include "tessera/runtime.hpp"
