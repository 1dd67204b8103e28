#include "render/perfetto_proto.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "perfetto_trace.pb.h"
#include "render/timeline_layout.hpp"

namespace gpuscope::render {
namespace {

namespace pb = gpuscope::perfetto;

constexpr std::uint32_t kSequenceId = 1;                // every packet on one sequence
constexpr std::uint8_t kTracePacketTag = (1 << 3) | 2;  // Trace.packet = 1, length-delimited

bool fits_int32(std::int64_t v) { return v >= 0 && v <= std::numeric_limits<std::int32_t>::max(); }

// Perfetto's timestamps are unsigned: a damaged trace's negative time is clamped to 0.
std::uint64_t timestamp(std::int64_t ns) { return static_cast<std::uint64_t>(std::max<std::int64_t>(0, ns)); }

class ProtoSink final : public TimelineSink {
 public:
  ProtoSink(const TimelineHeader& header, const TimelineTracks& tracks, std::ostream& out) : m_out(out) {
    for (const auto& p : header.processes) m_os_pids.insert(p.pid);
    m_os_pids.insert(tracks.pids.begin(), tracks.pids.end());
  }

  [[nodiscard]] bool wants_args() const override { return false; }

  void begin() override {
    // The first packet clears the sequence's incremental state (the interning tables).
    m_packet.Clear();
    m_packet.set_trusted_packet_sequence_id(kSequenceId);
    m_packet.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    write(m_packet);
  }

  void end() override { flush_slice(); }

  void meta(std::string_view name, std::int64_t pid, std::int64_t tid, const Json& args) override {
    flush_slice();
    if (name == "process_name") {
      describe_process(pid, args.value("name", std::string()));
    } else if (name == "thread_name") {
      describe_thread(pid, tid, args.value("name", std::string()));
    }
    // Labels and sort indices have no counterpart in the messages written.
  }

  void complete(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid, std::int64_t start_ns,
                std::int64_t end_ns, const Json&) override {
    flush_slice();
    const std::uint64_t track = thread_track(pid, tid);
    event_packet(m_slice_begin, start_ns, track, pb::TrackEvent::TYPE_SLICE_BEGIN);
    name_event(m_slice_begin, cat, name);
    event_packet(m_slice_end, std::max(start_ns, end_ns), track, pb::TrackEvent::TYPE_SLICE_END);
    m_slice_pending = true;
  }

  void instant(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid, std::int64_t at_ns,
               const Json&) override {
    flush_slice();
    event_packet(m_packet, at_ns, thread_track(pid, tid), pb::TrackEvent::TYPE_INSTANT);
    name_event(m_packet, cat, name);
    write(m_packet);
  }

  void flow(char phase, std::int64_t id, std::int64_t, std::int64_t, std::int64_t, std::string_view cat) override {
    if (!m_slice_pending) return;  // the layout binds every flow to the slice just written
    pb::TrackEvent* e = m_slice_begin.mutable_track_event();
    // A launch's GPU activities continue its flow (a graph launch: one id, several
    // kernels); a collective's chain step ends where the next one starts.
    if (phase == 'f' && cat == "nccl") {
      e->add_terminating_flow_ids(static_cast<std::uint64_t>(id));
    } else {
      e->add_flow_ids(static_cast<std::uint64_t>(id));
    }
  }

  void counter(std::string_view, std::string_view name, std::int64_t pid, std::int64_t at_ns, std::string_view,
               const Json& value) override {
    flush_slice();
    event_packet(m_packet, at_ns, counter_track(pid, name), pb::TrackEvent::TYPE_COUNTER);
    pb::TrackEvent* e = m_packet.mutable_track_event();
    if (value.is_number_integer()) {
      e->set_counter_value(value.get<std::int64_t>());
    } else if (value.is_number()) {
      e->set_double_counter_value(value.get<double>());
    }
    write(m_packet);
  }

  // A CPU-profile sample (PerfSample) of its OS thread: the stack interned once per py_stacks
  // id and thread state, its frames once per name; the state is the innermost frame, so a
  // flame graph shows where the thread was and, at the tips, whether it ran and held the GIL.
  void python_sample(const PythonSampleEvent& s) override {
    flush_slice();
    if (s.pid < 0 || s.tid < 0 || s.pid > std::numeric_limits<std::uint32_t>::max() ||
        s.tid > std::numeric_limits<std::uint32_t>::max())
      return;  // not an OS thread: PerfSample's ids are uint32
    m_packet.Clear();
    m_packet.set_timestamp(timestamp(s.ts_ns));
    m_packet.set_trusted_packet_sequence_id(kSequenceId);
    m_packet.set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    pb::PerfSample* sample = m_packet.mutable_perf_sample();
    sample->set_pid(static_cast<std::uint32_t>(s.pid));
    sample->set_tid(static_cast<std::uint32_t>(s.tid));
    sample->set_callstack_iid(callstack(s, m_packet));
    write(m_packet);
  }

 private:
  // --- Python samples' interning ------------------------------------------------
  std::uint64_t callstack(const PythonSampleEvent& s, pb::TracePacket& p) {
    const int state = (s.on_cpu ? 2 : 0) + (s.holds_gil ? 1 : 0);
    const auto [it, added] = m_callstacks.try_emplace({s.stack_id, state}, m_callstacks.size() + 1);
    if (!added) return it->second;
    pb::Callstack* c = p.mutable_interned_data()->add_callstacks();
    c->set_iid(it->second);
    for (const PythonFrame& f : s.frames) c->add_frame_ids(frame(core::python_frame_name(f), &f, p));
    c->add_frame_ids(frame("[" + core::python_sample_state(s) + "]", nullptr, p));
    return it->second;
  }

  // A frame per distinct name (its function name has the same iid), in the one "python"
  // mapping; `source` gives its file and line.
  std::uint64_t frame(const std::string& name, const PythonFrame* source, pb::TracePacket& p) {
    const auto [it, added] = m_frames.try_emplace(name, m_frames.size() + 1);
    if (!added) return it->second;
    pb::InternedData* d = p.mutable_interned_data();
    if (m_frames.size() == 1) {  // the first frame: the mapping all frames share
      pb::InternedString* path = d->add_mapping_paths();
      path->set_iid(kPythonMapping);
      path->set_str("python");
      pb::Mapping* m = d->add_mappings();
      m->set_iid(kPythonMapping);
      m->add_path_string_ids(kPythonMapping);
    }
    pb::InternedString* fn = d->add_function_names();
    fn->set_iid(it->second);
    fn->set_str(name);
    pb::Frame* f = d->add_frames();
    f->set_iid(it->second);
    f->set_function_name_id(it->second);
    f->set_mapping_id(kPythonMapping);
    f->set_rel_pc(it->second);  // distinct per frame: Perfetto keys a mapping's frames by pc
    if (source != nullptr && !source->file.empty()) {
      const auto [path, new_path] = m_source_paths.try_emplace(std::string(source->file), m_source_paths.size() + 1);
      if (new_path) {
        pb::InternedString* sp = d->add_source_paths();
        sp->set_iid(path->second);
        sp->set_str(path->first);
      }
      f->set_source_path_iid(path->second);
      if (source->line >= 0 && source->line <= std::numeric_limits<std::uint32_t>::max())
        f->set_line_number(static_cast<std::uint32_t>(source->line));
    }
    return it->second;
  }

  // --- tracks ---------------------------------------------------------------
  // A group's track: an OS process gets a ProcessDescriptor; a GPU's group (pid = GPU
  // index, not an OS pid) a plain named track.
  std::uint64_t process_track(std::int64_t pid) {
    const auto [it, added] = m_process_uuid.try_emplace(pid, m_next_uuid);
    if (added) {
      ++m_next_uuid;
      describe_process_track(it->second, pid, "");
    }
    return it->second;
  }

  void describe_process(std::int64_t pid, const std::string& name) {
    const auto [it, added] = m_process_uuid.try_emplace(pid, m_next_uuid);
    if (added) ++m_next_uuid;
    describe_process_track(it->second, pid, name);
  }

  void describe_process_track(std::uint64_t uuid, std::int64_t pid, const std::string& name) {
    descriptor_packet(uuid);
    pb::TrackDescriptor* d = m_packet.mutable_track_descriptor();
    if (os_pid(pid)) {
      pb::ProcessDescriptor* p = d->mutable_process();
      p->set_pid(static_cast<std::int32_t>(pid));
      if (!name.empty()) p->set_process_name(name);
    } else {
      d->set_name(name.empty() ? "GPU " + std::to_string(pid) : name);
    }
    write(m_packet);
  }

  std::uint64_t thread_track(std::int64_t pid, std::int64_t tid) {
    const auto it = m_thread_uuid.find({pid, tid});
    if (it != m_thread_uuid.end()) return it->second;
    return describe_thread(pid, tid, "thread " + std::to_string(tid));
  }

  // An OS thread as a ThreadDescriptor; a GPU row (stream, NCCL lane) as a named track in
  // its group.
  std::uint64_t describe_thread(std::int64_t pid, std::int64_t tid, const std::string& name) {
    const std::uint64_t parent = process_track(pid);
    const auto [it, added] = m_thread_uuid.try_emplace({pid, tid}, m_next_uuid);
    if (added) ++m_next_uuid;
    descriptor_packet(it->second);
    pb::TrackDescriptor* d = m_packet.mutable_track_descriptor();
    if (os_pid(pid) && fits_int32(tid) && tid < kFirstLaneTid) {
      pb::ThreadDescriptor* t = d->mutable_thread();
      t->set_pid(static_cast<std::int32_t>(pid));
      t->set_tid(static_cast<std::int32_t>(tid));
      t->set_thread_name(name);
    } else {
      d->set_parent_uuid(parent);
      d->set_name(name);
    }
    write(m_packet);
    return it->second;
  }

  std::uint64_t counter_track(std::int64_t pid, std::string_view name) {
    const auto it = m_counter_uuid.find({pid, std::string(name)});
    if (it != m_counter_uuid.end()) return it->second;
    const std::uint64_t parent = process_track(pid);
    const std::uint64_t uuid = m_next_uuid++;
    m_counter_uuid.emplace(std::pair{pid, std::string(name)}, uuid);
    descriptor_packet(uuid);
    pb::TrackDescriptor* d = m_packet.mutable_track_descriptor();
    d->set_parent_uuid(parent);
    d->set_name(std::string(name));
    d->mutable_counter();
    write(m_packet);
    return uuid;
  }

  bool os_pid(std::int64_t pid) const { return fits_int32(pid) && m_os_pids.contains(pid); }

  // --- packets --------------------------------------------------------------
  void descriptor_packet(std::uint64_t uuid) {
    m_packet.Clear();
    m_packet.set_trusted_packet_sequence_id(kSequenceId);
    m_packet.mutable_track_descriptor()->set_uuid(uuid);
  }

  static void event_packet(pb::TracePacket& p, std::int64_t ns, std::uint64_t track, pb::TrackEvent::Type type) {
    p.Clear();
    p.set_timestamp(timestamp(ns));
    p.set_trusted_packet_sequence_id(kSequenceId);
    p.set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    pb::TrackEvent* e = p.mutable_track_event();
    e->set_type(type);
    e->set_track_uuid(track);
  }

  // Name and category by interning id; a new one goes into this packet's interned_data.
  void name_event(pb::TracePacket& p, std::string_view cat, std::string_view name) {
    pb::TrackEvent* e = p.mutable_track_event();
    e->add_category_iids(intern(m_categories, cat, p, true));
    e->set_name_iid(intern(m_names, name, p, false));
  }

  static std::uint64_t intern(std::map<std::string, std::uint64_t, std::less<>>& table, std::string_view s,
                              pb::TracePacket& p, bool category) {
    const auto it = table.find(s);
    if (it != table.end()) return it->second;
    const std::uint64_t iid = table.size() + 1;  // 0 is "not set"
    table.emplace(std::string(s), iid);
    pb::InternedData* d = p.mutable_interned_data();
    if (category) {
      pb::EventCategory* c = d->add_event_categories();
      c->set_iid(iid);
      c->set_name(std::string(s));
    } else {
      pb::EventName* n = d->add_event_names();
      n->set_iid(iid);
      n->set_name(std::string(s));
    }
    return iid;
  }

  // A slice is held until the next record so that the flows bound to it join its begin.
  void flush_slice() {
    if (!m_slice_pending) return;
    m_slice_pending = false;
    write(m_slice_begin);
    write(m_slice_end);
  }

  // Trace.packet (field 1), length-delimited, straight to the stream.
  void write(const pb::TracePacket& p) {
    m_buffer.clear();
    p.SerializeToString(&m_buffer);
    char header[11];
    std::size_t n = 0;
    header[n++] = static_cast<char>(kTracePacketTag);
    for (std::uint64_t len = m_buffer.size();; len >>= 7) {
      if (len < 0x80) {
        header[n++] = static_cast<char>(len);
        break;
      }
      header[n++] = static_cast<char>((len & 0x7f) | 0x80);
    }
    m_out.write(header, static_cast<std::streamsize>(n));
    m_out.write(m_buffer.data(), static_cast<std::streamsize>(m_buffer.size()));
  }

  // The layout numbers a rank's GPU lanes from 4,000,000,000 (timeline_layout.cpp); they
  // are beyond int32 anyway, this keeps them off ThreadDescriptors whatever the limit.
  static constexpr std::int64_t kFirstLaneTid = 4'000'000'000;

  static constexpr std::uint64_t kPythonMapping = 1;

  std::ostream& m_out;
  std::set<std::int64_t> m_os_pids;
  std::uint64_t m_next_uuid = 1;
  std::map<std::int64_t, std::uint64_t> m_process_uuid;
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint64_t> m_thread_uuid;
  std::map<std::pair<std::int64_t, std::string>, std::uint64_t, std::less<>> m_counter_uuid;
  std::map<std::string, std::uint64_t, std::less<>> m_names;
  std::map<std::string, std::uint64_t, std::less<>> m_categories;
  pb::TracePacket m_packet;
  pb::TracePacket m_slice_begin;
  pb::TracePacket m_slice_end;
  bool m_slice_pending = false;
  std::string m_buffer;
  std::map<std::pair<std::int64_t, int>, std::uint64_t> m_callstacks;  // (py_stacks id, state) → iid
  std::map<std::string, std::uint64_t, std::less<>> m_frames;          // frame name → iid
  std::map<std::string, std::uint64_t, std::less<>> m_source_paths;
};

}  // namespace

void write_perfetto_proto(const TimelineHeader& header, const TimelineTracks& tracks, TimelineEvents& events,
                          std::ostream& out, PythonSampleSource* python) {
  ProtoSink sink(header, tracks, out);
  write_timeline(header, tracks, events, sink, python);
}

void write_perfetto_proto(const Timeline& timeline, std::ostream& out) {
  TimelineVectors events(timeline);
  write_perfetto_proto(timeline, timeline_tracks(timeline), events, out);
}

}  // namespace gpuscope::render
