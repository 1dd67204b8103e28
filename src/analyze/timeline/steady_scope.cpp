#include "analyze/timeline/steady_scope.hpp"

#include "analyze/common/gpu_busy.hpp"
#include "core/saturating.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {

std::optional<SteadyScope> steady_scope(store::Database& db, const std::vector<StepFacts>& steps) {
  const auto window = steady_window(steps);
  if (!window) return std::nullopt;
  const stats::Interval wall = detail::wall_span(db);
  TraceFilter f;
  f.from_ns = core::sat_sub(window->first, wall.start_ns);
  f.to_ns = core::sat_sub(window->second, wall.start_ns);
  std::int64_t n = 0, first = -1, last = -1;
  for (const StepFacts& st : steps) {
    if (st.kind != StepFacts::Kind::kSteady) continue;
    ++n;
    if (first < 0) first = st.step;
    last = st.step;
  }
  std::string note = "judged the steady-state training steps only: " + std::to_string(n) + " of " +
                     std::to_string(steps.size()) + " steps (" + std::to_string(first) + " to " + std::to_string(last) +
                     ", " + units::duration_ns(*f.from_ns) + " to " + units::duration_ns(*f.to_ns) +
                     " since the start; warm-up and outlier steps left out: step_sum); --whole-run for the whole "
                     "process";
  return SteadyScope{filter_trace(db, f), *window, std::move(note)};
}

}  // namespace gpuscope::analyze
