#include "render/timeline_overview_json.hpp"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/utf8.hpp"

namespace gpuscope::render {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::vector<std::uint8_t>& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < bytes.size()) {
    std::uint32_t v = std::uint32_t{bytes[i]} << 16;
    if (i + 1 < bytes.size()) v |= std::uint32_t{bytes[i + 1]} << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::vector<std::uint8_t> unbase64(std::string_view text) {
  std::array<int, 256> value{};
  value.fill(-1);
  for (std::size_t i = 0; i < kAlphabet.size(); ++i)
    value[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
  std::vector<std::uint8_t> out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (const char c : text) {
    if (c == '=') break;
    const int v = value[static_cast<unsigned char>(c)];
    if (v < 0) throw std::invalid_argument("timeline overview: bad base64");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::int64_t unzigzag(std::uint64_t v) { return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1); }

// Reads `count` varints.
std::vector<std::uint64_t> varints(const Json& column, std::size_t count) {
  const std::vector<std::uint8_t> bytes = unbase64(column.get<std::string>());
  std::vector<std::uint64_t> out;
  out.reserve(count);
  std::size_t i = 0;
  while (out.size() < count) {
    std::uint64_t v = 0;
    int shift = 0;
    while (true) {
      if (i >= bytes.size() || shift > 63) throw std::invalid_argument("timeline overview: column too short");
      const std::uint8_t b = bytes[i++];
      v |= std::uint64_t{b & 0x7Fu} << shift;
      shift += 7;
      if ((b & 0x80) == 0) break;
    }
    out.push_back(v);
  }
  return out;
}

std::uint64_t nonneg(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

const char* kind_name(core::OverviewLaneKind k) {
  switch (k) {
    case core::OverviewLaneKind::nvtx:
      return "nvtx";
    case core::OverviewLaneKind::gpu_stream:
      return "gpu_stream";
    case core::OverviewLaneKind::cuda_api:
      break;
  }
  return "cuda_api";
}

core::OverviewLaneKind lane_kind(const std::string& s) {
  if (s == "nvtx") return core::OverviewLaneKind::nvtx;
  if (s == "gpu_stream") return core::OverviewLaneKind::gpu_stream;
  if (s == "cuda_api") return core::OverviewLaneKind::cuda_api;
  throw std::invalid_argument("timeline overview: unknown lane kind " + s);
}

}  // namespace

nlohmann::json timeline_overview_json(const core::TimelineOverview& o) {
  Json j;
  j["version"] = 1;
  j["base_ns_abs"] = o.base_ns;
  j["end_ns_abs"] = o.end_ns;
  j["range_begin_ns"] = o.range_begin_ns;
  j["range_end_ns"] = o.range_end_ns;
  j["span_ns"] = o.span_ns();
  j["bins"] = o.bins;
  j["total_events"] = o.total_events;
  j["included_events"] = static_cast<std::int64_t>(o.items.size());
  j["item_cap"] = o.item_cap;
  j["selection"] = o.selection;
  Json groups = Json::array();
  for (const core::OverviewGroup& g : o.groups)
    groups.push_back(
        Json{{"label", core::repair_utf8(g.label)}, {"detail", core::repair_utf8(g.detail)}, {"gpu", g.is_gpu}});
  j["groups"] = std::move(groups);

  Json lanes = Json::object();
  for (const char* key :
       {"group", "kind", "label", "pid", "tid", "gpu", "stream", "events", "busy_ns", "items", "density"})
    lanes[key] = Json::array();
  std::vector<std::int64_t> per_lane(o.lanes.size(), 0);
  for (const core::OverviewItem& it : o.items)
    if (it.lane >= 0 && static_cast<std::size_t>(it.lane) < per_lane.size())
      ++per_lane[static_cast<std::size_t>(it.lane)];
  for (std::size_t i = 0; i < o.lanes.size(); ++i) {
    const core::OverviewLane& l = o.lanes[i];
    lanes["group"].push_back(l.group);
    lanes["kind"].push_back(kind_name(l.kind));
    lanes["label"].push_back(core::repair_utf8(l.label));
    lanes["pid"].push_back(l.pid);
    lanes["tid"].push_back(l.tid);
    lanes["gpu"].push_back(l.gpu_index);
    lanes["stream"].push_back(l.stream_id);
    lanes["events"].push_back(l.events);
    lanes["busy_ns"].push_back(l.busy_ns);
    lanes["items"].push_back(per_lane[i]);
    lanes["density"].push_back(base64(l.density));
  }
  j["lanes"] = std::move(lanes);

  Json names = Json::array();
  for (const std::string& n : o.names) names.push_back(core::repair_utf8(n));
  j["names"] = std::move(names);
  Json configs = Json::array();
  for (const core::OverviewLaunchConfig& c : o.launch_configs)
    configs.push_back(Json::array({c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2]}));
  j["launch_configs"] = std::move(configs);

  std::vector<std::uint8_t> start, duration, kind, name, correlation, config, bytes;
  const std::size_t n = o.items.size();
  for (auto* col : {&start, &duration, &name, &correlation}) col->reserve(n * 3);
  kind.reserve(n);
  config.reserve(n);
  bytes.reserve(n);
  std::int32_t lane = -1;
  std::int64_t prev_start = 0;
  std::int64_t prev_corr = 0;
  for (const core::OverviewItem& it : o.items) {
    if (it.lane != lane) {
      lane = it.lane;
      prev_start = 0;
    }
    put_varint(start, nonneg(it.start_ns - prev_start));
    prev_start = it.start_ns;
    put_varint(duration, nonneg(it.duration_ns));
    kind.push_back(static_cast<std::uint8_t>(it.kind));
    put_varint(name, nonneg(it.name));
    put_varint(correlation, zigzag(it.correlation_id - prev_corr));
    prev_corr = it.correlation_id;
    put_varint(config, nonneg(std::int64_t{it.launch_config} + 1));
    put_varint(bytes, nonneg(it.bytes));
  }
  j["items"] = Json{{"count", static_cast<std::int64_t>(n)},
                    {"start", base64(start)},
                    {"duration", base64(duration)},
                    {"kind", base64(kind)},
                    {"name", base64(name)},
                    {"correlation", base64(correlation)},
                    {"config", base64(config)},
                    {"bytes", base64(bytes)}};
  return j;
}

core::TimelineOverview timeline_overview_from_json(const nlohmann::json& j) {
  try {
    if (j.at("version").get<int>() != 1) throw std::invalid_argument("timeline overview: unknown version");
    core::TimelineOverview o;
    o.base_ns = j.at("base_ns_abs").get<std::int64_t>();
    o.end_ns = j.at("end_ns_abs").get<std::int64_t>();
    o.range_begin_ns = j.at("range_begin_ns").get<std::int64_t>();
    o.range_end_ns = j.at("range_end_ns").get<std::int64_t>();
    o.bins = j.at("bins").get<std::int32_t>();
    o.total_events = j.at("total_events").get<std::int64_t>();
    o.item_cap = j.at("item_cap").get<std::int64_t>();
    o.selection = j.at("selection").get<std::string>();
    for (const Json& g : j.at("groups"))
      o.groups.push_back(
          {g.at("gpu").get<bool>(), 0, g.at("label").get<std::string>(), g.at("detail").get<std::string>()});
    const Json& lanes = j.at("lanes");
    const std::size_t lane_count = lanes.at("label").size();
    std::vector<std::int64_t> per_lane;
    for (std::size_t i = 0; i < lane_count; ++i) {
      core::OverviewLane l;
      l.group = lanes.at("group").at(i).get<std::int32_t>();
      l.kind = lane_kind(lanes.at("kind").at(i).get<std::string>());
      l.label = lanes.at("label").at(i).get<std::string>();
      l.pid = lanes.at("pid").at(i).get<std::int64_t>();
      l.tid = lanes.at("tid").at(i).get<std::int64_t>();
      l.gpu_index = lanes.at("gpu").at(i).get<std::int64_t>();
      l.stream_id = lanes.at("stream").at(i).get<std::int64_t>();
      l.events = lanes.at("events").at(i).get<std::int64_t>();
      l.busy_ns = lanes.at("busy_ns").at(i).get<std::int64_t>();
      l.density = unbase64(lanes.at("density").at(i).get<std::string>());
      per_lane.push_back(lanes.at("items").at(i).get<std::int64_t>());
      o.lanes.push_back(std::move(l));
    }
    // A group's id is not encoded: the pid or GPU of its first lane.
    for (const core::OverviewLane& l : o.lanes) {
      auto& g = o.groups.at(static_cast<std::size_t>(l.group));
      g.id = g.is_gpu ? l.gpu_index : l.pid;
    }
    o.names = j.at("names").get<std::vector<std::string>>();
    for (const Json& c : j.at("launch_configs")) {
      core::OverviewLaunchConfig cfg;
      for (std::size_t k = 0; k < 3; ++k) {
        cfg.grid[k] = c.at(k).get<std::int64_t>();
        cfg.block[k] = c.at(k + 3).get<std::int64_t>();
      }
      o.launch_configs.push_back(cfg);
    }
    const Json& items = j.at("items");
    const auto n = items.at("count").get<std::size_t>();
    const auto start = varints(items.at("start"), n);
    const auto duration = varints(items.at("duration"), n);
    const auto name = varints(items.at("name"), n);
    const auto correlation = varints(items.at("correlation"), n);
    const auto config = varints(items.at("config"), n);
    const auto bytes = varints(items.at("bytes"), n);
    const auto kind = unbase64(items.at("kind").get<std::string>());
    if (kind.size() < n) throw std::invalid_argument("timeline overview: kind column too short");
    o.items.reserve(n);
    std::size_t i = 0;
    std::int64_t corr = 0;
    for (std::size_t lane = 0; lane < per_lane.size(); ++lane) {
      std::int64_t t = 0;
      for (std::int64_t k = 0; k < per_lane[lane] && i < n; ++k, ++i) {
        core::OverviewItem it;
        it.lane = static_cast<std::int32_t>(lane);
        t += static_cast<std::int64_t>(start[i]);
        it.start_ns = t;
        it.duration_ns = static_cast<std::int64_t>(duration[i]);
        it.kind = static_cast<core::OverviewItemKind>(kind[i]);
        it.name = static_cast<std::int32_t>(name[i]);
        corr += unzigzag(correlation[i]);
        it.correlation_id = corr;
        it.launch_config = static_cast<std::int32_t>(config[i]) - 1;
        it.bytes = static_cast<std::int64_t>(bytes[i]);
        o.items.push_back(it);
      }
    }
    if (o.items.size() != n) throw std::invalid_argument("timeline overview: lane item counts disagree with count");
    return o;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("timeline overview: ") + e.what());
  }
}

}  // namespace gpuscope::render
