#include "analyze/comm/comm_summary.hpp"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <utility>

#include "store/input_file.hpp"

namespace gpuscope::analyze {
namespace {

using detail::CommSummary;
using detail::NcclCall;
using detail::RankFacts;
using detail::StepSplit;
using json = nlohmann::json;

constexpr core::NcclCollective kKinds[] = {core::NcclCollective::kUnknown,   core::NcclCollective::kAllReduce,
                                           core::NcclCollective::kAllGather, core::NcclCollective::kReduceScatter,
                                           core::NcclCollective::kBroadcast, core::NcclCollective::kReduce,
                                           core::NcclCollective::kSendRecv,  core::NcclCollective::kSend,
                                           core::NcclCollective::kRecv,      core::NcclCollective::kAllToAll};

json split_json(const core::OverlapSplit& s) {
  return json::array({s.window_ns, s.compute_ns, s.comm_ns, s.overlapped_ns, s.exposed_ns});
}

core::OverlapSplit split_from(const json& j, std::size_t at) {
  return {j.at(at).get<std::int64_t>(), j.at(at + 1).get<std::int64_t>(), j.at(at + 2).get<std::int64_t>(),
          j.at(at + 3).get<std::int64_t>(), j.at(at + 4).get<std::int64_t>()};
}

json opt_json(const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); }
std::optional<std::int64_t> opt_from(const json& j) {
  return j.is_null() ? std::nullopt : std::optional<std::int64_t>(j.get<std::int64_t>());
}

core::NcclCollective kind_from(const std::string& name) {
  for (const core::NcclCollective k : kKinds)
    if (core::collective_name(k) == name) return k;
  throw std::invalid_argument("unknown collective '" + name + "'");
}

RankFacts rank_from(const json& j) {
  RankFacts r;
  r.rank = opt_from(j.at("rank"));
  r.local_rank = opt_from(j.at("local_rank"));
  r.device = j.at("device").get<std::int64_t>();
  r.gpus = j.at("gpus").get<int>();
  r.pids = j.at("pids").get<std::vector<std::int64_t>>();
  r.host = j.at("host").get<std::string>();
  r.uuid = j.at("uuid").get<std::string>();
  r.span = {j.at("span").at(0).get<std::int64_t>(), j.at("span").at(1).get<std::int64_t>()};
  r.busy_ns = j.at("busy_ns").get<std::int64_t>();
  r.whole = split_from(j.at("whole"), 0);
  for (const json& s : j.at("steps"))
    r.steps.push_back(
        {s.at(0).get<std::int64_t>(), s.at(1).get<std::int64_t>(), s.at(2).get<std::int64_t>(), split_from(s, 3)});
  for (const json& c : j.at("nccl")) {
    NcclCall call;
    call.kind = kind_from(c.at(0).get<std::string>());
    call.device_id = r.device;
    call.stream_id = c.at(1).get<std::int64_t>();
    call.start_ns = c.at(2).get<std::int64_t>();
    call.end_ns = c.at(3).get<std::int64_t>();
    call.payload_bytes = c.at(4).get<std::int64_t>();
    if (c.size() > 5) call.launch_end_ns = c.at(5).get<std::int64_t>();  // summaries before it have 5
    r.nccl.push_back(call);
  }
  return r;
}

}  // namespace

std::string comm_summary_json(const CommSummary& s) {
  json ranks = json::array();
  for (const RankFacts& r : s.ranks) {
    json steps = json::array();
    for (const StepSplit& st : r.steps) {
      json row = json::array({st.step, st.start_ns, st.end_ns});
      for (const json& v : split_json(st.split)) row.push_back(v);
      steps.push_back(std::move(row));
    }
    json nccl = json::array();
    for (const NcclCall& c : r.nccl)
      nccl.push_back(json::array({std::string(core::collective_name(c.kind)), c.stream_id, c.start_ns, c.end_ns,
                                  c.payload_bytes, c.launch_end_ns}));
    json rank = json::object();
    rank["rank"] = opt_json(r.rank);
    rank["local_rank"] = opt_json(r.local_rank);
    rank["device"] = r.device;
    rank["gpus"] = r.gpus;
    rank["pids"] = r.pids;
    rank["host"] = r.host;
    rank["uuid"] = r.uuid;
    rank["span"] = json::array({r.span.start_ns, r.span.end_ns});
    rank["busy_ns"] = r.busy_ns;
    rank["whole"] = split_json(r.whole);
    rank["steps"] = std::move(steps);
    rank["nccl"] = std::move(nccl);
    ranks.push_back(std::move(rank));
  }
  nlohmann::ordered_json doc;
  doc["format"] = kCommSummaryFormat;
  doc["version"] = kCommSummaryVersion;
  doc["source"] = s.source;
  doc["clock"] = {{"domain", s.clock_domain}, {"merged", s.merged}};
  doc["world_size"] = s.world_size;
  doc["op_kernels"] = s.op_kernels;
  doc["ranks"] = std::move(ranks);
  return doc.dump() + "\n";
}

CommSummary parse_comm_summary(const std::string& text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw CommSummaryError(source + ": not a gpuscope comm summary (not JSON: " + e.what() + ")");
  }
  if (!doc.is_object() || doc.value("format", std::string()) != kCommSummaryFormat)
    throw CommSummaryError(source + ": not a gpuscope comm summary (no \"format\": \"" + kCommSummaryFormat +
                           "\"); make one with gpuscope comm-summary TRACE -o FILE");
  const json& version = doc["version"];
  if (!version.is_number_integer() || version.get<int>() != kCommSummaryVersion)
    throw CommSummaryError(source + ": comm summary version " + version.dump() + ", this gpuscope reads version " +
                           std::to_string(kCommSummaryVersion) + "; make it again with this gpuscope's comm-summary");
  try {
    CommSummary s;
    s.source = doc.at("source").get<std::string>();
    s.clock_domain = doc.at("clock").at("domain").get<std::string>();
    s.merged = doc.at("clock").at("merged").get<bool>();
    s.world_size = doc.at("world_size").get<int>();
    s.op_kernels = doc.at("op_kernels").get<std::int64_t>();
    for (const json& r : doc.at("ranks")) s.ranks.push_back(rank_from(r));
    return s;
  } catch (const std::exception& e) {
    throw CommSummaryError(source + ": damaged comm summary: " + e.what());
  }
}

CommSummary read_comm_summary(const std::string& path) {
  std::string error;  // a FIFO is refused, never waited on (store/input_file.hpp)
  const std::optional<std::string> text = store::read_input_file(path, "comm summary", error);
  if (!text) throw CommSummaryError(error);
  return parse_comm_summary(*text, path);
}

bool is_comm_summary_file(const std::string& path) {
  store::InputFile file = store::InputFile::open(path, "comm summary");
  if (!file.ok()) return false;
  char buf[4096];
  for (ssize_t n; (n = ::read(file.fd(), buf, sizeof buf)) > 0;) {
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buf[i];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c == '{';
    }
  }
  return false;
}

}  // namespace gpuscope::analyze
