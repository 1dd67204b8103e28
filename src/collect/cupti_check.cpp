#include "collect/cupti_check.hpp"

#include <cstdio>

namespace gpuscope::collect::detail {
namespace {
std::atomic<check_sink_fn> g_sink{nullptr};
std::atomic<bool> g_verbose{false};

void emit(const char* text, std::atomic<bool>& printed) noexcept {
  if (g_verbose.load(std::memory_order_relaxed) || !printed.exchange(true)) {
    std::fprintf(stderr, "gpuscope: %s\n", text);
  }
  if (check_sink_fn sink = g_sink.load(std::memory_order_acquire)) sink(text);
}
}  // namespace

void set_check_sink(check_sink_fn sink) noexcept { g_sink.store(sink, std::memory_order_release); }
void set_check_verbose(bool verbose) noexcept { g_verbose.store(verbose); }

void report_cupti_failure(CUptiResult status, const char* call, const char* file, int line,
                          std::atomic<bool>& printed) noexcept {
  const char* what = nullptr;
  if (cuptiGetResultString(status, &what) != CUPTI_SUCCESS || what == nullptr) what = "?";
  char text[512];
  std::snprintf(text, sizeof text, "CUPTI call %s failed at %s:%d: %s (%d)", call, file, line, what,
                static_cast<int>(status));
  emit(text, printed);
}

void report_cu_failure(CUresult status, const char* call, const char* file, int line,
                       std::atomic<bool>& printed) noexcept {
  const char* what = nullptr;
  if (cuGetErrorName(status, &what) != CUDA_SUCCESS || what == nullptr) what = "?";
  char text[512];
  std::snprintf(text, sizeof text, "CUDA driver call %s failed at %s:%d: %s (%d)", call, file, line, what,
                static_cast<int>(status));
  emit(text, printed);
}

}  // namespace gpuscope::collect::detail
