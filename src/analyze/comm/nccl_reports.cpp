#include "analyze/comm/nccl_reports.hpp"

#include <stdexcept>
#include <string>

#include "analyze/comm/comm_data.hpp"
#include "analyze/comm/comm_findings.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::CommData;
using store::Database;

// A trace without any NCCL kernel name skips loading its facts (may_have_nccl).
const CommData& no_data() {
  static const CommData d;
  return d;
}
const detail::StragglerMatch& no_match() {
  static const detail::StragglerMatch m;
  return m;
}

// The clocks the reduce aligned, when the summaries came from more than one host.
void add_clock_note(Report& r, const CommData& d) {
  if (d.clocks.size() < 2) return;
  std::string text = "clocks of " + std::to_string(d.clocks.size()) + " hosts aligned onto " +
                     (d.clocks[0].domain.empty() ? std::string("the first summary's") : d.clocks[0].domain) + "'s:";
  for (std::size_t i = 1; i < d.clocks.size(); ++i) {
    const detail::ClockAlignment& c = d.clocks[i];
    text += std::string(i > 1 ? ";" : "") + " " + (c.domain.empty() ? "(no host)" : c.domain) + " ";
    if (c.method == "nccl_kernel_ends") {
      text += "moved by " + units::duration_ns(c.offset_ns) + " (" + std::to_string(c.matched) +
              " collectives' ends; error left up to " +
              (c.residual_max_ns ? units::duration_ns(*c.residual_max_ns) : std::string("?")) + ")";
    } else {
      text += "not moved (no collective on every rank to align by)";
    }
  }
  r.add_note(NoteLevel::kInfo, text);
}

}  // namespace

Report nccl_sum(Database& db) {
  if (!detail::may_have_nccl(db)) return nccl_sum(no_data(), no_match());
  return nccl_sum(detail::comm_data(db), detail::straggler_match(db));
}

Report comm_overlap(Database& db) {
  return comm_overlap(detail::may_have_nccl(db) ? detail::comm_data(db) : no_data());
}

Report rank_sum(Database& db) { return rank_sum(detail::comm_data(db)); }

Report stragglers(Database& db) {
  if (!detail::may_have_nccl(db)) return stragglers(no_data(), no_match());
  return stragglers(detail::comm_data(db), detail::straggler_match(db));
}

Report collective_trace(Database& db, std::int64_t first_rows) {
  if (!detail::may_have_nccl(db)) return collective_trace(no_data(), no_match(), first_rows);
  return collective_trace(detail::comm_data(db), detail::straggler_match(db), first_rows);
}

std::span<const std::string_view> comm_report_names() {
  static constexpr std::string_view kNames[] = {"nccl_sum", "comm_overlap", "rank_sum", "stragglers",
                                                "collective_trace"};
  return kNames;
}

Report comm_report(std::string_view name, const CommData& d, const detail::StragglerMatch& m, std::int64_t first_rows) {
  Report r;
  if (name == "nccl_sum") {
    r = nccl_sum(d, m);
  } else if (name == "comm_overlap") {
    r = comm_overlap(d);
  } else if (name == "rank_sum") {
    r = rank_sum(d);
  } else if (name == "stragglers") {
    r = stragglers(d, m);
  } else if (name == "collective_trace") {
    r = collective_trace(d, m, first_rows);
  } else {
    std::string valid;
    for (std::string_view n : comm_report_names()) valid += (valid.empty() ? "" : ", ") + std::string(n);
    throw std::invalid_argument("report '" + std::string(name) +
                                "' does not run on several traces or on summaries (those run: " + valid + ")");
  }
  add_clock_note(r, d);
  return r;
}

}  // namespace gpuscope::analyze
