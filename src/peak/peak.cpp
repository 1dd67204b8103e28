// The runner of `gpuscope peak` (peak/peak.hpp): device facts, the busy-GPU warning, one
// benchmark per catalog ceiling, reference values, progress.
#include "peak/peak.hpp"

#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>

#include "bench/device_facts.hpp"
#include "bench/nvml.hpp"
#include "core/version.hpp"
#include "core/units.hpp"
#include "peak/benchmarks.hpp"
#include "peak/context.hpp"
#include "peak/sweep.hpp"

namespace gpuscope::peak {
namespace {

using detail::Context;

DeviceFacts query_device(int device) {
  if (const std::string problem = bench::cuda_device_problem(device); !problem.empty())
    throw NoGpuError(problem +
                     ". Check that the NVIDIA driver works (nvidia-smi) and what CUDA_VISIBLE_DEVICES "
                     "shows; `gpuscope roofline PROFILE.json` draws a saved profile without a GPU.");
  GPUSCOPE_CUDA_CALL(cudaSetDevice(device));
  GPUSCOPE_CUDA_CALL(cudaFree(nullptr));  // create the context now, not inside a measurement
  return bench::query_device_facts(device);
}

// Another process on the GPU makes every number low: say so (NVML; silent without it).
void warn_if_busy(int device, std::vector<std::string>& warnings) {
  const bench::Nvml& nvml = bench::Nvml::instance();
  if (!nvml.available()) return;
  if (const std::optional<int> n = nvml.compute_process_count(device); n && *n > 1)
    warnings.push_back(std::to_string(*n - 1) +
                       " other process(es) have a compute context on this GPU: the measured ceilings may be low");
  else if (const std::optional<int> u = nvml.gpu_utilization_pct(device); u && *u > 10)
    warnings.push_back("the GPU was " + std::to_string(*u) +
                       " % busy before the measurement started: the measured ceilings may be low");
}

// The bench groups, each built on first use (so --quick allocates only what it needs and
// a group that cannot start fails only its own ceilings).
struct Groups {
  const Context& ctx;
  std::unique_ptr<detail::MemoryBench> memory;
  std::unique_ptr<detail::ComputeBench> compute;
  std::unique_ptr<detail::TensorBench> tensor;
  std::unique_ptr<detail::TransferBench> transfer;
  std::unique_ptr<detail::LatencyBench> latency;

  template <class G>
  G& get(std::unique_ptr<G>& g) {
    if (!g) g = std::make_unique<G>(ctx);
    return *g;
  }

  Ceiling measure(std::string_view name) {
    using detail::CoreOp;
    if (name == "dram_read") return get(memory).dram_read();
    if (name == "dram_write") return get(memory).dram_write();
    if (name == "dram_copy") return get(memory).dram_copy();
    if (name == "l2_read") return get(memory).l2_read();
    if (name == "shared_memory") return get(memory).shared_memory();
    if (name == "fp64_fma") return get(compute).measure(CoreOp::kFp64Fma, name);
    if (name == "fp32_fma") return get(compute).measure(CoreOp::kFp32Fma, name);
    if (name == "fp16_fma") return get(compute).measure(CoreOp::kFp16Fma, name);
    if (name == "bf16_fma") return get(compute).measure(CoreOp::kBf16Fma, name);
    if (name == "int32_imad") return get(compute).measure(CoreOp::kInt32Imad, name);
    if (name == "sfu_expf") return get(compute).measure(CoreOp::kSfuExp, name);
    if (name.starts_with("tensor_")) return get(tensor).measure(name);
    if (name == "h2d_pinned") return get(transfer).h2d(true);
    if (name == "d2h_pinned") return get(transfer).d2h(true);
    if (name == "h2d_pageable") return get(transfer).h2d(false);
    if (name == "d2h_pageable") return get(transfer).d2h(false);
    if (name == "bidir_pinned") return get(transfer).bidirectional();
    if (name == "p2p") return get(transfer).peer_to_peer();
    if (name == "launch_rate") return get(latency).launch_rate();
    if (name == "launch_latency") return get(latency).launch_latency();
    if (name == "graph_kernel_cost") return get(latency).graph_kernel_cost();
    if (name == "stream_sync") return get(latency).stream_sync();
    throw std::logic_error("gpuscope peak has no benchmark for ceiling " + std::string(name));
  }
};

// A ceiling that was not measured: NaN value, the reason as its method (for progress only).
Ceiling not_measured(std::string_view name, const std::string& why) {
  Ceiling c;
  c.name = std::string(name);
  c.method = why;
  return c;
}

}  // namespace

MachineProfile measure(const PeakOptions& options, const Progress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  MachineProfile profile;
  profile.gpuscope_version = kVersion;
  profile.measured_at = units::utc_now_iso8601();
  profile.quick = options.quick;
  profile.device = query_device(options.device);
  warn_if_busy(options.device, profile.warnings);

  Context ctx;
  ctx.device = options.device;
  ctx.facts = profile.device;
  ctx.quick = options.quick;
  ctx.budget_s = options.quick ? 0.2 : 0.5;
  ctx.warnings = &profile.warnings;
  ctx.peer_links = &profile.peer_links;

  std::vector<const CeilingInfo*> todo;
  for (const CeilingInfo& info : ceiling_catalog())
    if (info.quick || !options.quick) todo.push_back(&info);

  Groups groups{ctx, {}, {}, {}, {}, {}};
  std::size_t index = 0;
  for (const CeilingInfo* info : todo) {
    ++index;
    Ceiling c;
    try {
      c = groups.measure(info->name);
      detail::add_reference_values(c, profile.device);
      if (c.throttled) {
        const auto reasons = bench::Nvml::instance().clock_event_reasons(options.device);
        const std::string why = reasons ? bench::Nvml::describe_clock_event_reasons(*reasons) : std::string();
        c.method += "; SM clock fell during the measurement" + (why.empty() ? std::string() : " (" + why + ")");
      }
      profile.ceilings.push_back(c);
    } catch (const detail::NotMeasured& e) {
      c = not_measured(info->name, e.what());
      profile.warnings.push_back(std::string(info->name) + " not measured: " + e.what());
    } catch (const bench::CudaError& e) {
      // A sticky error leaves the context unusable: stop. Otherwise only this ceiling failed.
      if (cudaDeviceSynchronize() != cudaSuccess) throw;
      c = not_measured(info->name, e.what());
      profile.warnings.push_back(std::string(info->name) + " failed: " + e.what());
    } catch (const std::runtime_error& e) {  // cuBLASLt status, ...
      c = not_measured(info->name, e.what());
      profile.warnings.push_back(std::string(info->name) + " failed: " + e.what());
    }
    if (progress) progress(c, index, todo.size());
  }
  // FP16 and BF16 run on the same tensor cores at the same rate per cycle: say, from the
  // clocks measured, why one came out lower.
  Ceiling* fp16 = nullptr;
  const Ceiling* bf16 = nullptr;
  for (Ceiling& c : profile.ceilings) {
    if (c.name == "tensor_fp16") fp16 = &c;
    if (c.name == "tensor_bf16") bf16 = &c;
  }
  if (fp16 != nullptr && bf16 != nullptr)
    if (const std::string why = detail::explain_rate_gap(*fp16, *bf16, profile.device.sm_count); !why.empty())
      fp16->method += "; " + why;
  profile.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return profile;
}

}  // namespace gpuscope::peak
