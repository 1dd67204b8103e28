// Fuzzes the bench result readers (store/bench_result_json.hpp): the JSON file `gpuscope
// bench -o` writes and `bench report` / `bench compare` read, and the CSV of its cases.
// The input is written as a file and read with read_bench_run(), and read as CSV with
// read_bench_csv(). A run that reads goes where `bench report` and `bench compare` take
// it: the sweep analysis, the cases, sweep and compare reports in every format
// (render/report_render.hpp), the sweep chart (cli/bench_chart.hpp, render/bench_sweep_svg.hpp),
// and its CSV and JSON written and read back (what the writers write, the readers must
// take). Documented: store::BenchResultError (and BenchResultVersionError) from the
// readers, std::invalid_argument from the chart when no series has a point to draw.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/bench/bench_analysis.hpp"
#include "analyze/bench/bench_reports.hpp"
#include "cli/bench_chart.hpp"
#include "core/utf8.hpp"
#include "fuzz_support.hpp"
#include "render/bench_sweep_svg.hpp"
#include "render/report_render.hpp"
#include "store/bench_result_json.hpp"

namespace {

using namespace gpuscope;

void check_text(const char* what, const std::string& text) {
  if (!core::valid_utf8(text)) fuzz::finding(what, "output is not valid UTF-8");
}

void render_all(const std::vector<Report>& reports) {
  for (const render::Format f :
       {render::Format::kTable, render::Format::kCsv, render::Format::kJson, render::Format::kMarkdown}) {
    std::ostringstream out;
    render::render(reports, f, out);
    check_text("bench report", out.str());
    if (f == render::Format::kJson && !nlohmann::json::accept(out.str())) {
      fuzz::finding("bench report json", "output is not valid JSON");
    }
  }
}

// What `bench report` and `bench compare` do with a run that was read.
void use_run(const BenchRun& run) {
  const std::vector<analyze::SweepAnalysis> sweeps = analyze::analyze_sweeps(run);
  const analyze::CompareResult same = analyze::compare(run, run);
  render_all(
      {analyze::bench_cases_report(run), analyze::bench_sweep_report(sweeps), analyze::bench_compare_report(same)});
  try {
    std::ostringstream svg;
    render::write_bench_sweep_svg(cli::sweep_chart_input(run, sweeps).input, svg);
    check_text("bench sweep svg", svg.str());
  } catch (const std::invalid_argument& e) {
    fuzz::documented(e);  // nothing to draw
  }

  std::ostringstream csv;
  store::write_bench_csv(run, csv);
  std::istringstream csv_in(csv.str());
  if (store::read_bench_csv(csv_in, "<written>").size() != run.cases.size()) {
    fuzz::finding("bench csv round trip", "a different number of cases");
  }
  const nlohmann::ordered_json written = store::bench_run_to_json(run);
  if (store::bench_run_to_json(store::bench_run_from_json(written, "<written>")) != written) {
    fuzz::finding("bench json round trip", "differs after write + read");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path path = fuzz::scratch_dir() / "bench.json";
  fuzz::write_bytes(path, data, size);
  try {
    const BenchRun run = store::read_bench_run(path);
    try {
      use_run(run);
    } catch (const std::exception& e) {
      fuzz::finding("a bench run that was read", e.what());
    }
  } catch (const store::BenchResultError& e) {
    fuzz::documented(e);
  } catch (const std::exception& e) {
    fuzz::undocumented(e);
  }

  try {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    (void)store::read_bench_csv(in, "bench.csv");
  } catch (const store::BenchResultError& e) {
    fuzz::documented(e);
  } catch (const std::exception& e) {
    fuzz::undocumented(e);
  }
  return 0;
}
