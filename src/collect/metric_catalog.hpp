// metric_catalog: what the CUPTI profiler host API knows about a GPU's metrics, without
// a GPU (cupti_profiler_host.h, CUDA 13: cuptiProfilerHostInitialize with the chip name,
// e.g. "GH100", and no counter-availability image).
//
// Used by `gpuscope kernels` before it launches anything: --list-metrics, checking the
// names the user asked for (with the closest valid names when one is unknown), and the
// number of replay passes a metric list needs (packing metrics into as few passes as the
// host API allows).
//
// Errors: every function throws MetricCatalogError with the CUPTI call and status in the
// message (an unsupported chip name names the supported ones).
#pragma once

#include <cupti_result.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct CUpti_Profiler_Host_Object;

namespace gpuscope::collect {

/// "CUPTI_ERROR_NOT_SUPPORTED (27)": CUPTI's name of a status and its number, for messages
/// the user reads (cuptiGetResultString).
[[nodiscard]] std::string cupti_status_text(CUptiResult status);

class MetricCatalogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One metric as Nsight Compute names it: base name plus a rollup/submetric
/// ("dram__bytes_read" + ".sum").
struct MetricDescription {
  std::string name;         // full name, e.g. "dram__bytes_read.sum"
  std::string type;         // "counter", "ratio" or "throughput"
  std::string description;  // CUPTI's short description of the base metric
  std::string hw_unit;      // hardware unit, e.g. "dram"
  std::string dim_unit;     // unit of the values, e.g. "bytes"
};

/// A group of metrics that the Range Profiler collects together, and its passes.
struct PassGroup {
  std::vector<std::string> metrics;
  std::size_t passes = 0;  // cuptiProfilerHostGetNumOfPasses for this group alone
};

class MetricCatalog {
 public:
  /// Opens the host API for `chip` ("GH100", "GB100", ...: cuptiDeviceGetChipName).
  explicit MetricCatalog(std::string chip);
  ~MetricCatalog();
  MetricCatalog(const MetricCatalog&) = delete;
  MetricCatalog& operator=(const MetricCatalog&) = delete;

  [[nodiscard]] const std::string& chip() const { return m_chip; }

  /// Chips the installed CUPTI supports (cuptiProfilerHostGetSupportedChips).
  [[nodiscard]] static std::vector<std::string> supported_chips();

  /// Base metric names (no rollup), all types, sorted.
  [[nodiscard]] std::vector<std::string> base_metrics() const;
  /// Full names (base + each submetric) of the base metrics whose name contains
  /// `filter` (empty = all), sorted; with descriptions and units.
  [[nodiscard]] std::vector<MetricDescription> describe(std::string_view filter) const;
  /// Properties of one full or base name; nullopt-like empty name when unknown.
  [[nodiscard]] bool is_valid(const std::string& name) const;
  /// Up to `n` valid full names closest to `name` (edit distance on the base name,
  /// then on the suffix), for an "unknown metric" message.
  [[nodiscard]] std::vector<std::string> closest(const std::string& name, std::size_t n = 5) const;

  /// Replay passes for all of `metrics` in one configuration.
  [[nodiscard]] std::size_t passes(const std::vector<std::string>& metrics) const;

 private:
  std::string m_chip;
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

/// Levenshtein distance (insertions, deletions, substitutions cost 1).
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace gpuscope::collect

namespace gpuscope::collect {
/// The chip name of CUDA device `device` ("GH100"), through cuptiProfilerInitialize +
/// cuptiDeviceGetChipName; nullopt when there is no GPU or driver (the CUPTI status is
/// put in *why).
[[nodiscard]] std::optional<std::string> detect_chip(int device, std::string* why);
}  // namespace gpuscope::collect

namespace gpuscope::collect {
/// A Range Profiler configuration image for `metrics` and the replay passes it needs:
/// cuptiProfilerHostConfigAddMetrics + GetConfigImageSize/GetConfigImage +
/// cuptiProfilerHostGetNumOfPasses on `host` (which keeps the metrics added). Throws
/// MetricCatalogError naming the failing call (an unknown metric fails in ConfigAddMetrics).
struct ConfigImage {
  std::vector<std::uint8_t> image;
  std::size_t passes = 0;
};
[[nodiscard]] ConfigImage build_config_image(CUpti_Profiler_Host_Object* host, const std::vector<const char*>& metrics);
}  // namespace gpuscope::collect
