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

}  // namespace gpuscope::collect::detail

extern "C" {

// Python's atexit handler (through ctypes, which releases the GIL for the call): waits up to
// timeout_ms for the call sites' frames to be resolved before the interpreter finalizes. Not
// part of the PyTorch observer's ABI: a sitecustomize that finds no such symbol skips it.
__attribute__((visibility("default"))) void gpuscope_python_flush(int timeout_ms) noexcept {
  using gpuscope::collect::detail::Collector;
  if (Collector* c = Collector::active()) c->python_flush(timeout_ms);
}

}  // extern "C"
