// A small library the Python frame-walker test loads with ctypes (test_python_stacks.py): it
// runs the collector's walker and interner inside a real Python process, the way
// libgpuscope_inject.so does, and returns what they saw as text.
#include <cstdio>
#include <ctime>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <memory>

#include "collect/python_callsites.hpp"
#include "collect/python_frames.hpp"
#include "collect/python_stacks.hpp"
#include "store/event_log_writer.hpp"

using gpuscope::collect::detail::PyFrameInfo;
using gpuscope::collect::detail::PyFrameWalker;
using gpuscope::collect::detail::PyInternedFrame;
using gpuscope::collect::detail::PyInternedStack;
using gpuscope::collect::detail::PyRawFrame;
using gpuscope::collect::detail::PyStackAdditions;
using gpuscope::collect::detail::PyStackTable;

namespace {

PyFrameWalker& walker() {
  static PyFrameWalker w;
  return w;
}
PyStackTable g_table;
std::map<std::uint32_t, PyRawFrame> g_frames;
std::map<std::uint32_t, PyInternedStack> g_stacks;

void copy_out(const std::string& text, char* out, int capacity) {
  std::snprintf(out, static_cast<std::size_t>(capacity), "%s", text.c_str());
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int gpuscope_probe_state() { return static_cast<int>(walker().state()); }

__attribute__((visibility("default"))) void gpuscope_probe_note(char* out, int capacity) {
  copy_out(walker().note(), out, capacity);
}

// Called with the GIL held (ctypes.PyDLL): the live-frame check.
__attribute__((visibility("default"))) int gpuscope_probe_verify() { return walker().verify_with_live_frame() ? 1 : 0; }

// Called with the GIL released (ctypes.CDLL): walks and interns this thread's stack, then
// resolves it on another thread that takes the GIL, as the collector's writer does.
// Writes "stack_id\nfile:line:first_line:function\n..." innermost first; returns the frame count.
__attribute__((visibility("default"))) int gpuscope_probe_stack(char* out, int capacity) {
  PyRawFrame raw[128];
  const auto walked = walker().walk_this_thread(raw);
  const std::uint32_t id = g_table.intern(std::span<const PyRawFrame>(raw, walked.frames));
  std::string text = std::to_string(id) + "\n";
  std::thread resolver([&] {
    int token = 0;
    if (!walker().acquire_gil(token)) return;
    PyStackAdditions added;
    g_table.take_new(added);
    std::vector<PyInternedFrame> frames;
    g_table.take_frames_to_resolve(frames);
    for (const auto& f : frames) g_frames[f.id] = f.frame;
    for (const auto& s : added.stacks) g_stacks[s.id] = s;
    for (std::uint32_t node = id; node != 0; node = g_stacks[node].parent) {
      PyFrameInfo info;
      if (!walker().resolve(g_frames[g_stacks[node].frame], info)) info.function = "?";
      text += info.file + ":" + std::to_string(info.line) + ":" + std::to_string(info.first_line) + ":" +
              info.function + "\n";
    }
    walker().release_gil(token);
  });
  resolver.join();
  copy_out(text, out, capacity);
  return static_cast<int>(walked.frames);
}
}

// The collector's call-site path (python_callsites.hpp) without CUDA: stacks taken on the
// program's thread, the resolver thread's layout check and resolution, the writer's records
// in an event log the test then reads.
namespace {
// Never destroyed, as the collector's own (its detached resolver may run until the process ends).
gpuscope::collect::detail::PythonCallSites* g_sites = nullptr;
gpuscope::store::EventLogWriter g_log;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) int gpuscope_probe_sites_open(const char* path) {
  std::string note;
  g_sites =
      gpuscope::collect::detail::PythonCallSites::create(gpuscope::collect::PythonCallsites::kSync, &note).release();
  std::string error;
  return g_sites != nullptr && g_log.open(path, static_cast<std::uint32_t>(::getpid()), &error) ? 1 : 0;
}

// Called with the GIL released (ctypes.CDLL), as a CUDA call from PyTorch is.
__attribute__((visibility("default"))) unsigned gpuscope_probe_sites_take() { return g_sites->take(); }

__attribute__((visibility("default"))) void gpuscope_probe_sites_flush(int final) {
  g_sites->write_new(g_log, 0, final != 0);
  if (final != 0) g_log.close();
}
}

// The sampler (GPUSCOPE_PYTHON_SAMPLING) without CUDA: samples of every Python thread taken by
// the collector's sampler thread, stamped with CLOCK_MONOTONIC, in an event log the test reads.
namespace {
gpuscope::collect::detail::PythonCallSites* g_sampler = nullptr;  // never destroyed, as g_sites
gpuscope::store::EventLogWriter g_sampler_log;

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}
}  // namespace

extern "C" {

__attribute__((visibility("default"))) int gpuscope_probe_sampling_open(const char* path, unsigned hz) {
  std::string note;
  // A sampler's resolver thread is detached and lives on: an earlier sampler is left alive (as
  // the collector, leaked on purpose, leaves its own), only stopped.
  g_sampler = gpuscope::collect::detail::PythonCallSites::create(gpuscope::collect::PythonCallsites::kNone, &note, hz,
                                                                 &monotonic_ns)
                  .release();
  std::string error;
  return g_sampler != nullptr && g_sampler_log.open(path, static_cast<std::uint32_t>(::getpid()), &error) ? 1 : 0;
}

__attribute__((visibility("default"))) std::uint64_t gpuscope_probe_monotonic_ns() { return monotonic_ns(); }

__attribute__((visibility("default"))) void gpuscope_probe_sampling_pause(int paused) {
  g_sampler->pause_sampling(paused != 0);
}

// Called with the GIL released: stops the sampler, lets the resolver finish, writes the log.
__attribute__((visibility("default"))) void gpuscope_probe_sampling_close() {
  g_sampler->stop_sampling();
  g_sampler->flush(2000);
  g_sampler->write_new(g_sampler_log, monotonic_ns(), true);
  g_sampler_log.close();
}
}
