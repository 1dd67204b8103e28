// One device of PmSampler: its chip and counter availability, the metrics it takes in one
// pass, and its sampling object armed (Enable, SetConfig, counter-data images, Start),
// restarted after an overflow and stopped.
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <algorithm>
#include <string>

#include "collect/cupti_params.hpp"
#include "collect/metric_catalog.hpp"
#include "collect/pm_sampler_impl.hpp"
#include "core/gpu_metrics.hpp"

namespace gpuscope::collect {
namespace detail::pm {

void host_deinit(CUpti_Profiler_Host_Object*& host) {
  if (host == nullptr) return;
  auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  p.pHostObject = host;
  cuptiProfilerHostDeinitialize(&p);
  host = nullptr;
}

namespace {

void host_init(Device& d) {
  host_deinit(d.host);
  auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  p.pChipName = d.chip.c_str();
  p.pCounterAvailabilityImage = d.availability.data();
  must(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize");
  d.host = p.pHostObject;
}

// Config image for d.metrics; returns its passes (0 = a name was refused).
std::size_t try_config(Device& d) {
  host_init(d);
  d.metric_ptrs.clear();
  for (const std::string& m : d.metrics) d.metric_ptrs.push_back(m.c_str());
  try {
    ConfigImage img = build_config_image(d.host, d.metric_ptrs);
    d.config = std::move(img.image);
    return img.passes;
  } catch (const MetricCatalogError&) {
    return 0;
  }
}

// The metrics this device takes in one pass: names it refuses alone are dropped, then
// optional metrics from the end, then any from the end. Dropped names go in *dropped.
void choose_metrics(Device& d, std::vector<std::string>* dropped) {
  std::vector<std::string> valid;
  const std::vector<std::string> wanted = d.metrics;
  for (const std::string& m : wanted) {
    d.metrics = {m};
    if (try_config(d) == 1) {
      valid.push_back(m);
    } else {
      dropped->push_back(m);
    }
  }
  d.metrics = valid;
  if (d.metrics.empty())
    throw CuptiFailure{"cuptiProfilerHostConfigAddMetrics (no metric accepted)", CUPTI_ERROR_NOT_SUPPORTED};
  while (try_config(d) != 1) {
    // Drop the last optional metric, else the last one.
    std::size_t victim = d.metrics.size() - 1;
    for (std::size_t i = d.metrics.size(); i-- > 0;) {
      const auto def = core::gpu_metric_def(d.metrics[i]);
      if (def && def->optional) {
        victim = i;
        break;
      }
    }
    dropped->push_back(d.metrics[victim]);
    d.metrics.erase(d.metrics.begin() + static_cast<std::ptrdiff_t>(victim));
    if (d.metrics.empty())
      throw CuptiFailure{"cuptiProfilerHostGetNumOfPasses (no one-pass set)", CUPTI_ERROR_NOT_SUPPORTED};
  }
  d.metric_ptrs.clear();
  for (const std::string& m : d.metrics) d.metric_ptrs.push_back(m.c_str());
}

}  // namespace
}  // namespace detail::pm

using detail::pm::choose_metrics;
using detail::pm::CuptiFailure;
using detail::pm::must;
using detail::pm::now_ns;

// Sets up and starts one device; throws CuptiFailure.
void PmSampler::Impl::start_device(Device& d, std::vector<std::string>* messages) {
  auto chip = GPUSCOPE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = static_cast<std::size_t>(d.index);
  must(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");
  d.chip = chip.pChipName;

  auto avail = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
  avail.deviceIndex = static_cast<std::size_t>(d.index);
  must(cuptiPmSamplingGetCounterAvailability(&avail), "cuptiPmSamplingGetCounterAvailability");
  d.availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = d.availability.data();
  must(cuptiPmSamplingGetCounterAvailability(&avail), "cuptiPmSamplingGetCounterAvailability");

  std::vector<std::string> dropped;
  choose_metrics(d, &dropped);
  if (!dropped.empty()) {
    std::string list;
    for (const std::string& m : dropped) list += (list.empty() ? "" : ", ") + m;
    const std::string text = "GPU metrics on device " + std::to_string(d.index) + " (" + d.chip +
                             "): " + std::to_string(dropped.size()) +
                             " metric(s) left out (not available, or not in one pass with the others): " + list;
    messages->push_back(text);
    message(log::Severity::kInfo, text);
  }

  arm(d);
}

// Enable, SetConfig, counter data image, Start (d.config and d.metric_ptrs set); throws CuptiFailure.
void PmSampler::Impl::arm(Device& d) {
  auto en = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_Enable_Params);
  en.deviceIndex = static_cast<std::size_t>(d.index);
  must(cuptiPmSamplingEnable(&en), "cuptiPmSamplingEnable");
  d.sampler = en.pPmSamplingObject;

  auto cfg = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_SetConfig_Params);
  cfg.pPmSamplingObject = d.sampler;
  cfg.configSize = d.config.size();
  cfg.pConfig = d.config.data();
  cfg.hardwareBufferSize = options.hardware_buffer_bytes;
  cfg.samplingInterval = options.interval_ns;
  cfg.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  cfg.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  must(cuptiPmSamplingSetConfig(&cfg), "cuptiPmSamplingSetConfig");

  // Images of 0.1 s of samples, kImages of them: the decoder fills one per decode period
  // (20 ms) while the evaluator turns the previous ones into records. Measured at 10 kHz on
  // H100 with one thread doing both: DecodeData ~60 us, evaluation ~40 us and an image reset
  // ~20 us per sample, slower than the samples come; and a decode that stops on a full image
  // lost samples (gaps of 1-30 ms).
  const std::uint64_t per_tenth = 100'000'000 / std::max<std::uint64_t>(options.interval_ns, 1);
  auto size = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params);
  size.pPmSamplingObject = d.sampler;
  size.pMetricNames = d.metric_ptrs.data();
  size.numMetrics = d.metric_ptrs.size();
  size.maxSamples = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(per_tenth, 256, 1u << 16));
  must(cuptiPmSamplingGetCounterDataSize(&size), "cuptiPmSamplingGetCounterDataSize");
  if (d.image_bytes != size.counterDataSize) {  // first arm (a re-arm keeps its images)
    d.image_bytes = size.counterDataSize;
    d.spare.clear();
    for (int i = 0; i < kImages; ++i) {
      std::vector<std::uint8_t> image(size.counterDataSize);
      reset_image(d.sampler, image);
      d.spare.push_back(std::move(image));
    }
  }
  d.fresh = true;

  d.start_cpu_ns = now_ns();
  auto st = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_Start_Params);
  st.pPmSamplingObject = d.sampler;
  must(cuptiPmSamplingStart(&st), "cuptiPmSamplingStart");
  d.started = true;
}

// Stop + Start after an overflow; false when the device cannot go on.
bool PmSampler::Impl::restart(Device& d) {
  stop_device(d);
  // First the same sampling object again; CUPTI may refuse a Start after an overflow,
  // then a new object (Disable, Enable, SetConfig, counter data, Start).
  auto st = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_Start_Params);
  st.pPmSamplingObject = d.sampler;
  CUptiResult r = cuptiPmSamplingStart(&st);
  if (r != CUPTI_SUCCESS) {
    auto off = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_Disable_Params);
    off.pPmSamplingObject = d.sampler;
    cuptiPmSamplingDisable(&off);
    d.sampler = nullptr;
    try {
      arm(d);
      r = CUPTI_SUCCESS;
    } catch (const CuptiFailure& f) {
      r = f.status;
    }
  } else {
    d.started = true;
  }
  d.fresh = true;  // the first sample after a restart spans the gap
  if (r != CUPTI_SUCCESS) {
    message(log::Severity::kWarning, "GPU metrics: restarting sampling on device " + std::to_string(d.index) +
                                         " failed: " + cupti_status_text(r) + "; sampling of this device ends here");
    return false;
  }
  return true;
}

void PmSampler::Impl::stop_device(Device& d) {
  if (!d.started) return;
  auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_Stop_Params);
  p.pPmSamplingObject = d.sampler;
  cuptiPmSamplingStop(&p);
  d.started = false;
}

// An image emptied for the next decode (cuptiPmSamplingCounterDataImageInitialize).
void PmSampler::Impl::reset_image(CUpti_PmSampling_Object* sampler, std::vector<std::uint8_t>& image) {
  auto ini = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
  ini.pPmSamplingObject = sampler;
  ini.counterDataSize = image.size();
  ini.pCounterData = image.data();
  must(cuptiPmSamplingCounterDataImageInitialize(&ini), "cuptiPmSamplingCounterDataImageInitialize");
}

}  // namespace gpuscope::collect
