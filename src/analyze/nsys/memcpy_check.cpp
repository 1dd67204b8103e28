#include "analyze/nsys/memcpy_check.hpp"

#include "analyze/common/python_sites.hpp"
#include "core/saturating.hpp"
#include "analyze/common/analysis_cache.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyze/common/event_budget.hpp"
#include "analyze/common/gpu_busy.hpp"
#include "analyze/common/gpu_index.hpp"
#include "analyze/common/report_text.hpp"
#include "analyze/nsys/trace_summary.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using stats::Interval;
using store::Database;
using store::Statement;

using Key = std::tuple<std::string, std::string, std::string>;  // operation, src kind, dst kind

struct Group {
  std::int64_t count = 0, bytes = 0, time_ns = 0, small = 0, sync = 0, serialized = 0;
  std::vector<double> gbps;  // per copy with a duration and a size
};

// Per physical GPU: the union of its kernels' intervals (disjoint, sorted).
// Every kernel's span is held once (memory budget: analyze/common/event_budget.hpp; peak bytes
// per kernel measured on a 10M-event trace, rounded up).
constexpr std::int64_t kBytesPerKernel = 60;

std::map<std::int64_t, std::vector<Interval>> kernel_time_per_gpu(Database& db, const detail::GpuIndexMap& gpus) {
  check_event_budget(
      {"memcpy_check", "kernels", db.query_int("SELECT COUNT(*) FROM kernels").value_or(0), kBytesPerKernel, ""});
  std::map<std::int64_t, std::vector<Interval>> out;
  Statement st = db.prepare("SELECT pid, device_id, start_ns, end_ns FROM kernels");
  while (st.step()) out[gpus.index(st.column_int(0), st.column_int(1))].push_back({st.column_int(2), st.column_int(3)});
  for (auto& [gpu, iv] : out) iv = stats::interval_union(std::move(iv));
  return out;
}

// Whether [start, end) meets any interval of `busy` (disjoint, sorted).
bool overlaps(const std::vector<Interval>& busy, std::int64_t start, std::int64_t end) {
  const auto it =
      std::upper_bound(busy.begin(), busy.end(), start, [](std::int64_t t, const Interval& i) { return t < i.end_ns; });
  return it != busy.end() && it->start_ns < end;
}

bool is_host_device(const std::string& kind) {
  return kind == "HtoD" || kind == "DtoH" || kind == "HtoA" || kind == "AtoH";
}

// Copies inside GPU memory: GPU work at device bandwidth (see the header).
bool is_device_copy(const std::string& kind) {
  return kind == "DtoD" || kind == "DtoA" || kind == "AtoD" || kind == "AtoA" || kind == "PtoP";
}

double median_or_nan(std::vector<double> v) { return v.empty() ? std::nan("") : stats::median(std::move(v)); }

// A copy rate held in GB/s (the Median/Best columns' unit), for a note.
std::string gbps_text(double v) { return units::byte_rate(v * 1e9); }

std::string median_gbps_text(std::vector<double> v) {
  const double m = stats::median(v);
  return std::isnan(m) ? std::string("n/a") : gbps_text(m);
}

// What one pass over the copies found: the rows' groups, and the rates (GB/s) the notes
// compare.
struct CopyScan {
  std::map<Key, Group> groups;
  std::vector<double> small_gbps, all_gbps, device_gbps;
  // Copies of ≥ kSmallCopyBytes by copy kind, to compare pageable and pinned at comparable sizes.
  std::map<std::string, std::vector<double>> pageable_large_gbps, pinned_large_gbps;
};

// Reads every copy once: its group's sums and the findings' counts.
CopyScan scan_copies(Database& db, detail::MemcpyFindings& f) {
  const detail::GpuIndexMap gpus = detail::GpuIndexMap::load(db);
  const auto kernel_time = kernel_time_per_gpu(db, gpus);
  static const std::vector<Interval> kNone;
  f.wall_ns = detail::wall_time_ns(db);

  CopyScan out;
  Statement st = db.prepare(
      "SELECT pid, device_id, start_ns, end_ns, bytes, COALESCE(copy_kind, 'unknown'), "
      "COALESCE(src_kind, 'unknown'), COALESCE(dst_kind, 'unknown'), is_async FROM memcpys");
  while (st.step()) {
    const std::int64_t start = st.column_int(2), end = st.column_int(3);
    const std::int64_t duration = core::sat_sub(end, start);
    const bool has_bytes = !st.is_null(4);
    const std::int64_t bytes = has_bytes ? st.column_int(4) : 0;
    const std::string kind = st.column_text(5), src = st.column_text(6), dst = st.column_text(7);
    const bool sync = !st.is_null(8) && st.column_int(8) == 0;
    const auto busy = kernel_time.find(gpus.index(st.column_int(0), st.column_int(1)));
    const bool device = is_device_copy(kind);
    const bool serialized =
        !device && (sync || (duration > 0 && !overlaps(busy == kernel_time.end() ? kNone : busy->second, start, end)));
    const bool small = has_bytes && bytes < kSmallCopyBytes;
    const bool host_device = is_host_device(kind);
    const bool pageable = host_device && (src == "pageable" || dst == "pageable");

    Group& g = out.groups[Key{memcpy_operation_name(kind), src, dst}];
    ++g.count;
    g.bytes = core::sat_add(g.bytes, bytes);
    g.time_ns = core::sat_add(g.time_ns, duration);
    g.small += small ? 1 : 0;
    g.sync += sync ? 1 : 0;
    g.serialized += serialized ? 1 : 0;
    if (duration > 0 && has_bytes) {
      const double gbps = static_cast<double>(bytes) / static_cast<double>(duration);
      g.gbps.push_back(gbps);
      out.all_gbps.push_back(gbps);
      if (small) out.small_gbps.push_back(gbps);
      if (device) out.device_gbps.push_back(gbps);
      if (!small && pageable) out.pageable_large_gbps[kind].push_back(gbps);
      if (!small && host_device && (src == "pinned" || dst == "pinned")) out.pinned_large_gbps[kind].push_back(gbps);
    }

    ++f.copies;
    f.copy_ns = core::sat_add(f.copy_ns, duration);
    f.small += small ? 1 : 0;
    if (pageable) {
      ++f.pageable;
      f.pageable_bytes = core::sat_add(f.pageable_bytes, bytes);
      f.pageable_ns = core::sat_add(f.pageable_ns, duration);
    }
    if (device) {
      ++f.device;
      f.device_ns = core::sat_add(f.device_ns, duration);
    }
    if (serialized) {
      ++f.serialized;
      f.serialized_sync += sync ? 1 : 0;
      f.serialized_ns += duration;
    }
  }
  const auto of_wall = [&f](std::int64_t ns) {
    return f.wall_ns > 0 ? static_cast<double>(ns) / static_cast<double>(f.wall_ns) : 0.0;
  };
  f.serialized_share = of_wall(f.serialized_ns);
  f.pageable_share = of_wall(f.pageable_ns);
  // Pinned copies are compared only in the directions that have pageable ones.
  std::vector<double> pageable_large, pinned_large;
  for (const auto& [kind, v] : out.pageable_large_gbps) {
    pageable_large.insert(pageable_large.end(), v.begin(), v.end());
    if (const auto it = out.pinned_large_gbps.find(kind); it != out.pinned_large_gbps.end())
      pinned_large.insert(pinned_large.end(), it->second.begin(), it->second.end());
  }
  f.pageable_large_gbps = median_or_nan(std::move(pageable_large));
  f.pinned_large_gbps = median_or_nan(std::move(pinned_large));
  return out;
}

// One row per (operation, source, destination), most copy time first.
void add_rows(Report& r, const std::map<Key, Group>& groups) {
  std::vector<std::pair<Key, Group>> sorted(groups.begin(), groups.end());  // key order: the tie-break
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.time_ns > b.second.time_ns; });
  for (const auto& [key, g] : sorted) {
    Cell best = std::monostate{};
    if (!g.gbps.empty()) best = *std::max_element(g.gbps.begin(), g.gbps.end());
    r.rows.push_back(Row{std::get<0>(key), std::get<1>(key), std::get<2>(key), g.count, g.bytes, g.time_ns,
                         detail::real_or_null(stats::median(g.gbps)), best, g.small, g.sync, g.serialized});
  }
}

double of_wall(const detail::MemcpyFindings& f, std::int64_t ns) {
  return f.wall_ns > 0 ? static_cast<double>(ns) / static_cast<double>(f.wall_ns) : 0.0;
}

// The judgements on what the scan found: pageable, serialized and small copies, then the verdict.
void add_notes(Report& r, const detail::MemcpyFindings& f, const CopyScan& scan) {
  if (f.pageable > 0) {
    const Verdict v = detail::pageable_verdict(f);
    r.add_note(v.fires ? NoteLevel::kWarning : NoteLevel::kInfo, v.text());
  }
  if (f.serialized > 0) {
    const Verdict v = detail::serialized_verdict(f);
    r.add_note(v.fires ? NoteLevel::kWarning : NoteLevel::kInfo, v.text());
  }
  if (f.device > 0) {
    r.add_note(NoteLevel::kInfo,
               std::to_string(f.device) + " device copies (device-to-device or peer) took " +
                   units::duration_ns(f.device_ns) + ", " + units::percent_of(of_wall(f, f.device_ns)) +
                   " of the wall time (median " + median_gbps_text(scan.device_gbps) +
                   "): GPU work at device memory bandwidth, like a kernel, not a transfer to hide; to save it, "
                   "avoid the copy (in-place operations, views)");
  }
  if (f.small > 0) {
    r.add_note(NoteLevel::kInfo,
               std::to_string(f.small) + " of " + std::to_string(f.copies) + " copies move fewer than " +
                   std::to_string(kSmallCopyBytes / 1024) + " KiB: their time is mostly fixed cost (median " +
                   median_gbps_text(scan.small_gbps) +
                   (scan.all_gbps.empty() ? std::string()
                                          : ", best copy seen " + gbps_text(*std::max_element(scan.all_gbps.begin(),
                                                                                              scan.all_gbps.end()))) +
                   ") — batch small transfers into one buffer");
  }

  std::string verdict = "verdict: " + std::to_string(f.copies) + " copies took " + units::duration_ns(f.copy_ns) +
                        " of GPU time (" + units::percent_of(of_wall(f, f.copy_ns)) + " of the wall time); ";
  if (detail::pageable_verdict(f).fires) {
    verdict += "pin the pageable host buffers first";
  } else if (detail::serialized_verdict(f).fires) {
    verdict += "overlap the serialized copies with compute";
  } else {
    verdict += "copies are not what holds this program back";
  }
  r.add_note(NoteLevel::kInfo, std::move(verdict));
}

}  // namespace

namespace detail {
// Uncached; the cached front is below.
MemcpyCheck compute_memcpy_check_data(store::Database& db);
}  // namespace detail

detail::MemcpyCheck detail::compute_memcpy_check_data(Database& db) {
  MemcpyCheck out;
  Report& r = out.report;
  MemcpyFindings& f = out.findings;
  r.name = "memcpy_check";
  r.title = "Memory Copy Check: Pageable, Small and Serialized Copies";
  r.add_column("Operation", "", ColumnType::kText)
      .add_column("SrcMemKd", "", ColumnType::kText)
      .add_column("DstMemKd", "", ColumnType::kText)
      .add_column("Count", "", ColumnType::kInteger)
      .add_column("Total", "bytes", ColumnType::kInteger)
      .add_column("Total Time", "ns", ColumnType::kInteger)
      .add_column("Median", "GB/s", ColumnType::kReal)
      .add_column("Best", "GB/s", ColumnType::kReal)
      .add_column("Small", "", ColumnType::kInteger)
      .add_column("Sync", "", ColumnType::kInteger)
      .add_column("Serialized", "", ColumnType::kInteger);

  const CopyScan scan = scan_copies(db, f);
  add_rows(r, scan.groups);
  if (f.copies == 0) {
    const bool gpu_activity =
        db.query_int("SELECT (SELECT COUNT(*) FROM kernels) + (SELECT COUNT(*) FROM memsets)").value_or(0) > 0;
    r.add_note(NoteLevel::kInfo,
               gpu_activity ? "no memory copies in the capture range" : "no GPU activity in the capture range");
    return out;
  }
  // With Python call sites: the lines whose copies were pageable (the .to('cuda') to pin) or small.
  const std::string copy_rows =
      "SELECT a.py_stack_id, m.end_ns - m.start_ns, a.name FROM memcpys m JOIN v_api_calls a ON a.pid = m.pid AND "
      "a.correlation_id = m.correlation_id WHERE ";
  if (f.pageable > 0) {
    f.pageable_sites = python_site_totals(db,
                                          copy_rows +
                                              "m.copy_kind IN ('HtoD', 'DtoH', 'HtoA', 'AtoH') AND (m.src_kind = "
                                              "'pageable' OR m.dst_kind = 'pageable')",
                                          3);
  }
  if (f.small > 0)
    f.small_sites = python_site_totals(db, copy_rows + "m.bytes < " + std::to_string(kSmallCopyBytes), 3);
  add_notes(r, f, scan);
  if (!f.pageable_sites.empty()) {
    r.add_note(NoteLevel::kInfo, python_sites_text("the Python lines of the pageable copies:", f.pageable_sites,
                                                   "the pageable copies' time"));
  }
  if (!f.small_sites.empty()) {
    r.add_note(NoteLevel::kInfo,
               python_sites_text("the Python lines of the small copies:", f.small_sites, "the small copies' time"));
  }
  return out;
}

Verdict detail::pageable_verdict(const MemcpyFindings& f) {
  Verdict v;
  v.name = "pageable copies";
  v.quiet = "pageable copies, too little time to matter";
  v.rule = "host-device copies of pageable memory take >= " + units::percent_of(kPageableShareForWarning) +
           " of the wall time";
  v.fires = f.pageable > 0 && f.pageable_share >= kPageableShareForWarning;
  v.evidence = std::to_string(f.pageable) + " host-device copies (" + std::to_string(f.pageable_bytes) + " bytes, " +
               units::duration_ns(f.pageable_ns) + ", " + units::percent_of(f.pageable_share) +
               " of the wall time) use pageable host memory, which the driver stages through a pinned buffer: slower, "
               "and they cannot overlap kernels";
  const std::string size = std::to_string(kSmallCopyBytes / 1024) + " KiB";
  if (!std::isnan(f.pageable_large_gbps)) {
    v.evidence += " (median " + gbps_text(f.pageable_large_gbps) + " for those of >= " + size;
    if (!std::isnan(f.pinned_large_gbps))
      v.evidence += " against " + gbps_text(f.pinned_large_gbps) + " for pinned copies of that size and direction";
    v.evidence += ")";
  }
  if (!f.pageable_sites.empty()) {
    const PySiteTotal& top = f.pageable_sites.front();
    v.evidence += "; " + units::percent_of(top.share) + " of their time comes from " + top.where() +
                  (top.call.empty() ? "" : " (" + top.call + ")");
  }
  if (!v.fires)
    v.evidence += "; below the " + units::percent_of(kPageableShareForWarning) + " that would make pinning worth it";
  v.advice =
      "pin the host buffer: DataLoader(pin_memory=True) or tensor.pin_memory(), then .to('cuda', non_blocking=True); "
      "cudaMallocHost / cudaHostRegister in C++ (see memcpy_check)";
  return v;
}

Verdict detail::serialized_verdict(const MemcpyFindings& f) {
  Verdict v;
  v.name = "serialized copies";
  v.quiet = "serialized copies, too little time to matter";
  v.rule = "host-device copies that are synchronous or run with no kernel on their GPU take >= " +
           units::percent_of(kSerializedShareForWarning) + " of the wall time (device copies never count)";
  v.fires = f.serialized_share >= kSerializedShareForWarning;
  v.evidence = std::to_string(f.serialized) + " of " + std::to_string(f.copies - f.device) +
               " host-device copies serialize with compute (" + std::to_string(f.serialized_sync) + " synchronous, " +
               std::to_string(f.serialized - f.serialized_sync) +
               " with no kernel running on their GPU): " + units::duration_ns(f.serialized_ns) + ", " +
               units::percent_of(f.serialized_share) + " of the wall time";
  v.advice =
      "issue them with cudaMemcpyAsync from pinned memory on their own stream so they overlap kernels, and keep "
      ".item() / .cpu() out of the loop (see memcpy_check)";
  return v;
}

Report memcpy_check(Database& db) { return detail::memcpy_check_data(db).report; }

detail::MemcpyCheck detail::memcpy_check_data(Database& db) {
  return cached<MemcpyCheck>(db, "memcpy_check_data", [&] { return compute_memcpy_check_data(db); });
}

}  // namespace gpuscope::analyze
