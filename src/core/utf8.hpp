// UTF-8 validation and repair for text that comes from the traced program (kernel names,
// NVTX messages, thread and process names), which may hold any bytes. The importer repairs
// such text once (store/event_log_reader), so every output of gpuscope is valid UTF-8.
//
// Validity is RFC 3629's: no overlong forms, no surrogates (U+D800..U+DFFF), nothing above
// U+10FFFF. Repair replaces each maximal ill-formed subpart with U+FFFD (EF BF BD), the
// practice Unicode recommends (Unicode 15, section 3.9, "U+FFFD Substitution of Maximal
// Subparts") and WHATWG's decoder follows: "a\xC3(b" → "a\uFFFD(b", "\xE2\x82" → one U+FFFD.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::core {

/// True when `text` is well-formed UTF-8 (the empty string is).
[[nodiscard]] bool valid_utf8(std::string_view text);

/// `text` with every maximal ill-formed subpart replaced by U+FFFD; valid input is returned
/// unchanged.
[[nodiscard]] std::string repair_utf8(std::string_view text);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
