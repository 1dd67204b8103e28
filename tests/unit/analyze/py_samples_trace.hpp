// The trace of the Python sample reports' tests (test_py_sample_reports.cpp, and through
// gpuscope_make_py_samples_trace the stats CLI test tests/unit/cli/test_py_samples_cli.sh): one
// process, two Python threads sampled every 1 ms at 0.5, 1.5, ..., 29.5 ms after the process start;
// kernels [0, 10) ms and [20, 30) ms, so the GPU is idle [10, 20) ms: 10 ms of the 30 ms wall time.
//   thread A (1001): train.py:57 <module> → data.py:123 load in the gap (off CPU), else
//                    <module> → train.py:60 step (on CPU): <module> is the shared caller;
//   thread B (1002): worker.py:1 run → worker.py:5 spin (on CPU), but no Python frame at all
//                    for the first 5 samples of the gap (10.5 .. 14.5 ms).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../store/log_builder.hpp"
#include "store/importer.hpp"

namespace gpuscope::test {

inline constexpr std::uint32_t kPid = 100, kA = 1001, kB = 1002;
inline constexpr std::uint64_t kMs = 1'000'000;
inline constexpr std::uint64_t kT0 = 5 * kMs;  // the process start (0 would read as unknown)

enum class Samples { kNone, kEverywhere, kBusyOnly };

// Imports the trace into DIR/t.sqlite and returns its path; `kernels` as [start, end) ms pairs.
inline std::string build(const store::test::TempDir& dir, Samples samples,
                         const std::vector<std::pair<std::uint64_t, std::uint64_t>>& kernels = {{0, 10}, {20, 30}}) {
  const std::string log = dir.file("p.gslog");
  {
    store::test::LogBuilder b(log, kPid);
    b.process(kT0);
    b.device(0, "NVIDIA H100 80GB HBM3");
    b.py_frame(1, "/srv/train.py", 57, "<module>", 1);
    b.py_frame(2, "/srv/data.py", 123, "load", 120);
    b.py_frame(3, "/srv/train.py", 60, "step", 1);
    b.py_frame(4, "/srv/worker.py", 5, "spin", 4);
    b.py_frame(5, "/srv/worker.py", 1, "run", 1);
    b.py_stack(1, 0, 1, 0);  // <module>
    b.py_stack(2, 1, 2, 1);  // load ← <module>
    b.py_stack(3, 1, 3, 1);  // step ← <module>
    b.py_stack(4, 0, 5, 0);  // run
    b.py_stack(5, 4, 4, 1);  // spin ← run
    std::uint32_t corr = 0;
    for (const auto& [s, e] : kernels) {
      b.api(kT0 + s * kMs - 1000, kT0 + s * kMs, kA, ++corr, "cudaLaunchKernel");
      b.kernel(kT0 + s * kMs, kT0 + e * kMs, corr, "k");
    }
    for (std::uint64_t k = 0; k < 30 && samples != Samples::kNone; ++k) {
      const bool gap = k >= 10 && k < 20;
      if (gap && samples == Samples::kBusyOnly) continue;
      const std::uint64_t ts = kT0 + k * kMs + kMs / 2;
      b.py_sample(ts, kA, gap ? 2 : 3, gap ? 0 : log::kPySampleOnCpu | log::kPySampleHoldsGil);
      b.py_sample(ts, kB, k >= 10 && k < 15 ? 0 : 5, k >= 10 && k < 15 ? 0 : log::kPySampleOnCpu);
    }
    b.end(kT0 + 30 * kMs);
    b.flush();
  }
  const std::string db = dir.file("t.sqlite");
  store::ImportOptions opts;
  opts.overwrite = true;
  opts.command = "python train.py";
  opts.launched_pid = kPid;
  (void)store::import_logs({log}, db, opts);
  return db;
}

}  // namespace gpuscope::test
