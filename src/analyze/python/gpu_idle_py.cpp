// gpu_idle_py: which Python line the GPU waited on (py_sample_reports.hpp).
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analyze/common/report_text.hpp"
#include "analyze/python/gpu_idle_charge.hpp"
#include "analyze/python/py_sample_reports.hpp"
#include "analyze/python/py_samples_data.hpp"
#include "core/saturating.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::ProcessGaps;
using detail::ThreadCharge;
using detail::ThreadKey;
using store::Database;

constexpr double kNsPerMs = 1e6;
constexpr const char* kNoFrame = "(no Python frame)";

void add_rows(Report& r, const ThreadKey& key, const ThreadCharge& t, const ProcessGaps& p,
              const detail::SampleFrames& frames, std::string& cut) {
  struct Line {
    std::string frame, caller;
    double self_ns, total_ns;
    std::int64_t samples;
  };
  std::vector<Line> lines;
  for (const auto& [f, c] : t.frames)
    lines.push_back({frames.site(f).where(), detail::top_caller(c), c.self_ns, c.total_ns, c.samples});
  if (t.no_frame_samples > 0) lines.push_back({kNoFrame, "", t.no_frame_ns, t.no_frame_ns, t.no_frame_samples});
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return detail::frame_row_before(a.total_ns, a.self_ns, a.frame, b.total_ns, b.self_ns, b.frame);
  });
  if (lines.size() > kPySumFramesPerThread) {
    cut += (cut.empty() ? "" : "; ") + std::string("thread ") + std::to_string(key.second) + ": " +
           std::to_string(lines.size() - kPySumFramesPerThread) + " more frames";
    lines.resize(kPySumFramesPerThread);
  }
  const auto pct = [&](double ns) -> Cell {
    return p.idle_ns > 0 ? Cell{ns / static_cast<double>(p.idle_ns) * 100.0} : Cell{std::monostate{}};
  };
  for (const Line& l : lines) {
    r.rows.push_back(Row{key.first, key.second, l.frame, l.caller, l.self_ns / kNsPerMs, pct(l.self_ns), l.samples,
                         l.total_ns / kNsPerMs, pct(l.total_ns)});
  }
}

// "GPU idle 33 % of the wall time (10 ms of 30 ms); 100 % of that idle time was sampled in ..."
std::string headline(std::int64_t pid, bool several, const detail::GpuIdleCharges& c) {
  const ProcessGaps& p = c.gaps.at(pid);
  const std::int64_t wall = core::sat_sub(p.window.end_ns, p.window.start_ns);
  std::string text = several ? "process " + std::to_string(pid) + ": " : "";
  text += "GPU idle " +
          (wall > 0 ? units::percent(static_cast<double>(p.idle_ns) / static_cast<double>(wall) * 100.0)
                    : std::string("-")) +
          " of the wall time (" + units::duration_ns(p.idle_ns) + " of " + units::duration_ns(wall) + " in " +
          std::to_string(p.gaps.size()) + (p.gaps.size() == 1 ? " gap)" : " gaps)");
  if (p.idle_ns == 0) return text + ": the GPU was busy the whole window, no idle time to charge to Python lines";
  // The most charged innermost frame of any thread, with its callers.
  const std::optional<detail::IdleLine> line = detail::most_idle_line(c, pid);
  if (!line) {
    bool sampled = false;
    for (const auto& [key, t] : c.threads) sampled = sampled || (key.first == pid && t.no_frame_samples > 0);
    return text + (sampled ? "; only samples with no Python frame fell in it (the threads were in C code)"
                           : "; no Python sample fell in it (sample more often: --python-sampling=RATE)");
  }
  return text + "; " + units::percent(line->share * 100.0) + " of that idle time was sampled in " + line->where +
         " (thread " + std::to_string(line->tid) + ")";
}

}  // namespace

Report gpu_idle_py(Database& db) {
  Report r = detail::frame_report("gpu_idle_py", "GPU Idle Time by Python Line (sampled stacks)");
  r.add_column("Called From", "", ColumnType::kText)
      .add_column("Self Idle Time", "ms", ColumnType::kReal)
      .add_column("Self Idle", "%", ColumnType::kReal)
      .add_column("Samples", "samples", ColumnType::kInteger)
      .add_column("Total Idle Time", "ms", ColumnType::kReal)
      .add_column("Total Idle", "%", ColumnType::kReal);
  if (detail::noted_without_samples(db, r)) return r;
  const detail::GpuIdleCharges charges = detail::gpu_idle_charges(db);
  const std::map<std::int64_t, ProcessGaps>& gaps = charges.gaps;
  if (gaps.empty()) {
    r.add_note(NoteLevel::kInfo, "no GPU work in the capture range: no GPU idle time to charge to Python lines");
    return r;
  }

  const std::map<ThreadKey, ThreadCharge>& threads = charges.threads;
  const detail::SampleFrames& frames = charges.frames;
  const std::set<std::int64_t>& without_gpu = charges.without_gpu;
  std::string cut, coverage;
  for (const auto& [pid, p] : gaps) {
    r.add_note(NoteLevel::kInfo, headline(pid, gaps.size() > 1, charges));
    for (const auto& [key, t] : threads) {
      if (key.first != pid) continue;
      add_rows(r, key, t, p, frames, cut);
      coverage += (coverage.empty() ? "" : "; ") + std::string("thread ") + std::to_string(key.second) + " in " +
                  units::duration(t.sampled_ns * 1e-9) + " (" +
                  units::percent(p.idle_ns > 0 ? t.sampled_ns / static_cast<double>(p.idle_ns) * 100.0 : 0.0) + ")";
    }
  }
  r.add_note(
      NoteLevel::kInfo,
      "each idle gap's length is charged to the samples one thread took in it (gap / that thread's samples in "
      "the gap); Self Idle Time counts samples whose innermost frame is the row's, Total Idle Time those with "
      "it anywhere in the stack (once per sample); % of the process's GPU idle time (wall time - the union of its "
      "GPUs' busy intervals)" +
          (coverage.empty() ? std::string(": no thread was sampled in an idle gap")
                            : "; idle time each thread was sampled in: " + coverage));
  if (!cut.empty())
    r.add_note(NoteLevel::kInfo,
               "only the first " + std::to_string(kPySumFramesPerThread) + " frames of each thread are shown: " + cut);
  if (!without_gpu.empty()) {
    std::string pids;
    for (std::int64_t pid : without_gpu) pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    r.add_note(NoteLevel::kInfo, "process " + pids + " did no GPU work: its samples are not charged");
  }
  return r;
}

}  // namespace gpuscope::analyze
