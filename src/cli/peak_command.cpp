#include "cli/peak_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/launcher.hpp"
#include "cli/option_checks.hpp"
#include "cli/output_files.hpp"
#include "core/profile_report.hpp"
#include "core/units.hpp"
#include "gpuscope/bench.hpp"
#include "peak/peak.hpp"
#include "peak/reference.hpp"
#include "render/report_render.hpp"
#include "render/roofline_svg.hpp"
#include "store/atomic_file.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::cli {
namespace {

constexpr const char* kPrefix = "gpuscope peak: ";
constexpr int kReferenceTimeoutS = 180;  // torch's import, CUDA start and a few seconds of timing

std::string_view method_of(std::string_view ceiling) {
  for (const peak::MethodSummary& m : peak::method_summary())
    if (m.ceiling == ceiling) return m.method;
  return "";
}

// "[ 3/26] dram_copy           3021.4 GB/s   90.2 % of theoretical   verified"
void print_progress(const Ceiling& c, std::size_t index, std::size_t total) {
  const CeilingInfo* info = find_ceiling_info(c.name);
  char head[64];
  std::snprintf(head, sizeof head, "[%2zu/%zu] %-18s ", index, total, c.name.c_str());
  std::cerr << kPrefix << head;
  if (!std::isfinite(c.measured)) {
    std::cerr << "not measured: " << c.method << "\n";
    return;
  }
  const DisplayUnit u = display_unit(info != nullptr ? info->unit : "");
  char value[96];
  std::snprintf(value, sizeof value, "%10.4g %-9s", c.measured * u.scale, std::string(u.unit).c_str());
  std::cerr << value;
  if (const double pct = c.pct_of_theoretical(); std::isfinite(pct)) {
    char p[48];
    std::snprintf(p, sizeof p, "  %5.1f %% of theoretical", pct);
    std::cerr << p;
  }
  std::cerr << (c.verified ? "  verified" : "  CHECK FAILED") << (c.throttled ? "  throttled" : "") << "\n";
}

// Runs torch_reference_script() with python3 as a separate process, after the measurement
// (peak/reference.hpp). Never throws for a missing python3 or torch: `unavailable` says why.
peak::ReferenceRun run_references(int device) {
  peak::ReferenceRun run;
  bool not_executable = false;
  const std::optional<std::string> python = find_executable("python3", &not_executable);
  if (!python) {
    run.unavailable = not_executable ? "python3 on PATH is not executable" : "no python3 on PATH";
    return run;
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gpuscope-peak-reference-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    run.unavailable = "could not create a temporary file " + path + ": " + std::strerror(errno);
    return run;
  }
  ::close(fd);
  LaunchSpec spec;
  spec.argv = {*python, "-c", std::string(peak::torch_reference_script()), "--device", std::to_string(device),
               "--out", path};
  spec.kill_after = std::chrono::seconds(kReferenceTimeoutS);
  const LaunchResult result = launch_and_wait(spec);
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  ::unlink(path.c_str());
  run = peak::parse_reference_output(text.str());
  if (!result.started)
    run.unavailable = "python3 could not be started (" + std::string(std::strerror(result.exec_errno)) + ")";
  else if (result.killed_by_us)
    run.unavailable = "the reference program ran past " + std::to_string(kReferenceTimeoutS) + " s and was stopped";
  else if (run.references.empty() && result.shell_exit_code() != 0)
    run.unavailable = "the reference program (python3) " + result.describe();
  return run;
}

int run(const PeakOptions& o) {
  if (o.methods) {
    std::cout << peak_methods_markdown();
    return 0;
  }
  const render::Format format = render::parse_format(o.format);  // checked before the GPU work
  if (o.reference != "auto" && o.reference != "torch" && o.reference != "none")
    throw std::invalid_argument("--reference must be auto, torch or none, not '" + o.reference + "'");
  check_outputs({o.json, o.svg}, o.force_overwrite);  // so are the output files
  const store::Overwrite overwrite = store::overwrite_if(o.force_overwrite);

  peak::PeakOptions po;
  po.device = o.device;
  po.quick = o.quick;
  std::cerr << kPrefix << "measuring GPU " << o.device << (o.quick ? " (--quick)" : "")
            << "; clocks are read, never set\n";
  MachineProfile profile = peak::measure(po, print_progress);
  std::optional<peak::ReferenceRun> references;
  if (o.reference != "none") {
    std::cerr << kPrefix
              << "timing the PyTorch references (python3, a separate process; --reference none skips them)\n";
    const auto t0 = std::chrono::steady_clock::now();
    references = run_references(o.device);
    for (std::string& w : peak::reference_warnings(profile, references->references))
      profile.warnings.push_back(std::move(w));
    if (!references->unavailable.empty()) {
      if (o.reference == "torch")
        profile.warnings.push_back("--reference torch: no PyTorch reference: " + references->unavailable);
      else
        std::cerr << kPrefix << "note: no PyTorch reference: " << references->unavailable << "\n";
    }
    std::cerr << kPrefix << references->references.size() << " PyTorch reference(s) in "
              << units::duration(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) << "\n";
  }
  for (const std::string& w : profile.warnings) std::cerr << kPrefix << "warning: " << w << "\n";

  std::vector<Report> reports{profile_report(profile), roofline_report(profile)};
  if (!profile.peer_links.empty()) reports.push_back(peer_link_report(profile));
  if (references && !references->references.empty()) reports.push_back(peak::reference_report(profile, *references));
  apply_timeunit(o.table, reports);
  render::render(reports, format, std::cout, render::DocumentOptions{"peak", false, table_options(o.table)});
  std::cout.flush();

  if (!o.no_save) {
    try {
      const auto path = store::save_to_cache(profile);
      std::cerr << kPrefix << "saved the machine profile to " << path.string()
                << " (gpuscope stats, bench and roofline read it)\n";
    } catch (const store::ProfileError& e) {
      std::cerr << kPrefix << "warning: the profile was not saved to the cache: " << e.what() << "\n";
    }
  }
  if (!o.json.empty()) {
    store::write_profile(profile, o.json, overwrite);
    std::cerr << kPrefix << "wrote " << o.json << "\n";
  }
  if (!o.svg.empty()) {
    store::write_file_atomically(o.svg, overwrite,
                                 [&](std::ostream& out) { render::write_roofline_svg(profile, out); });
    std::cerr << kPrefix << "wrote " << o.svg << " (open it in a web browser)\n";
  }
  std::size_t failed = 0;
  for (const Ceiling& c : profile.ceilings) failed += c.verified ? 0 : 1;
  std::cerr << kPrefix << profile.ceilings.size() << " ceilings in " << units::duration(profile.duration_s) << "\n";
  if (failed > 0) {
    std::cerr << kPrefix << "error: " << failed << " ceiling(s) failed their result check (see Verified)\n";
    return 4;
  }
  return 0;
}

}  // namespace

std::string peak_methods_markdown() {
  std::ostringstream md;
  md << "| Ceiling | Kind | Unit | Quick |\n|---|---|---|---|\n";
  for (const CeilingInfo& c : ceiling_catalog())
    md << "| `" << c.name << "` | " << ceiling_kind_name(c.kind) << " | " << c.unit << " | " << (c.quick ? "yes" : "no")
       << " |\n";
  for (const CeilingInfo& c : ceiling_catalog()) {
    md << "\n### `" << c.name << "`: " << c.label << " (" << c.unit << ")\n\n"
       << c.description << "\n\n**Method.** " << method_of(c.name) << "\n";
  }
  return md.str();
}

CLI::App* add_peak_command(CLI::App& app, PeakOptions& o) {
  CLI::App* sub =
      app.add_subcommand("peak",
                         "Measure this GPU's real ceilings (memory bandwidths, CUDA-core and tensor-core rates, host\n"
                         "transfers, launch costs), print them against the theoretical value at the observed clock,\n"
                         "save the machine profile to the per-user cache and draw the roofline. Full run < 60 s,\n"
                         "--quick < 15 s. Every microbenchmark checks its result; medians of repeated timed runs\n"
                         "after warm-up; clocks are read (NVML), never changed.");
  sub->add_flag("--quick", o.quick, "Only the quick ceilings (DRAM, L2, FP32, BF16 tensor, H2D/D2H, launch)");
  sub->add_option("--json", o.json, "Also write the machine profile (JSON) to this file");
  sub->add_option("--svg", o.svg, "Draw the roofline chart (SVG) into this file");
  add_force_overwrite_flag(*sub, o.force_overwrite);
  count_option(sub->add_option("--device", o.device, "CUDA device ordinal (CUDA_VISIBLE_DEVICES applies)")
                   ->capture_default_str(),
               core::CountLimits{0, 65535, "0"});
  sub->add_option("--format", o.format, "table, csv, json or markdown (the printed reports)")->capture_default_str();
  add_table_flags(*sub, o.table);
  sub->add_flag("--no-save", o.no_save, "Do not save the profile to the per-user cache");
  sub->add_option("--reference", o.reference,
                  "After the ceilings, time PyTorch's 4 GiB device-to-device copy_ and torch.matmul 8192^3 bf16/fp16\n"
                  "in a separate python3 process and print them beside the ceilings (a reference above its ceiling\n"
                  "is a warning): auto (when python3 imports torch; else a note), torch (a warning when it cannot),\n"
                  "none")
      ->capture_default_str();
  sub->add_flag("--methods", o.methods,
                "Print every ceiling, its unit and how it is measured (markdown); no GPU needed");
  std::string footer = "Ceilings (Q = also with --quick; `gpuscope peak --methods` says how each is measured):\n";
  for (const CeilingInfo& c : ceiling_catalog()) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-18s %-9s %s %s\n", std::string(c.name).c_str(), std::string(c.unit).c_str(),
                  c.quick ? "Q" : " ", std::string(c.label).c_str());
    footer += line;
  }
  footer += "Exit codes: 0 done, 3 no usable GPU, 4 a result check failed, 2 bad option, 1 other failure.";
  sub->footer(footer);
  return sub;
}

int run_peak(const PeakOptions& o) {
  try {
    return run(o);
  } catch (const peak::NoGpuError& e) {
    std::cerr << kPrefix << "error: " << e.what() << "\n";
    return 3;
  } catch (const std::invalid_argument& e) {  // --format, --reference
    std::cerr << kPrefix << "error: " << e.what() << "\n";
    return 2;
  } catch (const store::ProfileError& e) {  // --json not writable
    std::cerr << kPrefix << "error: " << e.what() << "\n";
    return 2;
  } catch (const store::FileWriteError& e) {  // an output that exists (without -f) or cannot be written
    std::cerr << kPrefix << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << kPrefix << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gpuscope::cli
