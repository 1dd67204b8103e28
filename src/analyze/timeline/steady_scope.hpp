// steady_scope: the part of a trace that the diagnoses judge when it knows its training
// steps — the steady-state steps (step_facts / steady_window in pytorch_reports.hpp: warm-up
// and outlier steps left out) — as a filtered copy of the trace, with the one note every
// report judged on it carries. `gpuscope stats` (the steady-scoped reports) and
// `gpuscope report` (its headline and per-GPU split) both take it from here, so the page and
// the table say the same.
//
// Errors: store::DatabaseError from reading `db` or building the copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyze/pytorch/pytorch_reports.hpp"
#include "analyze/common/trace_filter.hpp"

namespace gpuscope::analyze {

struct SteadyScope {
  FilteredTrace trace;                           // only the steady window's events (filter_trace)
  std::pair<std::int64_t, std::int64_t> window;  // trace clock ns: first steady start, last steady end
  std::string note;  // "judged the steady-state training steps only: N of M steps (A to B, ...)"
};

/// The steady-state scope of `db` given its steps (step_facts(db)); nullopt when fewer than
/// 2 steps are steady (steady_window), i.e. judge the whole process.
[[nodiscard]] std::optional<SteadyScope> steady_scope(store::Database& db, const std::vector<StepFacts>& steps);

}  // namespace gpuscope::analyze
