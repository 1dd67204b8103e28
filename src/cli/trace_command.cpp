#include "cli/trace_command.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "analyze/nsys/trace_summary.hpp"
#include "cli/collect_run.hpp"
#include "cli/option_checks.hpp"
#include "cli/output_files.hpp"
#include "cli/session_command.hpp"
#include "cli/tracer_calibration.hpp"
#include "collect/collector_config.hpp"
#include "collect/pm_sampler.hpp"
#include "core/units.hpp"
#include "render/report_render.hpp"
#include "store/database.hpp"

namespace gpuscope::cli {
namespace {

constexpr const char* kDefaultGpuMetricsRate = "10k";
// The Python hooks every trace gets (GPUSCOPE_PYTORCH; --pytorch=none leaves them out).
constexpr std::string_view kDefaultPythonHooks = "steps,generate";

// --python-sampling's value (checked by the option) in Hz; 0 when off.
std::uint64_t python_sampling_hz(const std::string& value) {
  double hz = 0;
  return !value.empty() && collect::parse_sampling_rate(value, &hz) ? static_cast<std::uint64_t>(hz) : 0;
}

// "a,b,c" -> {"a", "b", "c"} ("" -> {""}): the items of a comma-separated option value.
std::vector<std::string_view> comma_items(std::string_view v) {
  std::vector<std::string_view> items;
  for (std::size_t b = 0;;) {
    const std::size_t e = std::min(v.find(',', b), v.size());
    items.push_back(v.substr(b, e - b));
    if (e == v.size()) return items;
    b = e + 1;
  }
}

int fail(const std::string& what, const std::string& todo) { return cli_fail("trace", what, todo); }

// The collector's default GPUSCOPE_CUDA_RECORDS, from its one option table.
std::string default_cuda_records() {
  for (const collect::ConfigOption& opt : collect::kConfigOptions)
    if (opt.name == "GPUSCOPE_CUDA_RECORDS") return std::string(opt.default_value);
  return {};
}

// --delay and --duration: at most 10^6 s (11.6 days), so delay + duration in ns stays far
// inside 64 bits; a bare number is seconds (core/option_values.hpp refuses nan, inf, < 0).
const core::DurationLimits kSeconds{0, 1'000'000'000'000'000, 1'000'000'000, "30s or 250ms"};

// The tracer's cost per call on this machine (tracer_calibration.hpp) into the trace's
// meta table, or why it is unknown; run by collect_run after its checks. The calibration
// traces from the start (no capture range, delay or duration): only the settings that
// change the per-call cost go along.
void add_tracer_cost(const TraceOptions& o, CollectRunSpec& spec) {
  auto& meta = spec.import.extra_meta;
  const auto unknown = [&](const std::string& why) {
    meta.emplace_back("tracer_cost_method", "not calibrated: " + why);
  };
  if (o.calibrate == "never") return unknown("--calibrate=never");
  if (o.trace.find("cuda") == std::string::npos) return unknown("CUDA tracing off (--trace)");
  if (std::getenv("GPUSCOPE_SKIP_DRIVER_CHECK") != nullptr) return unknown("GPUSCOPE_SKIP_DRIVER_CHECK is set");
  const auto inject = find_inject_library();  // collect_run checked it and the driver before calling this
  if (!inject) return unknown("no collector library");
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& kv : spec.env)
    if (kv.first == "GPUSCOPE_TRACE" || kv.first == "GPUSCOPE_API_CALLS" || kv.first == "GPUSCOPE_POLLING_CALLS" ||
        kv.first == "GPUSCOPE_FLUSH_PERIOD_MS" || kv.first == "GPUSCOPE_CUDA_RECORDS")
      env.push_back(kv);
  for (const char* name : {"GPUSCOPE_CUDA_RECORDS", "GPUSCOPE_ZERO_BUFFERS", "GPUSCOPE_BUFFER_BYTES"})
    if (const char* v = std::getenv(name)) env.emplace_back(name, v);  // set by the user: part of the key
  std::string why;
  const auto cost = calibrate_tracer(env, *inject, o.calibrate == "auto", &why);
  if (!cost) {
    std::cerr << "gpuscope trace: warning: gpuscope's own cost per CUDA call is unknown (" << why
              << "); launch analyses will include it\n";
    return unknown(why);
  }
  std::cerr << "gpuscope trace: tracing adds about " << static_cast<long long>(cost->launch_ns + 0.5)
            << " ns per kernel launch and " << static_cast<long long>(cost->api_ns + 0.5)
            << " ns per other recorded CUDA call on this machine (" << cost->method << ")\n";
  meta.emplace_back("tracer_launch_cost_ns", std::to_string(cost->launch_ns));
  meta.emplace_back("tracer_api_cost_ns", std::to_string(cost->api_ns));
  meta.emplace_back("tracer_cost_method", cost->method);
}

}  // namespace

CLI::App* add_trace_command(CLI::App& app, TraceOptions& o, const std::string& name) {
  const bool launch = name == "launch";
  CLI::App* sub = app.add_subcommand(
      name, launch ? "Run a command with the collector loaded but not recording, for capture windows opened and\n"
                     "closed from another shell: gpuscope start NAME / gpuscope stop NAME (as nsys launch). Until\n"
                     "the first start the program runs with no CUDA callback or kernel record (about the cost of\n"
                     "no tracing); the trace NAME.sqlite, with each window, is written when it ends; each stop also\n"
                     "writes the windows so far as NAME.wK.sqlite. Takes trace's options.\n"
                     "Example: gpuscope launch --session server -- python3 serve.py   then, elsewhere:\n"
                     "         gpuscope start server --duration 10s ; gpuscope summary server.w1.sqlite"
                   : "Run a command with the collector injected and record its GPU timeline into NAME.sqlite.\n"
                     "Works on any unmodified CUDA program: a C++ binary, `python3 train.py` with PyTorch/Triton.\n"
                     "Records kernels, memcpy/memset, CUDA runtime+driver API calls, synchronization and NVTX\n"
                     "ranges of the command and of its child processes (allocations with --cuda-memory-usage),\n"
                     "then prints a short summary.\n"
                     "Example: gpuscope trace -o cnn --capture-range=cudaProfilerApi -- python3 train.py");
  if (launch) {
    sub->add_option("--session", o.session,
                    "Session name for gpuscope start / stop / sessions (letters, digits, . _ -); also the\n"
                    "default trace name")
        ->required();
  }
  sub->add_option("-o,--output", o.output,
                  "Trace name: writes NAME.sqlite (default gpuscope-<date>-<time>). %h is the host name,\n"
                  "%p gpuscope's pid, %q{VAR} an environment variable, %% a %: one trace per node or task,\n"
                  "e.g. srun gpuscope trace -o 'run.%h.%q{SLURM_PROCID}' -- ... (join them with gpuscope merge)");
  add_force_overwrite_flag(*sub, o.force_overwrite)
      ->description(
          "Replace NAME.sqlite if it exists (and discard NAME.logs/ left by an interrupted run).\n"
          "Without it gpuscope keeps an existing trace and runs nothing; with it the old trace is\n"
          "replaced only once the new one is complete. Two runs with the same -o at once: the second\n"
          "refuses at start (NAME.sqlite.lock; a lock left by a killed gpuscope is taken over)");
  sub->add_option("-t,--trace", o.trace,
                  "Sources to record, comma-separated: cuda (kernels, memcpy, memset, runtime and\n"
                  "driver API, synchronization), nvtx (NVTX ranges and marks)")
      ->capture_default_str();
  sub->add_option("-c,--capture-range", o.capture_range,
                  "What starts recording: none (whole run), cudaProfilerApi (between\n"
                  "cudaProfilerStart/Stop, e.g. torch.cuda.profiler.start/stop), nvtx (inside the\n"
                  "NVTX range given by --nvtx-capture)")
      ->check(CLI::IsMember({"none", "cudaProfilerApi", "nvtx"}))
      ->capture_default_str();
  sub->add_option("-p,--nvtx-capture", o.nvtx_capture,
                  "NVTX range that opens the capture with --capture-range=nvtx: RANGE or RANGE@DOMAIN");
  sub->add_option("--capture-range-end", o.capture_range_end,
                  "After the first capture range closes: stop (record nothing more) or repeat\n"
                  "(every range opens a new window)")
      ->check(CLI::IsMember({"stop", "repeat"}))
      ->capture_default_str();
  duration_ns_option(sub->add_option("-y,--delay", o.delay_ns, "Start recording this long after launch (30 = 30s)"),
                     kSeconds);
  duration_ns_option(
      sub->add_option("-d,--duration", o.duration_ns,
                      "Record this long (after --delay; 0 = to the end), then end the target with --kill"),
      kSeconds);
  sub->add_option("--kill", o.kill, "Signal sent to the target when --duration ends: sigterm, sigkill, none")
      ->check(CLI::IsMember({"sigterm", "sigkill", "none"}))
      ->capture_default_str();
  sub->add_option("--cuda-api", o.cuda_api,
                  "Which CUDA API calls get a record. gpu: the calls that put work on the GPU, move\n"
                  "or allocate memory, or wait (launches, memcpy, memset, synchronize, event record,\n"
                  "stream wait, malloc/free, graph launch), timed by gpuscope's own callbacks: every\n"
                  "kernel keeps its launch call. all: every runtime and driver call but the polling\n"
                  "ones, as nsys -t cuda, through CUPTI's API activity records; costs about 1-5 us\n"
                  "more per launch on H100 (CUPTI then also intercepts the driver calls each runtime\n"
                  "call makes; docs/performance.md)")
      ->check(CLI::IsMember({"gpu", "all"}))
      ->capture_default_str();
  sub->add_option("--python-callsites", o.python_callsites,
                  "In a Python program (CPython 3.11-3.13; C++ programs are unchanged): the calling\n"
                  "thread's Python stack at CUDA calls, read without the GIL (api_calls.py_stack_id;\n"
                  "tables py_stacks, py_frames). sync: synchronize calls, copies, memsets,\n"
                  "allocations and frees (the default: no cost measured on a resnet18 step, -1.5 %,\n"
                  "within the noise; docs/performance.md); all: also every launch (+3.5 % on a loop\n"
                  "of small launches); none: no stacks (the default with --cuda-api=all, --pytorch=none\n"
                  "or -t without nvtx). Needs --cuda-api=gpu")
      ->check(CLI::IsMember({"sync", "all", "none"}))
      ->default_str("sync");
  sub->add_option("--python-sampling", o.python_sampling,
                  "In a Python program (CPython 3.11-3.13): sample every Python thread's stack RATE\n"
                  "times a second (RATE in Hz, 10 to 10k; --python-sampling alone: 1000), read by a\n"
                  "thread of gpuscope's without the GIL, into py_samples (stacks in py_stacks), from\n"
                  "the program's first CUDA call on. stats -r py_sum: where the Python threads spent\n"
                  "their time; stats -r gpu_idle_py: which Python lines ran while the GPU sat idle.\n"
                  "Example: --python-sampling=500. Needs --cuda-api=gpu. Without the option,\n"
                  "GPUSCOPE_PYTHON_SAMPLING=RATE in the environment does the same")
      ->expected(0, 1)
      ->default_str("1000")
      ->type_name("[RATE]")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            double hz = 0;
            return collect::parse_sampling_rate(v, &hz) && hz <= static_cast<double>(collect::kMaxPythonSamplingHz)
                       ? ""
                       : "'" + v + "' is not a sampling rate from 10 Hz to 10 kHz (e.g. 1000, 500, 2k)";
          },
          "RATE"));
  sub->add_flag("--cuda-sync-records", o.sync_records,
                "Also record CUPTI synchronization records (the syncs table: event and stream waits as\n"
                "the driver saw them). Off by default: on H100 they cost about 5 us per PyTorch op\n"
                "(docs/performance.md); the synchronizing API calls are recorded either way");
  sub->add_flag("--cuda-memory-usage", o.memory_usage,
                "Also record every allocation and free of GPU memory (cudaMalloc, cuMemAlloc,\n"
                "cudaMallocAsync and pools; CUPTI memory records) into memory_events, with the\n"
                "memory in use after each: stats -r cuda_memory gives the peak per GPU (when, which\n"
                "call) and per step or NVTX range; export draws it as a counter. PyTorch's caching\n"
                "allocator shows as the segments it takes, not tensors; in a Python program that\n"
                "imports torch, gpuscope's hooks also save the allocator's segments and counters at\n"
                "exit, so the report tells PyTorch's memory from other libraries' (--pytorch=memory\n"
                "adds the allocator's every event). Off by default: it adds\n"
                "CUPTI work to every allocation call. Recorded from the start even with a capture\n"
                "range (memory in use needs every allocation); rows are kept inside the range");
  sub->add_option("--gpu-metrics", o.gpu_metrics,
                  "Also sample each GPU's hardware counters over time (CUPTI PM sampling, as nsys\n"
                  "--gpu-metrics-device): SM active, warps active (achieved occupancy), tensor-core\n"
                  "and FP32/FP64 pipe activity, DRAM read/write and L2 bytes, PCIe and NVLink bytes,\n"
                  "SM clock, into gpu_metrics. RATE in Hz, 10 to 20k (default 10k = one sample every 100 us,\n"
                  "as nsys; above about 15k the launcher cannot decode samples as fast as they come on\n"
                  "H100, and the ones lost are reported):\n"
                  "stats -r gpu_metrics_sum gives each kernel its sampled SM/tensor activity and\n"
                  "DRAM GB/s, top and gpu_util show them, export draws them as counters. The counters\n"
                  "are the whole GPU's (every process on it). Needs counter access (not restricted to\n"
                  "admins) and no other counter user (ncu, DCGM); without them the trace goes on\n"
                  "without metrics")
      ->expected(0, 1)
      ->default_str(kDefaultGpuMetricsRate)
      ->type_name("[RATE]")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            double hz = 0;
            return collect::parse_sampling_rate(v, &hz)
                       ? ""
                       : "'" + v + "' is not a sampling rate from 10 Hz to 20 kHz (e.g. 10k, 5000, 2kHz)";
          },
          "RATE"));
  sub->add_option("--calibrate", o.calibrate,
                  "Measure what tracing costs per CUDA call on this machine, so launch_overhead, gpu_util\n"
                  "and top can tell the program's launch time from gpuscope's: auto (once a week, cached,\n"
                  "about 10 s), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  sub->add_flag("--cuda-polling-calls", o.polling_calls,
                "Also record the polling calls muted by default (cudaGetDevice, cudaEventQuery,\n"
                "cudaStreamQuery, cuCtxGetCurrent, ...)");
  count_option(sub->add_option("--flush-period", o.flush_period_ms,
                               "Milliseconds between flushes of the event log; a crash loses at most about this much")
                   ->capture_default_str(),
               core::CountLimits{10, 60000, "200"}, "MS");
  sub->add_flag("--keep-logs", o.keep_logs, "Keep the per-process event logs (NAME.logs/) after import");
  sub->add_flag("-q,--quiet", o.quiet, "Do not print the summary at the end");
  count_option(sub->add_option("--top", o.top, "Kernels in the summary; 0 = all")->capture_default_str(),
               core::CountLimits{0, kMaxInt, "10"});
  sub->add_option("--pytorch", o.pytorch,
                  "PyTorch's view, with no change to the script (Python programs; child processes and\n"
                  "torchrun workers too). By default, once the program imports torch, every\n"
                  "optimizer.step() marks a training step (one Python call and one NVTX mark per step),\n"
                  "and once it imports transformers' generation code, each generate() call is a range,\n"
                  "where llm_sum's TTFT starts (docs/llm.md); nothing is imported or initialised for\n"
                  "them. none: neither (docs/pytorch.md). Add: ops (every operator call, backward\n"
                  "calls tied to their forward operator), modules (every nn.Module forward with its path,\n"
                  "e.g. layer1.0.conv1), or ops,modules; ,shapes for operators' input shapes (costs\n"
                  "more); memory: every event of PyTorch's caching allocator (tensors allocated and freed,\n"
                  "segments taken and released; 804 events per resnet18 step, a cost within the\n"
                  "+-3 % noise of one process, docs/performance.md), for stats -r cuda_memory. Needs\n"
                  "-t nvtx (the default; without it the default hooks are left out); docs/pytorch.md")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const std::vector<std::string_view> items = comma_items(v);
            const auto has = [&](std::string_view w) {
              return std::find(items.begin(), items.end(), w) != items.end();
            };
            if (has("none"))
              return items.size() == 1 ? "" : "none turns every hook off: name it alone (--pytorch=none)";
            for (std::string_view w : items)
              if (w != "ops" && w != "modules" && w != "shapes" && w != "memory")
                return "'" + std::string(w) +
                       "' is not ops, modules, memory, shapes or none (e.g. --pytorch=ops,modules)";
            if (has("shapes") && !has("ops")) return "shapes goes with ops (e.g. --pytorch=ops,shapes)";
            return has("ops") || has("modules") || has("memory")
                       ? ""
                       : "name ops, modules, memory or several (e.g. --pytorch=ops,modules), or none";
          },
          "none|ops|modules|memory|ops,modules[,shapes][,memory]"));
  sub->add_option("command", o.command, "The command to run, after --")->required();
  sub->positionals_at_end();
  return sub;
}

int run_trace(TraceOptions o) {
  const bool session = !o.session.empty();
  if (session && (o.capture_range != "none" || o.delay_ns != 0 || o.duration_ns != 0))
    return cli_fail("launch", "--capture-range, --delay and --duration do not apply to a session",
                    "a session records between gpuscope start and gpuscope stop (start --duration N stops after N s)");
  if (o.capture_range == "nvtx" && o.nvtx_capture.empty())
    return fail("--capture-range=nvtx needs --nvtx-capture=RANGE", "name the NVTX range, e.g. -p 'step 5'");
  if (!o.nvtx_capture.empty() && o.capture_range != "nvtx")
    return fail("--nvtx-capture needs --capture-range=nvtx", "");
  for (std::string_view s : comma_items(o.trace))
    if (s != "cuda" && s != "nvtx")
      return fail("unknown --trace source '" + std::string(s) + "'", "use cuda, nvtx or cuda,nvtx");

  CollectRunSpec spec;
  spec.tool = session ? "launch" : "trace";
  spec.output = session && o.output.empty() ? o.session : o.output;
  spec.force_overwrite = o.force_overwrite;
  spec.keep_logs = o.keep_logs;
  spec.nvtx = o.trace.find("nvtx") != std::string::npos;
  // --python-callsites left out: sync where gpuscope's Python hooks run (their atexit flush resolves
  // the last frames); none with --pytorch=none or without -t nvtx (no hooks asked for) and with
  // --cuda-api=all (the collector takes no stacks then).
  const bool callsites_asked = !o.python_callsites.empty();
  const bool callsites_off = o.cuda_api == "all" || o.pytorch == "none" || !spec.nvtx;
  const std::string callsites = callsites_asked ? o.python_callsites : callsites_off ? "none" : "sync";
  spec.command = o.command;
  spec.env = {
      {"GPUSCOPE_TRACE", o.trace},
      {"GPUSCOPE_CAPTURE_RANGE", o.capture_range},
      {"GPUSCOPE_NVTX_CAPTURE", o.nvtx_capture},
      {"GPUSCOPE_CAPTURE_RANGE_END", o.capture_range_end},
      {"GPUSCOPE_DELAY_NS", std::to_string(o.delay_ns)},
      {"GPUSCOPE_DURATION_NS", std::to_string(o.duration_ns)},
      {"GPUSCOPE_POLLING_CALLS", o.polling_calls ? "1" : "0"},
      {"GPUSCOPE_API_CALLS", o.cuda_api},
      {"GPUSCOPE_PYTHON_CALLSITES", callsites},
      {"GPUSCOPE_PYTHON_CALLSITES_DEFAULT", callsites_asked ? "0" : "1"},
      {"GPUSCOPE_FLUSH_PERIOD_MS", std::to_string(o.flush_period_ms)},
  };
  // gpuscope's Python hooks (collect/python/sitecustomize.py): the default ones (training steps,
  // generate() calls) on every traced command unless --pytorch=none, and what --pytorch adds.
  const bool hooks_off = o.pytorch == "none";
  if (!hooks_off && !o.pytorch.empty() && !spec.nvtx)
    return fail("--pytorch records through NVTX, which -t " + o.trace + " leaves out",
                "use -t cuda,nvtx (the default)");
  const std::string pytorch_hooks =
      hooks_off || !spec.nvtx ? "" : std::string(kDefaultPythonHooks) + (o.pytorch.empty() ? "" : "," + o.pytorch);
  if (!pytorch_hooks.empty()) {
    spec.env.emplace_back("GPUSCOPE_PYTORCH", pytorch_hooks);
    spec.pytorch_hooks = true;
    spec.pytorch_hooks_asked = !o.pytorch.empty();
  }
  // Python stacks are taken by the collector set up with its own API callbacks (--cuda-api=gpu).
  if (o.cuda_api == "all" && ((callsites_asked && callsites != "none") || !o.python_sampling.empty()))
    return fail(std::string(o.python_sampling.empty() ? "--python-callsites" : "--python-sampling") +
                    " needs --cuda-api=gpu (the default): with --cuda-api=all the collector takes no Python stacks",
                "leave out --cuda-api=all, or trace twice");
  // --python-callsites and --python-sampling need the hooks' atexit flush (frames resolved before
  // Python finalizes), even with --pytorch=none.
  if (callsites != "none" || !o.python_sampling.empty()) spec.pytorch_hooks = true;
  // Without the option the program's own GPUSCOPE_PYTHON_SAMPLING applies (scripts/gpu-run runs the
  // GPU tests with sampling on that way).
  if (!o.python_sampling.empty()) {
    const std::string hz = std::to_string(python_sampling_hz(o.python_sampling));
    spec.env.emplace_back("GPUSCOPE_PYTHON_SAMPLING", hz);
    spec.import.extra_meta.emplace_back("python_sampling_hz", hz);
  }
  // PyTorch's allocator state at exit (segments: which cudaMalloc calls are PyTorch's) with
  // --cuda-memory-usage, and its event history with --pytorch=memory (collect/python/sitecustomize.py).
  const std::vector<std::string_view> pytorch_items = comma_items(o.pytorch);
  const bool torch_history = std::ranges::find(pytorch_items, std::string_view("memory")) != pytorch_items.end();
  if (o.memory_usage || torch_history) {
    spec.env.emplace_back("GPUSCOPE_TORCH_MEMORY", torch_history ? "segments,history" : "segments");
    spec.pytorch_hooks = true;
    spec.pytorch_hooks_asked = true;
  }
  if (o.sync_records || o.memory_usage) {
    spec.env.emplace_back("GPUSCOPE_CUDA_RECORDS",
                          default_cuda_records() + (o.sync_records ? ",sync" : "") + (o.memory_usage ? ",memory" : ""));
  }
  spec.after_checks = [&o](CollectRunSpec& s) { add_tracer_cost(o, s); };
  if (o.duration_ns > 0 && o.kill != "none") {
    spec.kill_after = std::chrono::nanoseconds(o.delay_ns + o.duration_ns);  // <= 2 x 10^15 ns
    spec.kill_signal = o.kill == "sigkill" ? SIGKILL : SIGTERM;
  }
  std::filesystem::path session_folder;
  if (session) {
    session_folder = claim_session_dir(o.session);
    if (session_folder.empty()) return 1;
    for (auto& kv : spec.env)
      if (kv.first == "GPUSCOPE_CAPTURE_RANGE") kv.second = "session";
    spec.env.emplace_back("GPUSCOPE_SESSION_DIR", session_folder.string());
    spec.import.capture_range = "session";
  }
  spec.import.trace_sources = o.trace;
  if (!session) spec.import.capture_range = o.capture_range == "nvtx" ? "nvtx:" + o.nvtx_capture : o.capture_range;
  spec.import.extra_meta.emplace_back("cuda_api_calls", o.cuda_api);
  if (o.memory_usage) spec.import.extra_meta.emplace_back("cuda_memory_usage", "1");
  spec.import.extra_meta.emplace_back("pytorch", pytorch_hooks.empty() ? "none" : pytorch_hooks);

  collect::PmSampler sampler;
  if (!o.gpu_metrics.empty()) {
    double hz = 0;
    (void)collect::parse_sampling_rate(o.gpu_metrics, &hz);  // checked by the option
    spec.import.extra_meta.emplace_back("gpu_metrics_rate_hz", std::to_string(static_cast<long long>(hz)));
    spec.before_launch = [&sampler, &o, hz](const std::filesystem::path& log_dir) {
      collect::PmSamplerOptions so;
      so.interval_ns = static_cast<std::uint64_t>(1e9 / hz);
      if (const char* duty = std::getenv("GPUSCOPE_GPU_METRICS_DUTY_MS"))  // validation/duty_cost.py
        so.duty_ms = static_cast<std::uint32_t>(std::strtoul(duty, nullptr, 10));
      so.verbose = std::getenv("GPUSCOPE_VERBOSE") != nullptr && std::string(std::getenv("GPUSCOPE_VERBOSE")) == "1";
      std::vector<std::string> messages;
      const std::string path =
          (log_dir / (std::string(collect::kGpuMetricsLogPrefix) + std::to_string(::getpid()) + ".gslog")).string();
      const std::size_t n = sampler.start(path, so, &messages);
      for (const std::string& m : messages) std::cerr << "gpuscope trace: " << (n == 0 ? "warning: " : "") << m << "\n";
      if (n > 0 && !o.quiet)
        std::cerr << "gpuscope trace: sampling GPU metrics on " << n << " GPU(s) every "
                  << units::duration_ns(static_cast<double>(so.interval_ns)) << "\n";
    };
    spec.after_exit = [&sampler] {
      std::vector<std::string> messages;
      sampler.stop(&messages);
      for (const std::string& m : messages) std::cerr << "gpuscope trace: warning: " << m << "\n";
    };
  }

  if (session) {  // the session's facts, once the logs folder exists (before the program starts)
    auto sampler_start = std::move(spec.before_launch);
    spec.before_launch = [&, sampler_start](const std::filesystem::path& log_dir) {
      if (sampler_start) sampler_start(log_dir);
      SessionInfo info;
      info.name = o.session;
      info.launcher_pid = ::getpid();
      std::string out = spec.output;
      if (!out.ends_with(".sqlite")) out += ".sqlite";
      info.output = std::filesystem::absolute(out).string();
      info.log_dir = std::filesystem::absolute(log_dir).string();
      for (const std::string& a : o.command) info.command += (info.command.empty() ? "" : " ") + a;
      info.started = units::utc_now_iso8601();
      if (const store::PrivateStatus st = write_session_info(session_folder, info); !st.ok())
        std::cerr << "gpuscope launch: warning: " << st.message << ": gpuscope start/stop will not find this session\n";
      else
        std::cerr << "gpuscope launch: session " << o.session << " ready, not recording: from another shell run\n"
                  << "  gpuscope start " << o.session << "   and   gpuscope stop " << o.session << "\n";
    };
  }
  const CollectRunResult res = collect_run(spec);
  if (session) {
    std::error_code ec;
    std::filesystem::remove_all(session_folder, ec);
  }
  if (!res.have_db) return res.exit_code;

  if (!o.quiet) {
    try {
      store::Database db(res.db_path.string(), store::Database::Mode::kReadOnly);
      for (const Report& rep : analyze::trace_summary(db, o.top == 0 ? static_cast<int>(kMaxInt) : o.top)) {
        render::render(rep, render::Format::kTable, std::cerr);
        std::cerr << "\n";
      }
    } catch (const std::exception& e) {
      std::cerr << "gpuscope " << spec.tool << ": warning: summary failed: " << e.what() << "\n";
    }
  }
  std::cerr << "gpuscope " << spec.tool << ": wrote " << res.db_path.string() << "  (the target " << res.run.describe()
            << ")\n";
  return res.exit_code;
}

}  // namespace gpuscope::cli
