// PmSampler's decoder thread: every decode period, cuptiPmSamplingDecodeData of each
// started device into a spare counter-data image, handed to the evaluator
// (pm_sampler_evaluate.cpp); a hardware-buffer overflow is counted and sampling restarted.
#include <chrono>
#include <string>

#include "collect/cupti_params.hpp"
#include "collect/metric_catalog.hpp"
#include "collect/pm_sampler_impl.hpp"

namespace gpuscope::collect {

using detail::pm::CuptiFailure;
using detail::pm::now_ns;

void PmSampler::Impl::run() {
  std::unique_lock lock(mutex);
  while (true) {
    const bool last = stopping;
    for (auto& d : devices) {
      if (!d->started) continue;
      try {
        if (!decode(*d, lock)) {
          stop_device(*d);
          d->failed = true;
        }
      } catch (const CuptiFailure& f) {
        message(log::Severity::kWarning, "GPU metrics: " + f.call + " on device " + std::to_string(d->index) +
                                             " failed: " + cupti_status_text(f.status) + "; sampling of it ends here");
        stop_device(*d);
        d->failed = true;
      }
    }
    writer.flush();
    if (last) {
      decoder_done = true;
      eval_cv.notify_all();
      return;
    }
    if (options.duty_ms > 0) apply_duty(lock);
    cv.wait_for(lock, std::chrono::milliseconds(options.decode_period_ms), [&] { return stopping; });
  }
}

// Decodes what the hardware buffer holds into spare images and hands them to the evaluator
// (decoder thread; `lock` holds mutex, released around DecodeData). Returns false on a CUPTI
// error.
bool PmSampler::Impl::decode(Device& d, std::unique_lock<std::mutex>& lock) {
  for (int round = 0; round < 64; ++round) {
    if (d.spare.empty()) {  // the evaluator is behind: the hardware buffer keeps the records
      ++d.evaluator_behind;
      break;
    }
    std::vector<std::uint8_t> image = std::move(d.spare.back());
    d.spare.pop_back();
    auto dec = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_DecodeData_Params);
    dec.pPmSamplingObject = d.sampler;
    dec.pCounterDataImage = image.data();
    dec.counterDataImageSize = image.size();
    lock.unlock();
    const std::uint64_t t0 = now_ns();
    const CUptiResult r = cuptiPmSamplingDecodeData(&dec);
    const std::uint64_t t1 = now_ns();
    lock.lock();
    d.decode_ns += t1 - t0;
    ++d.decodes;
    const bool overflow = r == CUPTI_ERROR_OUT_OF_MEMORY || dec.overflow != 0;
    if (r != CUPTI_SUCCESS && !overflow) {
      d.spare.push_back(std::move(image));
      message(log::Severity::kWarning, "GPU metrics: cuptiPmSamplingDecodeData on device " + std::to_string(d.index) +
                                           " failed: " + cupti_status_text(r) + "; sampling of this device ends here");
      return false;
    }
    filled.push_back(Filled{&d, d.sampler, std::move(image), d.fresh});
    d.fresh = false;
    eval_cv.notify_one();
    if (overflow) {
      ++d.overflows;
      log::DataLossRecord loss{};
      loss.ts_ns = now_ns();
      loss.count = 1;
      loss.what_string = writer.intern("gpu_metrics_overflow");
      loss.context_id = static_cast<std::uint32_t>(d.index);
      loss.stream_id = 0xffffffffu;
      writer.add(log::RecordKind::kDataLoss, loss);
      // The hardware buffer keeps its oldest records and takes no new ones once full:
      // sampling goes on only after a restart (the gap shows in the samples' times).
      return restart(d);
    }
    if (dec.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
    ++d.image_full;  // more records wait: decode on into the next spare image
  }
  return true;
}

// Validation only (PmSamplerOptions::duty_ms): sampling on while floor(CUPTI clock / duty)
// is even, off while it is odd, so one traced run holds steps with and without sampling.
void PmSampler::Impl::apply_duty(std::unique_lock<std::mutex>& lock) {
  const std::uint64_t period = std::uint64_t{options.duty_ms} * 1'000'000;
  const bool on = (now_ns() / period) % 2 == 0;
  for (auto& d : devices) {
    if (d->failed || d->paused == !on) continue;
    if (!on && d->started) {
      decode(*d, lock);  // what was sampled before the pause
      stop_device(*d);
      d->paused = true;
    } else if (on && d->paused) {
      d->paused = false;
      if (!restart(*d)) d->failed = true;
    }
  }
}

}  // namespace gpuscope::collect
