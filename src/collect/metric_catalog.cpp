#include "collect/metric_catalog.hpp"

#include "collect/cupti_params.hpp"

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <dlfcn.h>

#include <algorithm>
#include <set>

namespace gpuscope::collect {
namespace {

void check(CUptiResult status, const char* call) {
  if (status != CUPTI_SUCCESS) throw MetricCatalogError(std::string(call) + " failed: " + cupti_status_text(status));
}

const char* type_name(CUpti_MetricType t) {
  switch (t) {
    case CUPTI_METRIC_TYPE_COUNTER:
      return "counter";
    case CUPTI_METRIC_TYPE_RATIO:
      return "ratio";
    case CUPTI_METRIC_TYPE_THROUGHPUT:
      return "throughput";
    default:
      return "unknown";
  }
}

// One host object (RAII): cuptiProfilerHostInitialize / Deinitialize.
class HostObject {
 public:
  explicit HostObject(const std::string& chip) {
    auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = nullptr;
    const CUptiResult status = cuptiProfilerHostInitialize(&p);
    if (status != CUPTI_SUCCESS) {
      std::string chips;
      for (const std::string& c : MetricCatalog::supported_chips()) chips += (chips.empty() ? "" : ", ") + c;
      throw MetricCatalogError("cuptiProfilerHostInitialize for chip '" + chip + "' failed: " +
                               cupti_status_text(status) + (chips.empty() ? "" : "; this CUPTI supports: " + chips));
    }
    m_obj = p.pHostObject;
  }
  ~HostObject() {
    auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    p.pHostObject = m_obj;
    cuptiProfilerHostDeinitialize(&p);
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  [[nodiscard]] CUpti_Profiler_Host_Object* get() const { return m_obj; }

 private:
  CUpti_Profiler_Host_Object* m_obj = nullptr;
};

}  // namespace

std::string cupti_status_text(CUptiResult status) {
  const char* text = nullptr;
  cuptiGetResultString(status, &text);
  return std::string(text != nullptr ? text : "unknown CUPTI error") + " (" + std::to_string(status) + ")";
}

struct MetricCatalog::Impl {
  explicit Impl(const std::string& chip) : host(chip) {}
  HostObject host;
  // base name -> type, filled once.
  std::vector<std::pair<std::string, CUpti_MetricType>> bases;
};

MetricCatalog::MetricCatalog(std::string chip) : m_chip(std::move(chip)), m_impl(std::make_unique<Impl>(m_chip)) {
  for (int t = CUPTI_METRIC_TYPE_COUNTER; t < CUPTI_METRIC_TYPE__COUNT; ++t) {
    auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
    p.pHostObject = m_impl->host.get();
    p.metricType = static_cast<CUpti_MetricType>(t);
    check(cuptiProfilerHostGetBaseMetrics(&p), "cuptiProfilerHostGetBaseMetrics");
    for (std::size_t i = 0; i < p.numMetrics; ++i) {
      m_impl->bases.emplace_back(p.ppMetricNames[i], static_cast<CUpti_MetricType>(t));
    }
  }
  std::sort(m_impl->bases.begin(), m_impl->bases.end());
}

MetricCatalog::~MetricCatalog() = default;

std::vector<std::string> MetricCatalog::supported_chips() {
  auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetSupportedChips_Params);
  std::vector<std::string> chips;
  if (cuptiProfilerHostGetSupportedChips(&p) != CUPTI_SUCCESS) return chips;
  for (std::size_t i = 0; i < p.numChips; ++i) chips.emplace_back(p.ppChipNames[i]);
  return chips;
}

std::vector<std::string> MetricCatalog::base_metrics() const {
  std::vector<std::string> out;
  out.reserve(m_impl->bases.size());
  for (const auto& [name, type] : m_impl->bases) out.push_back(name);
  return out;
}

std::vector<MetricDescription> MetricCatalog::describe(std::string_view filter) const {
  std::vector<MetricDescription> out;
  for (const auto& [base, type] : m_impl->bases) {
    // The filter may name a full metric ("dram__bytes_read.sum"): match on its base.
    const std::string_view f = filter.substr(0, filter.find('.'));
    if (!f.empty() && base.find(f) == std::string::npos) continue;
    auto prop = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
    prop.pHostObject = m_impl->host.get();
    prop.pMetricName = base.c_str();
    const bool have_props = cuptiProfilerHostGetMetricProperties(&prop) == CUPTI_SUCCESS;
    auto sub = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetSubMetrics_Params);
    sub.pHostObject = m_impl->host.get();
    sub.metricType = type;
    sub.pMetricName = base.c_str();
    std::vector<std::string> names;
    if (cuptiProfilerHostGetSubMetrics(&sub) == CUPTI_SUCCESS) {
      for (std::size_t i = 0; i < sub.numOfSubmetrics; ++i) {
        const std::string s = sub.ppSubMetrics[i];
        names.push_back(s.empty() || s[0] == '.' ? base + s : base + "." + s);
      }
    }
    if (names.empty()) names.push_back(base);
    for (const std::string& n : names) {
      if (filter.find('.') != std::string_view::npos && n.find(filter) == std::string::npos) continue;
      MetricDescription d;
      d.name = n;
      d.type = type_name(type);
      if (have_props) {
        d.description = prop.pDescription != nullptr ? prop.pDescription : "";
        d.hw_unit = prop.pHwUnit != nullptr ? prop.pHwUnit : "";
        d.dim_unit = prop.pDimUnit != nullptr ? prop.pDimUnit : "";
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

bool MetricCatalog::is_valid(const std::string& name) const {
  // A fresh configuration accepts exactly the names the Range Profiler can collect.
  HostObject h(m_chip);
  const char* names[] = {name.c_str()};
  auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  p.pHostObject = h.get();
  p.ppMetricNames = names;
  p.numMetrics = 1;
  return cuptiProfilerHostConfigAddMetrics(&p) == CUPTI_SUCCESS;
}

std::vector<std::string> MetricCatalog::closest(const std::string& name, std::size_t n) const {
  const std::size_t dot = name.find('.');
  const std::string base = name.substr(0, dot);
  const std::string suffix = dot == std::string::npos ? "" : name.substr(dot);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& [b, type] : m_impl->bases) scored.emplace_back(edit_distance(base, b), b);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && out.size() < n; ++i) {
    const std::string& b = scored[i].second;
    // Pair the closest bases with the closest valid suffix of each.
    std::vector<MetricDescription> full = describe(b);
    std::string best = b;
    std::size_t best_d = static_cast<std::size_t>(-1);
    for (const MetricDescription& d : full) {
      if (d.name.compare(0, b.size() + 1, b + ".") != 0 && d.name != b) continue;
      const std::size_t dd = edit_distance(suffix, d.name.substr(b.size()));
      if (dd < best_d) {
        best_d = dd;
        best = d.name;
      }
    }
    out.push_back(best);
  }
  return out;
}

ConfigImage build_config_image(CUpti_Profiler_Host_Object* host, const std::vector<const char*>& metrics) {
  auto add = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = host;
  add.ppMetricNames = const_cast<const char**>(metrics.data());
  add.numMetrics = metrics.size();
  check(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");
  auto size = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  size.pHostObject = host;
  check(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
  ConfigImage out;
  out.image.resize(size.configImageSize);
  auto get = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  get.pHostObject = host;
  get.configImageSize = out.image.size();
  get.pConfigImage = out.image.data();
  check(cuptiProfilerHostGetConfigImage(&get), "cuptiProfilerHostGetConfigImage");
  auto passes = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  passes.configImageSize = out.image.size();
  passes.pConfigImage = out.image.data();
  check(cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses");
  out.passes = passes.numOfPasses;
  return out;
}

std::size_t MetricCatalog::passes(const std::vector<std::string>& metrics) const {
  HostObject h(m_chip);
  std::vector<const char*> names;
  names.reserve(metrics.size());
  for (const std::string& m : metrics) names.push_back(m.c_str());
  return build_config_image(h.get(), names).passes;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace gpuscope::collect

namespace gpuscope::collect {

std::optional<std::string> detect_chip(int device, std::string* why) {
  // cuptiDeviceGetChipName needs an initialised driver; gpuscope itself does not link
  // libcuda, so it is loaded here (a machine without a driver has none).
  using CuInit = int (*)(unsigned);
  void* libcuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  const auto cu_init = libcuda != nullptr ? reinterpret_cast<CuInit>(::dlsym(libcuda, "cuInit")) : nullptr;
  if (cu_init == nullptr) {
    if (why != nullptr) *why = "no NVIDIA driver (libcuda.so.1 not found)";
    return std::nullopt;
  }
  if (const int r = cu_init(0); r != 0) {
    if (why != nullptr) *why = "cuInit failed with CUresult " + std::to_string(r);
    return std::nullopt;
  }
  auto init = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  if (const CUptiResult r = cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS) {
    if (why != nullptr) *why = "cuptiProfilerInitialize: " + cupti_status_text(r);
    return std::nullopt;
  }
  auto chip = GPUSCOPE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = static_cast<std::size_t>(device);
  if (const CUptiResult r = cuptiDeviceGetChipName(&chip); r != CUPTI_SUCCESS || chip.pChipName == nullptr) {
    if (why != nullptr) *why = "cuptiDeviceGetChipName: " + cupti_status_text(r);
    return std::nullopt;
  }
  return std::string(chip.pChipName);
}

}  // namespace gpuscope::collect
