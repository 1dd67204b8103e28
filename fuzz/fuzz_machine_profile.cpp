// Fuzzes the machine profile reader (store/machine_profile_json.hpp): the JSON file
// `gpuscope peak` writes and `roofline`, `stats`, `bench` and `kernels` read, which a user
// may edit, copy between machines or truncate. The input is written as a file and read
// with read_profile(); a profile that reads is then drawn as the roofline SVG
// (render/roofline_svg.hpp, `gpuscope roofline`), and written and read back (what the
// writer writes, the reader must take). Documented: store::ProfileError (and
// ProfileVersionError) from the reader, std::invalid_argument from the chart when the
// profile has no slope or roof to draw.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/utf8.hpp"
#include "fuzz_support.hpp"
#include "render/roofline_svg.hpp"
#include "store/machine_profile_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const std::filesystem::path path = fuzz::scratch_dir() / "profile.json";
  fuzz::write_bytes(path, data, size);
  MachineProfile profile;
  try {
    std::vector<std::string> warnings;
    profile = store::read_profile(path, &warnings);
  } catch (const store::ProfileError& e) {
    fuzz::documented(e);
    return 0;
  } catch (const std::exception& e) {
    fuzz::undocumented(e);
  }

  try {
    const nlohmann::ordered_json written = store::profile_to_json(profile);
    const MachineProfile again = store::profile_from_json(written, "<written>");
    if (store::profile_to_json(again) != written) fuzz::finding("profile round trip", "differs after write + read");
  } catch (const std::exception& e) {
    fuzz::finding("profile round trip", e.what());
  }

  try {
    std::ostringstream svg;
    render::write_roofline_svg(profile, svg);
    if (!core::valid_utf8(svg.str())) fuzz::finding("roofline svg", "output is not valid UTF-8");
  } catch (const std::invalid_argument& e) {
    fuzz::documented(e);
  } catch (const std::exception& e) {
    fuzz::undocumented(e);
  }
  return 0;
}
