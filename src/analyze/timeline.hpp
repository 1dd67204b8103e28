// analyze::load_timeline: reads a trace database into a Timeline (core/timeline.hpp).
#pragma once

#include "core/timeline.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

using gpuscope::ApiCallEvent;
using gpuscope::GpuEventBase;
using gpuscope::KernelEvent;
using gpuscope::MemcpyEvent;
using gpuscope::MemsetEvent;
using gpuscope::NvtxEvent;
using gpuscope::SyncEvent;
using gpuscope::Timeline;
using gpuscope::TimelineDevice;
using gpuscope::TimelineProcess;
using gpuscope::TimelineThread;

/// Loads the whole trace. Memory grows with the number of events (about
/// 200 bytes each, plus names). Throws store::DatabaseError when the database
/// lacks the schema's tables.
[[nodiscard]] Timeline load_timeline(store::Database& db);

}  // namespace gpuscope::analyze
