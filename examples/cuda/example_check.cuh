// Shared helpers for the gpuscope CUDA examples: one checking macro for every
// CUDA runtime call (names the call, file and line, then exits with status 2)
// and a small integer-argument parser.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#define GPUSCOPE_EXAMPLE_CHECK(call)                                                                                \
  do {                                                                                                              \
    cudaError_t gpuscope_status_ = (call);                                                                          \
    if (gpuscope_status_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "CUDA error: %s returned %d (%s) at %s:%d\n", #call, static_cast<int>(gpuscope_status_), \
                   cudaGetErrorString(gpuscope_status_), __FILE__, __LINE__);                                       \
      std::exit(2);                                                                                                 \
    }                                                                                                               \
  } while (0)

// Checks the launch itself (cudaGetLastError) right after a <<<...>>> launch.
#define GPUSCOPE_EXAMPLE_CHECK_LAUNCH() GPUSCOPE_EXAMPLE_CHECK(cudaGetLastError())

namespace gpuscope::examples {

// Parses a non-negative integer argument; exits with status 2 and a message otherwise.
inline long long parse_count(const char* text, const char* what) {
  char* end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < 0) {
    std::fprintf(stderr, "invalid %s: '%s' (expected a non-negative integer)\n", what, text);
    std::exit(2);
  }
  return value;
}

}  // namespace gpuscope::examples
