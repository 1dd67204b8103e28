// Test helper: a synthetic job of N ranks (one process and one GPU each, all on one clock)
// with known compute, NCCL and step intervals, built through TraceDb's typed writer. Every
// answer of comm_overlap, rank_sum, stragglers and nccl_sum follows from the parameters by
// hand (test_nccl_reports.cpp works them out). Cheap: 5 kernels per rank and step.
//
// Rank r is pid 100 + r, device 0, host "node<r / 8>", local rank r % 8. Step s (from 0) is
// [s·P, (s+1)·P) with P = 1 ms; inside it (offsets from the step's start):
//   gemm    stream 7   [0, 400 us)
//   relu    stream 8   [100, 200 us)          nested in the gemm (another stream)
//   gemm    stream 7   [500, 700 us)
//   NCCL    stream 20  AllReduce f32: [600 us + delay, 900 us), delay = `delay_ns` for the
//                      delayed rank from step `delay_from` on, else 0
//   gemm    stream 7   [900, 950 us)          after the collective (the next layer)
// The AllReduce is launched inside a PyTorch "nccl:all_reduce" operator with shapes
// [[1048576]] (4 MiB of f32) when `with_ops`.
// `only_rank` ≥ 0 builds that rank's part of the job alone (one rank's trace: the map's input);
// write_trace_file saves a TraceDb as a trace file that gpuscope opens.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "trace_db.hpp"

namespace gpuscope::test {

struct CommJob {
  int ranks = 4;
  int steps = 3;
  int delayed_rank = 2;
  int delay_from = 1;
  long long delay_ns = 100'000;
  bool with_ops = true;
  bool with_steps = true;
  std::vector<int> delayed_steps;  // when not empty: the steps the delayed rank is late in (not delay_from on)
  int only_rank = -1;              // ≥ 0: only this rank's process and events
  int lead_in_step = -1;           // ≥ 0: the delayed rank is late by lead_in_ns in this step instead
  long long lead_in_ns = 0;
};

inline constexpr long long kStepNs = 1'000'000;
inline constexpr const char* kAllReduceName =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

inline void build_comm_job(TraceDb& t, const CommJob& job) {
  t.strings({{1, "gemm(float*)"}, {2, kAllReduceName}, {3, "nccl:all_reduce"}, {4, "relu(float*)"}});
  std::vector<std::string> hosts;
  for (int r = 0; r < job.ranks; ++r) hosts.push_back("node" + std::to_string(r / 8));
  for (int r = 0; r < job.ranks; ++r) {
    if (job.only_rank >= 0 && r != job.only_rank) continue;
    const int pid = 100 + r;
    t.add(rows::Process{.pid = pid,
                        .host = hosts[static_cast<std::size_t>(r)],
                        .start_ns = 0,
                        .end_ns = job.steps * kStepNs,
                        .ended_cleanly = 1,
                        .rank = r,
                        .local_rank = r % 8});
    t.h100(pid);
    int corr = 0;
    for (int s = 0; s < job.steps; ++s) {
      const long long o = s * kStepNs;
      const bool late_step = job.delayed_steps.empty() ? s >= job.delay_from
                                                       : std::find(job.delayed_steps.begin(), job.delayed_steps.end(),
                                                                   s) != job.delayed_steps.end();
      long long delay = r == job.delayed_rank && late_step ? job.delay_ns : 0;
      if (r == job.delayed_rank && s == job.lead_in_step) delay = job.lead_in_ns;
      t.kernel(pid, 0, 7, ++corr, o, o + 400'000, 1);
      t.kernel(pid, 0, 8, ++corr, o + 100'000, o + 200'000, 4);
      t.kernel(pid, 0, 7, ++corr, o + 500'000, o + 700'000, 1);
      t.kernel(pid, 0, 20, ++corr, o + 600'000 + delay, o + 900'000, 2);
      if (job.with_ops) {
        const long long op = pid * 1000 + s;
        t.add(rows::TorchOp{.nvtx_id = op, .pid = pid, .tid = pid, .name_id = 3, .sizes = "[[1048576]]"});
        t.add(rows::TorchOpActivity{.pid = pid, .correlation_id = corr, .op_nvtx_id = op});
      }
      t.kernel(pid, 0, 7, ++corr, o + 900'000, o + 950'000, 1);
      if (job.with_steps) t.add(rows::TorchStep{.pid = pid, .step = s, .start_ns = o, .end_ns = o + kStepNs});
    }
  }
}

/// Saves `t` as a trace file at `path` (replaced if there) whose meta names `host` (the map's
/// clock domain; "" for none) and this schema version, so that store::open_trace reads it.
inline void write_trace_file(TraceDb& t, const std::string& path, const std::string& host) {
  t.add(rows::Meta{.key = "schema_version", .value = std::to_string(store::kSchemaVersion)});
  if (!host.empty()) t.add(rows::Meta{.key = "host", .value = host});
  std::remove(path.c_str());
  std::string quoted;
  for (const char c : path) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  t.db().exec("VACUUM INTO '" + quoted + "'");
}

}  // namespace gpuscope::test
