// Umbrella header of Tessera's host API.
#pragma once

#include "tessera/bootstrap.hpp"
#include "tessera/error.hpp"
#include "tessera/heap.hpp"
#include "tessera/job_report.hpp"
#include "tessera/launch.hpp"
#include "tessera/runtime.hpp"
#include "tessera/stream.hpp"
#include "tessera/stream_rma.hpp"
#include "tessera/team.hpp"
