// PmSampler's evaluator thread: the completed samples of each image the decoder filled
// become GpuMetricSampleRecords (CounterDataGetSampleInfo, EvaluateToGpuValues), outliers
// and repeats dropped; the image is emptied and goes back to the decoder's spares.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "collect/cupti_params.hpp"
#include "collect/pm_sampler_impl.hpp"

namespace gpuscope::collect {

using detail::pm::CuptiFailure;
using detail::pm::now_ns;

// Evaluator thread: each filled image's completed samples become GpuMetricSampleRecords.
void PmSampler::Impl::evaluate_loop() {
  std::unique_lock lock(mutex);
  std::vector<char> batch;
  for (;;) {
    eval_cv.wait(lock, [&] { return !filled.empty() || decoder_done; });
    if (filled.empty()) break;
    Filled f = std::move(filled.front());
    filled.pop_front();
    Device& d = *f.device;
    lock.unlock();
    batch.clear();
    const std::uint64_t t0 = now_ns();
    auto info = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params);
    info.pCounterDataImage = f.image.data();
    info.counterDataImageSize = f.image.size();
    if (cuptiPmSamplingGetCounterDataInfo(&info) == CUPTI_SUCCESS) {
      d.incomplete += info.numPopulatedSamples - info.numCompletedSamples;
      encode_samples(d, f, info.numCompletedSamples, batch);
    }
    const std::uint64_t t1 = now_ns();
    bool reset_ok = true;
    try {
      reset_image(f.sampler, f.image);
    } catch (const CuptiFailure&) {
      reset_ok = false;
    }
    d.evaluate_ns += t1 - t0;
    d.reset_ns += now_ns() - t1;
    lock.lock();
    for (std::size_t at = 0; at + sizeof(log::RecordHeader) <= batch.size();) {  // the encoded records
      log::RecordHeader h{};
      std::memcpy(&h, batch.data() + at, sizeof h);
      writer.add_raw(log::RecordKind::kGpuMetricSample, batch.data() + at + sizeof h, h.size);
      at += sizeof h + h.size;
    }
    if (reset_ok) d.spare.push_back(std::move(f.image));
    if (writer.pending_bytes() > (1u << 20)) writer.flush();
  }
  writer.flush();
}

// The completed samples of f.image as encoded records appended to `batch` (evaluator
// thread, mutex not held).
void PmSampler::Impl::encode_samples(Device& d, Filled& f, std::size_t completed, std::vector<char>& batch) {
  if (f.drop_first) d.drop_next = true;
  values.assign(d.metrics.size(), 0.0);
  for (std::size_t i = 0; i < completed; ++i) {
    auto si = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params);
    si.pPmSamplingObject = f.sampler;
    si.pCounterDataImage = f.image.data();
    si.counterDataImageSize = f.image.size();
    si.sampleIndex = i;
    if (cuptiPmSamplingCounterDataGetSampleInfo(&si) != CUPTI_SUCCESS) {
      ++d.unreadable;
      continue;
    }
    // The first sample after a (re)start spans the set-up: an outlier (CUPTI docs; seen on
    // H200: 735 ms long, starting before sampling did). The first image may have no sample
    // yet, so the drop waits for the first one. Any sample over 4 intervals is one too.
    if (d.drop_next || si.endTimestamp - si.startTimestamp > 4 * options.interval_ns) {
      d.drop_next = false;
      d.last_end = std::max(d.last_end, si.endTimestamp);
      ++d.outliers;
      continue;
    }
    if (si.endTimestamp <= si.startTimestamp || si.endTimestamp <= d.last_end) {
      ++d.out_of_order;
      continue;
    }
    auto ev = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    ev.pHostObject = d.host;
    ev.pCounterDataImage = f.image.data();
    ev.counterDataImageSize = f.image.size();
    ev.rangeIndex = i;
    ev.ppMetricNames = d.metric_ptrs.data();
    ev.numMetrics = d.metric_ptrs.size();
    ev.pMetricValues = values.data();
    if (cuptiProfilerHostEvaluateToGpuValues(&ev) != CUPTI_SUCCESS) {
      std::fill(values.begin(), values.end(), std::nan(""));
    }
    if (d.samples == 0) d.first_sample_start = si.startTimestamp;
    d.last_end = si.endTimestamp;
    log::GpuMetricSampleRecord rec{};
    rec.start_ns = static_cast<std::uint64_t>(static_cast<std::int64_t>(si.startTimestamp) + clock_offset_ns);
    rec.end_ns = static_cast<std::uint64_t>(static_cast<std::int64_t>(si.endTimestamp) + clock_offset_ns);
    rec.device_id = static_cast<std::uint32_t>(d.index);
    rec.count = static_cast<std::uint32_t>(values.size());
    log::RecordHeader h{};
    h.kind = static_cast<std::uint16_t>(log::RecordKind::kGpuMetricSample);
    h.size = static_cast<std::uint32_t>(sizeof rec + values.size() * sizeof(double));
    const std::size_t at = batch.size();
    batch.resize(at + sizeof h + h.size);
    std::memcpy(batch.data() + at, &h, sizeof h);
    std::memcpy(batch.data() + at + sizeof h, &rec, sizeof rec);
    std::memcpy(batch.data() + at + sizeof h + sizeof rec, values.data(), values.size() * sizeof(double));
    if (options.on_sample) {
      options.on_sample(PmSample{d.index, rec.start_ns, rec.end_ns, &d.metrics, values.data()});
    }
    ++d.samples;
    samples.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace gpuscope::collect
