// py_sum: where the Python threads spent their time (py_sample_reports.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/common/report_text.hpp"
#include "analyze/python/py_sample_reports.hpp"
#include "analyze/python/py_samples_data.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

constexpr double kNsPerMs = 1e6;

struct FrameCounts {
  std::int64_t self = 0;
  std::int64_t total = 0;
  std::int64_t self_on_cpu = 0;
};

// One thread's samples as they are read.
struct ThreadSamples {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::int64_t samples = 0;
  std::int64_t no_frame = 0;
  std::int64_t last_ts = 0;
  std::vector<double> intervals;    // ns between consecutive samples
  std::vector<FrameCounts> frames;  // by SampleFrames index
};

// What the notes say once per report.
struct Notes {
  std::string periods;   // "thread 1234 every 1 ms (30 samples)"
  std::string no_frame;  // "thread 1235: 5 of 30"
  std::string cut;       // "thread 1234: 3 more frames"
};

void append(std::string& text, const std::string& part) { text += (text.empty() ? "" : "; ") + part; }

void add_thread(Report& r, const ThreadSamples& t, const detail::SampleFrames& frames, Notes& notes) {
  const double period_ns = t.intervals.size() > 0 ? stats::median(t.intervals) : std::nan("");
  const std::string who = "thread " + std::to_string(t.tid) + " (pid " + std::to_string(t.pid) + ")";
  append(notes.periods, who + (std::isnan(period_ns) ? " has 1 sample (no period)"
                                                     : " every " + units::duration(period_ns * 1e-9) + " (" +
                                                           std::to_string(t.samples) + " samples)"));
  if (t.no_frame > 0)
    append(notes.no_frame, std::to_string(t.no_frame) + " of " + std::to_string(t.samples) + " samples of " + who);

  std::vector<std::size_t> order;
  for (std::size_t f = 0; f < t.frames.size(); ++f)
    if (t.frames[f].total > 0) order.push_back(f);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const FrameCounts &x = t.frames[a], &y = t.frames[b];
    return detail::frame_row_before(static_cast<double>(x.total), static_cast<double>(x.self), frames.site(a).where(),
                                    static_cast<double>(y.total), static_cast<double>(y.self), frames.site(b).where());
  });
  if (order.size() > kPySumFramesPerThread) {
    append(notes.cut, who + ": " + std::to_string(order.size() - kPySumFramesPerThread) + " more frames");
    order.resize(kPySumFramesPerThread);
  }
  const auto time_ms = [&](std::int64_t samples) {
    return detail::real_or_null(static_cast<double>(samples) * period_ns / kNsPerMs);
  };
  for (std::size_t f : order) {
    const FrameCounts& c = t.frames[f];
    r.rows.push_back(Row{t.pid, t.tid, frames.site(f).where(), c.self, detail::percent_cell(c.self, t.samples), c.total,
                         detail::percent_cell(c.total, t.samples), time_ms(c.self), time_ms(c.total),
                         detail::percent_cell(c.self_on_cpu, c.self)});
  }
}

}  // namespace

Report py_sum(store::Database& db) {
  Report r = detail::frame_report("py_sum", "Python Threads: Where the Time Went (sampled stacks)");
  r.add_column("Self Samples", "samples", ColumnType::kInteger)
      .add_column("Self", "%", ColumnType::kReal)
      .add_column("Total Samples", "samples", ColumnType::kInteger)
      .add_column("Total", "%", ColumnType::kReal)
      .add_column("Self Time", "ms", ColumnType::kReal)
      .add_column("Total Time", "ms", ColumnType::kReal)
      .add_column("Self On CPU", "%", ColumnType::kReal);
  if (detail::noted_without_samples(db, r)) return r;

  detail::SampleFrames frames(db);
  Notes notes;
  ThreadSamples t;
  bool open = false;
  store::Statement st =
      db.prepare("SELECT pid, tid, ts_ns, COALESCE(py_stack_id, 0), on_cpu FROM py_samples ORDER BY pid, tid, ts_ns");
  while (st.step()) {
    const std::int64_t pid = st.column_int(0), tid = st.column_int(1), ts = st.column_int(2);
    if (!open || pid != t.pid || tid != t.tid) {
      if (open) add_thread(r, t, frames, notes);
      t = ThreadSamples{};
      t.pid = pid;
      t.tid = tid;
      open = true;
    } else {
      t.intervals.push_back(static_cast<double>(ts - t.last_ts));
    }
    t.last_ts = ts;
    ++t.samples;
    const detail::SampleStack& stack = frames.stack(st.column_int(3));
    if (stack.frames.empty()) {
      ++t.no_frame;
      continue;
    }
    for (std::size_t at : stack.firsts) {
      const std::size_t f = stack.frames[at];
      if (f >= t.frames.size()) t.frames.resize(f + 1);
      ++t.frames[f].total;
    }
    ++t.frames[stack.frames.front()].self;
    if (st.column_int(4) != 0) ++t.frames[stack.frames.front()].self_on_cpu;
  }
  if (open) add_thread(r, t, frames, notes);

  r.add_note(NoteLevel::kInfo,
             "Self Samples counts the samples whose innermost frame is the row's, Total Samples those with it anywhere "
             "in the stack "
             "(once per sample); Self Time and Total Time are samples x the thread's sampling period, the median "
             "interval between its consecutive samples: " +
                 notes.periods);
  if (!notes.no_frame.empty())
    r.add_note(NoteLevel::kInfo, notes.no_frame +
                                     " had no Python frame: the thread was idle in C code or between calls (they "
                                     "count in the thread's samples, in no row)");
  if (!notes.cut.empty())
    r.add_note(NoteLevel::kInfo, "only the first " + std::to_string(kPySumFramesPerThread) +
                                     " frames of each thread are shown: " + notes.cut);
  return r;
}

}  // namespace gpuscope::analyze
