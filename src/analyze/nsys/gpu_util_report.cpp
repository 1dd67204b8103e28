#include "analyze/nsys/gpu_util_report.hpp"
#include "core/saturating.hpp"
#include "analyze/common/analysis_cache.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "analyze/common/event_budget.hpp"
#include "analyze/common/gpu_busy.hpp"
#include "analyze/common/gpu_index.hpp"
#include "analyze/metrics/gpu_metrics_data.hpp"
#include "analyze/nsys/launch_reports.hpp"
#include "analyze/common/report_text.hpp"
#include "analyze/common/tracer_share.hpp"
#include "core/occupancy.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;

constexpr double kNsPerMs = 1e6;
constexpr double kVerdictBusyPercent = 50.0;  // "mostly busy" from here up
// Peak memory of gpu_utilization per GPU operation (bytes; analyze/common/event_budget.hpp),
// measured on a 10M-event trace and rounded up.
constexpr std::int64_t kGpuUtilBytesPerOp = 150;

// One kernel and how many SMs it can occupy at once (0 = unknown launch facts).
struct KernelSpan {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t stream = 0;
  std::int64_t sms = 0;
};

struct GpuKernels {
  std::vector<KernelSpan> kernels;
  std::int64_t sm_count = 0;  // 0 until a kernel with launch facts is seen
  std::int64_t unknown = 0;   // kernels without launch facts
};

// SMs a kernel's grid can occupy at once: min(sm_count, ceil(grid / blocks per SM)).
std::int64_t kernel_sms(const Statement& st) {
  const std::int64_t grid_blocks = st.column_int(5);
  const std::int64_t sm_count = st.column_int(9);
  if (grid_blocks <= 0 || sm_count <= 0) return 0;
  occupancy::DeviceLimits d;
  d.cc_major = static_cast<int>(st.column_int(10));
  d.cc_minor = static_cast<int>(st.column_int(11));
  d.max_warps_per_sm = st.column_int(12);
  d.max_blocks_per_sm = st.column_int(13);
  d.max_registers_per_sm = st.column_int(14);
  d.max_registers_per_block = st.column_int(15);
  d.max_shared_memory_per_sm = st.column_int(16);
  d.max_threads_per_block = st.column_int(17);
  const auto occ = occupancy::compute(d, {st.column_int(6), st.column_int(7), st.column_int(8)});
  if (!occ || occ->active_blocks_per_sm <= 0) return 0;
  const std::int64_t per_sm = occ->active_blocks_per_sm;
  return std::min(sm_count, grid_blocks / per_sm + (grid_blocks % per_sm != 0 ? 1 : 0));
}

std::map<std::int64_t, GpuKernels> kernels_per_gpu(Database& db, const detail::GpuIndexMap& gpus) {
  std::map<std::int64_t, GpuKernels> out;
  Statement st = db.prepare(
      "SELECT k.pid, k.device_id, COALESCE(k.stream_id, -1), k.start_ns, k.end_ns, "
      "COALESCE(k.grid_x, 0) * COALESCE(k.grid_y, 0) * COALESCE(k.grid_z, 0), "
      "COALESCE(k.block_x, 0) * COALESCE(k.block_y, 0) * COALESCE(k.block_z, 0), "
      "COALESCE(k.registers_per_thread, 0), "
      "COALESCE(k.static_shared_memory, 0) + COALESCE(k.dynamic_shared_memory, 0), "
      "COALESCE(d.sm_count, 0), COALESCE(d.cc_major, 0), COALESCE(d.cc_minor, 0), "
      "COALESCE(d.max_warps_per_sm, 0), COALESCE(d.max_blocks_per_sm, 0), "
      "COALESCE(d.max_registers_per_sm, 0), COALESCE(d.max_registers_per_block, 0), "
      "COALESCE(d.max_shared_memory_per_sm, 0), COALESCE(d.max_threads_per_block, 0) "
      "FROM kernels k LEFT JOIN devices d ON d.pid = k.pid AND d.device_id = k.device_id");
  while (st.step()) {
    GpuKernels& g = out[gpus.index(st.column_int(0), st.column_int(1))];
    const std::int64_t sms = kernel_sms(st);
    if (sms > 0) {
      g.sm_count = std::max(g.sm_count, st.column_int(9));
    } else {
      ++g.unknown;
    }
    g.kernels.push_back({st.column_int(3), st.column_int(4), st.column_int(2), sms});
  }
  return out;
}

struct Sweep {
  double sm_ns = 0;  // ∫ occupied SMs dt (double: a damaged trace's times must not overflow it)
  std::int64_t max_streams = 0;
};

// One pass over kernel starts and ends in time order; at equal times ends come first.
// Starts come from the kernels sorted in place, ends from a heap of the running kernels,
// so the extra memory is the number of kernels running at once, not two events per kernel.
Sweep sweep(GpuKernels& g) {
  std::erase_if(g.kernels, [](const KernelSpan& k) { return k.end_ns <= k.start_ns; });
  std::sort(g.kernels.begin(), g.kernels.end(),
            [](const KernelSpan& a, const KernelSpan& b) { return a.start_ns < b.start_ns; });
  Sweep out;
  std::map<std::int64_t, std::int64_t> running;  // stream → running kernels
  std::int64_t active_sms = 0;
  std::int64_t prev_t = g.kernels.empty() ? 0 : g.kernels.front().start_ns;
  auto event = [&](std::int64_t t, int delta, const KernelSpan& k) {
    // The difference in integers (times since the epoch need 61 bits, a double has 53).
    out.sm_ns += static_cast<double>(std::min(g.sm_count, active_sms)) * static_cast<double>(core::sat_sub(t, prev_t));
    prev_t = t;
    active_sms += delta * k.sms;
    std::int64_t& n = running[k.stream];
    n += delta;
    if (n == 0) running.erase(k.stream);
    out.max_streams = std::max(out.max_streams, static_cast<std::int64_t>(running.size()));
  };
  using Running = std::pair<std::int64_t, const KernelSpan*>;  // (end, kernel), earliest end on top
  std::priority_queue<Running, std::vector<Running>, std::greater<>> ends;
  for (const KernelSpan& k : g.kernels) {
    while (!ends.empty() && ends.top().first <= k.start_ns) {
      event(ends.top().first, -1, *ends.top().second);
      ends.pop();
    }
    event(k.start_ns, +1, k);
    ends.push({k.end_ns, &k});
  }
  for (; !ends.empty(); ends.pop()) event(ends.top().first, -1, *ends.top().second);
  return out;
}

std::string gaps_note(std::int64_t gpu, const IdleGapHistogram& h) {
  static constexpr const char* kLabels[] = {"< 10 µs", "10-100 µs", "0.1-1 ms", ">= 1 ms"};
  std::string text = "GPU " + std::to_string(gpu) + " idle gaps between busy intervals:";
  for (std::size_t i = 0; i < h.size(); ++i) {
    text += std::string(i == 0 ? " " : "; ") + kLabels[i] + ": " + std::to_string(h[i].count) + " (" +
            units::duration_ns(h[i].total_ns) + ")";
  }
  return text;
}

Note verdict(std::int64_t gpu, double busy_pct, double coverage_pct) {
  const std::string who = "GPU " + std::to_string(gpu) + ": ";
  const Verdict v = detail::low_coverage_verdict(busy_pct / 100.0, coverage_pct / 100.0);
  if (v.fires) return {NoteLevel::kWarning, who + v.text()};
  const std::string numbers = "busy " + units::percent(busy_pct) + " of the wall time, SM coverage " +
                              units::percent(coverage_pct) + " of its SMs x wall time";
  if (busy_pct < kVerdictBusyPercent)
    return {NoteLevel::kInfo, who + numbers + ": the GPU is idle most of the wall time; see its idle gaps"};
  return {NoteLevel::kInfo, who + numbers + ": while busy, kernels fill most SMs"};
}

// gpuscope's own share of the wall time (see the header); nullopt when its launch cost is
// unknown.
std::optional<Note> tracer_note(Database& db, std::int64_t wall_ns) {
  const detail::TracerCost cost = detail::tracer_cost(db);
  if (!cost.launch_ns) return std::nullopt;
  const std::int64_t launches = detail::launch_bound(db).launch_calls;
  const std::int64_t others = db.query_int("SELECT COUNT(*) FROM api_calls").value_or(0) - launches;
  // Operators and module calls gpuscope's PyTorch observer recorded, at its measured cost each.
  const auto rows = [&](const char* table, const std::optional<double>& each) -> std::int64_t {
    return each && db.has_table(table) ? db.query_int(std::string("SELECT COUNT(*) FROM ") + table).value_or(0) : 0;
  };
  const std::int64_t ops = rows("torch_ops", cost.torch_op_ns), modules = rows("torch_modules", cost.torch_module_ns);
  const double total = detail::tracer_time_ns(cost, launches, others, ops, modules).value_or(0.0);
  const std::string share = wall_ns > 0 ? units::percent_of(total / static_cast<double>(wall_ns)) : "n/a";
  const std::string api_cost = cost.api_ns ? "x " + units::ns_count(*cost.api_ns) : "at an unknown cost (as 0)";
  std::string torch;
  if (ops > 0) torch += " + " + std::to_string(ops) + " PyTorch operators x " + units::ns_count(*cost.torch_op_ns);
  if (modules > 0)
    torch += " + " + std::to_string(modules) + " module calls x " + units::ns_count(*cost.torch_module_ns);
  const std::string method = cost.method.empty() ? "" : " (" + cost.method + ")";
  return Note{NoteLevel::kInfo, "gpuscope's own tracing cost: about " + units::duration(total * 1e-9) + " (" + share +
                                    " of the wall time) = " + std::to_string(launches) + " launch calls x " +
                                    units::ns_count(*cost.launch_ns) + " + " + std::to_string(others) +
                                    " other API calls " + api_cost + torch + method + "; the times above include it"};
}

}  // namespace

Verdict detail::low_coverage_verdict(double busy, double coverage) {
  Verdict v;
  v.name = "low SM coverage";
  v.rule = "SM coverage < " + units::percent_of(kLowCoverageShareOfBusy) + " of GPU busy (both of the wall time)";
  v.fires = coverage < kLowCoverageShareOfBusy * busy;
  v.evidence = "SM coverage " + units::percent_of(coverage) + " of the SMs x wall time against GPU busy " +
               units::percent_of(busy) + " of the wall time: while busy, its kernels could occupy " +
               (busy > 0 ? units::percent_of(coverage / busy) : std::string("n/a")) +
               " of its SMs on average: busy time is not utilization";
  v.advice =
      "the grids are smaller than the GPU: try larger batches, fused kernels (torch.compile), or independent work on "
      "concurrent streams (see gpu_util)";
  return v;
}

IdleGapHistogram idle_gaps(std::span<const stats::Interval> busy_union) {
  IdleGapHistogram h{};
  for (std::size_t i = 1; i < busy_union.size(); ++i) {
    const std::int64_t gap = core::sat_sub(busy_union[i].start_ns, busy_union[i - 1].end_ns);
    if (gap <= 0) continue;
    const auto bucket = static_cast<std::size_t>(
        std::upper_bound(kIdleGapBoundsNs.begin(), kIdleGapBoundsNs.end(), gap) - kIdleGapBoundsNs.begin());
    ++h[bucket].count;
    h[bucket].total_ns = core::sat_add(h[bucket].total_ns, gap);
  }
  return h;
}

Report gpu_util(Database& db) {
  Report r;
  r.name = "gpu_util";
  r.title = "GPU Utilization: Busy Time vs SM Coverage";
  r.add_column("GPU", "", ColumnType::kInteger)
      .add_column("Name", "", ColumnType::kText)
      .add_column("Wall Time", "ms", ColumnType::kReal)
      .add_column("Busy Time", "ms", ColumnType::kReal)
      .add_column("Busy", "%", ColumnType::kReal)
      .add_column("SM Coverage", "%", ColumnType::kReal);
  // Sampled by the GPU's counters (trace --gpu-metrics): only in a trace that has them.
  const detail::SampledActivity& sampled = detail::sampled_activity(db);
  if (sampled.present)
    r.add_column("SM Active", "%", ColumnType::kReal).add_column("Tensor Active", "%", ColumnType::kReal);
  r.add_column("Max Concurrent Streams", "", ColumnType::kInteger).add_column("Kernels", "", ColumnType::kInteger);
  const auto sampled_mean = [](const std::map<std::int64_t, MetricOverlap>& per_gpu, std::int64_t gpu) -> Cell {
    const auto it = per_gpu.find(gpu);
    return it == per_gpu.end() ? Cell{std::monostate{}} : detail::real_or_null(it->second.mean());
  };
  std::int64_t sampled_ns = 0;  // Σ over GPUs: wall time inside an SM active sample

  std::vector<Note> verdicts, gaps, warnings;
  const std::vector<detail::GpuUtilization> util = detail::gpu_utilization(db);
  for (const detail::GpuUtilization& g : util) {
    const auto wall = static_cast<double>(g.wall_ns);
    Cell busy_pct = std::monostate{};
    Cell coverage = std::monostate{};
    if (g.wall_ns > 0) busy_pct = static_cast<double>(g.busy_ns) / wall * 100.0;
    if (g.wall_ns > 0 && g.sm_count > 0) coverage = g.sm_ns / (static_cast<double>(g.sm_count) * wall) * 100.0;
    if (g.unknown_kernels > 0) {
      warnings.push_back(
          {NoteLevel::kWarning, "GPU " + std::to_string(g.gpu) + ": " + std::to_string(g.unknown_kernels) + " of " +
                                    std::to_string(g.kernels) +
                                    " kernels lack launch facts (grid, block or device limits) and count as "
                                    "occupying no SMs in SM Coverage"});
    }
    if (std::holds_alternative<double>(busy_pct) && std::holds_alternative<double>(coverage))
      verdicts.push_back(verdict(g.gpu, std::get<double>(busy_pct), std::get<double>(coverage)));
    gaps.push_back({NoteLevel::kInfo, gaps_note(g.gpu, g.gaps)});
    Row row{g.gpu, g.name, wall / kNsPerMs, static_cast<double>(g.busy_ns) / kNsPerMs, busy_pct, coverage};
    if (sampled.present) {
      row.push_back(sampled_mean(sampled.sm_active, g.gpu));
      row.push_back(sampled_mean(sampled.tensor_active, g.gpu));
      if (const auto it = sampled.sm_active.find(g.gpu); it != sampled.sm_active.end())
        sampled_ns = core::sat_add(sampled_ns, it->second.covered_ns);
    }
    // Built in place: a temporary Cell here trips GCC 12's -Wmaybe-uninitialized.
    row.emplace_back(std::in_place_type<std::int64_t>, g.max_streams);
    row.emplace_back(std::in_place_type<std::int64_t>, g.kernels);
    r.rows.push_back(std::move(row));
  }
  if (util.empty()) r.add_note(NoteLevel::kInfo, "no GPU activity in the capture range");
  for (auto* group : {&verdicts, &warnings, &gaps})
    for (Note& n : *group) r.notes.push_back(std::move(n));
  if (sampled.present && !util.empty()) {
    const double capacity = static_cast<double>(util.front().wall_ns) * static_cast<double>(util.size());
    r.add_note(NoteLevel::kInfo,
               detail::sampled_columns_note(capacity > 0 ? static_cast<double>(sampled_ns) / capacity : std::nan("")));
  }
  if (!util.empty())
    if (std::optional<Note> n = tracer_note(db, util.front().wall_ns)) r.notes.push_back(std::move(*n));
  return r;
}

namespace detail {
// Uncached; the cached front is below.
std::vector<GpuUtilization> compute_gpu_utilization(store::Database& db);
}  // namespace detail

std::vector<detail::GpuUtilization> detail::compute_gpu_utilization(Database& db) {
  // Every GPU operation's span is held once (busy time) and every kernel's again (SM
  // coverage): counted before either is read.
  check_event_budget({"gpu_util (also top)", "kernels, memcpys and memsets",
                      db.query_int("SELECT (SELECT COUNT(*) FROM kernels) + (SELECT COUNT(*) FROM memcpys) + "
                                   "(SELECT COUNT(*) FROM memsets)")
                          .value_or(0),
                      kGpuUtilBytesPerOp, ""});
  const GpuIndexMap gpus = GpuIndexMap::load(db);
  const std::map<std::int64_t, GpuBusy> busy = busy_per_gpu(db, gpus);
  std::map<std::int64_t, GpuKernels> kernels = kernels_per_gpu(db, gpus);
  const std::int64_t wall_ns = wall_time_ns(db);
  std::vector<GpuUtilization> out;
  for (const auto& [gpu, b] : busy) {
    GpuUtilization& u = out.emplace_back();
    u.gpu = gpu;
    u.name = b.name;
    u.wall_ns = wall_ns;
    u.busy_ns = b.busy_ns;
    u.kernels = b.kernels;
    u.gaps = idle_gaps(b.busy);
    if (const auto it = kernels.find(gpu); it != kernels.end()) {
      GpuKernels& g = it->second;
      const Sweep s = sweep(g);
      u.sm_count = g.sm_count;
      u.sm_ns = s.sm_ns;
      u.max_streams = s.max_streams;
      u.unknown_kernels = g.unknown;
    }
  }
  return out;
}

std::vector<detail::GpuUtilization> detail::gpu_utilization(Database& db) {
  return cached<std::vector<GpuUtilization>>(db, "gpu_utilization", [&] { return compute_gpu_utilization(db); });
}

}  // namespace gpuscope::analyze
