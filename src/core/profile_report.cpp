#include "core/profile_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/roofline.hpp"

namespace gpuscope::core {
namespace {

constexpr double kSpreadWarningPct = 5.0;  // repetitions further apart than this get a warning

Cell real_or_null(double v) { return std::isfinite(v) ? Cell{v} : Cell{std::monostate{}}; }

std::string number(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

double ratio_pct(double value, double reference) {
  return std::isfinite(value) && std::isfinite(reference) && reference > 0 ? value / reference * 100.0 : kUnknown;
}

// The lowest of the SM clocks read around a measurement (NaN if neither is known).
double lowest_clock(const Ceiling& c) {
  if (std::isnan(c.sm_clock_mhz_begin)) return c.sm_clock_mhz_end;
  if (std::isnan(c.sm_clock_mhz_end)) return c.sm_clock_mhz_begin;
  return std::min(c.sm_clock_mhz_begin, c.sm_clock_mhz_end);
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

void add_device_notes(const MachineProfile& p, Report& r) {
  const DeviceFacts& d = p.device;
  std::string dev = d.name.empty() ? std::string("unknown device") : d.name;
  if (!d.uuid.empty()) dev += " (" + d.uuid + ")";
  dev += ", cc " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ", " + std::to_string(d.sm_count) +
         " SMs, " + number("%.1f GiB", static_cast<double>(d.global_memory_bytes) / (1024.0 * 1024 * 1024)) +
         " memory, L2 " + number("%.1f MiB", static_cast<double>(d.l2_bytes) / (1024.0 * 1024)) + ", max SM clock " +
         number("%.0f MHz", d.max_sm_clock_mhz) + ", memory clock " + number("%.0f MHz", d.max_mem_clock_mhz) + ", " +
         std::to_string(d.memory_bus_width_bits) + "-bit bus";
  r.add_note(NoteLevel::kInfo, "device: " + dev);
  std::string run = "measured " + (p.measured_at.empty() ? std::string("at an unknown time") : p.measured_at);
  if (!p.gpuscope_version.empty()) run += " by gpuscope " + p.gpuscope_version;
  if (std::isfinite(p.duration_s)) run += " in " + number("%.1f s", p.duration_s);
  if (!d.driver_version.empty()) run += ", driver " + d.driver_version;
  if (d.cuda_runtime_version > 0) run += ", CUDA runtime " + std::to_string(d.cuda_runtime_version);
  r.add_note(NoteLevel::kInfo, run);
  if (p.quick) {
    std::size_t quick = 0;
    for (const CeilingInfo& c : ceiling_catalog()) quick += c.quick ? 1 : 0;
    r.add_note(NoteLevel::kInfo, "measured with --quick (" + std::to_string(quick) + " of " +
                                     std::to_string(ceiling_catalog().size()) +
                                     " ceilings); run `gpuscope peak` for all of them");
  }
}

void add_ceiling_notes(const MachineProfile& p, const Ceiling& c, Report& r) {
  if (c.throttled) {
    const bool clocks = std::isfinite(c.sm_clock_mhz_begin) && std::isfinite(c.sm_clock_mhz_end);
    r.add_note(NoteLevel::kWarning, c.name + ": the SM clock fell" +
                                        (clocks ? " from " + number("%.0f", c.sm_clock_mhz_begin) + " to " +
                                                      number("%.0f MHz", c.sm_clock_mhz_end)
                                                : std::string()) +
                                        " during the measurement (throttling); the value may be low");
  }
  if (std::isfinite(c.measured) && !c.verified)
    r.add_note(NoteLevel::kWarning, c.name + ": the result was not verified against the host's checksum");
  if (std::isfinite(c.rel_spread) && c.rel_spread * 100.0 > kSpreadWarningPct)
    r.add_note(NoteLevel::kWarning, c.name + ": the repetitions spread by " + number("%.1f %%", c.rel_spread * 100.0) +
                                        " (max - min over median); rerun on an idle GPU");
  if (c.name == "shared_memory" && std::isfinite(c.measured) && p.device.sm_count > 0)
    r.add_note(NoteLevel::kInfo, "shared_memory per SM: " + number("%.1f GB/s", c.measured / p.device.sm_count * 1e-9) +
                                     " (" + number("%.0f", c.measured * 1e-9) + " GB/s over " +
                                     std::to_string(p.device.sm_count) + " SMs)");
}

}  // namespace

DisplayUnit display_unit(std::string_view catalog_unit) {
  if (catalog_unit == "B/s") return {"GB/s", 1e-9};
  if (catalog_unit == "FLOP/s") return {"TFLOP/s", 1e-12};
  if (catalog_unit == "OP/s") return {"TOP/s", 1e-12};
  if (catalog_unit == "s") return {"µs", 1e6};
  return {catalog_unit, 1.0};
}

std::string_view ceiling_kind_name(CeilingKind kind) {
  switch (kind) {
    case CeilingKind::kMemory:
      return "memory";
    case CeilingKind::kCompute:
      return "compute";
    case CeilingKind::kTransfer:
      return "transfer";
    case CeilingKind::kLatency:
      return "latency";
  }
  return "unknown";
}

Report profile_report(const MachineProfile& p) {
  Report r;
  r.name = "machine_profile";
  r.title = "Measured Ceilings" + (p.device.name.empty() ? std::string() : " of " + p.device.name);
  r.add_column("Ceiling", "", ColumnType::kText)
      .add_column("Unit", "", ColumnType::kText)
      .add_column("Measured", "", ColumnType::kReal)
      .add_column("Theoretical", "", ColumnType::kReal)
      .add_column("% of Theoretical", "%", ColumnType::kReal)
      .add_column("Datasheet", "", ColumnType::kReal)
      .add_column("% of Datasheet", "%", ColumnType::kReal)
      .add_column("SM Clock", "MHz", ColumnType::kReal)
      .add_column("Throttled", "", ColumnType::kText)
      .add_column("Verified", "", ColumnType::kText)
      .add_column("Samples", "", ColumnType::kInteger)
      .add_column("Spread", "%", ColumnType::kReal)
      .add_column("Method", "", ColumnType::kText);

  add_device_notes(p, r);
  for (const std::string& w : p.warnings) r.add_note(NoteLevel::kWarning, w);
  for (const Ceiling& c : p.ceilings) {
    const CeilingInfo* info = find_ceiling_info(c.name);
    const DisplayUnit du = display_unit(info ? info->unit : std::string_view());
    std::string method = c.method;
    if (!c.best_shape.empty()) method = "best shape " + c.best_shape + (method.empty() ? "" : "; " + method);
    r.rows.push_back(Row{c.name, std::string(du.unit), real_or_null(c.measured * du.scale),
                         real_or_null(c.theoretical * du.scale), real_or_null(ratio_pct(c.measured, c.theoretical)),
                         real_or_null(c.datasheet * du.scale), real_or_null(ratio_pct(c.measured, c.datasheet)),
                         real_or_null(lowest_clock(c)), yes_no(c.throttled), yes_no(c.verified),
                         static_cast<std::int64_t>(c.samples), real_or_null(c.rel_spread * 100.0), method});
    if (!info) r.add_note(NoteLevel::kWarning, c.name + ": not a ceiling this gpuscope knows; its unit is unknown");
    add_ceiling_notes(p, c, r);
  }
  if (p.ceilings.empty()) r.add_note(NoteLevel::kWarning, "the profile holds no measured ceiling");
  return r;
}

Report roofline_report(const MachineProfile& p) {
  Report r;
  r.name = "roofline";
  r.title = "Roofline Ridge Points";
  r.add_column("Memory", "", ColumnType::kText)
      .add_column("Bandwidth", "GB/s", ColumnType::kReal)
      .add_column("Compute", "", ColumnType::kText)
      .add_column("Compute Rate", "TFLOP/s", ColumnType::kReal)
      .add_column("Ridge Point", "FLOP/B", ColumnType::kReal);
  const std::vector<roofline::Line> lines = roofline::chart_lines(p);
  bool any_memory = false, any_compute = false;
  for (const roofline::Line& m : lines) {
    any_memory |= m.kind == CeilingKind::kMemory;
    any_compute |= m.kind == CeilingKind::kCompute;
  }
  for (const roofline::Line& m : lines) {
    if (m.kind != CeilingKind::kMemory) continue;
    for (const roofline::Line& c : lines) {
      if (c.kind != CeilingKind::kCompute) continue;
      r.rows.push_back(Row{m.ceiling, m.value * 1e-9, c.ceiling, c.value * 1e-12,
                           real_or_null(roofline::ridge_point(c.value, m.value))});
    }
  }
  if (!any_memory || !any_compute) {
    r.add_note(NoteLevel::kWarning, std::string("no roofline: the profile has no measured ") +
                                        (any_memory ? "compute ceiling (fp64_fma, fp32_fma, tensor_fp16/bf16, "
                                                      "tensor_fp8)"
                                                    : "memory ceiling (dram_copy, l2_read, shared_memory)"));
    return r;
  }
  r.add_note(NoteLevel::kInfo,
             "attainable FLOP/s = min(compute rate, intensity x bandwidth); a kernel whose arithmetic intensity "
             "(FLOP per byte moved at that memory level) is below the ridge point is bound by that memory, "
             "above it by the compute unit");
  return r;
}

Report peer_link_report(const MachineProfile& p) {
  Report r;
  r.name = "peer_links";
  r.title = "GPU-to-GPU Copy Bandwidth, Every Pair";
  r.add_column("Source GPU", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Destination GPU", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Bandwidth", "GB/s", ColumnType::kReal)
      .add_column("Of Fastest Pair", "%", ColumnType::kReal)
      .add_column("Verified", "", ColumnType::kText)
      .add_column("Source UUID", "", ColumnType::kText)
      .add_column("Destination UUID", "", ColumnType::kText);
  double fastest = 0;
  for (const PeerLink& l : p.peer_links)
    fastest = std::max(fastest, std::isfinite(l.bytes_per_s) ? l.bytes_per_s : 0.0);
  for (const PeerLink& l : p.peer_links)
    r.rows.push_back(Row{static_cast<std::int64_t>(l.src), static_cast<std::int64_t>(l.dst),
                         real_or_null(l.bytes_per_s * 1e-9), real_or_null(ratio_pct(l.bytes_per_s, fastest)),
                         yes_no(l.verified), l.src_uuid, l.dst_uuid});
  if (p.peer_links.empty())
    r.add_note(NoteLevel::kInfo, "no GPU pair measured (one GPU visible, or no peer access)");
  else
    r.add_note(NoteLevel::kInfo,
               "cudaMemcpyPeerAsync of the p2p ceiling's size from each GPU to each other one, peer access enabled, "
               "timed with CUDA events on the source GPU (median); the p2p ceiling is the slowest pair, which bounds "
               "a ring over all of them; nccl_sum's Link Ceiling takes the slowest pair among the job's GPUs");
  return r;
}

Report ceiling_catalog_report() {
  Report r;
  r.name = "ceiling_catalog";
  r.title = "Ceiling Catalog";
  r.add_column("Name", "", ColumnType::kText)
      .add_column("Kind", "", ColumnType::kText)
      .add_column("Unit", "", ColumnType::kText)
      .add_column("Label", "", ColumnType::kText)
      .add_column("Quick", "", ColumnType::kText)
      .add_column("Description", "", ColumnType::kText);
  for (const CeilingInfo& c : ceiling_catalog())
    r.rows.push_back(Row{std::string(c.name), std::string(ceiling_kind_name(c.kind)), std::string(c.unit),
                         std::string(c.label), yes_no(c.quick), std::string(c.description)});
  return r;
}

}  // namespace gpuscope::core
