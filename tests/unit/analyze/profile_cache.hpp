// Test helper: a machine-profile cache of its own (GPUSCOPE_CACHE_DIR pointed at a temporary
// folder for the object's life, the old value put back after), where a test saves a profile
// with one measured ceiling for a GPU UUID, as `gpuscope peak` would have.
//
//   ProfileCache cache;
//   cache.add("GPU-100", "dram_copy", 2.9e12);   // bytes/s
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../store/log_builder.hpp"
#include "core/machine_profile.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::test {

class ProfileCache {
 public:
  ProfileCache() {
    if (const char* old = std::getenv("GPUSCOPE_CACHE_DIR")) m_old = old;
    ::setenv("GPUSCOPE_CACHE_DIR", m_dir.file("profiles").c_str(), 1);
  }
  ~ProfileCache() {
    if (m_old) {
      ::setenv("GPUSCOPE_CACHE_DIR", m_old->c_str(), 1);
    } else {
      ::unsetenv("GPUSCOPE_CACHE_DIR");
    }
  }
  ProfileCache(const ProfileCache&) = delete;
  ProfileCache& operator=(const ProfileCache&) = delete;
  /// Caches a profile of `uuid` (an H100) whose ceiling `ceiling` (catalog name, e.g.
  /// "dram_copy", "p2p") was measured at `bytes_per_s`.
  /// `links`: its peer_links (every GPU pair that `gpuscope peak` measured), none by default.
  void add(const std::string& uuid, const std::string& ceiling, double bytes_per_s,
           std::vector<core::PeerLink> links = {}) {
    MachineProfile p;
    p.peer_links = std::move(links);
    p.device.name = "NVIDIA H100 80GB HBM3";
    p.device.uuid = uuid;
    core::Ceiling c;
    c.name = ceiling;
    c.measured = bytes_per_s;
    p.ceilings.push_back(c);
    (void)store::save_to_cache(p);
  }

 private:
  store::test::TempDir m_dir;
  std::optional<std::string> m_old;
};

}  // namespace gpuscope::test
