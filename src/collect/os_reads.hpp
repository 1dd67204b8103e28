// os_reads (internal): what the collector reads from the OS on any thread without a call
// into CUPTI: the calling thread's kernel id (gettid, as CUPTI's API records give it with
// CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) and CLOCK_REALTIME in ns (vDSO, no system call).
// Inline: the hot path (collector_hot_path.cpp) reads the clock twice per timed API call.
#pragma once

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

namespace gpuscope::collect::detail {

inline std::uint32_t current_tid() noexcept { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

inline std::uint64_t realtime_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace gpuscope::collect::detail
