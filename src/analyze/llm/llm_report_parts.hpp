// Internal: what llm_sum (llm_sum.cpp), llm_step_sum (llm_step_sum.cpp) and generate_loops
// (llm_reports.cpp) share: the cold-start rule's factor, the hint on how to record a generate
// loop, and the sentence saying how forwards were classified.
#pragma once

#include <string>

#include "analyze/llm/llm_generations.hpp"

namespace gpuscope::analyze::detail {

inline constexpr double kNsPerMs = 1e6;
inline constexpr double kColdFactor = 1.5;  // generation 1's TPOT over 1.5 x the others': a cold start

inline constexpr const char* kRecordHint =
    "record the generate loop with `gpuscope trace --pytorch=ops,modules,shapes -- python3 generate.py` (docs/llm.md)";

/// How the forwards were classified prefill or decode with `s` ("from the recorded input shapes ...").
[[nodiscard]] std::string source_text(PhaseSource s);

}  // namespace gpuscope::analyze::detail
