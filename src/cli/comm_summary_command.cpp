#include "cli/comm_summary_command.hpp"

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "analyze/comm/comm_summary.hpp"
#include "cli/comm_inputs.hpp"
#include "cli/output_files.hpp"
#include "store/atomic_file.hpp"

namespace gpuscope::cli {

std::string summary_path(const std::string& trace, const std::string& dir) {
  std::filesystem::path p(trace);
  std::string name = p.filename().string();
  if (name.size() > 7 && name.ends_with(".sqlite")) name.resize(name.size() - 7);
  name += ".summary.json";
  return ((dir.empty() ? p.parent_path() : std::filesystem::path(dir)) / name).string();
}

CLI::App* add_comm_summary_command(CLI::App& app, CommSummaryOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "comm-summary",
      "The per-rank half of the many-GPU reports (nccl_sum, comm_overlap, rank_sum, stragglers,\n"
      "collective_trace): reads one trace and writes a small JSON summary of its ranks (step times,\n"
      "each NCCL collective's kind, start, end and size, compute/communication/exposed time per\n"
      "step, its host's clock). `gpuscope stats` over the summaries of every rank is the other half,\n"
      "and gives the same reports as one merged trace, with memory bounded by one rank.\n"
      "Many traces are mapped in parallel (-j); on many machines, run one comm-summary per trace\n"
      "anywhere (recipes/dask_comm.py does it with Dask) and bring the summaries together.\n"
      "Examples:\n"
      "  gpuscope comm-summary run.node1.3.sqlite -o rank3.summary.json\n"
      "  gpuscope comm-summary run.*.sqlite --dir summaries -j 8\n"
      "  gpuscope stats summaries/*.summary.json -r stragglers,rank_sum\n"
      "The format: docs/multi-gpu.md.");
  sub->add_option("traces", o.traces, "Traces (.sqlite), each one rank's, one host's or a whole job's")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--output", o.output, "The summary file (one trace only); default NAME.summary.json beside it");
  sub->add_option("--dir", o.dir, "Write each NAME.summary.json into DIR (created if missing)");
  sub->add_option("-j,--jobs", o.jobs, "Traces mapped at once (default: every core)")->check(CLI::Range(1, 1024));
  add_force_overwrite_flag(*sub, o.force_overwrite);
  return sub;
}

int run_comm_summary(const CommSummaryOptions& o) {
  if (!o.output.empty() && o.traces.size() != 1)
    throw std::invalid_argument("-o names one summary file, but " + std::to_string(o.traces.size()) +
                                " traces were given: use --dir DIR (each trace's NAME.summary.json goes there)");
  if (!o.output.empty() && !o.dir.empty()) throw std::invalid_argument("give -o FILE or --dir DIR, not both");
  std::vector<std::string> outputs;
  for (const std::string& t : o.traces) {
    if (analyze::is_comm_summary_file(t))
      throw std::invalid_argument(t + " is already a summary; comm-summary reads traces (.sqlite)");
    outputs.push_back(o.output.empty() ? summary_path(t, o.dir) : o.output);
  }
  check_outputs(outputs, o.force_overwrite);
  if (!o.dir.empty()) std::filesystem::create_directories(o.dir);
  const int jobs = o.jobs > 0 ? o.jobs : default_map_jobs();
  // Map in batches of `jobs` so that no more than that many summaries are held at once.
  for (std::size_t b = 0; b < o.traces.size(); b += static_cast<std::size_t>(jobs)) {
    const std::size_t e = std::min(o.traces.size(), b + static_cast<std::size_t>(jobs));
    const std::vector<std::string> batch(o.traces.begin() + static_cast<std::ptrdiff_t>(b),
                                         o.traces.begin() + static_cast<std::ptrdiff_t>(e));
    const std::vector<analyze::detail::CommSummary> sums = map_comm_inputs(batch, jobs);
    for (std::size_t i = 0; i < sums.size(); ++i) {
      const std::string text = analyze::comm_summary_json(sums[i]);
      store::write_file_atomically(outputs[b + i], store::overwrite_if(o.force_overwrite), text);
      std::size_t ncalls = 0;
      for (const auto& r : sums[i].ranks) ncalls += r.nccl.size();
      std::cerr << "gpuscope comm-summary: " << outputs[b + i] << ": " << sums[i].ranks.size() << " rank(s), " << ncalls
                << " NCCL kernels, " << text.size() << " bytes\n";
    }
  }
  return 0;
}

}  // namespace gpuscope::cli
