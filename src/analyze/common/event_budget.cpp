#include "analyze/common/event_budget.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/option_values.hpp"
#include "core/units.hpp"

namespace gpuscope::analyze {
namespace {

constexpr std::int64_t kDefaultBudgetBytes = 1'000'000'000;
constexpr const char* kBudgetVariable = "GPUSCOPE_MEMORY_BUDGET";

// 5005000 → "5,005,000": row counts a person reads.
std::string grouped(std::int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > (n < 0 ? 1 : 0); i -= 3) digits.insert(i, ",");
  return digits;
}

// Bytes rounded up to whole GiB, the spelling GPUSCOPE_MEMORY_BUDGET takes.
std::int64_t whole_gib(double bytes) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::min(std::ceil(bytes / kGiB), 1e9)));
}

}  // namespace

std::int64_t memory_budget_bytes() {
  const char* text = std::getenv(kBudgetVariable);
  if (text == nullptr || *text == '\0') return kDefaultBudgetBytes;
  const core::OptionValue<std::int64_t> v = core::parse_size(text, {1, core::kMaxInt64, "4GiB or 2^32"});
  if (!v.ok()) throw std::invalid_argument(core::option_error(kBudgetVariable, v.error));
  return *v.value;
}

void check_event_budget(const EventRows& r) {
  const std::int64_t budget = memory_budget_bytes();
  // In double: a damaged trace's counts times the row size can pass 2^63.
  const double need = static_cast<double>(r.rows) * static_cast<double>(r.bytes_per_row);
  if (need <= static_cast<double>(budget)) return;
  std::string advice(r.advice);
  if (!advice.empty()) advice += "; ";
  throw TraceTooLargeError(
      std::string(r.report) + ": the trace holds " + grouped(r.rows) + " " + std::string(r.what) +
      ", which this report would keep in memory: about " + units::bytes(need) + " at " +
      units::bytes(static_cast<double>(r.bytes_per_row)) + " each, more than gpuscope's memory budget of " +
      units::bytes(static_cast<double>(budget)) + ". No rows were loaded. Instead: " + advice +
      "report on part of the trace: --from/--to (a time window), --filter-nvtx, --process or --device; "
      "or, if this machine has the memory, raise the budget: " +
      kBudgetVariable + "=" + std::to_string(whole_gib(need * 1.25)) + "GiB (docs/performance.md, \"Big traces\")");
}

}  // namespace gpuscope::analyze
