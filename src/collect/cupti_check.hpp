// Checking macros for CUPTI and CUDA driver calls made inside the traced
// program. They never throw: a failing call is reported (the call text, file,
// line and CUPTI's/the driver's error string) and its status is returned, so
// the caller can degrade. Each call site prints to stderr at most once (all
// failures with GPUSCOPE_VERBOSE=1) and forwards every failure to a sink that
// the collector installs to write a log::MessageRecord.
//
//   if (GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnable(kind)) != CUPTI_SUCCESS) { ... }
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <atomic>

namespace gpuscope::collect::detail {

/// Receives one formatted failure line (no trailing newline). Must not throw.
using check_sink_fn = void (*)(const char* text) noexcept;
void set_check_sink(check_sink_fn sink) noexcept;
void set_check_verbose(bool verbose) noexcept;

/// Reports a failed call; `printed` is the call site's print-once flag.
void report_cupti_failure(CUptiResult status, const char* call, const char* file, int line,
                          std::atomic<bool>& printed) noexcept;
void report_cu_failure(CUresult status, const char* call, const char* file, int line,
                       std::atomic<bool>& printed) noexcept;

}  // namespace gpuscope::collect::detail

/// Evaluates a CUPTI call; on failure reports it and yields the status.
#define GPUSCOPE_CUPTI_LOG_CALL(call) GPUSCOPE_CUPTI_LOG_CALL_EXPECT(call, CUPTI_SUCCESS)

/// Same, but `expected` (besides CUPTI_SUCCESS) is returned silently: for
/// statuses the caller handles itself (e.g. MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED).
#define GPUSCOPE_CUPTI_LOG_CALL_EXPECT(call, expected)                                               \
  ([&]() noexcept -> CUptiResult {                                                                   \
    const CUptiResult gpuscope_status_ = (call);                                                     \
    if (gpuscope_status_ != CUPTI_SUCCESS && gpuscope_status_ != (expected)) {                       \
      static std::atomic<bool> gpuscope_printed_{false};                                             \
      ::gpuscope::collect::detail::report_cupti_failure(gpuscope_status_, #call, __FILE__, __LINE__, \
                                                        gpuscope_printed_);                          \
    }                                                                                                \
    return gpuscope_status_;                                                                         \
  }())

/// Evaluates a CUDA driver call; on failure reports it and yields the status.
#define GPUSCOPE_CU_LOG_CALL(call) GPUSCOPE_CU_LOG_CALL_EXPECT(call, CUDA_SUCCESS)

/// Same, but `expected` is returned silently (e.g. CUDA_ERROR_NOT_INITIALIZED
/// while cuInit is still running).
#define GPUSCOPE_CU_LOG_CALL_EXPECT(call, expected)                                                                   \
  ([&]() noexcept -> CUresult {                                                                                       \
    const CUresult gpuscope_status_ = (call);                                                                         \
    if (gpuscope_status_ != CUDA_SUCCESS && gpuscope_status_ != (expected)) {                                         \
      static std::atomic<bool> gpuscope_printed_{false};                                                              \
      ::gpuscope::collect::detail::report_cu_failure(gpuscope_status_, #call, __FILE__, __LINE__, gpuscope_printed_); \
    }                                                                                                                 \
    return gpuscope_status_;                                                                                          \
  }())
