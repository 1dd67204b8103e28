// A CUPTI profiler parameter struct, zeroed, with its structSize set (the versioning
// field every cupti_profiler_*.h / cupti_range_profiler.h call checks).
#pragma once

#include <cstddef>

namespace gpuscope::collect {

template <class P>
[[nodiscard]] P cupti_params(std::size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}

}  // namespace gpuscope::collect

/// GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params): zeroed, structSize set.
#define GPUSCOPE_CUPTI_PARAMS(T) ::gpuscope::collect::cupti_params<T>(T##_STRUCT_SIZE)
