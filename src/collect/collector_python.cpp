// The collector's entry point for Python's own exit (collect/python/sitecustomize.py): the
// call sites' frames resolved while the interpreter still runs.
#include "collect/collector.hpp"
#include "collect/python_callsites.hpp"

namespace gpuscope::collect::detail {

void Collector::python_flush(int timeout_ms) noexcept {
  if (!m_python) return;
  m_python->stop_sampling();  // samples after this would name frames nobody resolves
  m_python->flush(timeout_ms);
}

bool Collector::python_sampling_pause(bool paused) noexcept {
  if (!m_python || !m_python->sampling()) return false;
  m_python->pause_sampling(paused);
  return true;
}

bool Collector::python_callsites_pause(bool paused) noexcept {
  if (!m_python || !m_python->callsites()) return false;
  m_python->pause_callsites(paused);
  return true;
}

}  // namespace gpuscope::collect::detail

extern "C" {

// Python's atexit handler (through ctypes, which releases the GIL for the call): waits up to
// timeout_ms for the call sites' frames to be resolved before the interpreter finalizes. Not
// part of the PyTorch observer's ABI: a sitecustomize that finds no such symbol skips it.
__attribute__((visibility("default"))) void gpuscope_python_flush(int timeout_ms) noexcept {
  using gpuscope::collect::detail::Collector;
  if (Collector* c = Collector::active()) c->python_flush(timeout_ms);
}

// Pauses (paused != 0) or resumes gpuscope trace --python-sampling's sampler, for an A/B of its
// cost inside one process (validation/python_sampling_check.py, through ctypes with
// RTLD_NOLOAD on CUDA_INJECTION64_PATH). Returns 1 when this process has a sampler, else 0.
__attribute__((visibility("default"))) int gpuscope_python_sampling_pause(int paused) noexcept {
  using gpuscope::collect::detail::Collector;
  Collector* c = Collector::active();
  return c != nullptr && c->python_sampling_pause(paused != 0) ? 1 : 0;
}

// The same for gpuscope trace --python-callsites (validation/observer_cost.py --kinds callsites).
// Returns 1 when this process takes call sites, else 0.
__attribute__((visibility("default"))) int gpuscope_python_callsites_pause(int paused) noexcept {
  using gpuscope::collect::detail::Collector;
  Collector* c = Collector::active();
  return c != nullptr && c->python_callsites_pause(paused != 0) ? 1 : 0;
}

}  // extern "C"
