// CUDA injection entry point: the driver loads libgpuscope_inject.so through
// CUDA_INJECTION64_PATH during the first cuInit and calls this before any
// context exists. Shared state may already exist (NVTX can come first).
#include "collect/collector.hpp"

/// Returns 1 always: a failing collector must never fail the target's cuInit.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  try {
    if (gpuscope::collect::detail::Collector* c = gpuscope::collect::detail::Collector::get_or_init()) {
      c->setup_cupti();
    }
  } catch (...) {
  }
  return 1;
}
