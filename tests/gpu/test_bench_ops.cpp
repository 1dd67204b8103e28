// GPU test of the operator suite of `gpuscope bench` (bench/ops/): every operator, every
// variant and every dtype, at several sizes including ones that are not multiples of the
// block size (256), the vector width (4 or 8 elements) or the 32 x 32 tiles, is run once
// and its output checked against the operator's reference (Instance::verify). Then every
// variant runs again at one size through the timing engine in graph mode (a few replays
// of a captured batch) and is checked again: every operator must be capturable, and
// repeated calls (e.g. mean's reset of its block counter) must stay correct.
// Exits 77 (ctest: skipped) without a usable GPU; 1 on any failure; runs in ~10-30 s.
#include <cstdio>
#include <exception>
#include <iterator>
#include <string>
#include <vector>

#include "bench/device_facts.hpp"
#include "bench/ops/operator.hpp"
#include "core/bench_sizes.hpp"
#include "gpuscope/bench.hpp"

namespace ops = gpuscope::bench::ops;
using gpuscope::core::parse_sizes;

namespace {

// Sizes per operator (--sizes syntax; each operator's shape() turns them into dims), and
// the one size it is also run at in graph mode.
struct Sizes {
  const char* op;
  const char* checked;
  const char* graph;
};
constexpr Sizes kSizes[] = {
    {"softmax", "1x1,3x31,5x257,7x1000,4x4099,2x70001", "64x1000"},
    {"transpose", "1,33x65,1000x37,257x1025,1024", "1000x37"},
    {"gemm", "1,17x33x65,127,256,1000x1000x1000,3x1024x7", "256"},
    {"linear_small", "1,3x100x200,17,64", "8"},
    // elementwise and mean: below / above one block, vector tails, > 2^20, > 2^26 (sampled check)
    {"", "1,7,255,257,1000,4099,1000003,1048583,67108879", "1000003"},
};

const Sizes& sizes_for(const std::string& op) {
  for (const Sizes& s : kSizes)
    if (op == s.op || *s.op == '\0') return s;
  return kSizes[std::size(kSizes) - 1];
}

int g_failures = 0, g_checks = 0;

void report(const std::string& what, const ops::Verification& v) {
  ++g_checks;
  if (v.passed) return;
  ++g_failures;
  std::printf("FAIL %s: %s (max |err| %g over %lld elements)\n", what.c_str(), v.first_failure.c_str(), v.max_abs_error,
              static_cast<long long>(v.checked));
}

}  // namespace

int main() {
  if (const std::string problem = gpuscope::bench::cuda_device_problem(0); !problem.empty()) {
    std::printf("SKIP: %s\n", problem.c_str());
    return 77;
  }
  try {
    const gpuscope::DeviceFacts facts = gpuscope::bench::query_device_facts(0);
    const ops::SetupContext ctx{0, facts.sm_count};
    std::printf("%s, %d SMs\n", facts.name.c_str(), facts.sm_count);
    for (const ops::Operator& op : ops::registry()) {
      for (const ops::Variant& variant : op.variants) {
        for (ops::DType dtype : op.dtypes) {
          const std::string name = op.name + " " + variant.name + " " + std::string(ops::dtype_name(dtype));
          for (const auto& token : parse_sizes(sizes_for(op.name).checked)) {
            const ops::CaseSpec spec{variant.name, dtype, op.shape(token)};
            if (variant.max_size > 0 && op.sweep_x(spec) > static_cast<double>(variant.max_size)) continue;
            auto instance = op.setup(spec, ctx);
            instance->enqueue(nullptr);
            report(name + " " + op.params(spec), instance->verify());
          }
          // Graph mode through the timing engine, then check the last replay's output.
          const ops::CaseSpec spec{variant.name, dtype, op.shape(parse_sizes(sizes_for(op.name).graph).front())};
          if (variant.max_size > 0 && op.sweep_x(spec) > static_cast<double>(variant.max_size)) continue;
          auto instance = op.setup(spec, ctx);
          gpuscope::bench::TimingOptions t;
          t.mode = gpuscope::bench::Mode::kGraph;
          t.batch = 4;
          t.budget_s = 0.01;
          t.min_samples = 3;
          t.warmup_s = 0;
          t.back_to_back = true;
          const auto r = gpuscope::bench::time_gpu([&](cudaStream_t s) { instance->enqueue(s); }, t);
          if (!(r.median_s > 0)) {
            ++g_failures;
            std::printf("FAIL %s graph: median %g\n", name.c_str(), r.median_s);
          }
          report(name + " " + op.params(spec) + " (graph, " + std::to_string(r.samples_s.size()) + " samples)",
                 instance->verify());
        }
      }
      std::printf("%-12s done (%d checks so far, %d failures)\n", op.name.c_str(), g_checks, g_failures);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
