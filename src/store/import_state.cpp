#include "store/import_state.hpp"

#include <cmath>
#include <algorithm>

#include "store/kernel_names.hpp"

namespace gpuscope::store::detail {

ImportState::ImportState(Database& database)
    : db(database),
      kernels(database),
      kernel_profiles(database),
      kernel_metrics(database),
      memcpys(database),
      memsets(database),
      api_calls(database),
      py_frames(database),
      py_stacks(database),
      py_samples(database),
      memory_events(database),
      syncs(database),
      nvtx_events(database),
      torch_memory_stats(database),
      torch_memory_segments(database),
      torch_memory_events(database),
      requests(database),
      overheads(database),
      messages(database),
      m_strings_writer(database) {}

std::int64_t ImportState::intern(std::string_view s, std::optional<std::string_view> raw) {
  if (s.empty()) return 0;
  const auto it = m_strings.find(s);
  if (it != m_strings.end()) return it->second;
  const std::int64_t id = static_cast<std::int64_t>(m_strings.size()) + 1;
  m_strings.emplace(std::string(s), id);
  m_strings_writer.insert({.id = id, .value = s, .raw = raw ? rows::OptBlob(rows::Blob{*raw}) : std::nullopt});
  ++result.rows.strings;
  return id;
}

std::pair<std::int64_t, std::int64_t> ImportState::kernel_names(std::string_view mangled, std::int64_t mangled_id) {
  auto [it, added] = m_kernel_names.try_emplace(mangled_id, 0, 0);
  if (added && mangled_id != 0) {
    const std::string demangled = demangle(mangled);
    it->second = {intern(demangled), intern(base_name(demangled))};
  }
  return it->second;
}

void ImportState::seen(std::uint64_t start, std::uint64_t end) {
  m_first_ns = std::min(m_first_ns, start);
  m_last_ns = std::max(m_last_ns, std::max(start, end));
}

void ImportState::add_data_loss(std::optional<std::uint32_t> pid, DataLossKind kind, std::uint64_t count,
                                std::string_view detail) {
  const DataLossKindDef& def = data_loss_def(kind);
  add_loss_row(pid, std::string(def.name), count, def.severity, describe_data_loss(kind, count, pid, detail));
}

void ImportState::add_collector_loss(std::optional<std::uint32_t> pid, std::string_view what, std::uint64_t count) {
  const DataLossKind kind = collector_loss_kind(what).value_or(DataLossKind::kCollectorDataLoss);
  add_loss_row(pid, std::string(what), count, data_loss_def(kind).severity,
               describe_data_loss(kind, count, pid, {}, what));
}

void ImportState::add_loss_row(std::optional<std::uint32_t> pid, std::string what, std::uint64_t count,
                               LossSeverity severity, std::string detail) {
  if (severity != LossSeverity::kInfo) {
    result.warnings.push_back((pid ? "process " + std::to_string(*pid) + ": " : std::string()) + detail);
  }
  if (severity == LossSeverity::kDataLoss) ++result.data_loss_total;
  result.data_loss.push_back(
      {pid, std::move(what), count, std::string(loss_severity_text(severity)), std::move(detail)});
}

void ImportState::write_data_loss() {
  RowWriter<rows::DataLoss> w(db);
  for (const DataLossEntry& e : result.data_loss) {
    w.insert({.pid = e.pid ? rows::OptInt(*e.pid) : std::nullopt,
              .what = e.what,
              .count = static_cast<std::int64_t>(e.count),
              .severity = e.severity,
              .detail = e.detail});
    ++result.rows.data_loss;
  }
}

void ImportState::set_torch_op_cost(double op_ns, double module_ns, const std::string& method) {
  if (!torch_cost_meta.empty()) return;
  if (std::isfinite(op_ns)) torch_cost_meta.emplace_back("tracer_torch_op_cost_ns", std::to_string(op_ns));
  if (std::isfinite(module_ns)) torch_cost_meta.emplace_back("tracer_torch_module_cost_ns", std::to_string(module_ns));
  torch_cost_meta.emplace_back("tracer_torch_cost_method", method);
}

}  // namespace gpuscope::store::detail
