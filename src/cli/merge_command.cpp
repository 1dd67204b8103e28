#include "cli/merge_command.hpp"

#include <iostream>
#include <optional>

#include "cli/collect_run.hpp"
#include "cli/output_files.hpp"
#include "store/output_lock.hpp"
#include "store/trace_merge.hpp"

namespace gpuscope::cli {
namespace {

constexpr const char* kTool = "merge";
// Ends of one collective differ across ranks by about a network hop (microseconds); a median
// residual this large means the k-th NCCL kernels were mostly not the same collective.
constexpr std::int64_t kSuspectResidualNs = 100'000;

}  // namespace

CLI::App* add_merge_command(CLI::App& app, MergeOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "merge",
      "Join traces written on different hosts into one job trace, keeping every event.\n"
      "Each node (or, under srun, each task) records its own trace; merge puts them on one clock:\n"
      "hosts' clocks differ, so each trace's offset from the first is estimated from NCCL\n"
      "collectives (the k-th NCCL kernel of every rank ends at nearly the same moment), applied to\n"
      "every timestamp, and stored with the error left after it in the merged_traces table.\n"
      "Pids that two hosts share are renumbered (merged_pids says how).\n"
      "Example, two nodes under Slurm:\n"
      "  srun -N2 --ntasks-per-node=1 gpuscope trace -o 'run.%h' -- torchrun --nproc_per_node=8 train.py\n"
      "  gpuscope merge run.node1.sqlite run.node2.sqlite -o job\n"
      "  gpuscope stats job.sqlite ; gpuscope export job.sqlite");
  sub->add_option("traces", o.traces, "The traces to join (two or more .sqlite files); the first one's clock is kept")
      ->required();
  sub->add_option("-o,--output", o.output, "Job trace name: writes NAME.sqlite")->required();
  add_force_overwrite_flag(*sub, o.force_overwrite)
      ->description(
          "Replace NAME.sqlite if it exists. Without it an existing trace is kept and nothing is\n"
          "merged; with it the old trace is replaced only once the merge has succeeded");
  return sub;
}

int run_merge(const MergeOptions& o) {
  std::string output = o.output;
  if (output.size() > 7 && output.ends_with(".sqlite")) output.resize(output.size() - 7);
  const std::string db_path = output + ".sqlite";
  if (o.traces.size() < 2)
    return cli_fail(kTool, "give two or more traces to merge (got " + std::to_string(o.traces.size()) + ")",
                    "list every host's trace, e.g. gpuscope merge run.node1.sqlite run.node2.sqlite -o job");
  std::optional<store::OutputLock> lock;
  try {
    lock.emplace(db_path);
    check_outputs({db_path}, o.force_overwrite);
  } catch (const store::OutputBusyError& e) {
    return cli_fail(kTool, std::string(e.what()) + "; nothing was merged", kBusyTodo);
  } catch (const store::FileWriteError& e) {
    return cli_fail(kTool, std::string(e.what()) + "; nothing was merged", "");
  }
  store::MergeResult r;
  try {
    r = store::merge_traces(o.traces, db_path, store::overwrite_if(o.force_overwrite));
  } catch (const store::MergeInputError& e) {
    return cli_fail(kTool, std::string(e.what()) + "; nothing was merged",
                    "give the .sqlite traces that `gpuscope trace` wrote on each host, each once, all recorded "
                    "with this gpuscope (see gpuscope merge --help)");
  }
  std::cerr << "gpuscope merge: wrote " << db_path << " from " << r.inputs.size() << " traces\n";
  for (std::size_t i = 0; i < r.inputs.size(); ++i) {
    const store::MergedInput& in = r.inputs[i];
    std::cerr << "  " << i << ": " << in.path << " (" << (in.host.empty() ? "host unknown" : in.host) << ", "
              << in.processes << " processes";
    if (in.renumbered_pids > 0) std::cerr << ", " << in.renumbered_pids << " pids renumbered";
    std::cerr << "): ";
    if (in.method == "reference") {
      std::cerr << "the reference clock\n";
    } else if (in.method == "none") {
      std::cerr << "clock offset unknown (no NCCL kernel on some rank), left at 0\n";
    } else {
      std::cerr << "clock offset " << in.offset.offset_ns << " ns from " << in.offset.matched
                << " collectives; error left: median " << in.offset.residual_median_ns.value_or(0) << " ns, max "
                << in.offset.residual_max_ns.value_or(0) << " ns\n";
    }
  }
  for (const store::MergedInput& in : r.inputs) {
    if (in.offset.residual_median_ns.value_or(0) > kSuspectResidualNs) {
      std::cerr << "gpuscope merge: warning: " << in.path << ": after the offset, the same collective still ends "
                << *in.offset.residual_median_ns / 1000
                << " us apart (median): its k-th NCCL kernels are probably not the first trace's k-th (did the traces "
                   "start at different steps?); record whole runs, or capture the same NVTX range on every host\n";
    }
    if (in.method == "none") {
      std::cerr << "gpuscope merge: warning: " << in.path
                << " has a rank without NCCL kernels, so its clock offset could not be estimated; its times are "
                   "as its host's clock gave them (compare across hosts with care)\n";
    }
  }
  return 0;
}

}  // namespace gpuscope::cli
