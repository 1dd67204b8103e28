// Test helper: what a timeline export holds, read back from either format, so the
// Perfetto protobuf (render/perfetto_proto.hpp) is checked against the Chrome JSON
// (render/perfetto_json.hpp) of the same trace: slices by category and name, instants,
// counter points per track, flow steps, process and thread names. The .pftrace is read
// with the protobuf library's own parser (the generated Trace message of
// src/render/perfetto_trace.proto), as a reader of Perfetto's format would.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "perfetto_trace.pb.h"

namespace gpuscope::test {

struct ExportSummary {
  std::multiset<std::pair<std::string, std::string>> slices;  // (category, name)
  std::multiset<std::string> instants;
  std::map<std::string, std::int64_t> counter_points;  // by track name
  std::int64_t flow_steps = 0;                         // 's' and 'f' / flow ids
  std::set<std::string> process_names;
  std::set<std::string> thread_names;
  friend bool operator==(const ExportSummary&, const ExportSummary&) = default;
};

inline ExportSummary summarize_json(const std::string& text) {
  ExportSummary s;
  const nlohmann::json j = nlohmann::json::parse(text);
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X") s.slices.emplace(e["cat"], e["name"]);
    if (ph == "i") s.instants.insert(e["name"].get<std::string>());
    if (ph == "C") ++s.counter_points[e["name"]];
    if (ph == "s" || ph == "f") ++s.flow_steps;
    if (ph == "M" && e["name"] == "process_name") s.process_names.insert(e["args"]["name"].get<std::string>());
    if (ph == "M" && e["name"] == "thread_name") s.thread_names.insert(e["args"]["name"].get<std::string>());
  }
  return s;
}

/// Counts besides the summary: packets by kind, and checks of the format's rules.
struct PftraceFacts {
  std::int64_t packets = 0;
  std::int64_t slice_begins = 0;
  std::int64_t slice_ends = 0;
  std::int64_t interned_names = 0;  // EventName entries: one per distinct name
  std::set<std::string> distinct_names;
};

inline ExportSummary summarize_pftrace(const std::string& bytes, PftraceFacts* facts = nullptr) {
  namespace pb = gpuscope::perfetto;
  pb::Trace trace;
  if (!trace.ParseFromString(bytes)) throw std::runtime_error("not a Trace message");
  ExportSummary s;
  PftraceFacts f;
  std::map<std::uint64_t, std::string> names, categories, counter_tracks;
  for (const pb::TracePacket& p : trace.packet()) {
    ++f.packets;
    if (p.trusted_packet_sequence_id() != 1) throw std::runtime_error("packet off sequence 1");
    for (const auto& n : p.interned_data().event_names()) {
      if (!names.emplace(n.iid(), n.name()).second) throw std::runtime_error("iid interned twice");
      ++f.interned_names;
      f.distinct_names.insert(n.name());
    }
    for (const auto& c : p.interned_data().event_categories()) categories.emplace(c.iid(), c.name());
    if (p.has_track_descriptor()) {
      const pb::TrackDescriptor& d = p.track_descriptor();
      if (d.has_counter()) {
        counter_tracks[d.uuid()] = d.name();
      } else if (d.has_process()) {
        s.process_names.insert(d.process().process_name());
      } else if (d.has_thread()) {
        s.thread_names.insert(d.thread().thread_name());
      } else if (d.has_parent_uuid()) {
        s.thread_names.insert(d.name());
      } else {
        s.process_names.insert(d.name());
      }
    }
    if (!p.has_track_event()) continue;
    const pb::TrackEvent& e = p.track_event();
    if (!p.has_timestamp()) throw std::runtime_error("event without a timestamp");
    s.flow_steps += e.flow_ids_size() + e.terminating_flow_ids_size();
    const std::string cat = e.category_iids_size() ? categories.at(e.category_iids(0)) : "";
    switch (e.type()) {
      case pb::TrackEvent::TYPE_SLICE_BEGIN:
        ++f.slice_begins;
        s.slices.emplace(cat, names.at(e.name_iid()));
        break;
      case pb::TrackEvent::TYPE_SLICE_END:
        ++f.slice_ends;
        break;
      case pb::TrackEvent::TYPE_INSTANT:
        s.instants.insert(names.at(e.name_iid()));
        break;
      case pb::TrackEvent::TYPE_COUNTER:
        ++s.counter_points[counter_tracks.at(e.track_uuid())];
        break;
      default:
        throw std::runtime_error("event of no type");
    }
  }
  if (facts) *facts = f;
  return s;
}

/// Expects (gtest) the .pftrace and the Chrome JSON export of one trace to hold the same
/// slices, instants, counter points, flow steps, process and thread names, and every slice
/// begun to end; returns the JSON's summary, `facts` set from the .pftrace.
inline ExportSummary expect_same_events(const std::string& pftrace, const std::string& json, PftraceFacts& facts) {
  const ExportSummary from_proto = summarize_pftrace(pftrace, &facts);
  ExportSummary from_json = summarize_json(json);
  EXPECT_EQ(from_proto.slices, from_json.slices);
  EXPECT_EQ(from_proto.instants, from_json.instants);
  EXPECT_EQ(from_proto.counter_points, from_json.counter_points);
  EXPECT_EQ(from_proto.flow_steps, from_json.flow_steps);
  EXPECT_EQ(from_proto.process_names, from_json.process_names);
  EXPECT_EQ(from_proto.thread_names, from_json.thread_names);
  EXPECT_EQ(facts.slice_begins, facts.slice_ends);
  return from_json;
}

}  // namespace gpuscope::test
