// Timeline labels: the names a timeline gives processes, threads, GPU streams and copies,
// shared by `gpuscope export` (render/timeline_layout.cpp) and gpuscope report's timeline
// overview (analyze/timeline/timeline_overview.cpp), so both name a lane and an event alike.
//
// Plain logic (core/: no I/O). Strings only; no errors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/timeline.hpp"

namespace gpuscope::core {

/// "train (pid 4242, rank 0)": the executable's base name (else "process"), the pid, and the
/// launcher's rank when the process has one.
[[nodiscard]] std::string process_label(const TimelineHeader& header, std::int64_t pid);
/// "main (4242)" for a thread nvtxNameOsThread named, else "thread 4242".
[[nodiscard]] std::string thread_label(const TimelineHeader& header, std::int64_t pid, std::int64_t tid);
/// "stream 7", or "stream 7 (pid 12)" when several processes worked on the stream's GPU.
[[nodiscard]] std::string stream_label(std::int64_t stream_id, std::int64_t pid, bool gpu_shared);
/// "Pageable", "Pinned", "Device", ... for a schema memory kind; "Unknown" for others.
[[nodiscard]] std::string memory_kind_name(std::string_view kind);
/// "Memcpy HtoD (Pageable -> Device)".
[[nodiscard]] std::string memcpy_name(const MemcpyEvent& e);
/// "Memset (Device)".
[[nodiscard]] std::string memset_name(const MemsetEvent& e);

}  // namespace gpuscope::core
