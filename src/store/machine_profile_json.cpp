#include "store/machine_profile_json.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "store/json_fields.hpp"
#include "store/private_dir.hpp"

namespace gpuscope::store {
namespace {

namespace fs = std::filesystem;
using detail::Json;

using detail::number_or_null;
using Fields = detail::JsonFields<ProfileError>;

Json device_to_json(const DeviceFacts& d) {
  return Json{{"name", d.name},
              {"uuid", d.uuid},
              {"cc_major", d.cc_major},
              {"cc_minor", d.cc_minor},
              {"sm_count", d.sm_count},
              {"global_memory_bytes", d.global_memory_bytes},
              {"l2_bytes", d.l2_bytes},
              {"shared_memory_per_sm_bytes", d.shared_memory_per_sm_bytes},
              {"memory_bus_width_bits", d.memory_bus_width_bits},
              {"max_sm_clock_mhz", number_or_null(d.max_sm_clock_mhz)},
              {"max_mem_clock_mhz", number_or_null(d.max_mem_clock_mhz)},
              {"driver_version", d.driver_version},
              {"cuda_runtime_version", d.cuda_runtime_version}};
}

Json ceiling_to_json(const Ceiling& c) {
  const CeilingInfo* info = find_ceiling_info(c.name);
  return Json{{"name", c.name},
              {"unit", info ? std::string(info->unit) : std::string()},
              {"label", info ? std::string(info->label) : std::string()},
              {"measured", number_or_null(c.measured)},
              {"theoretical", number_or_null(c.theoretical)},
              {"datasheet", number_or_null(c.datasheet)},
              {"method", c.method},
              {"best_shape", c.best_shape},
              {"samples", c.samples},
              {"rel_spread", number_or_null(c.rel_spread)},
              {"sm_clock_mhz_begin", number_or_null(c.sm_clock_mhz_begin)},
              {"sm_clock_mhz_end", number_or_null(c.sm_clock_mhz_end)},
              {"mem_clock_mhz", number_or_null(c.mem_clock_mhz)},
              {"throttled", c.throttled},
              {"verified", c.verified}};
}

DeviceFacts device_from_json(const Json& j, const std::string& source) {
  const Fields f(j, source, "device");
  DeviceFacts d;
  d.name = f.text("name", true);
  d.uuid = f.text("uuid", true);
  d.cc_major = f.int32("cc_major");
  d.cc_minor = f.int32("cc_minor");
  d.sm_count = f.int32("sm_count");
  d.global_memory_bytes = f.integer("global_memory_bytes");
  d.l2_bytes = f.integer("l2_bytes");
  d.shared_memory_per_sm_bytes = f.integer("shared_memory_per_sm_bytes");
  d.memory_bus_width_bits = f.int32("memory_bus_width_bits");
  d.max_sm_clock_mhz = f.number("max_sm_clock_mhz");
  d.max_mem_clock_mhz = f.number("max_mem_clock_mhz");
  d.driver_version = f.text("driver_version");
  d.cuda_runtime_version = f.int32("cuda_runtime_version");
  return d;
}

Ceiling ceiling_from_json(const Fields& f) {
  Ceiling c;
  c.name = f.text("name", true);
  c.measured = f.number("measured", true);
  c.theoretical = f.number("theoretical");
  c.datasheet = f.number("datasheet");
  c.method = f.text("method");
  c.best_shape = f.text("best_shape");
  c.samples = f.int32("samples");
  c.rel_spread = f.number("rel_spread");
  c.sm_clock_mhz_begin = f.number("sm_clock_mhz_begin");
  c.sm_clock_mhz_end = f.number("sm_clock_mhz_end");
  c.mem_clock_mhz = f.number("mem_clock_mhz");
  c.throttled = f.flag("throttled");
  c.verified = f.flag("verified");
  return c;
}

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

nlohmann::ordered_json profile_to_json(const MachineProfile& p) {
  Json ceilings = Json::array();
  for (const Ceiling& c : p.ceilings) ceilings.push_back(ceiling_to_json(c));
  Json links = Json::array();
  for (const PeerLink& l : p.peer_links)
    links.push_back(Json{{"src", l.src},
                         {"dst", l.dst},
                         {"src_uuid", l.src_uuid},
                         {"dst_uuid", l.dst_uuid},
                         {"bytes_per_s", number_or_null(l.bytes_per_s)},
                         {"verified", l.verified}});
  return Json{{"format_version", p.format_version},
              {"gpuscope_version", p.gpuscope_version},
              {"measured_at", p.measured_at},
              {"quick", p.quick},
              {"duration_s", number_or_null(p.duration_s)},
              {"device", device_to_json(p.device)},
              {"ceilings", std::move(ceilings)},
              {"warnings", p.warnings},
              {"peer_links", std::move(links)}};
}

MachineProfile profile_from_json(const nlohmann::ordered_json& j, const std::string& source,
                                 std::vector<std::string>* warnings) {
  if (!j.is_object())
    throw ProfileError(source + ": not a gpuscope machine profile (a JSON object expected, found " +
                       detail::json_type_name(j) + ")");
  const Fields top(j, source, "");
  if (!top.has("format_version"))
    top.fail("missing required field 'format_version' (is this a machine profile written by `gpuscope peak`?)");
  MachineProfile p;
  p.format_version = top.int32("format_version", 0, true);
  if (p.format_version != MachineProfile::kFormatVersion)
    throw ProfileVersionError(source + ": machine profile format version " + std::to_string(p.format_version) +
                                  ", but this gpuscope reads version " +
                                  std::to_string(MachineProfile::kFormatVersion) +
                                  "; measure again with `gpuscope peak`, or read it with the gpuscope that wrote it",
                              p.format_version, MachineProfile::kFormatVersion);
  p.gpuscope_version = top.text("gpuscope_version");
  p.measured_at = top.text("measured_at");
  p.quick = top.flag("quick");
  p.duration_s = top.number("duration_s");

  const Json& device = top.required("device");
  if (!device.is_object()) top.wrong("device", "an object", device);
  p.device = device_from_json(device, source);

  const Json& ceilings = top.required("ceilings");
  if (!ceilings.is_array()) top.wrong("ceilings", "an array", ceilings);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < ceilings.size(); ++i) {
    const std::string where = "ceilings[" + std::to_string(i) + "]";
    if (!ceilings[i].is_object())
      top.fail("field '" + where + "' must be an object, found " + detail::json_type_name(ceilings[i]));
    const Fields f(ceilings[i], source, where);
    Ceiling c = ceiling_from_json(f);
    const CeilingInfo* info = find_ceiling_info(c.name);
    if (!info) {
      if (warnings)
        warnings->push_back(source + ": " + where + " '" + c.name +
                            "' is not a ceiling this gpuscope knows (written by a newer version?); ignored");
      continue;
    }
    if (const std::string unit = f.text("unit"); !unit.empty() && unit != info->unit)
      f.fail("field '" + f.field("unit") + "' of " + c.name + " is '" + unit + "', but " + c.name + " is in " +
             std::string(info->unit));
    if (!seen.insert(c.name).second) f.fail("ceiling '" + c.name + "' appears twice (again at " + where + ")");
    p.ceilings.push_back(std::move(c));
  }

  if (top.has("warnings")) {
    const Json& w = j.at("warnings");
    if (!w.is_array()) top.wrong("warnings", "an array of strings", w);
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (!w[i].is_string())
        top.fail("field 'warnings[" + std::to_string(i) + "]' must be a string, found " + detail::json_type_name(w[i]));
      p.warnings.push_back(w[i].get<std::string>());
    }
  }
  if (top.has("peer_links")) {  // optional: profiles before it, and one-GPU machines, have none
    const Json& links = j.at("peer_links");
    if (!links.is_array()) top.wrong("peer_links", "an array", links);
    for (std::size_t i = 0; i < links.size(); ++i) {
      const std::string where = "peer_links[" + std::to_string(i) + "]";
      if (!links[i].is_object())
        top.fail("field '" + where + "' must be an object, found " + detail::json_type_name(links[i]));
      const Fields f(links[i], source, where);
      PeerLink l;
      l.src = f.int32("src", 0, true);
      l.dst = f.int32("dst", 0, true);
      l.src_uuid = f.text("src_uuid");
      l.dst_uuid = f.text("dst_uuid");
      l.bytes_per_s = f.number("bytes_per_s", true);
      l.verified = f.flag("verified");
      p.peer_links.push_back(std::move(l));
    }
  }
  return p;
}

MachineProfile read_profile(const fs::path& path, std::vector<std::string>* warnings) {
  const Json j = detail::read_json_file<ProfileError>(path, "machine profile",
                                                      "no such machine profile (measure one with `gpuscope peak`)");
  const std::string source = path.string();
  return profile_from_json(j, source, warnings);
}

void write_profile(const MachineProfile& profile, const fs::path& path, Overwrite overwrite) {
  detail::write_json_file<ProfileError>(profile_to_json(profile), path, "the machine profile", overwrite);
}

fs::path profile_cache_dir() {
  if (const std::string d = env("GPUSCOPE_CACHE_DIR"); !d.empty()) return d;
  if (const std::string d = env("XDG_CACHE_HOME"); !d.empty()) return fs::path(d) / "gpuscope" / "profiles";
  if (const std::string d = env("HOME"); !d.empty()) return fs::path(d) / ".cache" / "gpuscope" / "profiles";
  throw ProfileError("no folder for cached machine profiles: set GPUSCOPE_CACHE_DIR (or HOME)");
}

fs::path profile_cache_path(std::string_view uuid) {
  if (uuid.empty()) throw ProfileError("a machine profile needs the GPU's UUID to be cached (device.uuid is empty)");
  std::string file(uuid);
  for (char& ch : file)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') ch = '_';
  if (file.find_first_not_of('.') == std::string::npos) file = std::string(file.size(), '_');  // no "." or ".."
  return profile_cache_dir() / (file + ".json");
}

fs::path save_to_cache(const MachineProfile& profile) {
  const fs::path path = profile_cache_path(profile.device.uuid);
  std::error_code ec;
  (void)create_directories_0700(path.parent_path(), ec);  // new folders 0700: the observer's builds share gpuscope/
  if (ec)
    throw ProfileError("cannot create the profile cache folder " + path.parent_path().string() + ": " + ec.message() +
                       " (set GPUSCOPE_CACHE_DIR to a writable folder)");
  write_profile(profile, path, Overwrite::kReplace);  // the cache keeps the latest measurement
  return path;
}

std::optional<MachineProfile> load_cached_profile(std::string_view uuid, std::vector<std::string>* warnings) {
  const fs::path path = profile_cache_path(uuid);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  try {
    return read_profile(path, warnings);
  } catch (const ProfileError& e) {
    throw ProfileError(std::string(e.what()) + " (a broken cached profile: delete it or run `gpuscope peak` again)");
  }
}

std::vector<fs::path> list_cached_profiles() {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path dir = profile_cache_dir();
  if (!fs::is_directory(dir, ec)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json" && e.is_regular_file(ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<CachedProfile> find_profile_for_device(std::string_view device, std::vector<std::string>* warnings) {
  for (const fs::path& path : list_cached_profiles()) {
    MachineProfile p;
    try {
      p = read_profile(path, warnings);
    } catch (const ProfileError& e) {
      if (warnings) warnings->push_back(std::string("skipped a cached profile: ") + e.what());
      continue;
    }
    if (device.empty() || p.device.uuid == device || same_ignoring_case(p.device.name, device))
      return CachedProfile{path, std::move(p)};
  }
  return std::nullopt;
}

}  // namespace gpuscope::store
