// kernel_explain: the words of `gpuscope kernels` — what core/kernel_derive computed for
// one launch (the bound, each unit's % of its ceiling, occupancy, the launch threshold)
// and what it could not compute (its DerivationNotes), said as sentences for the reports
// that print them (analyze/kernel_reports' Explanation column and notes, the "What bounds
// each kernel" paragraphs of cli/kernels_output).
//
// Every number goes through core/units.hpp (one spelling per unit: "2.98 TB/s", "99 %",
// "2 µs"); the sentence for each bound follows the classification of
// core/kernel_derive.hpp's file comment, whose thresholds it quotes (kLatencyBelowPct,
// kCloseToLimitPct, kLowOccupancyPct). Pure functions: no I/O, never throw.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/kernel_derive.hpp"

namespace gpuscope::analyze {

/// The plain-language explanation of `derived`: how the busiest units compare ("memory
/// 99 % > compute 5.0 % of their ceilings"), the bound, where the busiest unit stands
/// against its ceiling with the achieved and ceiling rates, what to try, arithmetic
/// intensity and ridge point for compute-bound kernels, occupancy and its limiter, and
/// whether the ceilings were theoretical or Speed-of-Light percentages; with --set compute /
/// warps / detailed, the busiest pipe and the top stall reasons in plain words with what to
/// try (core/kernel_workload.hpp); once kernels::set_time_share() gave the time share, the
/// estimated speedup at the bounding ceiling and the program-level gain. `launch` and
/// `device` are the facts derive() was given (grid size against the SM count, registers
/// or shared memory of the occupancy limiter).
[[nodiscard]] std::string kernel_explanation(const kernels::KernelDerived& derived, const kernels::LaunchFacts& launch,
                                             const kernels::KernelDevice& device);

/// One derivation note as a sentence (what is missing and what to do about it);
/// `ceiling_source` is KernelDerived::ceiling_source ("measured" or "theoretical").
[[nodiscard]] std::string note_text(const kernels::DerivationNote& note, std::string_view ceiling_source);

/// note_text() of each of derived.notes, in their order.
[[nodiscard]] std::vector<std::string> derivation_notes(const kernels::KernelDerived& derived);

}  // namespace gpuscope::analyze
