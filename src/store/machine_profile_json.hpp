// Machine profile files: MachineProfile (core/machine_profile.hpp) ↔ JSON, and the
// per-user cache where `gpuscope peak` saves one profile per GPU and `stats`, `bench`,
// `kernels` and `roofline` find it. The format is documented in docs/metrics.md
// ("The machine profile file").
//
// JSON: an object {"format_version": 1, "gpuscope_version", "measured_at", "quick",
// "duration_s", "device": {DeviceFacts fields as named there}, "ceilings": [{"name",
// "unit", "label", "measured", "theoretical", "datasheet", "method", "best_shape",
// "samples", "rel_spread", "sm_clock_mhz_begin", "sm_clock_mhz_end", "mem_clock_mhz",
// "throttled", "verified"}], "warnings": [...]}, keys in that order. Values in the
// catalog's SI units; NaN (unknown) ↔ null. "unit" and "label" are written for people
// reading the file; on reading, a "unit" that differs from the catalog's is an error.
//
// Reading validates, and every error is a ProfileError whose message names the file and,
// where one is at fault, the field ("ceilings[2].measured"):
//   - missing or unreadable file, malformed JSON (with line and column), not an object;
//   - format_version missing or not kFormatVersion: ProfileVersionError naming both
//     versions;
//   - required field missing: format_version, device, device.name, device.uuid, ceilings,
//     ceilings[i].name, ceilings[i].measured (null is allowed: unknown); every other field
//     is optional and defaults as in MachineProfile;
//   - a field of the wrong type (a string where a number belongs, ...);
//   - the same ceiling twice, or a ceiling whose "unit" differs from the catalog's.
// A ceiling name the catalog does not know is NOT an error: a newer gpuscope may measure
// more ceilings under the same format version. The entry is dropped and a warning naming
// it is appended to `warnings` (when given). Unknown keys are ignored for the same reason.
//
// Cache: folder profile_cache_dir(), one file per GPU, "<device.uuid>.json".
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/machine_profile.hpp"
#include "store/atomic_file.hpp"

namespace gpuscope::store {

class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The file's format_version is not MachineProfile::kFormatVersion.
class ProfileVersionError : public ProfileError {
 public:
  ProfileVersionError(const std::string& message, int found, int expected)
      : ProfileError(message), m_found(found), m_expected(expected) {}
  [[nodiscard]] int found() const { return m_found; }
  [[nodiscard]] int expected() const { return m_expected; }

 private:
  int m_found;
  int m_expected;
};

/// The profile as JSON (keys in the documented order; NaN and infinities as null).
[[nodiscard]] nlohmann::ordered_json profile_to_json(const MachineProfile& profile);

/// Validates and converts; `source` names the file (or "<string>") in error messages.
/// Throws ProfileError / ProfileVersionError; unknown ceilings → `warnings` (see above).
[[nodiscard]] MachineProfile profile_from_json(const nlohmann::ordered_json& json, const std::string& source,
                                               std::vector<std::string>* warnings = nullptr);

/// Reads and validates the profile file at `path` (errors: see above).
[[nodiscard]] MachineProfile read_profile(const std::filesystem::path& path,
                                          std::vector<std::string>* warnings = nullptr);

/// Writes `profile` to `path` (pretty-printed, newline at the end) atomically
/// (store/atomic_file.hpp): a reader never sees half a profile, a failed write keeps the old
/// file. An existing file is replaced only with Overwrite::kReplace, else OutputExistsError.
/// Throws ProfileError when the file cannot be written.
void write_profile(const MachineProfile& profile, const std::filesystem::path& path,
                   Overwrite overwrite = Overwrite::kRefuse);

/// The profile cache folder, first that applies:
///   $GPUSCOPE_CACHE_DIR (the folder itself), $XDG_CACHE_HOME/gpuscope/profiles,
///   $HOME/.cache/gpuscope/profiles.
/// Empty variables count as unset. Throws ProfileError when none is set.
[[nodiscard]] std::filesystem::path profile_cache_dir();

/// profile_cache_dir() / "<uuid>.json". Characters other than letters, digits, '-', '_'
/// and '.' in `uuid` become '_' (a UUID is "GPU-8c1f..." and stays as it is).
/// Throws ProfileError for an empty uuid.
[[nodiscard]] std::filesystem::path profile_cache_path(std::string_view uuid);

/// Writes `profile` to profile_cache_path(profile.device.uuid), creating the folder;
/// returns the path. Throws ProfileError (empty uuid, folder or file not writable).
std::filesystem::path save_to_cache(const MachineProfile& profile);

/// The cached profile of the GPU `uuid`; nullopt when there is none. A cached file that
/// exists but is broken throws ProfileError (it names the file to delete or re-measure).
[[nodiscard]] std::optional<MachineProfile> load_cached_profile(std::string_view uuid,
                                                                std::vector<std::string>* warnings = nullptr);

/// Every "*.json" file in the cache folder, sorted by name; empty if the folder is missing.
[[nodiscard]] std::vector<std::filesystem::path> list_cached_profiles();

struct CachedProfile {
  std::filesystem::path path;
  MachineProfile profile;
};

/// The first cached profile (in list_cached_profiles() order) whose device.uuid equals
/// `device`, or whose device.name equals it ignoring case; with `device` empty, the first
/// readable one. Broken files are skipped with a warning naming them. nullopt when none
/// matches.
[[nodiscard]] std::optional<CachedProfile> find_profile_for_device(std::string_view device,
                                                                   std::vector<std::string>* warnings = nullptr);

}  // namespace gpuscope::store
