#include "core/kernel_derive.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/bench_derive.hpp"
#include "core/kernel_metric_sets.hpp"

namespace gpuscope::core::kernels {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool positive(double v) { return std::isfinite(v) && v > 0.0; }
bool known(double v) { return std::isfinite(v); }

double get(const MetricValues& values, std::string_view name) {
  const auto it = values.find(name);
  return it == values.end() ? kNaN : it->second;
}

double measured(const MachineProfile& p, std::string_view name) {
  const Ceiling* c = p.find(name);
  return c && positive(c->measured) ? c->measured : kNaN;
}

struct TensorCounter {
  std::string_view precision;
  std::string_view metric;
  std::string_view ceiling;  // empty: the faster of tensor_fp16 / tensor_bf16
};
constexpr std::array<TensorCounter, 5> kTensorCounters{{
    {"fp16", metric::k_hgmma_fp16, "tensor_fp16"},
    {"bf16", metric::k_hgmma_bf16, "tensor_bf16"},
    {"tf32", metric::k_hgmma_tf32, "tensor_tf32"},
    {"fp8", metric::k_hgmma_fp8, "tensor_fp8"},
    {"pipe", metric::k_tensor_inst, ""},
}};

// With the wgmma counters collected, the tensor-pipe instruction count is not used: it is
// non-zero even in kernels with no tensor work (e.g. 8,448 in kernel_mix's fma_loop on
// H100) and has no fixed FLOP per instruction.
bool any_hgmma_collected(const MetricValues& values) {
  return std::any_of(kTensorCounters.begin(), kTensorCounters.end() - 1,
                     [&](const TensorCounter& c) { return known(get(values, c.metric)); });
}

DerivationNote note(NoteKind kind) {
  DerivationNote n;
  n.kind = kind;
  return n;
}

DerivationNote missing_ceiling(std::string ceiling, std::string unit_label, bool memory) {
  DerivationNote n = note(NoteKind::kMissingCeiling);
  n.subject = std::move(ceiling);
  n.unit_label = std::move(unit_label);
  n.memory = memory;
  return n;
}

// The memory-level utilizations from bytes and time.
void add_memory(KernelDerived& d, const MetricValues& values, const MachineProfile& ceilings) {
  const double t = d.duration_s;
  auto add = [&](std::string unit, std::string label, double bandwidth, std::string ceiling) {
    if (!known(bandwidth)) return;
    const double c = measured(ceilings, ceiling);
    if (!positive(c)) {
      d.notes.push_back(missing_ceiling(std::move(ceiling), std::move(label), true));
      return;
    }
    d.utilizations.push_back(
        {std::move(unit), std::move(label), true, std::move(ceiling), bandwidth, c, bandwidth / c * 100.0});
  };
  if (known(d.dram_bytes)) {
    d.dram_bandwidth = d.dram_bytes / t;
    BenchWork w;
    w.bytes_read = get(values, metric::k_dram_read);
    w.bytes_written = get(values, metric::k_dram_write);
    std::string c = core::memory_ceiling_for(w, "cold", 0);
    if (!positive(measured(ceilings, c))) c = "dram_copy";
    add("dram", "DRAM", d.dram_bandwidth, c);
  }
  if (known(d.l2_bytes)) {
    d.l2_bandwidth = d.l2_bytes / t;
    add("l2", "L2", d.l2_bandwidth, "l2_read");
  }
  if (known(d.l1_bytes)) {
    d.l1_bandwidth = d.l1_bytes / t;
    add("l1", "L1/shared", d.l1_bandwidth, "shared_memory");
  }
}

void add_compute(KernelDerived& d, const MetricValues& values, const MachineProfile& ceilings,
                 const TensorCalibration& calibration) {
  const double t = d.duration_s;
  struct Core {
    const char* unit;
    const char* label;
    double flops;
    const char* ceiling;
  };
  const Core cores[] = {{"fp32", "FP32", d.fp32_flops, "fp32_fma"},
                        {"fp64", "FP64", d.fp64_flops, "fp64_fma"},
                        {"fp16", "FP16", d.fp16_flops, "fp16_fma"}};
  for (const Core& c : cores) {
    if (!known(c.flops)) continue;
    const double ceiling = measured(ceilings, c.ceiling);
    if (!positive(ceiling)) {
      if (c.flops > 0) d.notes.push_back(missing_ceiling(c.ceiling, c.label, false));
      continue;
    }
    const double rate = c.flops / t;
    d.utilizations.push_back({c.unit, c.label, false, c.ceiling, rate, ceiling, rate / ceiling * 100.0});
  }

  // Tensor: Σ rate_p / ceiling_p over the precisions that ran.
  if (!known(d.tensor_flops) || !(d.tensor_flops > 0)) return;
  double share = 0;
  std::string ceiling_name;
  int used = 0;
  const bool any_hgmma = any_hgmma_collected(values);
  for (const TensorCounter& c : kTensorCounters) {
    if (c.precision == "pipe" && any_hgmma) continue;
    const double f = tensor_flops(values, c.precision, calibration);
    if (!(f > 0)) continue;
    std::string name(c.ceiling);
    if (name.empty())
      name = measured(ceilings, "tensor_bf16") >= measured(ceilings, "tensor_fp16") ||
                     !known(measured(ceilings, "tensor_fp16"))
                 ? "tensor_bf16"
                 : "tensor_fp16";
    const double ceiling = measured(ceilings, name);
    if (!positive(ceiling)) {
      d.notes.push_back(missing_ceiling(name, "tensor", false));
      return;
    }
    share += f / t / ceiling;
    ceiling_name = name;
    ++used;
  }
  if (used == 0) return;
  const double rate = d.tensor_flops / t;
  d.utilizations.push_back({"tensor", "tensor", false, used == 1 ? ceiling_name : std::string("tensor (mixed)"), rate,
                            rate / share, share * 100.0});
}

// Speed-of-Light percentages, when no counter-based utilization exists.
void add_sol(KernelDerived& d, const MetricValues& values) {
  struct Sol {
    std::string_view metric;
    const char* unit;
    const char* label;
    bool memory;
  };
  const Sol sols[] = {{metric::k_sm_throughput, "sm", "SM (compute)", false},
                      {metric::k_dram_throughput, "dram", "DRAM", true},
                      {metric::k_l2_throughput, "l2", "L2", true},
                      {metric::k_l1_throughput, "l1", "L1", true}};
  bool any_level = false;
  for (const Sol& s : sols) {
    const double v = get(values, s.metric);
    if (!known(v)) continue;
    any_level |= s.memory;
    d.utilizations.push_back({s.unit, s.label, s.memory, "", kNaN, kNaN, v});
  }
  const double mem = get(values, metric::k_compute_memory_throughput);
  if (!any_level && known(mem)) d.utilizations.push_back({"memory", "memory", true, "", kNaN, kNaN, mem});
}

const Utilization* first(const KernelDerived& d, bool memory) {
  for (const Utilization& u : d.utilizations)
    if (u.memory == memory) return &u;
  return nullptr;
}

}  // namespace

std::string_view bound_name(Bound bound) {
  switch (bound) {
    case Bound::kUnknown:
      return "unknown";
    case Bound::kLaunch:
      return "launch-bound";
    case Bound::kLatency:
      return "latency-bound";
    case Bound::kOccupancy:
      return "occupancy-bound";
    case Bound::kDram:
      return "dram-bound";
    case Bound::kL2:
      return "l2-bound";
    case Bound::kL1:
      return "l1-bound";
    case Bound::kCompute:
      return "compute-bound";
    case Bound::kComputeOrLatency:
      return "compute or latency";
  }
  return "unknown";
}

TensorCalibration default_tensor_calibration() {
  return {{std::string(metric::k_hgmma_fp16), 1.0},
          {std::string(metric::k_hgmma_bf16), 1.0},
          {std::string(metric::k_hgmma_tf32), 1.0}};
}

double cuda_core_flops(const MetricValues& values, std::string_view precision) {
  std::string_view fma, add, mul;
  if (precision == "fp32") {
    fma = metric::k_ffma, add = metric::k_fadd, mul = metric::k_fmul;
  } else if (precision == "fp64") {
    fma = metric::k_dfma, add = metric::k_dadd, mul = metric::k_dmul;
  } else if (precision == "fp16") {
    fma = metric::k_hfma, add = metric::k_hadd, mul = metric::k_hmul;
  } else {
    return kNaN;
  }
  const double f = get(values, fma), a = get(values, add), m = get(values, mul);
  if (!known(f) && !known(a) && !known(m)) return kNaN;
  auto z = [](double v) { return known(v) ? v : 0.0; };
  // Half-precision thread instructions are packed (HFMA2/HADD2/HMUL2: two lanes each), as
  // measured on H100 (examples/cuda/kernel_mix hfma2_loop: one count per HFMA2).
  const double lanes = precision == "fp16" ? 2.0 : 1.0;
  return lanes * (2.0 * z(f) + z(a) + z(m));
}

double tensor_flops(const MetricValues& values, std::string_view precision, const TensorCalibration& calibration) {
  for (const TensorCounter& c : kTensorCounters) {
    if (c.precision != precision) continue;
    const double count = get(values, c.metric);
    if (!known(count)) return kNaN;
    if (count == 0) return 0.0;
    const auto it = calibration.find(c.metric);
    if (it == calibration.end() || !positive(it->second)) return kNaN;
    return count * it->second;
  }
  return kNaN;
}

double launch_threshold_s(const MachineProfile& ceilings) {
  const double cost = core::launch_cost_s(ceilings, "hot");
  return positive(cost) ? kLaunchCostFactor * cost : kLaunchBoundDefaultS;
}

KernelDerived derive(const MetricValues& values, const LaunchFacts& launch, const KernelDevice& device,
                     const MachineProfile& ceilings, std::string_view ceiling_source,
                     const TensorCalibration& calibration) {
  KernelDerived d;
  d.ceiling_source = std::string(ceiling_source);
  d.compute = compute_workload(values);
  d.warps = warp_states(values);
  const double ns = get(values, metric::k_duration);
  if (positive(ns)) d.duration_s = ns * 1e-9;

  const double rd = get(values, metric::k_dram_read), wr = get(values, metric::k_dram_write);
  if (known(rd) && known(wr)) d.dram_bytes = rd + wr;
  d.l2_bytes = get(values, metric::k_l2_bytes);
  d.l1_bytes = get(values, metric::k_l1_bytes);

  // FLOPs.
  d.fp32_flops = cuda_core_flops(values, "fp32");
  d.fp64_flops = cuda_core_flops(values, "fp64");
  d.fp16_flops = cuda_core_flops(values, "fp16");
  bool tensor_present = false;
  const bool any_hgmma = any_hgmma_collected(values);
  double tensor = 0;
  DerivationNote uncalibrated = note(NoteKind::kTensorUncalibrated);
  for (const TensorCounter& c : kTensorCounters) {
    const double count = get(values, c.metric);
    if (!known(count)) continue;
    tensor_present = true;
    if (c.precision == "pipe" && any_hgmma) continue;
    const double f = tensor_flops(values, c.precision, calibration);
    if (known(f)) {
      tensor += f;
    } else {
      uncalibrated.counters.emplace_back(c.metric, count);
    }
  }
  if (tensor_present) d.tensor_flops = uncalibrated.counters.empty() ? tensor : kNaN;
  if (!uncalibrated.counters.empty()) {
    d.tensor_uncalibrated = true;
    d.notes.push_back(std::move(uncalibrated));
  }
  d.flops_collected = known(d.fp32_flops) || known(d.fp64_flops) || known(d.fp16_flops) || tensor_present;
  if (d.flops_collected) {
    double sum = 0;
    for (double f : {d.fp32_flops, d.fp64_flops, d.fp16_flops, d.tensor_flops})
      if (known(f)) sum += f;
    d.flops = sum;
  } else if (known(d.dram_bytes) || known(d.l2_bytes) || known(d.l1_bytes)) {
    d.notes.push_back(note(NoteKind::kFlopsNotCollected));
  }
  // Several passes: every pass is its own run of the kernel after CUPTI restored device
  // memory, so counters of different passes saw different cache states (measured against
  // ncu on H100: docs/validation.md, "sets of several passes"); with --cache-control all every
  // pass starts from an empty L2 instead, under CUPTI's user replay and its in-kernel triggers.
  if (launch.passes > 1) {
    DerivationNote n = note(NoteKind::kReplayPasses);
    n.count = launch.passes;
    n.flushed = launch.passes_flushed;
    d.notes.push_back(std::move(n));
  }
  for (const auto& [name, value] : values) {
    if (name.find("hit_rate") != std::string::npos && known(value) && value > 100.0) {
      DerivationNote n = note(NoteKind::kImpossibleHitRate);
      n.subject = name;
      d.notes.push_back(std::move(n));
    }
  }
  auto ratio = [](double f, double b) { return known(f) && positive(b) ? f / b : kNaN; };
  d.intensity_dram = ratio(d.flops, d.dram_bytes);
  d.intensity_l2 = ratio(d.flops, d.l2_bytes);
  d.intensity_l1 = ratio(d.flops, d.l1_bytes);

  // Occupancy.
  d.occupancy.achieved_pct = get(values, metric::k_achieved_occupancy);
  if (launch.block_threads > 0 && (launch.registers_per_thread < 0 || launch.shared_memory_per_block < 0)) {
    d.notes.push_back(note(NoteKind::kLaunchFactsUnknown));
  } else if (launch.block_threads > 0)
    d.occupancy.computed = occupancy::compute(
        device.limits, {launch.block_threads, launch.registers_per_thread, launch.shared_memory_per_block});
  const double theoretical = get(values, metric::k_theoretical_occupancy);
  if (known(theoretical)) {
    d.occupancy.theoretical_pct = theoretical;
    d.occupancy.theoretical_from_counter = true;
  } else if (d.occupancy.computed) {
    d.occupancy.theoretical_pct = d.occupancy.computed->occupancy_percent;
  }
  if (d.occupancy.computed && d.occupancy.computed->active_blocks_per_sm > 0 && device.sm_count > 0 &&
      launch.grid_blocks > 0)
    d.occupancy.waves = static_cast<double>(launch.grid_blocks) /
                        static_cast<double>(d.occupancy.computed->active_blocks_per_sm * device.sm_count);

  d.launch_threshold_s = launch_threshold_s(ceilings);
  if (!known(d.duration_s)) {
    d.notes.push_back(note(NoteKind::kNoDuration));
    d.bound_label = std::string(bound_name(d.bound));
    return d;
  }
  if (known(d.flops)) d.flop_rate = d.flops / d.duration_s;

  add_memory(d, values, ceilings);
  add_compute(d, values, ceilings, calibration);
  if (d.utilizations.empty()) add_sol(d, values);
  std::stable_sort(d.utilizations.begin(), d.utilizations.end(),
                   [](const Utilization& a, const Utilization& b) { return a.pct > b.pct; });

  // Classification (file comment).
  const Utilization* top = d.utilizations.empty() ? nullptr : &d.utilizations.front();
  const bool busy = top && top->pct >= kLatencyBelowPct;
  const bool compute_known = first(d, false) != nullptr && !d.tensor_uncalibrated;
  const bool tiny_grid = launch.grid_blocks > 0 && device.sm_count > 0 && launch.grid_blocks < device.sm_count;
  if (top) {
    d.ceiling = top->ceiling;
    d.pct_of_ceiling = top->pct;
  }
  if (d.duration_s <= d.launch_threshold_s && !busy) {
    d.bound = Bound::kLaunch;
  } else if (busy) {
    if (top->memory) {
      d.bound = top->unit == "l2" ? Bound::kL2 : top->unit == "l1" ? Bound::kL1 : Bound::kDram;
    } else {
      d.bound = Bound::kCompute;
      d.bound_unit = top->unit;
    }
  } else if (!top) {
    d.bound = Bound::kUnknown;
  } else if (!compute_known) {
    d.bound = Bound::kComputeOrLatency;
  } else if (tiny_grid || (known(d.occupancy.achieved_pct) && d.occupancy.achieved_pct < kLowOccupancyPct)) {
    d.bound = Bound::kOccupancy;
  } else {
    d.bound = Bound::kLatency;
  }
  d.bound_label = std::string(bound_name(d.bound));
  if (d.bound == Bound::kCompute) d.bound_label += " (" + d.bound_unit + ")";
  if (top && known(top->pct) && top->pct >= 0) {
    d.floor_s = d.duration_s * top->pct / 100.0;
    d.floor_unit = top->label;
    d.est_speedup_pct = std::max(0.0, (1.0 - d.floor_s / d.duration_s) * 100.0);
  }
  return d;
}

void set_time_share(KernelDerived& d, double share_pct) {
  d.time_share_pct = kNaN;
  d.program_gain_pct = kNaN;
  if (!known(share_pct) || share_pct < 0) return;
  d.time_share_pct = share_pct;
  if (known(d.est_speedup_pct)) d.program_gain_pct = share_pct * d.est_speedup_pct / 100.0;
}

MetricValues mean_launch(std::span<const MetricValues> launches) {
  struct Acc {
    double sum = 0, weighted = 0, weight = 0;
    int n = 0;
  };
  std::map<std::string, Acc, std::less<>> acc;
  for (const MetricValues& l : launches) {
    const double w = get(l, metric::k_duration);
    for (const auto& [name, v] : l) {
      if (!known(v)) continue;
      Acc& a = acc[name];
      a.sum += v;
      ++a.n;
      if (positive(w)) {
        a.weighted += v * w;
        a.weight += w;
      }
    }
  }
  MetricValues out;
  for (const auto& [name, a] : acc) {
    const bool counter = name.size() > 4 && name.ends_with(".sum");
    out[name] = counter || !(a.weight > 0) ? a.sum / a.n : a.weighted / a.weight;
  }
  return out;
}

}  // namespace gpuscope::core::kernels
