// Python stack samples in the Perfetto export (core/python_samples.hpp, render/timeline_layout.hpp):
// the JSON writes each sample as an instant on its thread's row with the stack in its args; the
// .pftrace as Perfetto's CPU-profile samples (PerfSample packets, interned frames and callstacks,
// root frame first, the thread's state as the innermost frame); a source without samples
// exports byte for byte as before.
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/python_samples.hpp"
#include "perfetto_trace.pb.h"
#include "render/perfetto_json.hpp"
#include "render/perfetto_proto.hpp"
#include "timeline_forwarding.hpp"

namespace gpuscope::render {
namespace {

constexpr std::int64_t kBase = 1'700'000'000'000'000'000;  // realistic CLOCK_REALTIME ns
constexpr std::int64_t kPid = 1234, kMain = 1234, kLoader = 1240;

const std::vector<PythonFrame> kTrainStep{{"<module>", "/srv/app/main.py", 10},
                                          {"Trainer.step", "/srv/app/train.py", 57}};

Timeline one_kernel() { return test::one_kernel_timeline(kBase, kPid, "python3", "gemm"); }

// main thread in Trainer.step at 1 ms (on CPU, GIL) and 2 ms (off CPU, no GIL) and 3 ms (as at
// 1 ms); the loader thread without a Python frame at 1.5 ms.
std::vector<PythonSampleEvent> four_samples() {
  return {{.pid = kPid,
           .tid = kMain,
           .ts_ns = kBase + 1'000'000,
           .stack_id = 2,
           .frames = kTrainStep,
           .holds_gil = true,
           .on_cpu = true},
          {.pid = kPid, .tid = kLoader, .ts_ns = kBase + 1'500'000},
          {.pid = kPid, .tid = kMain, .ts_ns = kBase + 2'000'000, .stack_id = 2, .frames = kTrainStep},
          {.pid = kPid,
           .tid = kMain,
           .ts_ns = kBase + 3'000'000,
           .stack_id = 2,
           .frames = kTrainStep,
           .holds_gil = true,
           .on_cpu = true}};
}

// A timeline source that also has Python samples.
class WithPython final : public test::ForwardingWith<PythonSampleSource, PythonSampleEvent> {
 public:
  using ForwardingWith::ForwardingWith;
  void python_samples(const std::function<void(const PythonSampleEvent&)>& visit) override { visit_all(visit); }
};

TEST(PythonSamplesExport, FrameNames) {
  EXPECT_EQ(core::python_frame_name(kTrainStep[1]), "Trainer.step (train.py:57)");
  EXPECT_EQ(core::python_frame_name({"f", "", -1}), "f (?:?)");
  EXPECT_EQ(core::python_sample_state({.holds_gil = true}), "off CPU, GIL held");
}

TEST(PythonSamplesExport, JsonInstantsOnTheThreadsRows) {
  const Timeline tl = one_kernel();
  WithPython source(tl, four_samples());
  std::ostringstream out;
  write_perfetto_json(tl, timeline_tracks(tl), source, out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  std::vector<nlohmann::json> samples;
  for (const auto& e : j["traceEvents"])
    if (e.value("cat", "") == "python_sample") samples.push_back(e);
  ASSERT_EQ(samples.size(), 4u) << out.str();
  EXPECT_EQ(samples[0]["ph"], "i");
  EXPECT_EQ(samples[0]["s"], "t");
  EXPECT_EQ(samples[0]["name"], "Trainer.step (train.py:57)");
  EXPECT_EQ(samples[0]["pid"], kPid);
  EXPECT_EQ(samples[0]["tid"], kMain);
  EXPECT_EQ(samples[0]["ts"].get<double>(), 1000.0);  // µs after base_ns
  EXPECT_EQ(samples[0]["args"]["Python stack"], "Trainer.step (train.py:57) ← <module> (main.py:10)");
  EXPECT_EQ(samples[0]["args"]["state"], "on CPU, GIL held");
  EXPECT_EQ(samples[0]["args"]["holds GIL"], true);
  EXPECT_EQ(samples[0]["args"]["on CPU"], true);
  EXPECT_EQ(samples[1]["name"], "(no Python frame)");
  EXPECT_EQ(samples[1]["tid"], kLoader);
  EXPECT_EQ(samples[1]["ts"].get<double>(), 1500.0);
  EXPECT_EQ(samples[1]["args"]["Python stack"], "");
  EXPECT_EQ(samples[2]["args"]["state"], "off CPU, no GIL");
  EXPECT_EQ(samples[2]["args"]["holds GIL"], false);
  EXPECT_EQ(samples[3]["ts"].get<double>(), 3000.0);
}

// The interned tables and samples of a .pftrace, decoded.
struct Profile {
  std::map<std::uint64_t, std::string> function_names, source_paths;
  std::map<std::uint64_t, perfetto::Frame> frames;
  std::map<std::uint64_t, std::vector<std::uint64_t>> callstacks;
  std::vector<std::pair<std::uint64_t, perfetto::PerfSample>> samples;  // (timestamp, sample)
  int mappings = 0, function_name_entries = 0, callstack_entries = 0;

  std::vector<std::string> stack(std::uint64_t callstack_iid) const {
    std::vector<std::string> names;
    for (std::uint64_t f : callstacks.at(callstack_iid))
      names.push_back(function_names.at(frames.at(f).function_name_id()));
    return names;
  }
};

Profile decode(const std::string& bytes) {
  perfetto::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  Profile p;
  for (const auto& packet : trace.packet()) {
    const auto& d = packet.interned_data();
    for (const auto& s : d.function_names()) p.function_names[s.iid()] = s.str();
    for (const auto& s : d.source_paths()) p.source_paths[s.iid()] = s.str();
    for (const auto& f : d.frames()) p.frames[f.iid()] = f;
    for (const auto& c : d.callstacks()) p.callstacks[c.iid()] = {c.frame_ids().begin(), c.frame_ids().end()};
    p.mappings += d.mappings_size();
    p.function_name_entries += d.function_names_size();
    p.callstack_entries += d.callstacks_size();
    if (packet.has_perf_sample()) {
      EXPECT_EQ(packet.sequence_flags(), perfetto::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
      p.samples.emplace_back(packet.timestamp(), packet.perf_sample());
    }
  }
  return p;
}

TEST(PythonSamplesExport, PftraceInternedCallstacksAndOneSamplePerRow) {
  const Timeline tl = one_kernel();
  WithPython source(tl, four_samples());
  std::ostringstream out;
  write_perfetto_proto(tl, timeline_tracks(tl), source, out);
  const Profile p = decode(out.str());
  ASSERT_EQ(p.samples.size(), 4u);
  EXPECT_EQ(p.samples[0].first, static_cast<std::uint64_t>(kBase + 1'000'000));  // absolute ns
  EXPECT_EQ(p.samples[0].second.pid(), kPid);
  EXPECT_EQ(p.samples[0].second.tid(), kMain);
  EXPECT_EQ(p.samples[1].second.tid(), kLoader);
  EXPECT_EQ(p.samples[1].first, static_cast<std::uint64_t>(kBase + 1'500'000));
  EXPECT_EQ(p.stack(p.samples[0].second.callstack_iid()),
            (std::vector<std::string>{"<module> (main.py:10)", "Trainer.step (train.py:57)", "[on CPU, GIL held]"}));
  EXPECT_EQ(p.stack(p.samples[1].second.callstack_iid()), std::vector<std::string>{"[off CPU, no GIL]"});
  EXPECT_EQ(p.stack(p.samples[2].second.callstack_iid()),
            (std::vector<std::string>{"<module> (main.py:10)", "Trainer.step (train.py:57)", "[off CPU, no GIL]"}));
  // The same stack in the same state: the same callstack, interned once; each name once.
  EXPECT_EQ(p.samples[3].second.callstack_iid(), p.samples[0].second.callstack_iid());
  EXPECT_EQ(p.callstack_entries, 3);
  EXPECT_EQ(p.function_name_entries, 4);
  // Every frame in the one "python" mapping; a code frame carries its file and line.
  EXPECT_EQ(p.mappings, 1);
  for (const auto& [iid, f] : p.frames) EXPECT_EQ(f.mapping_id(), 1u);
  const perfetto::Frame& step = p.frames.at(p.callstacks.at(p.samples[0].second.callstack_iid())[1]);
  EXPECT_EQ(p.source_paths.at(step.source_path_iid()), "/srv/app/train.py");
  EXPECT_EQ(step.line_number(), 57u);
}

TEST(PythonSamplesExport, ExplicitSourceAndNoSamplesUnchanged) {
  const Timeline tl = one_kernel();
  std::ostringstream plain_json, plain_proto, none_json, none_proto, given_json;
  write_perfetto_json(tl, plain_json);
  write_perfetto_proto(tl, plain_proto);
  WithPython none(tl, {});
  write_perfetto_json(tl, timeline_tracks(tl), none, none_json);
  write_perfetto_proto(tl, timeline_tracks(tl), none, none_proto);
  EXPECT_EQ(none_json.str(), plain_json.str());
  EXPECT_EQ(none_proto.str(), plain_proto.str());
  // Samples handed beside a plain source (as `gpuscope export` does).
  TimelineVectors events(tl);
  WithPython samples(tl, four_samples());
  write_perfetto_json(tl, timeline_tracks(tl), events, given_json, &samples);
  EXPECT_NE(given_json.str().find(R"("cat": "python_sample")"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::render
