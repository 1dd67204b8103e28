#include "analyze/diff/trace_diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analyze/common/trace_sql.hpp"
#include "analyze/pytorch/pytorch_reports.hpp"
#include "analyze/timeline/judged_window.hpp"
#include "core/sample_stats.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;

using Window = std::optional<std::pair<std::int64_t, std::int64_t>>;
using Key = std::pair<std::string, std::string>;  // (kind, name)
using Instances = std::map<Key, std::vector<double>>;

constexpr int kMinInstances = 3;

void collect(Database& db, const std::string& kind, const std::string& sql, const Window& window, Instances& out) {
  Statement st = db.prepare(sql);
  while (st.step()) {
    const std::int64_t start = st.column_int(1);
    if (window && (start < window->first || start >= window->second)) continue;
    out[{kind, st.is_null(0) ? std::string("(unnamed)") : st.column_text(0)}].push_back(
        static_cast<double>(st.column_int(2)));
  }
}

struct Side {
  Instances instances;
  std::size_t steady_steps = 0;
};

// The steady state diff compares: the judged window when it comes from steps (not (d), from
// the first GPU work on).
bool has_steady_steps(const JudgedWindow& j) { return j.window && j.source != StepSource::kNone; }

const char* step_name(StepSource s) {
  return s == StepSource::kPytorch ? "training step" : s == StepSource::kNvtx ? "NVTX step" : "iteration";
}

Side read_side(Database& db, const JudgedWindow& judged, bool steady) {
  Side s;
  const std::vector<StepFacts>& steps = judged.steps;
  const Window window = steady ? judged.window : std::nullopt;
  collect(db, "kernel", "SELECT name, start_ns, duration_ns FROM v_kernels", window, s.instances);
  collect(db, "nvtx",
          "SELECT " + std::string(detail::kNvtxRangeNameSql) +
              ", start_ns, duration_ns FROM v_nvtx WHERE end_ns IS NOT NULL AND style <> 'Mark'" +
              detail::user_nvtx_only_sql(db),
          window, s.instances);
  if (db.has_table("torch_ops"))
    collect(db, "op", "SELECT name, start_ns, duration_ns FROM v_torch_ops WHERE end_ns IS NOT NULL", window,
            s.instances);
  for (const StepFacts& f : steps) {
    if (steady && f.kind != StepFacts::Kind::kSteady) continue;
    s.instances[{"step", step_name(judged.source)}].push_back(static_cast<double>(f.end_ns - f.start_ns));
    ++s.steady_steps;
  }
  return s;
}

double total(const std::vector<double>& v) {
  double t = 0;
  for (double x : v) t += x;
  return t;
}

std::string dur(double ns) { return units::duration_ns(static_cast<std::int64_t>(std::llround(ns))); }

Cell int_or_null(double v) { return std::isfinite(v) ? Cell{static_cast<std::int64_t>(std::llround(v))} : Cell{}; }
Cell real_or_null(double v) { return std::isfinite(v) ? Cell{v} : Cell{}; }

struct Compared {
  Key key;
  std::size_t count_a = 0, count_b = 0;
  double total_a = 0, total_b = 0, median_a = std::nan(""), median_b = std::nan("");
  double change = std::nan(""), threshold = std::nan("");
  std::string verdict, category;
};

}  // namespace

Report diff_traces(Database& a, Database& b, const DiffOptions& options) {
  if (!(options.k >= 0) || !(options.floor >= 0))
    throw std::invalid_argument("diff: k and floor must be >= 0 (k " + std::to_string(options.k) + ", floor " +
                                std::to_string(options.floor) + ")");
  // Steady state only when both traces have one (judged_window: PyTorch steps, NVTX step
  // ranges or iterations found in the GPU work).
  const JudgedWindow ja = judged_window(a), jb = judged_window(b);
  const bool steady = !options.whole_run && has_steady_steps(ja) && has_steady_steps(jb);
  const Side sa = read_side(a, ja, steady), sb = read_side(b, jb, steady);

  std::vector<Compared> rows;
  std::map<Key, bool> keys;
  for (const auto& [k, v] : sa.instances) keys[k] = true;
  for (const auto& [k, v] : sb.instances) keys[k] = true;
  for (const auto& [key, unused] : keys) {
    Compared c;
    c.key = key;
    const auto ia = sa.instances.find(key), ib = sb.instances.find(key);
    const std::vector<double> none;
    const std::vector<double>& va = ia == sa.instances.end() ? none : ia->second;
    const std::vector<double>& vb = ib == sb.instances.end() ? none : ib->second;
    c.count_a = va.size();
    c.count_b = vb.size();
    c.total_a = total(va);
    c.total_b = total(vb);
    c.median_a = core::stats::median(va);
    c.median_b = core::stats::median(vb);
    if (va.empty()) {
      c.verdict = "unknown";
      c.category = "added";
    } else if (vb.empty()) {
      c.verdict = "unknown";
      c.category = "deleted";
    } else {
      c.change = c.median_a > 0 ? (c.median_b - c.median_a) / c.median_a : std::nan("");
      const double ra = core::stats::median_rel_stderr(va), rb = core::stats::median_rel_stderr(vb);
      if (va.size() < kMinInstances || vb.size() < kMinInstances || !std::isfinite(ra) || !std::isfinite(rb) ||
          !std::isfinite(c.change)) {
        c.verdict = "unknown";
        c.category = "unknown";
      } else {
        c.threshold = std::max(options.floor, options.k * std::sqrt(ra * ra + rb * rb));
        if (std::abs(c.change) <= c.threshold) {
          c.verdict = "same";
          c.category = "unchanged";
        } else {
          c.verdict = c.change > 0 ? "slower" : "faster";
          c.category = c.change > 0 ? "increased" : "decreased";
        }
      }
    }
    rows.push_back(std::move(c));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Compared& x, const Compared& y) {
    return std::abs(x.total_b - x.total_a) > std::abs(y.total_b - y.total_a);
  });

  Report r;
  r.name = "trace_diff";
  r.title = "What Changed: B against A";
  r.add_column("Kind", "", ColumnType::kText)
      .add_column("Name", "", ColumnType::kText)
      .add_column("Count A", "", ColumnType::kInteger)
      .add_column("Count B", "", ColumnType::kInteger)
      .add_column("Total A", "ns", ColumnType::kInteger)
      .add_column("Total B", "ns", ColumnType::kInteger)
      .add_column("Median A", "ns", ColumnType::kInteger)
      .add_column("Median B", "ns", ColumnType::kInteger)
      .add_column("Change", "%", ColumnType::kReal)
      .add_column("Threshold", "%", ColumnType::kReal)
      .add_column("Verdict", "", ColumnType::kText)
      .add_column("Category", "", ColumnType::kText);
  std::map<std::string, int> per_category;
  const Compared* top = nullptr;
  for (const Compared& c : rows) {
    ++per_category[c.category];
    if (top == nullptr &&
        (c.category == "increased" || c.category == "decreased" || c.category == "added" || c.category == "deleted"))
      top = &c;
    r.rows.push_back(Row{c.key.first, c.key.second, static_cast<std::int64_t>(c.count_a),
                         static_cast<std::int64_t>(c.count_b), int_or_null(c.total_a), int_or_null(c.total_b),
                         int_or_null(c.median_a), int_or_null(c.median_b), real_or_null(c.change * 100),
                         real_or_null(c.threshold * 100), c.verdict, c.category});
  }
  if (top == nullptr) {
    r.add_note(NoteLevel::kInfo, rows.empty() ? "neither trace has kernels, NVTX ranges, operators or steps"
                                              : "nothing changed beyond the noise the repeated instances show");
  } else {
    std::string text = "changed most: " + top->key.first + " " + top->key.second + ", ";
    if (top->category == "added") {
      text += "only in B (" + std::to_string(top->count_b) + " instances, " + dur(top->total_b) + ")";
    } else if (top->category == "deleted") {
      text += "only in A (" + std::to_string(top->count_a) + " instances, " + dur(top->total_a) + ")";
    } else {
      text += std::string(top->change > 0 ? "slower" : "faster") + " by " +
              units::percent(std::abs(top->change) * 100) + " per instance (" + dur(top->median_a) + " -> " +
              dur(top->median_b) + "), total " + dur(top->total_a) + " -> " + dur(top->total_b);
    }
    r.add_note(NoteLevel::kInfo, std::move(text));
  }
  std::string counts;
  for (const char* cat : {"increased", "decreased", "added", "deleted", "unchanged", "unknown"})
    if (per_category[cat] > 0) counts += (counts.empty() ? "" : ", ") + std::to_string(per_category[cat]) + " " + cat;
  if (!counts.empty()) r.add_note(NoteLevel::kInfo, counts);
  r.add_note(NoteLevel::kInfo,
             steady ? "compared over the steady state of each trace (A: " + std::to_string(sa.steady_steps) + " " +
                          step_source_name(ja.source) + ", B: " + std::to_string(sb.steady_steps) + " " +
                          step_source_name(jb.source) + "; warm-up and outliers left out): totals are over those steps"
             : options.whole_run
                 ? std::string("compared over the whole traces (--whole-run)")
                 : std::string("compared over the whole traces: ") +
                       (has_steady_steps(ja)   ? "B has no steady state"
                        : has_steady_steps(jb) ? "A has no steady state"
                                               : "neither has a steady state") +
                       " (PyTorch steps, NVTX ranges named like steps, or iterations found in the GPU work: "
                       "docs/steady-state.md)");
  r.add_note(NoteLevel::kInfo, "a change is called only beyond max(" + units::percent(options.floor * 100) + ", " +
                                   std::to_string(static_cast<int>(options.k)) +
                                   " x the standard error of the difference of the medians); unknown: fewer than " +
                                   std::to_string(kMinInstances) + " instances on a side");
  return r;
}

}  // namespace gpuscope::analyze
