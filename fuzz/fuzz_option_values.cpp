// Fuzzes the parsers of option values and of the other short texts gpuscope takes from the
// user: the input is one text, given to each of them.
//   core/option_values.hpp   durations ("250ms", "30s"), counts, reals, sizes ("64MiB",
//                            "2^20"), with their limits: they never throw;
//   core/bench_sizes.hpp     `bench --sizes` ("2^20:2^30", "64x4096x4096"):
//                            std::invalid_argument;
//   analyze/common/trace_filter.hpp `--from/--to` times and `--nvtx RANGE@DOMAIN/N`:
//                            std::invalid_argument;
//   core/report_transform.hpp and render/report_render.hpp `--timeunit`, `--format`:
//                            std::invalid_argument;
//   analyze/common/tracer_share.hpp a tracer cost read from a trace's meta: never throws;
//   collect/collector_config.hpp the GPUSCOPE_* variables the collector reads inside the
//                            traced program (every variable set to the text): never throws.
// Beside crashes, each result is checked against its contract (in range, errors worded).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "analyze/common/trace_filter.hpp"
#include "analyze/common/tracer_share.hpp"
#include "collect/collector_config.hpp"
#include "core/bench_sizes.hpp"
#include "core/option_values.hpp"
#include "core/report_transform.hpp"
#include "fuzz_support.hpp"
#include "render/report_render.hpp"

namespace {

using namespace gpuscope;

std::string g_env;  // what every GPUSCOPE_* variable holds
const char* fuzz_getenv(const char*) { return g_env.c_str(); }

template <class T, class Limits>
void check_option(const char* what, const core::OptionValue<T>& v, const Limits& limits) {
  if (v.ok() != v.error.empty()) fuzz::finding(what, "a value and an error, or neither");
  if (!v.ok()) return;
  if constexpr (std::is_same_v<T, double>) {
    if (!std::isfinite(*v.value) || *v.value < limits.min || *v.value > limits.max) {
      fuzz::finding(what, "value outside its limits or not finite");
    }
  }
}

// Calls `parse`; std::invalid_argument with a message is its documented refusal.
template <class F>
void refusable(F&& parse) {
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    fuzz::documented(e);
  } catch (const std::exception& e) {
    fuzz::undocumented(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const core::DurationLimits seconds;
    const auto d = core::parse_duration_ns(text, seconds);
    check_option("parse_duration_ns", d, seconds);
    if (d.ok() && (*d.value < seconds.min_ns || *d.value > seconds.max_ns))
      fuzz::finding("parse_duration_ns", "out of limits");
    core::DurationLimits period{1'000'000, 60'000'000'000, 1'000'000, "100ms"};
    const auto p = core::parse_duration_ns(text, period);
    if (p.ok() && (*p.value < period.min_ns || *p.value > period.max_ns))
      fuzz::finding("parse_duration_ns", "out of limits");
    const core::CountLimits counts{1, 4096, "10"};
    const auto c = core::parse_count(text, counts);
    check_option("parse_count", c, counts);
    if (c.ok() && (*c.value < counts.min || *c.value > counts.max)) fuzz::finding("parse_count", "out of limits");
    const core::RealLimits fraction{0.0, 1.0, false, true, "0.5"};
    check_option("parse_real", core::parse_real(text, fraction), fraction);
    check_option("parse_real", core::parse_real(text), core::RealLimits{});
    const core::SizeLimits sizes;
    const auto s = core::parse_size(text, sizes);
    check_option("parse_size", s, sizes);
    if (s.ok() && (*s.value < sizes.min || *s.value > sizes.max)) fuzz::finding("parse_size", "out of limits");
  } catch (const std::exception& e) {
    fuzz::undocumented(e);  // documented never to throw
  }

  refusable([&] {
    const std::vector<std::vector<std::int64_t>> shapes = core::parse_sizes(text);
    if (shapes.empty() || shapes.size() > core::kMaxSizes) fuzz::finding("parse_sizes", "no sizes or too many");
    for (const auto& shape : shapes) {
      if (shape.empty()) fuzz::finding("parse_sizes", "an empty shape");
      for (const std::int64_t n : shape) {
        if (n <= 0 || n > (std::int64_t{1} << 62)) fuzz::finding("parse_sizes", "a number outside 1..2^62");
      }
    }
  });
  refusable([&] {
    if (analyze::parse_trace_time(text) < 0) fuzz::finding("parse_trace_time", "a negative time");
  });
  refusable([&] {
    const analyze::NvtxRangeFilter f = analyze::parse_nvtx_filter(text);
    if (f.name.empty() || (f.instance && *f.instance < 1))
      fuzz::finding("parse_nvtx_filter", "empty name or instance < 1");
  });
  refusable([&] { (void)parse_time_unit(text); });
  refusable([&] { (void)render::parse_format(text); });

  try {
    if (const auto cost = analyze::detail::parse_cost_ns(text); cost && !(std::isfinite(*cost) && *cost >= 0)) {
      fuzz::finding("parse_cost_ns", "a cost that is negative or not finite");
    }
    std::uint64_t u = 0;
    bool b = false;
    (void)collect::parse_u64(text, &u);
    (void)collect::parse_bool(text, &b);
    g_env.assign(text.data(), text.size());
    std::vector<std::string> warnings;
    (void)collect::parse_collector_config(fuzz_getenv, &warnings);
  } catch (const std::exception& e) {
    fuzz::undocumented(e);  // documented never to throw (the collector runs inside the program)
  }
  return 0;
}
