// Event-log file naming: <dir>/<hostname>-<pid>.gslog, then -1, -2, ... when a
// file of that name exists (a reused pid in the same log directory).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuscope::collect {

/// attempt 0: "<dir>/<host>-<pid>.gslog"; attempt n > 0: "<dir>/<host>-<pid>-<n>.gslog".
/// Characters of `host` that are unsafe in a file name become '_'.
[[nodiscard]] std::string log_file_path(std::string_view dir, std::string_view host, std::uint32_t pid,
                                        unsigned attempt);

}  // namespace gpuscope::collect
