// PyTorch's view of a trace recorded with `gpuscope trace --pytorch=ops|modules` (the
// torch_* tables, store/pytorch_tables.hpp): per operator, per module, per training step.
// Each report on a trace without those records is empty with a note saying how to get them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// op_sum — like torch.profiler's key_averages().table(): one row per operator name
/// (forward and backward names as PyTorch records them). Columns: Calls; CPU Total and CPU
/// Self (ns: the calls' range durations; self = minus the operator calls directly inside);
/// Self GPU (ns, the kernels, copies and sets each call launched itself: torch_op_activities;
/// torch.profiler's self CUDA counts copies too) and its Kernels (kernels only); GPU Total
/// (ns, the same launched inside the call, nested operators included); Bwd GPU (ns: the GPU
/// work of the backward calls that belong to this forward operator, by autograd sequence
/// number); GPU (%) = Self GPU of all GPU work time (kernels, copies, sets) in the trace.
/// Sorted by Self GPU.
[[nodiscard]] Report op_sum(store::Database& db);

/// module_sum — one row per nn.Module path ("layer1.0.conv1"): Calls, Fwd CPU (ns, the
/// forward ranges), Fwd GPU (ns, kernels, copies and sets launched inside its forward,
/// submodules included), Bwd GPU (ns, the same of the backward calls whose forward operator
/// ran inside it: needs --pytorch=ops,modules), Top Kernel (by Fwd + Bwd GPU time). In model
/// order (first call).
[[nodiscard]] Report module_sum(store::Database& db);

/// One step (a PyTorch training step, an NVTX step range or an iteration found in the GPU work:
/// analyze/timeline/judged_window.hpp) with what happened inside it.
struct StepFacts {
  std::int64_t pid = 0, step = 0, start_ns = 0, end_ns = 0;  // step: its number; times: trace clock ns
  std::string label;               // how it is shown: "step 3", the NVTX range's text, "iteration 4"
  std::int64_t gpu_busy_ns = 0;    // union of kernel intervals, clipped to the step
  std::int64_t kernels = 0;        // kernels that started inside it
  std::int64_t launch_cpu_ns = 0;  // CPU time of the launch calls made inside it
  enum class Kind { kSteady, kWarmup, kOutlier } kind = Kind::kSteady;
};

/// The PyTorch training steps (torch_steps) of every process, in time order, each measured
/// (measure_steps) and classified (classify_steps per process); empty without PyTorch records.
[[nodiscard]] std::vector<StepFacts> step_facts(store::Database& db);

/// Fills gpu_busy_ns, kernels and launch_cpu_ns of each step from its pid, start_ns and end_ns
/// (any step intervals: PyTorch steps, NVTX ranges, iterations). Does not classify.
void measure_steps(store::Database& db, std::vector<StepFacts>& steps);

/// classify_steps on each process's steps on their own (`steps` grouped by pid, in time order).
void classify_steps_per_process(std::vector<StepFacts>& steps);

/// Classifies steps (of one process, in order) from their wall times: the first step is
/// warm-up (lazy initialisation, cuDNN autotuning, allocator growth), and so is each next
/// one while its wall time is over 1.25 x the median of the later steps; a later step over
/// 1.5 x that median (or under half of it) is an outlier. Pure: for tests.
void classify_steps(std::span<StepFacts> steps);

/// The window the steady-state steps span (first steady start, last steady end), or nullopt
/// when fewer than 2 steps are steady.
[[nodiscard]] std::optional<std::pair<std::int64_t, std::int64_t>> steady_window(const std::vector<StepFacts>& steps);

/// step_sum — one row per step of the judged window's source (judged_window: PyTorch steps, NVTX
/// step ranges or iterations found in the GPU work): Wall, GPU Busy (ms and %), Kernels, Launch
/// CPU (ms), Idle (ms: wall minus GPU busy) and State (steady, warm-up, outlier); notes say where
/// the steps come from and give the steady state's median step time and its spread.
/// `steps`: judged_window(db, true).steps (analyze/timeline/judged_window.hpp), `source` where they
/// come from (step_source_name).
[[nodiscard]] Report step_sum(const std::vector<StepFacts>& steps, std::string_view source);

}  // namespace gpuscope::analyze
