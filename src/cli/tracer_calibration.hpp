// tracer_calibration: what gpuscope's tracing costs per CUDA call on this machine, so the
// launch analyses can tell the program's launch time from the tracer's (docs/stats.md).
//
// `calibrate_tracer` runs `gpuscope __calibrate-child FILE` ten times: five pairs of an
// untraced run and a run with the collector (the trace's own collector settings, capture from
// the start), one after the other, which one first alternating from pair to pair. Each run
// times 30 blocks of 200 kernel launches (<<<1,1>>>) and 30 blocks of 200 cudaEventRecord calls
// after 200 ms of warm-up launches, and writes each block's ns per call. Cost per call = the
// median over the pairs of the traced run's fastest block minus its partner's, clamped at 0
// (core/tracer_cost.hpp says why pairs, and why not the fastest block of all). About 10 s; the
// result is cached for 7 days in $XDG_CACHE_HOME/gpuscope (else ~/.cache/gpuscope), keyed by
// host, gpuscope version, the statistic and the collector settings.
// Errors: never throws; a failed calibration (no GPU, a child that failed) returns
// nullopt and says why in *why.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::cli {

struct TracerCost {
  double launch_ns = 0;  // CPU ns tracing adds to one kernel launch call
  double api_ns = 0;     // ... to one other recorded API call (cudaEventRecord)
  std::string method;    // one line: how and when it was measured
};

/// See the file comment. `collector_env`: the GPUSCOPE_* variables of the trace.
[[nodiscard]] std::optional<TracerCost> calibrate_tracer(
    const std::vector<std::pair<std::string, std::string>>& collector_env, const std::filesystem::path& inject,
    bool use_cache, std::string* why);

/// The child: times the loops on the current GPU and writes "launch NS" and "api NS"
/// lines (one per block) to `out_path`. Returns 0, or 2 with a message on stderr.
int run_calibrate_child(const std::string& out_path);

}  // namespace gpuscope::cli
