#include "analyze/kernels/kernel_explain.hpp"

#include <cctype>
#include <cmath>

#include "core/machine_profile.hpp"
#include "core/units.hpp"

namespace gpuscope::analyze {
namespace {

using kernels::Bound;
using kernels::KernelDerived;
using kernels::KernelDevice;
using kernels::LaunchFacts;
using kernels::Utilization;

bool known(double v) { return std::isfinite(v); }

std::string ceiling_label(std::string_view name) {
  const CeilingInfo* info = find_ceiling_info(name);
  return info ? std::string(info->label) : std::string(name);
}

const Utilization* first(const KernelDerived& d, bool memory) {
  for (const Utilization& u : d.utilizations)
    if (u.memory == memory) return &u;
  return nullptr;
}

bool is_sol(const Utilization& u) { return u.ceiling.empty(); }

// "DRAM at 99 % of the measured DRAM copy ceiling (2.98 TB/s of 3 TB/s)".
std::string at_ceiling(const Utilization& u, std::string_view source) {
  if (is_sol(u))
    return u.label + " at " + units::percent(u.pct) + " of its theoretical peak (Nsight Compute Speed of Light)";
  const std::string unit = u.memory ? "B/s" : "FLOP/s";
  const std::string label = u.ceiling == "tensor (mixed)" ? "tensor (mixed precisions)" : ceiling_label(u.ceiling);
  return u.label + " at " + units::percent(u.pct) + " of the " + std::string(source) + " " + label + " ceiling (" +
         units::si(u.achieved, unit) + " of " + units::si(u.ceiling_value, unit) + ")";
}

std::string occupancy_sentence(const KernelDerived& d, const LaunchFacts& launch) {
  const kernels::OccupancyFacts& o = d.occupancy;
  std::string s;
  if (known(o.achieved_pct)) s = "achieved occupancy " + units::percent(o.achieved_pct) + " of the SM's warp slots";
  if (known(o.theoretical_pct)) {
    s += s.empty() ? "theoretical occupancy " : ", theoretical ";
    s += units::percent(o.theoretical_pct);
    if (o.computed) {
      s += " (limited by " + std::string(occupancy::limiter_name(o.computed->limiter));
      if (o.computed->limiter == occupancy::Limiter::kRegisters)
        s += ": " + std::to_string(launch.registers_per_thread) + " registers per thread";
      if (o.computed->limiter == occupancy::Limiter::kSharedMemory)
        s += ": " + units::bytes(static_cast<double>(launch.shared_memory_per_block)) + " per block";
      if (o.computed->limiter == occupancy::Limiter::kWarps || o.computed->limiter == occupancy::Limiter::kBlocks)
        s += ": " + std::to_string(launch.block_threads) + " threads per block";
      s += ")";
    }
  }
  if (s.empty()) return s;
  s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s + ".";
}

std::string grid_text(const LaunchFacts& launch, const KernelDevice& device) {
  return "grid of " + std::to_string(launch.grid_blocks) + (launch.grid_blocks == 1 ? " block" : " blocks") + " for " +
         std::to_string(device.sm_count) + " SMs";
}

// "memory 99 % > compute 5.0 % of their ceilings": the busiest memory level against the
// busiest compute unit; empty when neither was measured.
std::string comparison(const KernelDerived& d, const Utilization* mem, const Utilization* comp, bool sol) {
  std::string cmp;
  if (mem && d.tensor_uncalibrated) {
    cmp = "memory " + units::percent(mem->pct) + (sol ? " of peak" : " of its ceiling") +
          ", compute unknown (the tensor cores ran, their FLOPs are uncalibrated)";
  } else if (mem && comp) {
    cmp = mem->pct >= comp->pct ? "memory " + units::percent(mem->pct) + " > compute " + units::percent(comp->pct)
                                : "compute " + units::percent(comp->pct) + " > memory " + units::percent(mem->pct);
    cmp += sol ? " of peak" : " of their ceilings";
  } else if (mem) {
    cmp = "memory " + units::percent(mem->pct) + " of its ceiling, compute " +
          std::string(d.tensor_uncalibrated ? "unknown (tensor FLOPs uncalibrated)" : "not collected");
  } else if (comp) {
    cmp = "compute " + units::percent(comp->pct) + " of its ceiling, memory not collected";
  }
  return cmp;
}

// A memory level or compute unit at or above kLatencyBelowPct bounds the kernel.
std::string busy_unit_text(const KernelDerived& d, const Utilization& top, const std::string& cmp,
                           const std::string& src, bool sol) {
  std::string e = (cmp.empty() ? std::string() : cmp + ": ") + d.bound_label + "; " + at_ceiling(top, src);
  if (top.pct >= kernels::kCloseToLimitPct) {
    e += " — close to the limit";
    e += top.memory ? ": only moving fewer bytes (fusion, reuse in cache, smaller types) makes it faster."
                    : ": only less arithmetic or a faster unit (tensor cores, lower precision) makes it faster.";
  } else {
    e += " — below the limit";
    e += top.memory ? ": more bytes in flight (more warps, wider or vectorized accesses, coalescing) could raise it."
                    : ": instruction dependencies or too few warps keep the unit from its peak.";
  }
  if (d.utilizations.size() > 1) {
    const Utilization& next = d.utilizations[1];
    e += " Next busiest: " + next.label + " " + units::percent(next.pct) + ".";
  }
  if (d.bound == Bound::kCompute && known(d.intensity_dram) && !sol) {
    const Utilization* dram = nullptr;
    for (const Utilization& u : d.utilizations)
      if (u.unit == "dram") dram = &u;
    e += " Arithmetic intensity " + units::real3(d.intensity_dram) + " FLOP/B at DRAM";
    if (dram) e += ", ridge point " + units::real3(top.ceiling_value / dram->ceiling_value) + " FLOP/B";
    e += ".";
  }
  return e;
}

// What each stall reason means and what to try (Nsight Compute Kernel Profiling Guide,
// "Warp Scheduler" stall reasons, said in plain words).
std::string_view stall_advice(std::string_view reason) {
  struct Advice {
    std::string_view reason, text;
  };
  static constexpr Advice kAdvice[] = {
      {"long_scoreboard",
       "waiting for data from global or local memory (L1TEX): raise the bytes in flight (more warps, more independent "
       "loads per thread), reuse data through shared memory, or cut register spills to local memory"},
      {"barrier",
       "waiting at __syncthreads for the slowest warps of the block: even out the work between warps, or use smaller "
       "blocks so fewer warps wait on each barrier"},
      {"mio_throttle",
       "the shared-memory/special-math instruction queue is full: fewer shared-memory accesses (wider accesses, no "
       "bank conflicts) or fewer special-math instructions"},
      {"not_selected",
       "ready, but another warp was issued: the scheduler has more ready warps than it can issue, which is healthy; "
       "fewer, busier warps would not be slower"},
      {"math_pipe_throttle",
       "the math pipe it needs is busy: the kernel is near that pipe's throughput; move work to another pipe or use "
       "fewer or cheaper instructions"},
      {"short_scoreboard",
       "waiting for a shared-memory or special-math result: fewer shared-memory bank conflicts, or more independent "
       "work between the access and its use"},
      {"wait",
       "waiting on a fixed-latency dependency between consecutive instructions: more independent instructions "
       "(unrolling, more warps) to hide it"},
      {"lg_throttle",
       "the global/local memory instruction queue is full: fewer, wider memory instructions (vectorized loads, "
       "float4) or fewer local-memory spills"},
      {"dispatch_stall", "the dispatcher held back a selected instruction: usually rare; check for pipe conflicts"},
      {"drain", "finished and waiting for its memory writes to drain: usual at the end of short kernels"},
      {"membar", "waiting at a memory fence: fewer __threadfence calls or narrower fences"},
      {"branch_resolving", "waiting for a branch target: fewer divergent branches (predication, uniform conditions)"},
      {"no_instruction",
       "no instruction fetched (instruction cache miss): smaller code (less unrolling or inlining) or more warps"},
      {"imc_miss", "waiting on a constant-cache miss: threads of a warp should read the same constant address"},
      {"tex_throttle", "the texture queue is full: fewer texture fetches, or plain loads instead"},
      {"sleeping", "asleep (__nanosleep or a waiting barrier): check the kernel's spin-waits"},
      {"gmma", "waiting for a Hopper warpgroup MMA: keep more wgmma work in flight (deeper pipelining)"},
      {"misc", "a reason in no other category"},
  };
  for (const Advice& a : kAdvice)
    if (a.reason == reason) return a.text;
  return {};
}

// "Compute workload: busiest pipe FMA at 79 % of its peak (then ALU 20 %, LSU 5.0 %); executed IPC ..."
std::string compute_sentence(const kernels::ComputeWorkload& w) {
  std::string s = "Compute workload:";
  std::string sep = " ";
  if (!w.pipes.empty()) {
    const kernels::PipeUse& top = w.pipes.front();
    s += " busiest pipe " + top.label + " at " + units::percent(top.pct) + " of its peak";
    std::string rest;
    for (std::size_t i = 1; i < w.pipes.size() && i < 3; ++i)
      rest += (rest.empty() ? "" : ", ") + w.pipes[i].label + " " + units::percent(w.pipes[i].pct);
    if (!rest.empty()) s += " (then " + rest + ")";
    sep = "; ";
  }
  if (known(w.ipc_active)) {
    s += sep + "executed IPC " + units::real3(w.ipc_active) + " warp instructions per active cycle";
    if (known(w.ipc_elapsed)) s += " (" + units::real3(w.ipc_elapsed) + " per elapsed cycle)";
    sep = ", ";
  }
  if (known(w.issued_ipc_active)) s += sep + "issued IPC " + units::real3(w.issued_ipc_active), sep = ", ";
  if (known(w.sm_busy_pct)) s += sep + "SM busy " + units::percent(w.sm_busy_pct), sep = ", ";
  if (known(w.issue_slots_busy_pct)) s += sep + "issue slots busy " + units::percent(w.issue_slots_busy_pct);
  s += ".";
  if (!w.pipes.empty()) {
    const kernels::PipeUse& top = w.pipes.front();
    if (top.pct >= kernels::kCloseToLimitPct)
      s += " The " + top.label +
           " pipe is close to its limit: fewer instructions on it, or work moved to another pipe, would make it "
           "faster.";
    else if (top.pct < kernels::kLatencyBelowPct)
      s += " No pipe is busy: the warps issue too few instructions (see the warp states for why).";
  }
  return s;
}

// "Warp states: a warp issued an instruction every 25.1 cycles; long scoreboard 18.6 cycles (74 %): ..."
std::string warps_sentence(const kernels::WarpStates& w) {
  std::string s = "Warp states:";
  if (known(w.cycles_per_issued))
    s += " a warp issued an instruction every " + units::real3(w.cycles_per_issued) + " cycles";
  std::size_t said = 0;
  for (const kernels::StallReason& r : w.stalls) {
    if (said == 3 || !(r.cycles > 0)) break;
    if (said > 0 && known(r.share_pct) && r.share_pct < 10.0) break;  // the top reason, then those ≥ 10 %
    s += std::string(said == 0 ? (known(w.cycles_per_issued) ? "; " : " ") : "; then ") + r.label + " " +
         units::real3(r.cycles) + " cycles";
    if (known(r.share_pct)) s += " (" + units::percent(r.share_pct) + ")";
    const std::string_view advice = stall_advice(r.reason);
    if (!advice.empty()) s += ": " + std::string(advice);
    ++said;
  }
  s += ".";
  if (known(w.issue_active) && w.issue_active >= kernels::kIssueBusy)
    s += " The schedulers issued on " + units::percent(w.issue_active * 100.0) +
         " of the cycles, so these stalls are mostly hidden.";
  return s;
}

// "At its DRAM ceiling it would take 40.0 µs instead of 50.0 µs: an estimated speedup of 20 % of its time; ..."
std::string speedup_sentence(const KernelDerived& d, bool sol) {
  // Only in the results, where the time share is known (kernels::set_time_share).
  if (!known(d.floor_s) || !known(d.est_speedup_pct) || !known(d.time_share_pct) || d.bound == Bound::kLaunch)
    return {};
  if (d.floor_s >= d.duration_s)  // at or above the (measured) ceiling already
    return "It runs at the " + d.floor_unit + (sol ? " theoretical peak" : " ceiling") +
           " already: estimated speedup 0 %.";
  std::string s = "At the " + d.floor_unit + (sol ? " theoretical peak" : " ceiling") + " it would take " +
                  units::duration(d.floor_s) + " instead of " + units::duration(d.duration_s) + ": estimated speedup " +
                  units::percent(d.est_speedup_pct) + " of its time";
  if (known(d.program_gain_pct))
    s += "; as it holds " + units::percent(d.time_share_pct) +
         " of the profiled GPU time, the program's GPU time would shrink by " + units::percent(d.program_gain_pct);
  return s + ".";
}

}  // namespace

std::string kernel_explanation(const KernelDerived& d, const LaunchFacts& launch, const KernelDevice& device) {
  const Utilization* mem = first(d, true);
  const Utilization* comp = first(d, false);
  const Utilization* top = d.utilizations.empty() ? nullptr : &d.utilizations.front();
  const bool sol = top && is_sol(*top);
  const std::string src = sol ? "theoretical peak" : d.ceiling_source;
  const bool tiny_grid = launch.grid_blocks > 0 && device.sm_count > 0 && launch.grid_blocks < device.sm_count;
  const std::string cmp = comparison(d, mem, comp, sol);

  std::string e;
  const bool workload = d.compute.collected() || d.warps.collected();
  switch (d.bound) {
    case Bound::kUnknown:
      // --set compute / warps: no memory or FLOP counters, the workload sentences say it all.
      if (workload && known(d.duration_s)) break;
      e = known(d.duration_s) ? "unknown: no unit has both a counter and a ceiling to compare it with."
                              : "unknown: gpu__time_duration.sum was not collected, so no rate can be computed.";
      break;
    case Bound::kLaunch:
      e = "launch-bound: it ran " + units::duration(d.duration_s) +
          ", about what launching a kernel costs (threshold " + units::duration(d.launch_threshold_s) + ")";
      if (tiny_grid) e += ", on a " + grid_text(launch, device);
      if (top) e += "; the busiest unit, " + top->label + ", is at " + units::percent(top->pct) + " of its ceiling";
      e += ". Fuse it with its neighbours, give it more work per launch, or capture the launches in a CUDA graph.";
      break;
    case Bound::kDram:
    case Bound::kL2:
    case Bound::kL1:
    case Bound::kCompute:
      e = busy_unit_text(d, *top, cmp, src, sol);
      break;
    case Bound::kComputeOrLatency: {
      e = "not memory-bound: ";
      std::string levels;
      for (const Utilization& u : d.utilizations)
        if (u.memory) levels += (levels.empty() ? "" : ", ") + u.label + " " + units::percent(u.pct);
      e += levels + " of " + (sol ? "peak" : "the " + src + " ceilings") + ", all below " +
           units::percent(kernels::kLatencyBelowPct) + "; ";
      e += d.tensor_uncalibrated ? "the tensor cores ran but their FLOPs are unknown (no calibration factor)"
                                 : "FLOPs were not collected";
      e += ", so compute-bound and latency-bound cannot be told apart (run `gpuscope kernels --set roofline`).";
      break;
    }
    case Bound::kOccupancy:
    case Bound::kLatency: {
      e = d.bound_label + ": every unit is below " + units::percent(kernels::kLatencyBelowPct) + " of its ceiling";
      if (top) e += " (busiest: " + top->label + " " + units::percent(top->pct) + ")";
      if (d.bound == Bound::kOccupancy) {
        if (tiny_grid)
          e += "; a " + grid_text(launch, device) + " leaves " + std::to_string(device.sm_count - launch.grid_blocks) +
               " SMs idle: launch more blocks";
        if (known(d.occupancy.achieved_pct) && d.occupancy.achieved_pct < kernels::kLowOccupancyPct)
          e += std::string(tiny_grid ? "; and" : ";") + " achieved occupancy " +
               units::percent(d.occupancy.achieved_pct) + " is too few warps to hide memory and instruction latency";
        e += ".";
      } else {
        e += ", with enough warps resident: the warps wait on dependent instructions, memory latency or "
             "synchronization.";
      }
      break;
    }
  }
  auto add = [&e](const std::string& sentence) {
    if (!sentence.empty()) e += (e.empty() ? "" : " ") + sentence;
  };
  if (d.compute.collected()) add(compute_sentence(d.compute));
  if (d.warps.collected()) add(warps_sentence(d.warps));
  const std::string occ = occupancy_sentence(d, launch);
  if (!occ.empty()) e += " " + occ;
  add(speedup_sentence(d, sol));
  if (sol)
    e += " (Speed-of-Light percentages are of the theoretical peak, not of the measured ceilings.)";
  else if (d.ceiling_source == "theoretical" && top)
    e += " (Ceilings are theoretical: no machine profile; run `gpuscope peak` for measured ones.)";
  return e;
}

std::string note_text(const kernels::DerivationNote& n, std::string_view ceiling_source) {
  using kernels::NoteKind;
  switch (n.kind) {
    case NoteKind::kMissingCeiling:
      return "no " + n.subject + " ceiling in the " + std::string(ceiling_source) + " ceilings: " + n.unit_label +
             " utilization unknown" +
             (n.memory && ceiling_source != "measured" ? " (run `gpuscope peak` to measure it)" : "");
    case NoteKind::kTensorUncalibrated: {
      std::string counts;
      for (const auto& [metric, count] : n.counters)
        counts += (counts.empty() ? "" : ", ") + metric + " = " + units::real3(count);
      return "tensor-core counters ran (" + counts +
             ") but no calibration factor was given: tensor FLOPs unknown; calibrate each counter against a GEMM of "
             "known 2·M·N·K FLOP";
    }
    case NoteKind::kFlopsNotCollected:
      return "FLOPs were not collected (this metric set has no FLOP counters): classified on bytes per second against "
             "the memory ceilings; run with --set roofline to place it on the roofline";
    case NoteKind::kReplayPasses:
      if (n.flushed)
        return "the metrics took " + std::to_string(n.count) +
               " replay passes, each from the same saved memory and an empty L2 (--cache-control all), so DRAM "
               "bytes do not carry the restore of memory; CUPTI's user replay under it adds about 8 instructions "
               "per warp and one global store per kernel to what is counted, which shows in instruction counts "
               "and rates of kernels with few instructions per warp";
      return "the metrics took " + std::to_string(n.count) +
             " replay passes: each pass reran the kernel after CUPTI restored device memory, so counters of "
             "different passes saw different cache states; for kernels that move little data, DRAM and L2 "
             "figures and hit rates can be off by more than 3 % (measured against ncu on H100: DRAM writes of "
             "megabytes where a kernel writes kilobytes, the restore written back; throughput percentages 5-10 % "
             "apart); --cache-control all flushes L2 before every pass, and a one-pass metric list (--set quick, "
             "--set occupancy) does not have this";
    case NoteKind::kImpossibleHitRate:
      return n.subject +
             " above 100 % in a launch: impossible in one run; its counters came from different "
             "replay passes (collect it alone, or with --set memory's byte counts only)";
    case NoteKind::kLaunchFactsUnknown:
      return "registers or shared memory per block unknown (a runtime launch from a statically linked CUDA runtime "
             "names no CUfunction): theoretical occupancy not computed";
    case NoteKind::kNoDuration:
      return "gpu__time_duration.sum was not collected: no rates";
  }
  return {};
}

std::vector<std::string> derivation_notes(const KernelDerived& derived) {
  std::vector<std::string> out;
  out.reserve(derived.notes.size());
  for (const kernels::DerivationNote& n : derived.notes) out.push_back(note_text(n, derived.ceiling_source));
  return out;
}

}  // namespace gpuscope::analyze
