// Deprecated name of <tessera/stream_rma.hpp> (the stream-ordered host calls, *_on_stream).
#pragma once
#include "tessera/stream_rma.hpp"  // IWYU pragma: export
