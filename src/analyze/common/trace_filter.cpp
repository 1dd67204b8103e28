#include "analyze/common/trace_filter.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <utility>

#include "core/saturating.hpp"
#include "analyze/common/gpu_busy.hpp"
#include "analyze/common/gpu_index.hpp"
#include "core/option_values.hpp"
#include "core/units.hpp"
#include "store/trace_copy.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;

constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();

std::string num(std::int64_t v) { return std::to_string(v); }

std::string quoted(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += '\'';
    q += c;
  }
  return q + "'";
}

struct Instance {
  std::int64_t pid = 0, start = 0, end = 0;
};

// The NVTX instances the filter names, in start order.
std::vector<Instance> find_instances(Database& db, const TraceFilter& f, std::int64_t trace_end) {
  const NvtxRangeFilter& n = *f.nvtx;
  std::string sql =
      "SELECT e.pid, e.start_ns, e.end_ns FROM nvtx_events e "
      "JOIN strings t ON t.id = e.text_id LEFT JOIN strings d ON d.id = e.domain_id "
      "WHERE COALESCE(e.style, '') <> 'Mark' AND t.value ";
  sql += n.name.find('*') != std::string::npos ? "GLOB ?1" : "= ?1";
  if (n.domain) sql += n.domain->empty() ? " AND e.domain_id IS NULL" : " AND d.value = ?2";
  if (f.pid) sql += " AND e.pid = " + num(*f.pid);
  sql += " ORDER BY e.start_ns, e.id";
  Statement st = db.prepare(sql);
  st.bind(1, std::string_view(n.name));
  if (n.domain && !n.domain->empty()) st.bind(2, std::string_view(*n.domain));
  std::vector<Instance> out;
  while (st.step()) {
    Instance i;
    i.pid = st.column_int(0);
    i.start = st.column_int(1);
    i.end = st.is_null(2) ? std::max(i.start, trace_end) : st.column_int(2);
    out.push_back(i);
  }
  if (n.instance) {
    if (*n.instance > static_cast<std::int64_t>(out.size())) return {};
    out = {out[static_cast<std::size_t>(*n.instance - 1)]};
  }
  return out;
}

std::int64_t count(Database& db, const std::string& sql) { return db.query_int(sql).value_or(0); }

// A time for a message, as the user may have typed it: 6 significant digits.
std::string seconds(std::int64_t ns) { return units::duration_ns(ns, 6); }

// The (pid, device_id) pairs that are physical GPU `gpu` (analyze/common/gpu_index.hpp).
std::vector<store::PidDevice> devices_of_gpu(Database& source, std::int64_t gpu) {
  const detail::GpuIndexMap map = detail::GpuIndexMap::load(source);
  Statement pairs = source.prepare(
      "SELECT pid, device_id FROM devices UNION SELECT pid, device_id FROM kernels "
      "UNION SELECT pid, device_id FROM memcpys UNION SELECT pid, device_id FROM memsets");
  std::vector<store::PidDevice> out;
  while (pairs.step()) {
    if (pairs.is_null(0) || pairs.is_null(1)) continue;
    const std::int64_t pid = pairs.column_int(0), dev = pairs.column_int(1);
    if (map.index(pid, dev) == gpu) out.push_back({pid, dev});
  }
  return out;
}

// What the trace does contain, for a filter that matched nothing.
std::string nvtx_names_seen(Database& db) {
  Statement st = db.prepare(
      "SELECT t.value, d.value, COUNT(*) AS n FROM nvtx_events e JOIN strings t ON t.id = e.text_id "
      "LEFT JOIN strings d ON d.id = e.domain_id WHERE COALESCE(e.style, '') <> 'Mark' "
      "GROUP BY e.text_id, e.domain_id ORDER BY n DESC, t.value LIMIT 21");
  std::string s;
  int shown = 0;
  while (st.step()) {
    if (++shown > 20) {
      s += ", ...";
      break;
    }
    std::string name = st.column_text(0);
    if (!st.is_null(1)) name += "@" + st.column_text(1);
    s += (s.empty() ? "" : ", ") + quoted(name) + " (" + num(st.column_int(2)) + ")";
  }
  return s.empty() ? "the trace has no NVTX ranges (record with --trace=cuda,nvtx)" : "ranges seen: " + s;
}

std::string pids_seen(Database& db) {
  Statement st = db.prepare(
      "SELECT p.pid, (SELECT cmdline FROM processes q WHERE q.pid = p.pid) FROM (SELECT pid FROM processes "
      "UNION SELECT pid FROM api_calls UNION SELECT pid FROM kernels) p ORDER BY p.pid LIMIT 20");
  std::string s;
  while (st.step()) {
    s += (s.empty() ? "" : ", ") + num(st.column_int(0));
    if (!st.is_null(1)) s += " (" + st.column_text(1).substr(0, 60) + ")";
  }
  return s.empty() ? "the trace has no processes" : "processes: " + s;
}

std::string gpus_seen(Database& db) {
  const detail::GpuIndexMap map = detail::GpuIndexMap::load(db);
  std::map<std::int64_t, std::string> gpus;
  Statement st = db.prepare(
      "SELECT p.pid, p.device_id, (SELECT name FROM devices d WHERE d.pid = p.pid AND d.device_id = p.device_id) "
      "FROM (SELECT pid, device_id FROM devices UNION SELECT pid, device_id FROM kernels UNION "
      "SELECT pid, device_id FROM memcpys UNION SELECT pid, device_id FROM memsets) p");
  while (st.step()) {
    std::string& name = gpus[map.index(st.column_int(0), st.column_int(1))];
    if (name.empty() && !st.is_null(2)) name = st.column_text(2);
  }
  std::string s;
  for (const auto& [i, name] : gpus) s += (s.empty() ? "" : ", ") + num(i) + (name.empty() ? "" : " (" + name + ")");
  return s.empty() ? "the trace has no GPU activity" : "GPUs: " + s;
}

}  // namespace

NvtxRangeFilter parse_nvtx_filter(std::string_view text) {
  NvtxRangeFilter f;
  if (const auto slash = text.rfind('/'); slash != std::string_view::npos && slash + 1 < text.size() &&
                                          text.find_first_not_of("0123456789", slash + 1) == std::string_view::npos) {
    std::int64_t n = 0;
    const auto digits = text.substr(slash + 1);
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || n < 1)
      throw std::invalid_argument("--filter-nvtx '" + std::string(text) +
                                  "': the instance after '/' counts from 1 (e.g. 'step/3' for the third)");
    f.instance = n;
    text = text.substr(0, slash);
  }
  if (const auto at = text.rfind('@'); at != std::string_view::npos) {
    f.domain = std::string(text.substr(at + 1));
    text = text.substr(0, at);
  }
  if (text.empty())
    throw std::invalid_argument("--filter-nvtx needs a range name: RANGE, RANGE@DOMAIN or RANGE/N (e.g. 'train_step')");
  f.name = std::string(text);
  return f;
}

std::int64_t parse_trace_time(std::string_view text) {
  // The one duration grammar of the command line (core/option_values.hpp); a bare number is s.
  const core::OptionValue<std::int64_t> v =
      core::parse_duration_ns(text, core::DurationLimits{0, core::kMaxInt64, 1'000'000'000, "1.5, 2s or 250ms"});
  if (!v.ok()) throw std::invalid_argument(v.error);
  return *v.value;
}

FilteredTrace filter_trace(Database& source, const TraceFilter& filter) {
  const stats::Interval wall = detail::wall_span(source);
  if (filter.from_ns && filter.to_ns && *filter.from_ns > *filter.to_ns)
    throw std::invalid_argument("--from " + seconds(*filter.from_ns) + " is after --to " + seconds(*filter.to_ns));
  store::TraceCopyFilter keep;
  if (filter.from_ns) keep.from_ns = wall.start_ns + *filter.from_ns;
  if (filter.to_ns) keep.to_ns = wall.start_ns + *filter.to_ns;
  const bool time = keep.from_ns || keep.to_ns;
  keep.pid = filter.pid;

  std::vector<std::string> warnings;
  const std::string reason = filter.nvtx ? "nvtx:" + filter.nvtx->name : std::string();
  if (filter.nvtx) {
    const std::vector<Instance> instances = find_instances(source, filter, wall.end_ns);
    if (instances.empty()) {
      const NvtxRangeFilter& n = *filter.nvtx;
      std::string what = quoted(n.name);
      if (n.domain) what += n.domain->empty() ? " in the default domain" : " in domain " + quoted(*n.domain);
      if (filter.pid) what += " in process " + num(*filter.pid);
      what = (n.instance ? "instance " + num(*n.instance) + " of NVTX range " : "NVTX range ") + what;
      warnings.push_back("--filter-nvtx: no " + what + " in the trace; " + nvtx_names_seen(source));
    }
    // CPU events inside the instances, GPU work they launched; one capture window per
    // instance, clipped to the time window.
    keep.ranges.emplace();
    const std::int64_t a = keep.from_ns.value_or(std::numeric_limits<std::int64_t>::min());
    const std::int64_t b = keep.to_ns.value_or(kForever);
    for (const Instance& i : instances) {
      keep.ranges->push_back({i.pid, i.start, i.end});
      const std::int64_t s = std::max(i.start, a), e = std::min(i.end, b);
      if (s <= e) keep.capture_windows.push_back({.pid = i.pid, .start_ns = s, .end_ns = e, .reason = reason});
    }
  }
  if (filter.gpu) keep.devices = devices_of_gpu(source, *filter.gpu);
  keep.widen_spans = filter.nvtx || time;

  Database db = store::copy_trace(source, keep);

  // Warnings: each filter that alone matches nothing, then the combination.
  if (filter.pid) {
    const std::string p = num(*filter.pid);
    if (count(source, "SELECT (SELECT COUNT(*) FROM processes WHERE pid = " + p +
                          ") + (SELECT COUNT(*) FROM "
                          "api_calls WHERE pid = " +
                          p + ") + (SELECT COUNT(*) FROM kernels WHERE pid = " + p + ")") == 0)
      warnings.push_back("--process: no process " + p + " in the trace; " + pids_seen(source));
  }
  if (filter.gpu && keep.devices->empty())
    warnings.push_back("--device: no GPU " + num(*filter.gpu) + " in the trace; " + gpus_seen(source));
  const std::int64_t kept = count(db,
                                  "SELECT (SELECT COUNT(*) FROM kernels) + (SELECT COUNT(*) FROM memcpys) + "
                                  "(SELECT COUNT(*) FROM memsets) + (SELECT COUNT(*) FROM api_calls) + "
                                  "(SELECT COUNT(*) FROM nvtx_events)");
  if (kept == 0 && warnings.empty()) {
    if (time) {
      warnings.push_back("--from/--to: no events in [" + seconds(filter.from_ns.value_or(0)) + ", " +
                         (filter.to_ns ? seconds(*filter.to_ns) : std::string("end")) +
                         "] since the start of the trace, which lasts " +
                         seconds(core::sat_sub(wall.end_ns, wall.start_ns)));
    } else {
      warnings.push_back("the filters together keep no events");
    }
  }

  return FilteredTrace{std::move(db), std::move(warnings)};
}

}  // namespace gpuscope::analyze
