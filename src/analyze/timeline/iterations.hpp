// analyze/iterations: the iterations of each process found from its GPU work alone
// (core/iteration_detector), with the one-line note that says what was found or why nothing
// was. No flags and no step marks needed: a plain `gpuscope trace` of a training loop, a decode
// loop or a C++ loop of kernels gets its steady state this way (docs/steady-state.md).
//
// Reads every kernel (token: its demangled name, kernels.name_id), memcpy (its copy kind) and
// memset of each process, with the launching thread and the launch call's start from api_calls
// through (pid, correlation_id). Lanes are threads; GPU work whose launch call is not in the
// trace (no api_calls row) is laned by stream instead (lane = -1 - stream_id). Launch order is
// the launch call's start (the GPU start where there is none), then the correlation id. A launch
// is blocking (the host waited for it: loss.item(), a cudaDeviceSynchronize at the end of a loop)
// when a synchronize call of its thread made before the thread's next launch returned after it
// ended, or, for a memcpy or memset, when its own call did.
//
// Times are the trace clock (ns), as kernels.start_ns. Errors: store::DatabaseError from
// reading `db`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/iteration_detector.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

struct ProcessIterations {
  std::int64_t pid = 0;
  core::IterationDetection detection;  // iterations on the trace clock, or why there are none
  std::string note;                    // iterations_note(detection)
};

/// The iterations of every process with GPU work, in pid order.
[[nodiscard]] std::vector<ProcessIterations> trace_iterations(store::Database& db);

/// What the detector found, in one line, e.g. "found 22 iterations of 47 launches each on thread
/// 1234, 20 steady (median 2.13 ms each); 2 warm-up left out", or why there is no steady state
/// ("... judged from the first GPU work on"). Pure.
[[nodiscard]] std::string iterations_note(const core::IterationDetection& d);

}  // namespace gpuscope::analyze
