#include "bench/ops/check.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "gpuscope/bench.hpp"

namespace gpuscope::bench::ops::check {

float round_to(DType dtype, float value) {
  switch (dtype) {
    case DType::kF16:
      return __half2float(__float2half_rn(value));
    case DType::kBF16:
      return __bfloat162float(__float2bfloat16_rn(value));
    default:
      return value;
  }
}

std::vector<double> download(const void* device, DType dtype, std::int64_t first, std::int64_t count) {
  std::vector<double> out(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)));
  if (count <= 0) return out;
  const auto bytes = static_cast<std::size_t>(dtype_bytes(dtype));
  std::vector<unsigned char> raw(static_cast<std::size_t>(count) * bytes);
  GPUSCOPE_CUDA_CALL(cudaMemcpy(raw.data(), static_cast<const unsigned char*>(device) + first * bytes, raw.size(),
                                cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const unsigned char* p = raw.data() + i * bytes;
    switch (dtype) {
      case DType::kF16: {
        __half h;
        std::memcpy(&h, p, 2);
        out[i] = __half2float(h);
        break;
      }
      case DType::kBF16: {
        __nv_bfloat16 h;
        std::memcpy(&h, p, 2);
        out[i] = __bfloat162float(h);
        break;
      }
      default: {
        float f;
        std::memcpy(&f, p, 4);
        out[i] = f;
      }
    }
  }
  return out;
}

std::vector<Range> ranges_to_check(std::int64_t n) {
  if (n <= 0) return {};
  if (n <= kFullCheckLimit) return {Range{0, n}};
  std::vector<Range> ranges;
  const std::int64_t last_start = n - kSampleChunkLength;
  for (std::int64_t c = 0; c < kSampleChunks; ++c) {
    const std::int64_t first = last_start * c / (kSampleChunks - 1);
    if (!ranges.empty() && first < ranges.back().first + ranges.back().count) continue;
    ranges.push_back(Range{first, kSampleChunkLength});
  }
  return ranges;
}

std::string ranges_note(std::int64_t n) {
  if (n <= kFullCheckLimit) return {};
  return std::to_string(kSampleChunks) + " chunks of " + std::to_string(kSampleChunkLength) +
         " elements checked, spread over the output, first and last included (" + std::to_string(n) + " > " +
         std::to_string(kFullCheckLimit) + " elements)";
}

void ErrorTracker::add(std::int64_t index, double got, double ref, double tolerance) {
  const double err = std::fabs(got - ref);
  ++m_checked;
  if (std::isnan(err)) {
    m_nan = true;
  } else {
    m_max_abs_error = std::max(m_max_abs_error, err);
  }
  if (!(err <= tolerance)) {
    if (m_failures++ == 0) {
      std::ostringstream s;
      s.precision(9);
      s << m_what << "[" << index << "] = " << got << ", reference " << ref << ", tolerance " << tolerance;
      m_first_failure = s.str();
    }
  }
}

void ErrorTracker::add(const std::string& where, double got, double ref, double tolerance) {
  const std::int64_t before = m_failures;
  add(0, got, ref, tolerance);
  if (before == 0 && m_failures == 1) {
    std::ostringstream s;
    s.precision(9);
    s << m_what << where << " = " << got << ", reference " << ref << ", tolerance " << tolerance;
    m_first_failure = s.str();
  }
}

Verification ErrorTracker::result(std::string note) const {
  Verification v;
  v.checked = m_checked;
  v.passed = m_checked > 0 && m_failures == 0;
  v.max_abs_error = m_nan ? std::nan("") : m_max_abs_error;
  v.note = std::move(note);
  if (m_failures > 0)
    v.first_failure =
        m_first_failure + " (" + std::to_string(m_failures) + " of " + std::to_string(m_checked) + " elements off)";
  else if (m_checked == 0)
    v.first_failure = "nothing was compared";
  return v;
}

}  // namespace gpuscope::bench::ops::check
