#include "analyze/nsys/top_report.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyze/comm/comm_findings.hpp"
#include "analyze/common/gpu_busy.hpp"
#include "analyze/metrics/gpu_metrics_data.hpp"
#include "analyze/nsys/gpu_util_report.hpp"
#include "analyze/nsys/launch_reports.hpp"
#include "analyze/llm/llm_reports.hpp"
#include "analyze/nsys/memcpy_check.hpp"
#include "analyze/common/report_text.hpp"
#include "analyze/nsys/trace_summary.hpp"
#include "analyze/python/gpu_idle_charge.hpp"
#include "core/saturating.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;

constexpr double kNsPerMs = 1e6;
constexpr const char* kNoActivity = "no GPU activity in the capture range";

// The whole-trace numbers behind the row and the diagnoses.
struct Numbers {
  std::int64_t wall_ns = 0;
  std::int64_t gpus = 0;
  // Sums and products in double: a damaged or foreign log's times can pass 2^63 ns in them.
  double busy_ns = 0;         // Σ over GPUs
  double sm_ns = 0;           // Σ over GPUs with launch facts
  double sm_capacity_ns = 0;  // Σ sm_count × wall over those GPUs
};

Numbers numbers(const std::vector<detail::GpuUtilization>& util) {
  Numbers n;
  for (const detail::GpuUtilization& g : util) {
    n.wall_ns = g.wall_ns;  // one wall span for the whole trace
    ++n.gpus;
    n.busy_ns += static_cast<double>(g.busy_ns);
    if (g.sm_count > 0) {
      n.sm_ns += static_cast<double>(g.sm_ns);
      n.sm_capacity_ns += static_cast<double>(g.sm_count) * static_cast<double>(g.wall_ns);
    }
  }
  return n;
}

// The sampled SM active and tensor active of the GPUs with activity, summed over them.
struct SampledShares {
  MetricOverlap sm_active, tensor_active;
};

SampledShares sampled_shares(const detail::SampledActivity& a, const std::vector<detail::GpuUtilization>& util) {
  SampledShares out;
  const auto add = [](MetricOverlap& sum, const std::map<std::int64_t, MetricOverlap>& per_gpu, std::int64_t gpu) {
    const auto it = per_gpu.find(gpu);
    if (it == per_gpu.end()) return;
    sum.covered_ns = core::sat_add(sum.covered_ns, it->second.covered_ns);
    sum.weight_ns += it->second.weight_ns;
    sum.value_ns += it->second.value_ns;
  };
  for (const detail::GpuUtilization& g : util) {
    add(out.sm_active, a.sm_active, g.gpu);
    add(out.tensor_active, a.tensor_active, g.gpu);
  }
  return out;
}

std::optional<double> ratio(double part, double whole) {
  if (whole <= 0) return std::nullopt;
  return part / whole;
}

Cell percent(const std::optional<double>& fraction) {
  return fraction ? Cell{*fraction * 100.0} : Cell{std::monostate{}};
}

// The CPU-starved test (thresholds in the header) on one set of numbers.
bool starved(const std::optional<double>& busy, bool launch_bound, bool sync_bound) {
  return busy && *busy * 100.0 < kStarvedBusyPercent && !launch_bound && !sync_bound;
}

// CPU-starved (thresholds in the header): the GPU idles and neither launches nor
// synchronization explain it. No graph saving is claimed here: that is launch-bound's.
// With Python samples (trace --python-sampling) a firing verdict names the line gpu_idle_py
// blames most.
Verdict cpu_starved_verdict(Database& db, const std::optional<double>& busy_untraced, const detail::LaunchBound& lb,
                            const detail::SyncBlocked& sb) {
  Verdict v;
  v.name = "CPU-starved";
  v.rule = "GPU busy < " + units::percent(kStarvedBusyPercent) +
           " of the wall time (gpuscope's own launch cost taken out), neither launch-bound nor sync-blocked";
  v.fires = starved(busy_untraced, lb.launch_bound, sb.sync_bound);
  v.evidence = detail::untraced_lead(lb) + "the GPU was idle " + units::percent_of(lb.idle_share_untraced) +
               " of the wall time, yet the CPU was inside launch calls during only " +
               units::percent_of(lb.launching_share_untraced) + " of that idle time and blocked on the GPU " +
               units::percent_of(sb.share) +
               " of the wall time: it spends the gaps elsewhere (Python, framework dispatch, data loading); " +
               std::to_string(lb.graph_gaps) +
               " times a kernel was enqueued after the GPU had finished the previous one on its stream";
  if (v.fires) {
    if (const std::optional<detail::ProcessIdleLine> py = detail::most_idle_line(db)) {
      v.evidence += "; the Python samples put " + units::percent_of(py->line.share) + " of the GPU's idle time in " +
                    py->line.where + " (" +
                    (py->several_processes ? "process " + std::to_string(py->pid) + ", " : std::string()) + "thread " +
                    std::to_string(py->line.tid) + ", see gpu_idle_py)";
    }
  }
  v.advice =
      "cut the CPU's work per step: a larger batch, faster data loading (DataLoader num_workers, pin_memory), "
      "torch.compile or a CUDA graph of the whole step to drop the per-operation CPU cost";
  return v;
}

std::string launch_bound_only_with_tracer_text(const detail::LaunchBound& lb) {
  return "not launch-bound once gpuscope's own cost (" + units::ns_count(lb.tracer_launch_cost_ns) +
         " per launch) is taken out: as traced the CPU was inside launch calls during " +
         units::percent_of(lb.launching_share) + " of the GPU's idle time, without it " +
         units::percent_of(lb.launching_share_untraced) + " (see launch_overhead)";
}

std::string starved_only_with_tracer_text(const detail::LaunchBound& lb, double busy, double busy_untraced) {
  return "not CPU-starved once gpuscope's own cost (" + units::ns_count(lb.tracer_launch_cost_ns) +
         " per launch) is taken out: GPU busy " + units::percent_of(busy) + " of the wall time as traced, " +
         units::percent_of(busy_untraced) + " without it";
}

// The shares top's row shows and its diagnoses judge (nullopt where the wall time is 0).
struct Shares {
  std::optional<double> busy, coverage;
  std::optional<double> busy_untraced;  // without gpuscope's own cost (the wall shrinks by it)
  std::optional<double> launching, blocked;
};

Shares shares(const Numbers& n, const detail::LaunchBound& lb, const detail::SyncBlocked& sb) {
  const auto wall = static_cast<double>(n.wall_ns);
  Shares s;
  s.busy = ratio(static_cast<double>(n.busy_ns), wall * static_cast<double>(n.gpus));
  s.coverage =
      n.wall_ns > 0 ? ratio(static_cast<double>(n.sm_ns), static_cast<double>(n.sm_capacity_ns)) : std::nullopt;
  s.busy_untraced =
      ratio(static_cast<double>(n.busy_ns),
            static_cast<double>(n.wall_ns - lb.tracer_idle_ns - lb.torch_tracer_idle_ns) * static_cast<double>(n.gpus));
  s.launching = n.wall_ns > 0 ? std::optional(lb.launching_share_untraced) : std::nullopt;
  s.blocked = n.wall_ns > 0 ? std::optional(sb.share) : std::nullopt;
  return s;
}

struct Diagnoses {
  std::vector<std::string> fired, only_with_tracer;
};

// Exposed communication and straggler (analyze/comm/comm_findings.hpp: rule and numbers);
// their sentences are read only when they fire.
Verdict exposed_comm_verdict(Database& db, const detail::CommFindings& comm) {
  const bool fires = comm.exposed_fires();
  return {.name = "exposed communication",
          .rule = "NCCL time with no compute kernel beside it >= " + units::percent_of(kExposedCommShare) +
                  " of the step time, all ranks together",
          .fires = fires,
          .evidence = fires ? detail::exposed_sentence(db, comm) : std::string(),
          .advice =
              "overlap it with compute: DDP's gradient buckets start all-reduces during backward "
              "(bucket_cap_mb, gradient_as_bucket_view), FSDP prefetches (backward_prefetch, forward_prefetch); "
              "fewer, larger collectives or a larger batch per GPU (see comm_overlap)",
          .quiet = {}};
}

Verdict straggler_verdict(Database& db, const detail::CommFindings& comm) {
  const bool fires = comm.straggler_fires();
  return {.name = "straggler",
          .rule = "a rank holds the others back at collectives by >= " + units::percent_of(kStragglerShare) +
                  " of the mean step time",
          .fires = fires,
          .evidence = fires ? detail::straggler_sentence(db, comm) : std::string(),
          .advice =
              "find what that rank does that the others do not: its data loading, extra work "
              "(logging, checkpoints, evaluation on one rank), an uneven share of the data, or a slower GPU "
              "(clocks, temperature; see rank_sum and stragglers)",
          .quiet = {}};
}

// Every diagnosis of top, in the header's order, each with its rule and evidence.
std::vector<Verdict> verdicts(Database& db, const Shares& s, const detail::LaunchBound& lb,
                              const detail::SyncBlocked& sb, const detail::MemcpyFindings& copies) {
  std::vector<Verdict> out;
  out.push_back(detail::launch_bound_verdict(lb));
  out.push_back(cpu_starved_verdict(db, s.busy_untraced, lb, sb));
  out.push_back(detail::sync_blocked_verdict(sb));
  if (s.busy && s.coverage) out.push_back(detail::low_coverage_verdict(*s.busy, *s.coverage));
  out.push_back(detail::pageable_verdict(copies));
  out.push_back(detail::serialized_verdict(copies));
  // Many GPUs: only a trace with NCCL kernels (comm_findings is empty otherwise).
  const detail::CommFindings comm = detail::comm_findings(db);
  out.push_back(exposed_comm_verdict(db, comm));
  out.push_back(straggler_verdict(db, comm));
  return out;
}

// The diagnoses that fire (warnings) and those that hold only on the traced numbers (info
// notes). The launch numbers are the untraced ones.
Diagnoses diagnose(Database& db, const Shares& s, const detail::LaunchBound& lb, const detail::SyncBlocked& sb,
                   const detail::MemcpyFindings& copies) {
  Diagnoses d;
  for (const Verdict& v : verdicts(db, s, lb, sb, copies))
    if (v.fires) d.fired.push_back(v.text());
  if (lb.launch_bound_only_with_tracer) d.only_with_tracer.push_back(launch_bound_only_with_tracer_text(lb));
  const bool starved_untraced = starved(s.busy_untraced, lb.launch_bound, sb.sync_bound);
  if (!starved_untraced && starved(s.busy, lb.launch_bound || lb.launch_bound_only_with_tracer, sb.sync_bound))
    d.only_with_tracer.push_back(starved_only_with_tracer_text(lb, *s.busy, s.busy_untraced.value_or(0.0)));
  return d;
}

}  // namespace

std::vector<Report> top(Database& db, const ReportOptions& options) {
  Report r;
  r.name = "top";
  r.title = "Where the Time Goes";
  r.add_column("Wall Time", "ms", ColumnType::kReal)
      .add_column("GPU Busy", "%", ColumnType::kReal)
      .add_column("SM Coverage", "%", ColumnType::kReal);
  // Sampled by the GPU's counters (trace --gpu-metrics): only in a trace that has them.
  const detail::SampledActivity& sampled = detail::sampled_activity(db);
  if (sampled.present)
    r.add_column("SM Active", "%", ColumnType::kReal).add_column("Tensor Active", "%", ColumnType::kReal);
  r.add_column("Launch-Bound", "%", ColumnType::kReal).add_column("Sync-Blocked", "%", ColumnType::kReal);
  Report kernels = top_kernels(db, kTopKernelCount, options);
  detail::add_trace_notes(db, r);

  const std::vector<detail::GpuUtilization> util = detail::gpu_utilization(db);
  if (util.empty()) {  // no kernel, memcpy or memset
    r.add_note(NoteLevel::kInfo, kNoActivity);
    kernels.notes.assign(1, Note{NoteLevel::kInfo, kNoActivity});
    std::vector<Report> out;
    out.push_back(std::move(r));
    out.push_back(std::move(kernels));
    return out;
  }

  const Numbers n = numbers(util);
  const auto wall = static_cast<double>(n.wall_ns);
  const detail::LaunchBound lb = detail::launch_bound(db);
  const detail::SyncBlocked sb = detail::sync_blocked(db);
  const detail::MemcpyFindings copies = detail::memcpy_check_data(db).findings;
  const Shares sh = shares(n, lb, sb);
  Row row{wall / kNsPerMs, percent(sh.busy), percent(sh.coverage)};
  const SampledShares s = sampled_shares(sampled, util);
  if (sampled.present) {
    row.push_back(detail::real_or_null(s.sm_active.mean()));
    row.push_back(detail::real_or_null(s.tensor_active.mean()));
  }
  row.push_back(percent(sh.launching));
  row.push_back(percent(sh.blocked));
  r.rows.push_back(std::move(row));
  const std::string gpus = n.gpus > 1 ? " x " + std::to_string(n.gpus) + " GPUs" : "";
  r.add_note(NoteLevel::kInfo, "GPU Busy (%) is of the wall time" + gpus + ", SM Coverage (%) of the SMs x wall time" +
                                   gpus + "; Launch-Bound (%) is of the GPU's idle time (" +
                                   units::percent_of(lb.idle_share_untraced) +
                                   " of the wall time): the share of it the CPU spent inside launch calls; "
                                   "Sync-Blocked (%) is of the wall time");

  Diagnoses d = diagnose(db, sh, lb, sb, copies);
  for (std::string& text : d.fired) r.add_note(NoteLevel::kWarning, std::move(text));
  if (d.fired.empty()) {
    r.add_note(NoteLevel::kInfo,
               "no diagnosis fired: GPU busy " + (sh.busy ? units::percent_of(*sh.busy) : "n/a") +
                   " of the wall time, CPU in launch calls " + units::percent_of(lb.launching_share_untraced) +
                   " of the GPU's idle time, sync-blocked " + units::percent_of(sb.share) + " of the wall time");
  }
  for (std::string& text : d.only_with_tracer) r.add_note(NoteLevel::kInfo, std::move(text));
  if (std::optional<std::string> llm = llm_top_line(db)) r.add_note(NoteLevel::kInfo, std::move(*llm));
  // After the diagnoses: what the sampled columns are.
  if (sampled.present) {
    const std::optional<double> covered =
        ratio(static_cast<double>(s.sm_active.covered_ns), wall * static_cast<double>(n.gpus));
    r.add_note(NoteLevel::kInfo, detail::sampled_columns_note(covered.value_or(std::nan(""))));
  }

  std::vector<Report> out;
  out.push_back(std::move(r));
  out.push_back(std::move(kernels));
  return out;
}

}  // namespace gpuscope::analyze
