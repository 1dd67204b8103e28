#include "cli/monitor_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "cli/monitor_record.hpp"
#include "cli/monitor_screen.hpp"
#include "cli/monitor_source.hpp"
#include "cli/option_checks.hpp"
#include "render/monitor_view.hpp"

namespace gpuscope::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string command_line(const MonitorOptions& o) {
  std::string c = "gpuscope monitor";
  if (!o.record.empty()) c += " --record " + o.record;
  return c;
}

// Refresh intervals the + and - keys step through.
constexpr double kIntervals[] = {0.1, 0.25, 0.5, 1, 2, 5};

double step_interval(double now, int direction) {
  const auto* at = std::min_element(std::begin(kIntervals), std::end(kIntervals),
                                    [&](double a, double b) { return std::abs(a - now) < std::abs(b - now); });
  const auto i = std::clamp<std::ptrdiff_t>(at - std::begin(kIntervals) + direction, 0, std::size(kIntervals) - 1);
  return kIntervals[i];
}

}  // namespace

CLI::App* add_monitor_command(CLI::App& app, MonitorOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "monitor",
      "What the GPUs are really doing, live: SM, warp and tensor-core activity from the GPUs' own counters (not "
      "NVML's 'utilization', which counts any kernel running as 100 %), DRAM, PCIe, NVLink, clock, power, "
      "temperature, memory and processes");
  sub->footer(
      "Keys: q quit, p pause, + / - refresh slower / faster, g next GPU (0-9 one GPU, a all).\n"
      "Not on a terminal (a pipe, a log) it prints one line per GPU per refresh.\n"
      "  gpuscope monitor                      watch every GPU\n"
      "  gpuscope monitor --once --format json one sample for a script\n"
      "  gpuscope monitor --record run.sqlite  keep the samples: gpuscope stats run.sqlite -r gpu_metrics_sum\n"
      "SM active = share of the SMs that have work; NVML util = share of time any kernel ran: a one-block kernel\n"
      "reads 100 % NVML util and under 1 % SM active. Exit codes: 0 done, 2 no GPU, 1 other errors. docs/monitor.md");
  real_option(sub->add_option("-i,--interval", o.interval_s, "Refresh interval in seconds")->capture_default_str(),
              {.min = 0.1, .max = 5, .example = "0.5"}, "SECONDS");
  real_option(sub->add_option("--sample-rate", o.sample_rate_hz,
                              "Counter sampling rate in Hz (each refresh averages its samples)")
                  ->capture_default_str(),
              {.min = 10, .max = 10000, .example = "100"}, "HZ");
  sub->add_flag("--once", o.once, "One refresh interval's sample, then exit");
  real_option(sub->add_option("--duration", o.duration_s, "Run this many seconds, then exit (0 = until q or Ctrl-C)"),
              {.min = 0, .max = 1e6, .example = "10"}, "SECONDS");
  sub->add_option("--format", o.format,
                  "text (the screen on a terminal, else lines) or json (one document of every sample at exit, base "
                  "units: bytes/s, Hz, W, °C, bytes, %)")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_option("--record", o.record,
                  "Also save the samples as a trace FILE (gpu_metrics tables, processes) for stats, report, export");
  sub->add_flag("--plain", o.plain, "Lines, even on a terminal");
  sub->add_flag("--no-counters", o.no_counters, "NVML readings only: leave the GPUs' counters to another tool");
  count_option(sub->add_option("--gpu", o.gpu, "Show only this GPU (its index)"),
               {.min = 0, .max = 63, .example = "0"});
  sub->add_option("--replay", o.replay,
                  "Show a recording made with --format json instead of the GPUs (one frame per refresh)")
      ->check(CLI::ExistingFile);
  return sub;
}

int run_monitor(const MonitorOptions& o) {
  std::unique_ptr<MonitorSource> source;
  if (!o.replay.empty()) {
    source = open_replay_source(o.replay);
  } else {
    try {
      source = open_gpu_source(GpuSourceOptions{o.sample_rate_hz, !o.no_counters});
    } catch (const NoGpuError& e) {
      std::cerr << "gpuscope monitor: " << e.what() << "\n";
      return kMonitorNoGpuExit;
    }
  }
  core::MonitorModel model(source->gpus());
  render::MonitorViewState state;
  state.interval_s = o.interval_s;
  state.notes = source->notes();
  if (o.gpu >= 0) {
    if (static_cast<std::size_t>(o.gpu) >= model.gpus().size())
      throw std::runtime_error("--gpu " + std::to_string(o.gpu) + ": there are " + std::to_string(model.gpus().size()) +
                               " GPU(s), numbered from 0");
    state.selected_gpu = o.gpu;
  }
  std::optional<MonitorRecorder> recorder;
  if (!o.record.empty()) recorder.emplace(o.record, model.gpus(), o.interval_s, command_line(o));

  const bool json = o.format == "json";
  const bool screen_mode = !json && !o.plain && !o.once && ::isatty(STDOUT_FILENO) && ::isatty(STDIN_FILENO);
  const double duration = o.once ? o.interval_s : o.duration_s;
  if (!screen_mode && !json) {
    for (const std::string& n : state.notes) std::cout << "note: " << n << "\n";
    std::cout << std::flush;
  }
  catch_stop_signals();
  std::unique_ptr<MonitorScreen> screen;
  if (screen_mode) {
    std::setlocale(LC_ALL, "");
    screen = std::make_unique<MonitorScreen>();
  }
  std::vector<core::MonitorFrame> frames;  // json
  const Clock::time_point t0 = Clock::now();
  std::uint64_t frame_start_ns = realtime_ns();
  double next_s = o.interval_s;
  bool ended = false;  // a recording ran out
  while (g_stop == 0) {
    // Wait for the next refresh, reading keys meanwhile.
    bool redraw = false;
    for (double now = seconds_since(t0); now < next_s && g_stop == 0; now = seconds_since(t0)) {
      const int wait_ms = std::max(1, static_cast<int>((next_s - now) * 1000));
      if (!screen) {
        std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
        continue;
      }
      const int k = screen->key(wait_ms);
      if (k == 'q' || k == 'Q') g_stop = 1;
      if (k == 'p' || k == 'P' || k == ' ') state.paused = !state.paused;
      if (k == '+' || k == '=') state.interval_s = step_interval(state.interval_s, +1);
      if (k == '-' || k == '_') state.interval_s = step_interval(state.interval_s, -1);
      if (k == 'g' || k == 'G') {
        state.selected_gpu =
            state.selected_gpu + 1 >= static_cast<int>(model.gpus().size()) ? -1 : state.selected_gpu + 1;
      }
      if (k == 'a' || k == 'A') state.selected_gpu = -1;
      if (k >= '0' && k <= '9' && k - '0' < static_cast<int>(model.gpus().size())) state.selected_gpu = k - '0';
      if (k != -1) redraw = true;
      if (redraw) screen->draw(render::monitor_screen(model, state, screen->width(), screen->height()));
    }
    if (g_stop != 0) break;
    const double now = seconds_since(t0);
    next_s = now + state.interval_s;
    if (!ended) {
      std::optional<core::MonitorFrame> frame = source->frame(now);
      const std::uint64_t end_ns = realtime_ns();
      if (!frame) {
        ended = true;
        state.notes.push_back("the recording ended: q quits");
        if (!screen) break;
      } else {
        if (recorder) recorder->add(*frame, frame_start_ns, end_ns);
        frame_start_ns = end_ns;
        if (json) frames.push_back(*frame);
        if (!screen && !json) {
          for (const std::string& line : render::monitor_lines(model, *frame)) std::cout << line << "\n";
          std::cout << std::flush;
        }
        model.push(std::move(*frame));
      }
    }
    if (screen && !state.paused) screen->draw(render::monitor_screen(model, state, screen->width(), screen->height()));
    if (duration > 0 && seconds_since(t0) >= duration - 1e-3) break;
  }
  screen.reset();
  if (json) render::write_monitor_json(std::cout, model, frames, state.notes);
  if (recorder) std::cerr << recorder->finish() << "\n";
  return 0;
}

}  // namespace gpuscope::cli
