#include "bench/bench_runner.hpp"

#include <chrono>
#include <cmath>
#include <ctime>
#include <stdexcept>

#include "bench/device_facts.hpp"
#include "bench/ops/suite.hpp"
#include "core/units.hpp"
#include "core/version.hpp"

namespace gpuscope::bench {
namespace {

constexpr double kFreeMemoryShare = 0.9;

// Sets up, times and checks one case into `c`; returns why it was skipped, or "".
std::string time_and_check(const ops::Operator& op, const ops::CaseSpec& spec, const ops::SetupContext& ctx,
                           const RunOptions& o, BenchCase& c) {
  try {
    std::unique_ptr<ops::Instance> instance = op.setup(spec, ctx);
    c.timing = to_bench_timing(time_gpu([&](cudaStream_t s) { instance->enqueue(s); }, o.timing));
    if (o.verify) {
      const ops::Verification v = instance->verify();
      c.verified = v.passed;
      c.max_abs_error = v.max_abs_error;
      c.note = v.passed ? v.note : v.first_failure;
    } else {
      c.note = "reference check not run (--no-verify)";
    }
    return "";
  } catch (const CudaError& e) {
    // Out of memory leaves the context usable: skip this size. Anything else may not.
    if (e.status() != cudaErrorMemoryAllocation) throw;
    (void)cudaGetLastError();
    return e.what();
  } catch (const std::invalid_argument& e) {  // a shape this kernel cannot launch
    return e.what();
  }
}

}  // namespace

BenchTiming to_bench_timing(const TimingResult& t) {
  BenchTiming b;
  b.mode = std::string(mode_name(t.mode));
  b.batch = t.batch;
  b.samples = static_cast<int>(t.samples_s.size());
  b.min_s = t.min_s;
  b.median_s = t.median_s;
  b.mean_s = t.mean_s;
  b.stddev_s = t.stddev_s;
  b.rel_stderr = t.rel_stderr;
  b.stop = std::string(stop_reason_name(t.stop));
  b.sm_clock_mhz_before = t.sm_clock_mhz_before;
  b.sm_clock_mhz_after = t.sm_clock_mhz_after;
  b.throttled_samples = t.throttled_samples;
  return b;
}

std::vector<ops::CaseSpec> plan_cases(const ops::Operator& op, const RunOptions& o) {
  if (!op.supports(o.dtype)) {
    std::string names;
    for (ops::DType d : op.dtypes) names += (names.empty() ? "" : ", ") + std::string(ops::dtype_name(d));
    throw std::invalid_argument(op.name + " does not take --dtype " + std::string(ops::dtype_name(o.dtype)) +
                                " (valid: " + names + ")");
  }
  std::vector<const ops::Variant*> variants;
  if (o.variant.empty()) {
    for (const ops::Variant& v : op.variants) variants.push_back(&v);
  } else {
    variants.push_back(&op.variants[ops::detail::variant_index(op, o.variant)]);  // throws, listing them
  }
  if (o.sizes.empty()) throw std::invalid_argument("no sizes to run");
  std::vector<ops::CaseSpec> specs;
  for (const ops::Variant* v : variants)
    for (const std::vector<std::int64_t>& token : o.sizes)
      specs.push_back(ops::CaseSpec{v->name, o.dtype, op.shape(token)});
  return specs;
}

BenchRun run_operator(const ops::Operator& op, const RunOptions& o, const CaseCallback& on_case) {
  const std::vector<ops::CaseSpec> specs = plan_cases(op, o);
  GPUSCOPE_CUDA_CALL(cudaSetDevice(o.device));

  BenchRun run;
  run.gpuscope_version = kVersion;
  run.measured_at = units::utc_now_iso8601();
  run.device = query_device_facts(o.device);
  const ops::SetupContext ctx{o.device, run.device.sm_count};

  for (const ops::CaseSpec& spec : specs) {
    BenchCase c;
    c.op = op.name;
    c.variant = spec.variant;
    c.dtype = std::string(ops::dtype_name(spec.dtype));
    c.params = op.params(spec);
    c.size = op.sweep_x(spec);
    c.work = op.work(spec);
    c.timing.mode = std::string(mode_name(o.timing.mode));

    std::string skipped;
    const ops::Variant* variant = op.find_variant(spec.variant);
    std::size_t free_bytes = 0, total_bytes = 0;
    GPUSCOPE_CUDA_CALL(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (variant && variant->max_size > 0 && c.size > static_cast<double>(variant->max_size))
      skipped = "above this variant's largest size " + std::to_string(variant->max_size) + " (too slow by design)";
    else if (op.device_bytes(spec) > kFreeMemoryShare * static_cast<double>(free_bytes))
      skipped = "needs " + std::to_string(static_cast<std::int64_t>(op.device_bytes(spec) / 1048576.0)) +
                " MiB of device memory, " + std::to_string(free_bytes / 1048576) + " MiB free";
    if (skipped.empty()) skipped = time_and_check(op, spec, ctx, o, c);
    if (!skipped.empty()) {
      run.warnings.push_back(op.name + " " + c.variant + " " + c.params + " skipped: " + skipped);
      if (on_case) on_case(c, skipped);
      continue;
    }
    if (on_case) on_case(c, "");
    run.cases.push_back(std::move(c));
  }
  return run;
}

}  // namespace gpuscope::bench
