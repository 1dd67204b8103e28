#include "core/bench_derive.hpp"

#include <cmath>
#include <limits>

#include "core/roofline.hpp"

namespace gpuscope::core {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool positive(double v) { return std::isfinite(v) && v > 0.0; }

// FLOP (or OP) per SM per clock, by compute capability (see the header's table).
struct ArchRates {
  int cc_major, cc_minor;  // cc_minor < 0: any minor of that major
  double fp64_fma, fp32_fma, fp16_fma, bf16_fma, int32_imad, sfu_expf;
  double tensor_fp16, tensor_bf16, tensor_tf32, tensor_fp8, tensor_int8;
};

constexpr ArchRates kArchRates[] = {
    {7, 0, 64, 128, 256, kNaN, 128, 16, 1024, kNaN, kNaN, kNaN, kNaN},
    {8, 0, 64, 128, 512, 256, 128, 16, 2048, 2048, 1024, kNaN, 4096},
    {8, 6, 4, 256, 256, 256, 128, 16, kNaN, kNaN, kNaN, kNaN, kNaN},
    {8, 9, 4, 256, 256, 256, 128, 16, kNaN, kNaN, kNaN, kNaN, kNaN},
    {9, 0, 128, 256, 512, 512, 128, 16, 4096, 4096, 2048, 8192, 8192},
};

double per_sm_per_clock(const DeviceFacts& d, std::string_view name) {
  for (const ArchRates& a : kArchRates) {
    if (a.cc_major != d.cc_major || a.cc_minor != d.cc_minor) continue;
    if (name == "fp64_fma") return a.fp64_fma;
    if (name == "fp32_fma") return a.fp32_fma;
    if (name == "fp16_fma") return a.fp16_fma;
    if (name == "bf16_fma") return a.bf16_fma;
    if (name == "int32_imad") return a.int32_imad;
    if (name == "sfu_expf") return a.sfu_expf;
    if (name == "tensor_fp16") return a.tensor_fp16;
    if (name == "tensor_bf16") return a.tensor_bf16;
    if (name == "tensor_tf32") return a.tensor_tf32;
    if (name == "tensor_fp8") return a.tensor_fp8;
    if (name == "tensor_int8") return a.tensor_int8;
  }
  return kNaN;
}

}  // namespace

double theoretical_ceiling(const DeviceFacts& device, std::string_view name, double sm_clock_mhz) {
  if (name == "dram_read" || name == "dram_write" || name == "dram_copy") {
    if (!positive(device.max_mem_clock_mhz) || device.memory_bus_width_bits <= 0) return kNaN;
    return 2.0 * device.max_mem_clock_mhz * 1e6 * device.memory_bus_width_bits / 8.0;
  }
  if (!positive(sm_clock_mhz) || device.sm_count <= 0) return kNaN;
  const double per_clock = name == "shared_memory" ? 128.0 : per_sm_per_clock(device, name);
  return device.sm_count * per_clock * sm_clock_mhz * 1e6;  // NaN propagates
}

MachineProfile theoretical_profile(const DeviceFacts& device, double sm_clock_mhz) {
  MachineProfile p;
  p.device = device;
  for (const CeilingInfo& info : ceiling_catalog()) {
    const double v = theoretical_ceiling(device, info.name, sm_clock_mhz);
    if (!positive(v)) continue;
    Ceiling c;
    c.name = std::string(info.name);
    c.measured = v;
    c.theoretical = v;
    c.method = "theoretical: device units x clock (no measurement)";
    p.ceilings.push_back(std::move(c));
  }
  return p;
}

std::string memory_ceiling_for(const BenchWork& work, std::string_view mode, std::int64_t l2_bytes) {
  const double bytes = work.bytes_read + work.bytes_written;
  if ((mode == "hot" || mode == "graph") && l2_bytes > 0 && bytes > 0 && bytes <= l2_bytes / 2.0) return "l2_read";
  if (bytes > 0 && work.bytes_written <= kWriteShareForReadCeiling * bytes) return "dram_read";
  if (bytes > 0 && work.bytes_read <= kWriteShareForReadCeiling * bytes) return "dram_write";
  return "dram_copy";
}

double launch_cost_s(const MachineProfile& ceilings, std::string_view mode) {
  auto measured = [&](std::string_view name) {
    const Ceiling* c = ceilings.find(name);
    return c && positive(c->measured) ? c->measured : kNaN;
  };
  if (mode == "graph") return measured("graph_kernel_cost");
  const double rate = measured("launch_rate");
  if (positive(rate)) return 1.0 / rate;
  return measured("launch_latency");
}

BenchDerived derive(const BenchWork& work, const BenchTiming& timing, const MachineProfile& ceilings,
                    std::string_view ceiling_source) {
  BenchDerived d;
  d.ceiling_source = std::string(ceiling_source);
  const double t = timing.median_s;
  if (!positive(t)) return d;
  const double bytes = work.bytes_read + work.bytes_written;
  d.bandwidth = bytes / t;
  d.flop_rate = work.flops / t;
  d.intensity = bytes > 0 ? work.flops / bytes : kNaN;

  std::string memory = memory_ceiling_for(work, timing.mode, ceilings.device.l2_bytes);
  if (!ceilings.find(memory)) memory = "dram_copy";
  const roofline::Placement p = roofline::place(ceilings, work.flops, bytes, t, work.compute_ceiling, memory);
  d.ceiling = p.ceiling;
  d.ceiling_value = p.ceiling_value;
  d.pct_of_ceiling = p.pct_of_ceiling;
  if (p.bound == roofline::Bound::kMemory) d.bound = "memory";
  if (p.bound == roofline::Bound::kCompute) d.bound = "compute";

  // Latency: launch cost, or < 10 % of each known ceiling.
  const double launch = launch_cost_s(ceilings, timing.mode);
  const bool launch_bound = positive(launch) && t <= kLatencyLaunchFactor * launch;
  const Ceiling* mem = ceilings.find(memory);
  const Ceiling* comp = ceilings.find(work.compute_ceiling);
  const double mem_frac = mem && positive(mem->measured) ? d.bandwidth / mem->measured : kNaN;
  const double comp_frac = work.flops == 0                    ? 0.0
                           : comp && positive(comp->measured) ? d.flop_rate / comp->measured
                                                              : kNaN;
  const bool any_known = !std::isnan(mem_frac) || (!std::isnan(comp_frac) && work.flops > 0);
  const bool idle = any_known && (std::isnan(mem_frac) || mem_frac < kLatencyCeilingFraction) &&
                    (std::isnan(comp_frac) || comp_frac < kLatencyCeilingFraction);
  if (launch_bound || idle) d.bound = "latency";
  return d;
}

void derive_run(BenchRun& run, const MachineProfile* profile) {
  if (profile) {
    if (!profile->device.uuid.empty() && !run.device.uuid.empty() && profile->device.uuid != run.device.uuid) {
      run.warnings.push_back("the machine profile was measured on " + profile->device.name + " (" +
                             profile->device.uuid + ") but this run used " + run.device.name + " (" + run.device.uuid +
                             "): its ceilings may not apply; run `gpuscope peak` on this GPU");
    }
    for (BenchCase& c : run.cases) c.derived = derive(c.work, c.timing, *profile, "measured");
    return;
  }
  run.warnings.push_back(
      "no machine profile: % of ceiling uses theoretical peaks (device units x SM clock, memory bus x memory "
      "clock), which real kernels rarely reach; run `gpuscope peak` once to measure this GPU's ceilings");
  for (BenchCase& c : run.cases) {
    const double clock =
        positive(c.timing.sm_clock_mhz_before) ? c.timing.sm_clock_mhz_before : run.device.max_sm_clock_mhz;
    c.derived = derive(c.work, c.timing, theoretical_profile(run.device, clock), "theoretical");
  }
}

}  // namespace gpuscope::core
