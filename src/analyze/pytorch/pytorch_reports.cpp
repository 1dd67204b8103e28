#include "analyze/pytorch/pytorch_reports.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/range_sweep.hpp"
#include "core/saturating.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;

constexpr double kNsPerMs = 1e6;

bool has_pytorch_tables(Database& db) {
  return db.has_table("torch_ops") && db.has_table("torch_modules") && db.has_table("torch_steps") &&
         db.has_table("torch_op_activities");
}

void note_no_records(Report& r, const char* what) {
  r.add_note(NoteLevel::kInfo,
             std::string("no PyTorch ") + what +
                 " in the capture range: record with `gpuscope trace --pytorch=ops,modules -- python3 "
                 "train.py` (docs/pytorch.md)");
}

struct OpCall {
  std::int64_t name_id, start, end;
  std::int64_t parent = 0, forward = 0, module = 0;  // nvtx ids; 0 = none
  bool backward = false;
};

// The tables of GPU work an API call can launch: torch.profiler's "self CUDA" of an operator
// counts all three (a copy is aten::_local_scalar_dense's device time).
constexpr const char* kGpuWorkTables[] = {"kernels", "memcpys", "memsets"};

// For a query over one of kGpuWorkTables aliased k: the select expression of its short name
// (a kernel's base name; '' for copies and sets) and the join it needs.
struct WorkName {
  std::string select, join;
};
WorkName work_name(const std::string& table) {
  if (table != "kernels") return {"''", ""};
  return {"COALESCE(s.value, '')", " LEFT JOIN strings s ON s.id = k.short_name_id"};
}

// Every operator call by nvtx id, and each GPU activity (duration) by the call that launched it.
struct OpData {
  struct Work {
    std::int64_t op, ns;
    bool kernel;
  };
  std::unordered_map<std::int64_t, OpCall> calls;
  std::unordered_map<std::int64_t, std::string> names;
  std::vector<Work> work;
  std::int64_t all_gpu_ns = 0;  // kernels, copies and sets of the whole trace
};

OpData load_ops(Database& db) {
  OpData d;
  Statement st = db.prepare(
      "SELECT nvtx_id, name_id, name, start_ns, COALESCE(end_ns, start_ns), COALESCE(parent_op, 0), "
      "COALESCE(forward_op, 0), COALESCE(module_id, 0), is_backward FROM v_torch_ops");
  while (st.step()) {
    OpCall c{st.column_int(1), st.column_int(3), st.column_int(4),     st.column_int(5),
             st.column_int(6), st.column_int(7), st.column_int(8) != 0};
    d.names.emplace(c.name_id, st.column_text(2));
    d.calls.emplace(st.column_int(0), c);
  }
  for (const std::string table : kGpuWorkTables) {
    Statement k = db.prepare("SELECT t.op_nvtx_id, k.end_ns - k.start_ns FROM torch_op_activities t JOIN " + table +
                             " k ON k.pid = t.pid AND k.correlation_id = t.correlation_id");
    while (k.step()) d.work.push_back({k.column_int(0), k.column_int(1), table == "kernels"});
    d.all_gpu_ns = core::sat_add(d.all_gpu_ns,
                                 db.query_int("SELECT COALESCE(SUM(end_ns - start_ns), 0) FROM " + table).value_or(0));
  }
  return d;
}

}  // namespace

Report op_sum(Database& db) {
  Report r;
  r.name = "op_sum";
  r.title = "PyTorch Operator Summary";
  r.add_column("Self GPU", "ns", ColumnType::kInteger)
      .add_column("GPU", "%", ColumnType::kReal)
      .add_column("Calls", "", ColumnType::kInteger)
      .add_column("CPU Total", "ns", ColumnType::kInteger)
      .add_column("CPU Self", "ns", ColumnType::kInteger)
      .add_column("GPU Total", "ns", ColumnType::kInteger)
      .add_column("Bwd GPU", "ns", ColumnType::kInteger)
      .add_column("Kernels", "", ColumnType::kInteger)
      .add_column("Name", "", ColumnType::kText, ColumnKind::kIdentifier);
  if (!has_pytorch_tables(db) || db.query_int("SELECT COUNT(*) FROM torch_ops").value_or(0) == 0) {
    note_no_records(r, "operator calls");
    return r;
  }
  const OpData d = load_ops(db);
  struct Agg {
    std::int64_t calls = 0, cpu_total = 0, cpu_self = 0, self_gpu = 0, gpu_total = 0, bwd_gpu = 0, kernels = 0;
  };
  std::unordered_map<std::int64_t, Agg> by_name;
  for (const auto& [id, c] : d.calls) {
    Agg& a = by_name[c.name_id];
    ++a.calls;
    const std::int64_t dur = core::sat_sub(c.end, c.start);
    a.cpu_total = core::sat_add(a.cpu_total, dur);
    a.cpu_self = core::sat_add(a.cpu_self, dur);
    if (c.parent != 0) {
      const auto p = d.calls.find(c.parent);
      if (p != d.calls.end()) {
        Agg& pa = by_name[p->second.name_id];
        pa.cpu_self = core::sat_sub(pa.cpu_self, dur);
      }
    }
  }
  std::int64_t attributed_ns = 0;
  for (const auto& [op, ns, kernel] : d.work) {
    const auto it = d.calls.find(op);
    if (it == d.calls.end()) continue;
    attributed_ns = core::sat_add(attributed_ns, ns);
    Agg& self = by_name[it->second.name_id];
    self.self_gpu = core::sat_add(self.self_gpu, ns);
    self.kernels += kernel ? 1 : 0;
    // GPU Total: once per operator name on the chain of enclosing calls.
    std::unordered_set<std::int64_t> seen;
    std::int64_t forward = 0;
    for (auto c = it; c != d.calls.end(); c = d.calls.find(c->second.parent)) {
      if (seen.insert(c->second.name_id).second) {
        Agg& a = by_name[c->second.name_id];
        a.gpu_total = core::sat_add(a.gpu_total, ns);
      }
      if (c->second.forward != 0) forward = c->second.forward;
      if (c->second.parent == 0 || seen.size() > 10000) break;
    }
    if (forward != 0) {
      const auto f = d.calls.find(forward);
      if (f != d.calls.end()) {
        Agg& a = by_name[f->second.name_id];
        a.bwd_gpu = core::sat_add(a.bwd_gpu, ns);
      }
    }
  }
  std::vector<std::pair<std::int64_t, Agg>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    if (a.second.self_gpu != b.second.self_gpu) return a.second.self_gpu > b.second.self_gpu;
    if (a.second.cpu_self != b.second.cpu_self) return a.second.cpu_self > b.second.cpu_self;
    return d.names.at(a.first) < d.names.at(b.first);
  });
  for (const auto& [name_id, a] : rows) {
    r.rows.push_back(Row{a.self_gpu,
                         d.all_gpu_ns > 0
                             ? Cell{100.0 * static_cast<double>(a.self_gpu) / static_cast<double>(d.all_gpu_ns)}
                             : Cell{std::monostate{}},
                         a.calls, a.cpu_total, std::max<std::int64_t>(a.cpu_self, 0), a.gpu_total, a.bwd_gpu, a.kernels,
                         d.names.at(name_id)});
  }
  r.add_note(NoteLevel::kInfo,
             "GPU work (kernels, copies, sets) launched inside an operator call: " + units::duration_ns(attributed_ns) +
                 " of " + units::duration_ns(d.all_gpu_ns) + " of GPU time (" +
                 units::percent(d.all_gpu_ns > 0
                                    ? 100.0 * static_cast<double>(attributed_ns) / static_cast<double>(d.all_gpu_ns)
                                    : 0.0) +
                 "); Bwd GPU is the backward work of a forward operator, found by autograd sequence number");
  return r;
}

Report module_sum(Database& db) {
  Report r;
  r.name = "module_sum";
  r.title = "PyTorch Module Summary";
  r.add_column("Fwd GPU", "ns", ColumnType::kInteger)
      .add_column("Bwd GPU", "ns", ColumnType::kInteger)
      .add_column("Calls", "", ColumnType::kInteger)
      .add_column("Fwd CPU", "ns", ColumnType::kInteger)
      .add_column("Top Kernel", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("Module", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("Class", "", ColumnType::kText, ColumnKind::kIdentifier);
  if (!has_pytorch_tables(db) || db.query_int("SELECT COUNT(*) FROM torch_modules").value_or(0) == 0) {
    note_no_records(r, "module forwards");
    return r;
  }
  struct Call {
    std::int64_t pid, tid, start, end, parent, path_id;
  };
  std::unordered_map<std::int64_t, Call> calls;
  std::unordered_map<std::int64_t, std::pair<std::string, std::string>> paths;  // path id -> (path, class)
  core::RangeSweep sweep;  // module forwards per thread, in start order
  {
    Statement st = db.prepare(
        "SELECT nvtx_id, pid, tid, start_ns, COALESCE(end_ns, start_ns), COALESCE(parent_module, 0), path_id, path, "
        "COALESCE(class_name, '') FROM v_torch_modules ORDER BY pid, tid, start_ns, nvtx_id");
    while (st.step()) {
      const std::int64_t id = st.column_int(0);
      calls.emplace(id, Call{st.column_int(1), st.column_int(2), st.column_int(3), st.column_int(4), st.column_int(5),
                             st.column_int(6)});
      paths.emplace(st.column_int(6), std::make_pair(st.column_text(7), st.column_text(8)));
      sweep.add({st.column_int(1), st.column_int(2)}, {st.column_int(3), st.column_int(4), id});
    }
  }
  struct Agg {
    std::int64_t calls = 0, fwd_cpu = 0, fwd_gpu = 0, bwd_gpu = 0, first = 0;
    std::map<std::string, std::int64_t> kernels;
  };
  std::unordered_map<std::int64_t, Agg> agg;  // by path id
  for (const auto& [id, c] : calls) {
    Agg& a = agg[c.path_id];
    if (a.calls++ == 0 || c.start < a.first) a.first = c.start;
    a.fwd_cpu = core::sat_add(a.fwd_cpu, core::sat_sub(c.end, c.start));
  }
  // Adds a kernel to the module call `id` and every enclosing one (each path once).
  const auto charge = [&](std::int64_t id, std::int64_t ns, const std::string& kernel, bool backward) {
    std::unordered_set<std::int64_t> seen;
    for (int guard = 0; id != 0 && guard < 10000; ++guard) {
      const auto it = calls.find(id);
      if (it == calls.end()) break;
      if (seen.insert(it->second.path_id).second) {
        Agg& a = agg[it->second.path_id];
        (backward ? a.bwd_gpu : a.fwd_gpu) = core::sat_add(backward ? a.bwd_gpu : a.fwd_gpu, ns);
        if (!kernel.empty()) a.kernels[kernel] = core::sat_add(a.kernels[kernel], ns);
      }
      id = it->second.parent;
    }
  };
  // Forward: each launching API call against the module ranges open on its thread (one
  // sweep per table of GPU work: each in time order).
  for (const std::string table : kGpuWorkTables) {
    const WorkName name = work_name(table);
    sweep.rewind();
    Statement st = db.prepare("SELECT a.pid, a.tid, a.start_ns, k.end_ns - k.start_ns, " + name.select + " FROM " +
                              table + " k JOIN api_calls a ON a.pid = k.pid AND a.correlation_id = k.correlation_id" +
                              name.join + " ORDER BY a.pid, a.tid, a.start_ns");
    while (st.step()) {
      const std::optional<std::int64_t> module =
          sweep.innermost({st.column_int(0), st.column_int(1)}, st.column_int(2));
      if (module) charge(*module, st.column_int(3), st.column_text(4), false);
    }
  }
  // Backward: kernels of backward operator calls, to the module of their forward operator.
  const std::int64_t backward_ops =
      db.query_int("SELECT COUNT(*) FROM torch_ops WHERE is_backward = 1 AND module_id IS NOT NULL").value_or(0);
  for (const std::string table : kGpuWorkTables) {
    const WorkName name = work_name(table);
    Statement st = db.prepare("SELECT o.module_id, k.end_ns - k.start_ns, " + name.select +
                              " FROM torch_op_activities t JOIN torch_ops o ON o.nvtx_id = t.op_nvtx_id JOIN " + table +
                              " k ON k.pid = t.pid AND k.correlation_id = t.correlation_id" + name.join +
                              " WHERE o.is_backward = 1 AND o.module_id IS NOT NULL");
    while (st.step()) charge(st.column_int(0), st.column_int(1), st.column_text(2), true);
  }
  std::vector<std::pair<std::int64_t, const Agg*>> rows;
  for (const auto& [path_id, a] : agg) rows.emplace_back(path_id, &a);
  std::sort(rows.begin(), rows.end(), [&](const auto& x, const auto& y) {
    return x.second->first != y.second->first ? x.second->first < y.second->first
                                              : paths.at(x.first).first < paths.at(y.first).first;
  });
  for (const auto& [path_id, a] : rows) {
    std::string top;
    std::int64_t top_ns = -1;
    for (const auto& [k, ns] : a->kernels)
      if (ns > top_ns) top = k, top_ns = ns;
    r.rows.push_back(Row{a->fwd_gpu, backward_ops > 0 ? Cell{a->bwd_gpu} : Cell{std::monostate{}}, a->calls, a->fwd_cpu,
                         top, paths.at(path_id).first, paths.at(path_id).second});
  }
  if (backward_ops == 0)
    r.add_note(NoteLevel::kInfo,
               "no backward GPU time per module: it comes from the operator records (--pytorch=ops,modules)");
  r.add_note(NoteLevel::kInfo, "a module's GPU time includes its submodules'; rows are in the order modules first ran");
  return r;
}

void classify_steps(std::span<StepFacts> steps) {
  if (steps.empty()) return;
  for (StepFacts& s : steps) s.kind = StepFacts::Kind::kSteady;
  steps.front().kind = StepFacts::Kind::kWarmup;
  if (steps.size() < 3) return;
  std::vector<double> later;
  for (std::size_t i = 1; i < steps.size(); ++i)
    later.push_back(static_cast<double>(core::sat_sub(steps[i].end_ns, steps[i].start_ns)));
  std::nth_element(later.begin(), later.begin() + static_cast<std::ptrdiff_t>(later.size() / 2), later.end());
  const double median = later[later.size() / 2];
  std::size_t i = 1;
  for (; i < steps.size() && static_cast<double>(core::sat_sub(steps[i].end_ns, steps[i].start_ns)) > 1.25 * median;
       ++i)
    steps[i].kind = StepFacts::Kind::kWarmup;
  for (; i < steps.size(); ++i) {
    const double wall = static_cast<double>(core::sat_sub(steps[i].end_ns, steps[i].start_ns));
    if (wall > 1.5 * median || wall < 0.5 * median) steps[i].kind = StepFacts::Kind::kOutlier;
  }
}

namespace {

// One process's kernels (sorted by start) and launch calls that launched a kernel (sorted by
// start, with running sums of their CPU time), read once for all its steps.
struct ProcessWork {
  std::vector<stats::Interval> kernels;  // [start, end) ns, by start
  std::int64_t longest_kernel_ns = 0;
  std::vector<std::int64_t> launch_starts;   // launch calls' starts, sorted
  std::vector<std::int64_t> launch_cpu_sum;  // launch_cpu_sum[i]: CPU ns of the first i launch calls
};

ProcessWork read_process_work(Database& db, std::int64_t pid) {
  ProcessWork w;
  std::unordered_set<std::int64_t> launched;  // correlation ids with a kernel
  Statement k = db.prepare("SELECT start_ns, end_ns, correlation_id FROM kernels WHERE pid = ?1 ORDER BY start_ns");
  k.bind(1, pid);
  while (k.step()) {
    const std::int64_t s = k.column_int(0), e = k.column_int(1);
    w.kernels.push_back({s, e});
    w.longest_kernel_ns = std::max(w.longest_kernel_ns, core::sat_sub(e, s));
    launched.insert(k.column_int(2));
  }
  Statement a = db.prepare("SELECT start_ns, end_ns, correlation_id FROM api_calls WHERE pid = ?1 ORDER BY start_ns");
  a.bind(1, pid);
  w.launch_cpu_sum.push_back(0);
  while (a.step()) {
    if (!launched.contains(a.column_int(2))) continue;
    w.launch_starts.push_back(a.column_int(0));
    w.launch_cpu_sum.push_back(core::sat_add(w.launch_cpu_sum.back(), core::sat_sub(a.column_int(1), a.column_int(0))));
  }
  return w;
}

void measure_step(const ProcessWork& w, StepFacts& f) {
  // Kernels that overlap [start, end): none starts before start - the longest kernel's length.
  auto it = std::lower_bound(w.kernels.begin(), w.kernels.end(), core::sat_sub(f.start_ns, w.longest_kernel_ns),
                             [](const stats::Interval& i, std::int64_t t) { return i.start_ns < t; });
  std::vector<stats::Interval> busy;
  for (; it != w.kernels.end() && it->start_ns < f.end_ns; ++it) {
    if (it->end_ns <= f.start_ns) continue;
    busy.push_back({std::max(it->start_ns, f.start_ns), std::min(it->end_ns, f.end_ns)});
    if (it->start_ns >= f.start_ns) ++f.kernels;
  }
  f.gpu_busy_ns = stats::union_length(std::move(busy));
  const auto lo = std::lower_bound(w.launch_starts.begin(), w.launch_starts.end(), f.start_ns);
  const auto hi = std::lower_bound(w.launch_starts.begin(), w.launch_starts.end(), f.end_ns);
  f.launch_cpu_ns = core::sat_sub(w.launch_cpu_sum[static_cast<std::size_t>(hi - w.launch_starts.begin())],
                                  w.launch_cpu_sum[static_cast<std::size_t>(lo - w.launch_starts.begin())]);
}

}  // namespace

// Each process's kernels and launch calls are read once (two queries per process, not per step:
// a trace of 5,000 NVTX steps and 1M kernels took minutes with a range query per step).
void measure_steps(Database& db, std::vector<StepFacts>& steps) {
  std::map<std::int64_t, ProcessWork> work;
  for (StepFacts& f : steps) {
    auto it = work.find(f.pid);
    if (it == work.end()) it = work.emplace(f.pid, read_process_work(db, f.pid)).first;
    f.gpu_busy_ns = f.kernels = f.launch_cpu_ns = 0;
    if (f.end_ns > f.start_ns) measure_step(it->second, f);
  }
}

void classify_steps_per_process(std::vector<StepFacts>& steps) {
  for (std::size_t b = 0; b < steps.size();) {
    std::size_t e = b;
    while (e < steps.size() && steps[e].pid == steps[b].pid) ++e;
    classify_steps(std::span<StepFacts>(steps).subspan(b, e - b));
    b = e;
  }
}

std::vector<StepFacts> step_facts(Database& db) {
  std::vector<StepFacts> out;
  if (!has_pytorch_tables(db)) return out;
  Statement st = db.prepare("SELECT pid, step, start_ns, end_ns FROM torch_steps ORDER BY pid, step");
  while (st.step()) {
    StepFacts f;
    f.pid = st.column_int(0);
    f.step = st.column_int(1);
    f.start_ns = st.column_int(2);
    f.end_ns = st.column_int(3);
    f.label = "step " + std::to_string(f.step);
    out.push_back(std::move(f));
  }
  measure_steps(db, out);
  classify_steps_per_process(out);
  return out;
}

std::optional<std::pair<std::int64_t, std::int64_t>> steady_window(const std::vector<StepFacts>& steps) {
  std::int64_t first = 0, last = 0;
  int n = 0;
  for (const StepFacts& s : steps) {
    if (s.kind != StepFacts::Kind::kSteady) continue;
    first = n == 0 ? s.start_ns : std::min(first, s.start_ns);
    last = n == 0 ? s.end_ns : std::max(last, s.end_ns);
    ++n;
  }
  if (n < 2) return std::nullopt;
  return std::make_pair(first, last);
}

Report step_sum(const std::vector<StepFacts>& steps, std::string_view source) {
  Report r;
  r.name = "step_sum";
  r.title = "Training Step Summary";
  r.add_column("Step", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Wall", "ms", ColumnType::kReal)
      .add_column("GPU Busy", "ms", ColumnType::kReal)
      .add_column("GPU Busy", "%", ColumnType::kReal)
      .add_column("Idle", "ms", ColumnType::kReal)
      .add_column("Kernels", "", ColumnType::kInteger)
      .add_column("Launch CPU", "ms", ColumnType::kReal)
      .add_column("State", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("PID", "", ColumnType::kInteger, ColumnKind::kIdentifier);
  if (steps.empty()) {
    r.add_note(NoteLevel::kInfo,
               "no steps in the capture range: steps are the optimizer.step() calls of a PyTorch program traced with "
               "`gpuscope trace --pytorch`, NVTX ranges named like steps (\"step 3\", \"ProfilerStep#3\"), or "
               "iterations found in the GPU work (docs/steady-state.md)");
    return r;
  }
  r.add_note(NoteLevel::kInfo, "steps: " + std::string(source));
  std::vector<double> steady;
  int warmup = 0, outliers = 0;
  for (const StepFacts& s : steps) {
    const double wall = static_cast<double>(core::sat_sub(s.end_ns, s.start_ns));
    const char* state = s.kind == StepFacts::Kind::kSteady   ? "steady"
                        : s.kind == StepFacts::Kind::kWarmup ? "warm-up"
                                                             : "outlier";
    if (s.kind == StepFacts::Kind::kSteady) steady.push_back(wall);
    warmup += s.kind == StepFacts::Kind::kWarmup;
    outliers += s.kind == StepFacts::Kind::kOutlier;
    r.rows.push_back(Row{s.step, wall / kNsPerMs, static_cast<double>(s.gpu_busy_ns) / kNsPerMs,
                         wall > 0 ? Cell{100.0 * static_cast<double>(s.gpu_busy_ns) / wall} : Cell{std::monostate{}},
                         std::max(0.0, wall - static_cast<double>(s.gpu_busy_ns)) / kNsPerMs, s.kernels,
                         static_cast<double>(s.launch_cpu_ns) / kNsPerMs, std::string(state), s.pid});
  }
  if (steady.size() < 2) {  // as steady_window: one step is no steady state
    r.add_note(NoteLevel::kInfo,
               "no steady state: too few steps (" + std::to_string(steps.size()) + ") to tell warm-up from training");
  } else {
    std::sort(steady.begin(), steady.end());
    const double med = steady[steady.size() / 2];
    r.add_note(NoteLevel::kInfo,
               "steady state: " + std::to_string(steady.size()) + " of " + std::to_string(steps.size()) +
                   " steps, median " + units::duration(med / 1e9) + " per step (" +
                   units::duration(steady.front() / 1e9) + " to " + units::duration(steady.back() / 1e9) +
                   "); left out: " + std::to_string(warmup) + " warm-up step(s)" +
                   (outliers ? " and " + std::to_string(outliers) + " outlier(s)" : std::string()) +
                   " (warm-up: the first step, and the next ones while over 1.25 x the median; outlier: over 1.5 x or "
                   "under 0.5 x)");
  }
  return r;
}

}  // namespace gpuscope::analyze
