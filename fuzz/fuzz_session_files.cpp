// Fuzzes the readers of a session folder's files (gpuscope launch --session), which start,
// stop, sessions, bench serve and — inside the traced program — the collector read:
//   cli/session_info.hpp          'info' (key=value lines): parse_session_info never throws;
//                                 an accepted file names a pid in 1..2^31-1 and formats back
//                                 to text that parses to the same facts;
//   collect/session_control.hpp   'control' and 'ack.PID' ("GENERATION start|stop"):
//                                 parse_session_command never throws; an accepted line has a
//                                 generation in 1..10^18 and round-trips;
//   store/private_dir.hpp         the same bytes written as a private file (0600, O_EXCL,
//                                 renamed in) and read back unchanged, and read_session_file
//                                 on it agrees with the parser.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "cli/session_info.hpp"
#include "collect/session_control.hpp"
#include "fuzz_support.hpp"
#include "store/private_dir.hpp"

using namespace gpuscope;

namespace {

// `a` as format_session_info writes it: line breaks inside values become spaces.
bool same_as_written(const cli::SessionInfo& a, const cli::SessionInfo& b) {
  const auto line = [](std::string s) {
    for (char& c : s)
      if (c == '\r' || c == '\n') c = ' ';
    return s;
  };
  return line(a.name) == b.name && a.launcher_pid == b.launcher_pid && line(a.output) == b.output &&
         line(a.log_dir) == b.log_dir && line(a.command) == b.command && line(a.started) == b.started;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto command = collect::parse_session_command(text);
    if (command) {
      if (command->generation < 1 || command->generation > 1'000'000'000'000'000'000ull)
        fuzz::finding("parse_session_command", "generation outside 1..10^18");
      const auto again = collect::parse_session_command(collect::format_session_command(*command));
      if (!again || again->generation != command->generation || again->start != command->start)
        fuzz::finding("parse_session_command", "a parsed line does not round-trip");
    }
    if (const auto info = cli::parse_session_info(text)) {
      if (info->launcher_pid < 1 || info->launcher_pid > 2147483647L)
        fuzz::finding("parse_session_info", "launcher_pid outside 1..2^31-1");
      const std::string formatted = cli::format_session_info(*info);
      const auto back = cli::parse_session_info(formatted);
      if (!back || cli::format_session_info(*back) != formatted)
        fuzz::finding("parse_session_info", "a parsed file does not round-trip");
      if (!same_as_written(*info, *back)) fuzz::finding("parse_session_info", "formatting changed a fact");
    }

    const std::filesystem::path& dir = fuzz::scratch_dir();  // mkdtemp: 0700, this user's
    const store::PrivateStatus written = store::write_private_file(dir, "control", text, "remove it");
    if (!written.ok()) fuzz::finding("write_private_file", written.message);
    const store::PrivateRead read = store::read_private_file(dir, "control", size, "remove it");
    if (!read.status.ok() || read.content != text) fuzz::finding("read_private_file", "the bytes did not come back");
    store::PrivateStatus status;
    const auto from_file = collect::read_session_file(dir / "control", &status);
    const bool agrees =
        size > 64 ||
        (from_file.has_value() == command.has_value() &&
         (!command || (from_file->generation == command->generation && from_file->start == command->start)));
    if (!agrees) fuzz::finding("read_session_file", "disagrees with parse_session_command");
  } catch (const std::exception& e) {
    fuzz::undocumented(e);  // documented never to throw (the collector runs inside the program)
  }
  return 0;
}
