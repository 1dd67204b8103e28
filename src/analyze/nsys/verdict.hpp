// A diagnosis as one value: the rule it applies (with its thresholds), whether it fired, the
// numbers it judged in a sentence, and what to try. Each report that shows a diagnosis builds
// it through the one function that owns it (launch_reports.hpp, gpu_util_report.hpp,
// memcpy_check.hpp, top_report.cpp), so the sentence can only state the numbers the rule
// judged, and two reports on the same trace cannot disagree (docs/stats.md, "Diagnoses").
#pragma once

#include <string>

namespace gpuscope::analyze {

struct Verdict {
  std::string name;      // as the warning starts: "launch-bound", "pageable copies", ...
  std::string rule;      // the test in words, with its thresholds (for docs and tests)
  bool fires = false;    // the rule held
  std::string evidence;  // the numbers judged, each saying what it is a share of
  std::string advice;    // what to try; only shown when the verdict fires
  std::string quiet;     // how the text starts when it does not fire; "" = "not <name>"

  /// "name: evidence — advice" when it fires; "not name: evidence" (or "quiet: evidence")
  /// when it does not.
  [[nodiscard]] std::string text() const {
    if (fires) return name + ": " + evidence + (advice.empty() ? "" : " — " + advice);
    return (quiet.empty() ? "not " + name : quiet) + ": " + evidence;
  }
};

}  // namespace gpuscope::analyze
