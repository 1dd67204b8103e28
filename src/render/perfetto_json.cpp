#include "render/perfetto_json.hpp"

#include <algorithm>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/saturating.hpp"
#include "render/timeline_layout.hpp"

namespace gpuscope::render {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kDefaultSharedMemPerBlock = 48 * 1024;  // CUDA's limit without opt-in

// A JSON string literal, escaped; invalid UTF-8 is replaced, never fatal.
std::string quote(std::string_view s) { return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json device_properties(const TimelineHeader& header) {
  Json arr = Json::array();
  std::set<std::int64_t> seen;
  for (const auto& d : header.devices) {
    if (!seen.insert(d.gpu_index).second) continue;
    arr.push_back(Json{{"id", d.gpu_index},
                       {"name", d.name},
                       {"totalGlobalMem", d.global_memory_bytes},
                       {"computeMajor", d.cc_major},
                       {"computeMinor", d.cc_minor},
                       {"maxThreadsPerBlock", d.max_threads_per_block},
                       {"maxThreadsPerMultiprocessor", d.max_warps_per_sm * 32},
                       {"regsPerBlock", d.max_registers_per_block},
                       {"regsPerMultiprocessor", d.max_registers_per_sm},
                       {"warpSize", 32},
                       {"sharedMemPerBlock", std::min(kDefaultSharedMemPerBlock, d.max_shared_memory_per_block)},
                       {"sharedMemPerMultiprocessor", d.max_shared_memory_per_sm},
                       {"numSms", d.sm_count},
                       {"sharedMemPerBlockOptin", d.max_shared_memory_per_block},
                       {"uuid", d.uuid}});
  }
  return arr;
}

// Chrome trace-event JSON, one event per line, in the layout's order.
class JsonSink final : public TimelineSink {
 public:
  JsonSink(const TimelineHeader& header, std::ostream& out) : m_tl(header), m_out(out) {}

  void begin() override {
    m_out << "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": " << dump(device_properties(m_tl))
          << ",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": " << m_tl.base_ns
          << ",\n  \"traceEvents\": [";
  }
  void end() override { m_out << "\n  ]\n}\n"; }

  void meta(std::string_view name, std::int64_t pid, std::int64_t tid, const Json& args) override {
    emit(fmt::format(R"({{"name": "{}", "ph": "M", "pid": {}, "tid": {}, "args": {}}})", name, pid, tid, dump(args)));
  }

  void complete(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid, std::int64_t start,
                std::int64_t end, const Json& args) override {
    emit(fmt::format(R"({{"ph": "X", "cat": "{}", "name": {}, "pid": {}, "tid": {}, "ts": {}, "dur": {}, "args": {}}})",
                     cat, quote(name), pid, tid, ts(start), dur(start, end), dump(args)));
  }

  void instant(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid, std::int64_t at,
               const Json& args) override {
    emit(fmt::format(R"({{"ph": "i", "s": "t", "cat": "{}", "name": {}, "pid": {}, "tid": {}, "ts": {}, "args": {}}})",
                     cat, quote(name), pid, tid, ts(at), dump(args)));
  }

  void flow(char phase, std::int64_t id, std::int64_t pid, std::int64_t tid, std::int64_t at,
            std::string_view cat) override {
    emit(fmt::format(R"({{"ph": "{}", "id": {}, "pid": {}, "tid": {}, "ts": {}, "cat": "{}", "name": "{}"{}}})", phase,
                     id, pid, tid, ts(at), cat, cat, phase == 'f' ? R"(, "bp": "e")" : ""));
  }

  void counter(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t at, std::string_view arg_key,
               const Json& value) override {
    emit(fmt::format(R"j({{"ph": "C", "cat": "{}", "name": {}, "pid": {}, "tid": 0, "ts": {}, "args": {{"{}": {}}}}})j",
                     cat, quote(name), pid, ts(at), arg_key, dump(value)));
  }

  // Perfetto's JSON importer reads no "stackFrames" / "samples" (it skips keys other than
  // traceEvents, systemTraceEvents, displayTimeUnit and metadata): a sample is an instant
  // on its thread's row, named by its innermost frame, the whole stack in its args.
  void python_sample(const PythonSampleEvent& s) override {
    std::string stack;
    for (auto it = s.frames.rbegin(); it != s.frames.rend(); ++it) {
      if (!stack.empty()) stack += " ← ";
      stack += core::python_frame_name(*it);
    }
    Json args{{"Python stack", stack},
              {"state", core::python_sample_state(s)},
              {"holds GIL", s.holds_gil},
              {"on CPU", s.on_cpu}};
    instant("python_sample", s.frames.empty() ? "(no Python frame)" : core::python_frame_name(s.frames.back()), s.pid,
            s.tid, s.ts_ns, args);
  }

 private:
  void emit(const std::string& event) {
    m_out << (m_first ? "\n    " : ",\n    ") << event;
    m_first = false;
  }

  // Saturating: a damaged trace's times must not overflow (core/saturating.hpp).
  std::string ts(std::int64_t ns) const { return format_us(core::sat_sub(ns, m_tl.base_ns)); }
  static std::string dur(std::int64_t start, std::int64_t end) {
    return format_us(std::max<std::int64_t>(0, core::sat_sub(end, start)));
  }

  const TimelineHeader& m_tl;
  std::ostream& m_out;
  bool m_first = true;
};

}  // namespace

std::string format_us(std::int64_t ns) {
  // Unsigned magnitude so that INT64_MIN does not overflow.
  const bool negative = ns < 0;
  const std::uint64_t mag = negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  return fmt::format("{}{}.{:03}", negative ? "-" : "", mag / 1000, mag % 1000);
}

void write_perfetto_json(const TimelineHeader& header, const TimelineTracks& tracks, TimelineEvents& events,
                         std::ostream& out, PythonSampleSource* python) {
  JsonSink sink(header, out);
  write_timeline(header, tracks, events, sink, python);
}

void write_perfetto_json(const Timeline& timeline, std::ostream& out) {
  TimelineVectors events(timeline);
  write_perfetto_json(timeline, timeline_tracks(timeline), events, out);
}

}  // namespace gpuscope::render
