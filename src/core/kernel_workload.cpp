#include "core/kernel_workload.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "core/kernel_metric_sets.hpp"

namespace gpuscope::core::kernels {
namespace {

double get(const MetricValues& values, std::string_view name) {
  const auto it = values.find(name);
  return it == values.end() || !std::isfinite(it->second) ? kUnknown : it->second;
}

std::string join(std::string_view a, std::string_view b, std::string_view c) {
  std::string s(a);
  s += b;
  s += c;
  return s;
}

struct Label {
  std::string_view key;
  std::string_view label;
};
constexpr std::array<Label, 19> kStallLabels{{{"long_scoreboard", "long scoreboard"},
                                              {"barrier", "barrier"},
                                              {"mio_throttle", "MIO throttle"},
                                              {"not_selected", "not selected"},
                                              {"math_pipe_throttle", "math pipe throttle"},
                                              {"short_scoreboard", "short scoreboard"},
                                              {"wait", "wait"},
                                              {"lg_throttle", "LG throttle"},
                                              {"dispatch_stall", "dispatch stall"},
                                              {"drain", "drain"},
                                              {"membar", "membar"},
                                              {"branch_resolving", "branch resolving"},
                                              {"no_instruction", "no instruction"},
                                              {"imc_miss", "IMC miss"},
                                              {"tex_throttle", "TEX throttle"},
                                              {"sleeping", "sleeping"},
                                              {"gmma", "GMMA"},
                                              {"misc", "misc"},
                                              {"selected", "selected"}}};
constexpr std::array<Label, 12> kPipeLabels{{{"fma", "FMA"},
                                             {"alu", "ALU"},
                                             {"lsu", "LSU"},
                                             {"tma", "TMA"},
                                             {"adu", "ADU"},
                                             {"cbu", "CBU"},
                                             {"tex", "TEX"},
                                             {"uniform", "Uniform"},
                                             {"xu", "XU"},
                                             {"fp64", "FP64"},
                                             {"tensor", "tensor"},
                                             {"shared", "shared"}}};

template <std::size_t N>
std::string label_of(const std::array<Label, N>& labels, std::string_view key) {
  for (const Label& l : labels)
    if (l.key == key) return std::string(l.label);
  return std::string(key);
}

template <std::size_t N>
std::vector<std::string_view> keys_of(const std::array<Label, N>& labels) {
  std::vector<std::string_view> keys;
  for (const Label& l : labels) keys.push_back(l.key);
  return keys;
}

}  // namespace

const std::vector<std::string_view>& stall_reasons() {
  static const std::vector<std::string_view> reasons = keys_of(kStallLabels);
  return reasons;
}

const std::vector<std::string_view>& pipe_names() {
  static const std::vector<std::string_view> pipes = keys_of(kPipeLabels);
  return pipes;
}

std::string stall_label(std::string_view reason) { return label_of(kStallLabels, reason); }
std::string pipe_label(std::string_view pipe) { return label_of(kPipeLabels, pipe); }

ComputeWorkload compute_workload(const MetricValues& values) {
  ComputeWorkload w;
  w.ipc_elapsed = get(values, metric::k_ipc_elapsed);
  w.ipc_active = get(values, metric::k_ipc_active);
  w.issued_ipc_active = get(values, metric::k_issued_ipc);
  w.sm_busy_pct = get(values, metric::k_sm_busy);
  w.issue_slots_busy_pct = get(values, metric::k_issue_slots);
  for (std::string_view pipe : pipe_names()) {
    PipeUse p;
    p.pipe = std::string(pipe);
    p.label = pipe_label(pipe);
    p.inst_pct = get(values, join(metric::k_pipe_inst_prefix, pipe, metric::k_pipe_suffix));
    p.cycles_pct =
        get(values, join(metric::k_pipe_cycles_prefix, pipe, join("_cycles_active", metric::k_pipe_suffix, "")));
    if (!std::isfinite(p.inst_pct) && !std::isfinite(p.cycles_pct)) continue;
    p.pct = !std::isfinite(p.inst_pct)     ? p.cycles_pct
            : !std::isfinite(p.cycles_pct) ? p.inst_pct
                                           : std::max(p.inst_pct, p.cycles_pct);
    w.pipes.push_back(std::move(p));
  }
  std::stable_sort(w.pipes.begin(), w.pipes.end(), [](const PipeUse& a, const PipeUse& b) { return a.pct > b.pct; });
  return w;
}

WarpStates warp_states(const MetricValues& values) {
  WarpStates w;
  w.cycles_per_issued = get(values, metric::k_warp_cycles_per_issue);
  w.issue_active = get(values, metric::k_issue_active);
  w.eligible_warps = get(values, metric::k_eligible_warps);
  double sum = 0;
  for (std::string_view reason : stall_reasons()) {
    const double c = get(values, join(metric::k_stall_prefix, reason, metric::k_stall_suffix));
    if (!std::isfinite(c)) continue;
    sum += c;
    if (reason == "selected") {
      w.selected_cycles = c;
      continue;
    }
    w.stalls.push_back({std::string(reason), stall_label(reason), c, kUnknown});
  }
  const double total = std::isfinite(w.cycles_per_issued) && w.cycles_per_issued > 0 ? w.cycles_per_issued : sum;
  for (StallReason& s : w.stalls)
    if (total > 0) s.share_pct = s.cycles / total * 100.0;
  std::stable_sort(w.stalls.begin(), w.stalls.end(),
                   [](const StallReason& a, const StallReason& b) { return a.cycles > b.cycles; });
  return w;
}

}  // namespace gpuscope::core::kernels
