// profiled_launch (internal): one launch profiled in kernels mode, as KernelProfiler
// (kernel_profiler.hpp) hands it to the collector's writer thread, which writes it as a
// KernelProfileRecord + KernelMetricRecords (collector_records.cpp). -1 = unknown.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope::collect::detail {

/// One profiled launch, handed to the writer thread.
struct ProfiledLaunch {
  std::uint64_t launch_ns = 0;
  std::uint64_t launch_index = 0;
  std::string name;  // mangled
  std::uint32_t device_id = 0, context_id = 0, stream_id = 0xffffffffu, correlation_id = 0;
  std::int32_t grid[3] = {-1, -1, -1};
  std::int32_t block[3] = {-1, -1, -1};
  std::int32_t registers_per_thread = -1, static_shared_memory = -1, dynamic_shared_memory = -1,
               local_memory_per_thread = -1;
  std::uint32_t passes = 0;
  std::vector<double> values;  // in the order of KernelProfiler::metrics()
};

}  // namespace gpuscope::collect::detail
