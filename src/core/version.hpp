// gpuscope version, one place.
#pragma once
namespace gpuscope {
inline constexpr const char* kVersion = "0.1.0";
}
