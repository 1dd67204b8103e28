// References for the ceilings of `gpuscope peak`: what PyTorch reaches on the same GPU,
// timed by a separate python process after gpuscope's own measurement (never at the same
// time). A ceiling is the line every kernel is judged against, so a user's own PyTorch
// call must not beat it: a reference above its ceiling is a warning naming both.
//
// The python program (torch_reference_script) takes `--device N --out FILE` and writes
// FILE as lines (its stdout goes to stderr, so gpuscope's stdout keeps only its tables):
//   torch VERSION
//   reference NAME CEILING BEST MEDIAN WHAT...   (BEST, MEDIAN in the ceiling's unit)
//   unavailable WHY                              (torch missing, no CUDA GPU: a note)
// It times, with CUDA events after warm-up: dst.copy_(src) of a 4 GiB uint8 tensor (best
// and median of 10; bytes = 2 × size, read + write, as dram_copy counts them), and
// torch.matmul of 8192 × 8192 bf16 and fp16 random normal matrices (of 20; 2 × 8192³ FLOP).
// Pure C++ (no CUDA, no process handling: the CLI runs the program).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/machine_profile.hpp"
#include "core/report.hpp"

namespace gpuscope::peak {

struct Reference {
  std::string name;        // "torch_copy", "torch_matmul_bf16", "torch_matmul_fp16"
  std::string ceiling;     // the ceiling it is compared with: "dram_copy", "tensor_bf16", ...
  double best = kUnknown;  // in the ceiling's unit (B/s, FLOP/s)
  double median = kUnknown;
  std::string what;  // "torch dst.copy_(src) of 4 GiB, read + write bytes"
};

struct ReferenceRun {
  std::string torch_version;          // "" when unknown
  std::vector<Reference> references;  // empty when unavailable
  std::string unavailable;            // why there are none, or ""
};

/// The python program (see the file comment).
[[nodiscard]] std::string_view torch_reference_script();

/// Parses the program's output. Lines it does not know, and reference lines whose numbers
/// do not parse, are skipped (a malformed line never stops gpuscope peak); text without any
/// reference or unavailable line gives `unavailable` = "the reference program wrote no result".
[[nodiscard]] ReferenceRun parse_reference_output(std::string_view text);

/// A reference within this fraction above its ceiling (best of N against a median) is
/// within the run-to-run noise of one operation: no warning.
inline constexpr double kReferenceTolerance = 0.01;

/// A reference median within this fraction above its ceiling (a median too) is the same value
/// to the timing's precision: the timing engine stops at a relative standard error of the
/// median of 0.5 % (bench::TimingOptions::max_rel_stderr). Two timings of one operation (torch's
/// copy_ is the cudaMemcpyAsync dram_copy keeps) land either side of each other within it.
inline constexpr double kReferenceMedianTolerance = 0.005;

/// One warning per reference above its ceiling: its median more than kReferenceMedianTolerance
/// above the ceiling's measured value, or its best more than kReferenceTolerance above. Names both and the ratio:
/// "PyTorch torch_copy (...) reached 4299 GB/s (best; median 4290), 106.6 % of the dram_copy
/// ceiling 4033 GB/s: ...". A reference whose ceiling was not measured gets none.
[[nodiscard]] std::vector<std::string> reference_warnings(const MachineProfile& profile,
                                                          std::span<const Reference> references);

/// "peak_references": Reference, Ceiling, Best, Median, Ceiling Value (display unit of the
/// ceiling: GB/s, TFLOP/s), Best / Ceiling (%), Verdict ("below"; "equal": best or median above the ceiling but within
/// the tolerances; "ABOVE"), What; the torch version as a note.
[[nodiscard]] Report reference_report(const MachineProfile& profile, const ReferenceRun& run);

}  // namespace gpuscope::peak
