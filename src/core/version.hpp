// gpuscope version, one place.
#pragma once
namespace gpuscope::core {
inline constexpr const char* kVersion = "0.1.0";
}

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
