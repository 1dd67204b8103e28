#include "store/run_description.hpp"

#include <limits>

#include "store/database.hpp"
#include "store/json_fields.hpp"

namespace gpuscope::store {
namespace {

constexpr const char* kFormat = "gpuscope-run/1";

detail::Json optional_int(const std::optional<int>& v) { return v ? detail::Json(*v) : detail::Json(nullptr); }

std::optional<int> read_optional_int(const detail::JsonFields<DatabaseError>& f, const detail::Json& doc,
                                     const char* key) {
  if (!doc.contains(key) || doc.at(key).is_null()) return std::nullopt;
  return f.int32(key);
}

}  // namespace

void write_run_description(const std::filesystem::path& log_dir, const ImportOptions& run) {
  detail::Json doc = detail::Json::object();
  doc["format"] = kFormat;
  doc["command"] = run.command;
  doc["launched_pid"] = run.launched_pid;
  doc["exit_status"] = optional_int(run.exit_status);
  doc["term_signal"] = optional_int(run.term_signal);
  doc["start_time"] = run.start_time;
  doc["gpuscope_version"] = run.gpuscope_version;
  doc["trace_sources"] = run.trace_sources;
  doc["capture_range"] = run.capture_range;
  detail::Json meta = detail::Json::object();
  for (const auto& [key, value] : run.extra_meta) meta[key] = value;
  doc["meta"] = std::move(meta);
  // Rewritten at each stage of the run: replacing it is the point.
  detail::write_json_file<DatabaseError>(doc, log_dir / kRunDescriptionFile, "the run description",
                                         Overwrite::kReplace);
}

std::optional<ImportOptions> read_run_description(const std::filesystem::path& log_dir) {
  const std::filesystem::path path = log_dir / kRunDescriptionFile;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const detail::Json doc = detail::read_json_file<DatabaseError>(path, "run description", "no run description");
  const std::string source = path.string();
  if (!doc.is_object()) throw DatabaseError(source + ": not a gpuscope run description (not a JSON object)");
  const detail::JsonFields<DatabaseError> f(doc, source, "");
  if (const std::string format = f.text("format", true); format != kFormat)
    f.fail("format '" + format + "' is not " + kFormat + " (written by another gpuscope version?)");
  ImportOptions run;
  run.command = f.text("command");
  const std::int64_t pid = f.integer("launched_pid");
  if (pid < 0 || pid > std::numeric_limits<std::uint32_t>::max())
    f.fail("field 'launched_pid' is out of range: " + std::to_string(pid));
  run.launched_pid = static_cast<std::uint32_t>(pid);
  run.exit_status = read_optional_int(f, doc, "exit_status");
  run.term_signal = read_optional_int(f, doc, "term_signal");
  run.start_time = f.text("start_time");
  run.gpuscope_version = f.text("gpuscope_version");
  run.trace_sources = f.text("trace_sources");
  run.capture_range = f.text("capture_range");
  if (doc.contains("meta")) {
    const detail::Json& meta = doc.at("meta");
    if (!meta.is_object()) f.wrong("meta", "an object", meta);
    for (const auto& [key, value] : meta.items()) {
      if (!value.is_string())
        f.fail("field 'meta." + key + "' must be a string, found " + detail::json_type_name(value));
      run.extra_meta.emplace_back(key, value.get<std::string>());
    }
  }
  return run;
}

}  // namespace gpuscope::store
