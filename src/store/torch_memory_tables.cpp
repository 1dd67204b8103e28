#include "store/torch_memory_tables.hpp"

#include <charconv>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/data_loss_kinds.hpp"
#include "store/import_state.hpp"
#include "store/input_file.hpp"
#include "store/rows.hpp"

namespace gpuscope::store::detail {
namespace {

using Json = nlohmann::json;
constexpr std::string_view kFormat = "gpuscope torch memory 1";

struct BadFile : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The integer at `key` of `obj` (an unsigned JSON number kept as its 64-bit pattern, as
// memory_events.address); BadFile when missing or not an integer.
std::int64_t integer(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) throw BadFile(std::string("field '") + key + "' is not an integer");
  return it->is_number_unsigned() ? static_cast<std::int64_t>(it->get<std::uint64_t>()) : it->get<std::int64_t>();
}

std::int64_t element(const Json& arr, std::size_t i) {
  const Json& v = arr.at(i);
  if (!v.is_number_integer()) throw BadFile("a history entry's field " + std::to_string(i) + " is not an integer");
  return v.is_number_unsigned() ? static_cast<std::int64_t>(v.get<std::uint64_t>()) : v.get<std::int64_t>();
}

// Rows of one file, built whole before any is written: a bad file adds nothing. Their text
// views the parsed document.
struct Parsed {
  std::vector<rows::TorchMemoryStat> stats;
  std::vector<rows::TorchMemorySegment> segments;
  std::vector<rows::TorchMemoryEvent> events;
  std::uint64_t history_full_devices = 0;
  std::int64_t history_max = 0;
};

void parse(const Json& doc, Parsed& out) {
  if (!doc.is_object() || doc.value("format", std::string()) != kFormat)
    throw BadFile("not a gpuscope torch memory file (format \"" + std::string(kFormat) + "\")");
  const std::int64_t pid = integer(doc, "pid");
  const std::int64_t ts = integer(doc, "time_ns");
  std::optional<std::int64_t> max_entries;
  if (const auto it = doc.find("history_max_entries"); it != doc.end() && !it->is_null())
    max_entries = integer(doc, "history_max_entries");
  std::optional<std::string_view> version;
  if (const auto it = doc.find("torch_version"); it != doc.end() && it->is_string())
    version = it->get_ref<const std::string&>();
  const auto devices = doc.find("devices");
  if (devices == doc.end() || !devices->is_array()) throw BadFile("field 'devices' is not a list");
  for (const Json& d : *devices) {
    const std::int64_t device = integer(d, "device");
    const auto segs = d.find("segments");
    if (segs == d.end() || !segs->is_array()) throw BadFile("field 'segments' is not a list");
    for (const Json& s : *segs) {
      std::optional<std::string_view> pool;
      if (const auto p = s.find("pool"); p != s.end() && p->is_string() && !p->get_ref<const std::string&>().empty())
        pool = p->get_ref<const std::string&>();
      out.segments.push_back({.pid = pid,
                              .device_id = device,
                              .address = integer(s, "address"),
                              .bytes = integer(s, "bytes"),
                              .stream = integer(s, "stream"),
                              .pool = pool});
    }
    std::optional<std::int64_t> history_events;
    if (const auto h = d.find("history"); h != d.end() && h->is_array()) {
      history_events = static_cast<std::int64_t>(h->size());
      for (const Json& e : *h) {
        if (!e.is_array() || e.size() != 5 || !e[0].is_string())
          throw BadFile("a history entry is not [action, address, bytes, stream, time_us]");
        out.events.push_back({.pid = pid,
                              .device_id = device,
                              .ts_ns = element(e, 4) * 1000,
                              .action = e[0].get_ref<const std::string&>(),
                              .address = element(e, 1),
                              .bytes = element(e, 2),
                              .stream = element(e, 3)});
      }
      if (max_entries && *history_events >= *max_entries) {
        ++out.history_full_devices;
        out.history_max = *max_entries;
      }
    }
    out.stats.push_back({.pid = pid,
                         .device_id = device,
                         .ts_ns = ts,
                         .max_reserved_bytes = integer(d, "max_reserved"),
                         .reserved_bytes = integer(d, "reserved"),
                         .max_allocated_bytes = integer(d, "max_allocated"),
                         .allocated_bytes = integer(d, "allocated"),
                         .max_requested_bytes = integer(d, "max_requested"),
                         .requested_bytes = integer(d, "requested"),
                         .segments = static_cast<std::int64_t>(segs->size()),
                         .history_events = history_events,
                         .history_max_events = max_entries,
                         .torch_version = version});
  }
}

}  // namespace

bool is_torch_memory_file(std::string_view name) {
  constexpr std::string_view prefix = "torch-memory-", suffix = ".json";
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
    return false;
  const std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  return digits.find_first_not_of("0123456789") == std::string_view::npos;
}

void import_torch_memory(ImportState& state, const std::string& path) {
  Parsed parsed;
  Json doc;
  try {
    std::string error;
    const std::optional<std::string> text = read_input_file(path, "torch-memory file", error);
    if (!text) {
      state.add_data_loss(std::nullopt, DataLossKind::kUnreadableTorchMemory, 1, error);
      return;
    }
    doc = Json::parse(*text);
    parse(doc, parsed);
  } catch (const std::exception& e) {  // BadFile, nlohmann's parse/type errors
    state.add_data_loss(std::nullopt, DataLossKind::kUnreadableTorchMemory, 1, path + ": " + e.what());
    return;
  }
  for (const auto& r : parsed.stats) state.torch_memory_stats.insert(r);
  for (const auto& r : parsed.segments) state.torch_memory_segments.insert(r);
  for (const auto& r : parsed.events) state.torch_memory_events.insert(r);
  state.result.rows.torch_memory_stats += static_cast<std::int64_t>(parsed.stats.size());
  state.result.rows.torch_memory_segments += static_cast<std::int64_t>(parsed.segments.size());
  state.result.rows.torch_memory_events += static_cast<std::int64_t>(parsed.events.size());
  if (parsed.history_full_devices > 0) {
    const auto pid = static_cast<std::uint32_t>(parsed.stats.front().pid);
    state.add_data_loss(pid, DataLossKind::kTorchMemoryHistoryFull, static_cast<std::uint64_t>(parsed.history_max),
                        " on " + std::to_string(parsed.history_full_devices) + " device(s)");
  }
}

}  // namespace gpuscope::store::detail
