// A forward's CPU window by cause: api_cause names a CUDA API call's cause, cpu_split splits
// the window (llm_generations.hpp, "CPU time by cause").
#include "analyze/llm/llm_generations.hpp"

#include <algorithm>
#include <vector>

#include "core/stats.hpp"

namespace gpuscope::analyze {
namespace {

bool has(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }
bool starts(std::string_view name, std::string_view prefix) { return name.rfind(prefix, 0) == 0; }

}  // namespace

ApiCause api_cause(std::string_view n) {
  for (std::string_view p : {"cuModuleLoad", "cuLibraryLoad", "cudaLibraryLoad", "cuModuleGetFunction",
                             "cuLibraryGetKernel", "cudaGetFuncBySymbol", "cuLink", "nvrtc", "nvJitLink"})
    if (starts(n, p)) return ApiCause::kModuleLoad;
  if (has(n, "Malloc") || has(n, "Free") || starts(n, "cuMemAlloc") || n == "cuMemCreate" || n == "cuMemMap" ||
      n == "cuMemAddressReserve" || n == "cuMemRelease" || has(n, "HostAlloc") || has(n, "HostRegister"))
    return ApiCause::kAlloc;
  if (has(n, "Synchronize") || ((has(n, "Memcpy") || has(n, "Memset")) && !has(n, "Async"))) return ApiCause::kSync;
  if (has(n, "Launch")) return ApiCause::kLaunch;
  return ApiCause::kOther;
}

CpuCauses cpu_split(std::int64_t from, std::int64_t to, std::span<const ApiSpan> api,
                    std::span<const std::pair<std::int64_t, std::int64_t>> ops) {
  CpuCauses c;
  if (to <= from) return c;
  c.window_ns = to - from;
  const auto clip = [&](std::int64_t a, std::int64_t b, std::vector<stats::Interval>& out) {
    a = std::max(a, from), b = std::min(b, to);
    if (b > a) out.push_back({a, b});
  };
  std::vector<stats::Interval> covered;  // the causes attributed so far
  std::int64_t before = 0;
  for (std::size_t k = 0; k < kApiCauses; ++k) {
    for (const ApiSpan& a : api)
      if (static_cast<std::size_t>(a.cause) == k) clip(a.start_ns, a.end_ns, covered);
    const std::int64_t now = stats::union_length(covered);
    c.api_ns[k] = now - before;
    before = now;
  }
  for (const auto& [a, b] : ops) clip(a, b, covered);
  const std::int64_t busy = stats::union_length(std::move(covered));
  c.framework_ns = busy - before;
  c.other_ns = c.window_ns - busy;
  return c;
}

}  // namespace gpuscope::analyze
