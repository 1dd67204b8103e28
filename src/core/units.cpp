#include "core/units.hpp"

#include <ctime>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace gpuscope::core::units {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}
namespace {

// "%.*f" of `v`, trailing zeros (and a trailing '.') dropped.
std::string fixed_trimmed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// Decimals that leave `significant` significant digits for a mantissa 0 < m < 1000.
int decimals_for(double m, int significant) {
  const int int_digits = m >= 1 ? static_cast<int>(std::floor(std::log10(m))) + 1 : 1;
  return std::max(0, significant - int_digits);
}

}  // namespace

std::string si(double value, std::string_view unit, int significant) {
  if (std::isnan(value)) return "-";
  const std::string sep = unit.empty() ? "" : " ";
  if (value == 0) return "0" + sep + std::string(unit);
  if (std::isinf(value)) return (value > 0 ? "inf" : "-inf") + sep + std::string(unit);
  significant = std::max(1, significant);
  static constexpr std::array<std::string_view, 11> kPrefix{"p", "n", "µ", "m", "", "k", "M", "G", "T", "P", "E"};
  const double a = std::fabs(value);
  int group = static_cast<int>(std::floor(std::log10(a) / 3));
  group = std::clamp(group, -4, 6);
  double m = a / std::pow(10.0, 3 * group);
  // Rounding may carry into the next prefix (999.6 → "1000"): move up one group then.
  const double scale = std::pow(10.0, decimals_for(m, significant));
  if (std::round(m * scale) / scale >= 1000 && group < 6) {
    ++group;
    m /= 1000;
  }
  return (value < 0 ? "-" : "") + fixed_trimmed(m, decimals_for(m, significant)) + " " +
         std::string(kPrefix[static_cast<std::size_t>(group + 4)]) + std::string(unit);
}

std::string duration(double seconds, int significant) { return si(seconds, "s", significant); }

std::string duration_ns(std::int64_t ns, int significant) {
  return duration(static_cast<double>(ns) * 1e-9, significant);
}

std::string bytes(double bytes, int significant) { return si(bytes, "B", significant); }

std::string memory_size(double bytes, int significant) {
  if (std::isnan(bytes)) return "-";
  if (bytes == 0) return "0 B";
  if (std::isinf(bytes)) return bytes > 0 ? "inf B" : "-inf B";
  significant = std::max(1, significant);
  static constexpr std::array<std::string_view, 7> kPrefix{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  const double a = std::fabs(bytes);
  int group = a < 1 ? 0 : static_cast<int>(std::floor(std::log2(a) / 10));
  group = std::clamp(group, 0, 6);
  double m = a / std::pow(1024.0, group);
  // Rounding may carry into the next prefix (1023.9 → "1024"): move up one group then.
  const double scale = std::pow(10.0, decimals_for(m, significant));
  if (std::round(m * scale) / scale >= 1024 && group < 6) {
    ++group;
    m /= 1024;
  }
  return (bytes < 0 ? "-" : "") + fixed_trimmed(m, decimals_for(m, significant)) + " " +
         std::string(kPrefix[static_cast<std::size_t>(group)]) + "B";
}

std::string byte_rate(double bytes_per_s, int significant) { return si(bytes_per_s, "B/s", significant); }

std::string flop_rate(double flop_per_s, int significant) { return si(flop_per_s, "FLOP/s", significant); }

std::string percent(double pct) {
  if (!std::isfinite(pct)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, std::fabs(pct) < 9.95 ? "%.1f %%" : "%.0f %%", pct);
  return buf;
}

std::string percent_of(double fraction) { return percent(fraction * 100.0); }

std::string real3(double value) {
  if (!std::isfinite(value)) return "-";
  const double a = std::fabs(value);
  char buf[48];
  std::snprintf(buf, sizeof buf, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", value);
  return buf;
}

std::string ns_count(double ns) {
  if (std::isnan(ns)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f ns", ns == std::floor(ns) ? 0 : 1, ns);
  return buf;
}

}  // namespace gpuscope::core::units
