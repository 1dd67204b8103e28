#include "cli/tracer_calibration.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <sstream>

#include "cli/launcher.hpp"
#include "core/tracer_cost.hpp"
#include "core/version.hpp"
#include "peak/kernels.hpp"
#include "store/atomic_file.hpp"
#include "store/input_file.hpp"
#include "store/private_dir.hpp"

namespace gpuscope::cli {
namespace fs = std::filesystem;
namespace {

constexpr int kBlocks = 30;
constexpr int kCallsPerBlock = 200;
constexpr int kRunsPerVariant = 5;  // pairs of processes (core/tracer_cost.hpp)
constexpr std::int64_t kCacheSeconds = 7 * 24 * 3600;

using Clock = std::chrono::steady_clock;

double ns_per_call(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::nano>(b - a).count() / kCallsPerBlock;
}

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::cerr << "gpuscope __calibrate-child: " << what << ": " << cudaGetErrorString(e) << "\n";
  return false;
}

struct Samples {
  std::vector<double> launch, api;
};

// The child's samples and the cache: regular files only (store/input_file.hpp); a missing or
// special file reads as empty.
std::istringstream read_text(const fs::path& file) {
  std::string error;
  return std::istringstream(store::read_input_file(file, "tracer calibration", error).value_or(""));
}

bool read_samples(const fs::path& file, Samples* s) {
  std::istringstream in = read_text(file);
  std::string kind;
  double v = 0;
  while (in >> kind >> v) (kind == "launch" ? s->launch : s->api).push_back(v);
  return !s->launch.empty() && !s->api.empty();
}

// FNV-1a: a cache file name that is the same from run to run.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

fs::path cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x == '/') return fs::path(x) / "gpuscope";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h == '/') return fs::path(h) / ".cache" / "gpuscope";
  return {};
}

std::optional<TracerCost> read_cache(const fs::path& file) {
  std::istringstream in = read_text(file);
  std::int64_t when = 0;
  TracerCost c;
  if (!(in >> when >> c.launch_ns >> c.api_ns) || std::time(nullptr) - when > kCacheSeconds) return std::nullopt;
  std::getline(in >> std::ws, c.method);
  return c;
}

// A cache: the newest measurement replaces the old one; failing to save it costs a rerun.
void write_cache(const fs::path& file, const TracerCost& c) {
  std::error_code ec;
  (void)store::create_directories_0700(file.parent_path(), ec);  // new folders 0700 (store/private_dir.hpp)
  std::ostringstream text;
  text << std::time(nullptr) << " " << c.launch_ns << " " << c.api_ns << "\n" << c.method << "\n";
  try {
    store::write_file_atomically(file, store::Overwrite::kReplace, text.str());
  } catch (const store::FileWriteError&) {
  }
}

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "unknown";
  return host;
}

// One child run; false (with *why) when it did not produce samples.
bool run_child(const std::vector<std::pair<std::string, std::string>>& env, const fs::path& out, Samples* s,
               std::string* why) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    *why = "cannot find the gpuscope executable (/proc/self/exe)";
    return false;
  }
  LaunchSpec spec;
  spec.argv = {self.string(), "__calibrate-child", out.string()};
  spec.env = env;
  spec.kill_after = std::chrono::seconds(60);
  const LaunchResult r = launch_and_wait(spec);
  if (r.shell_exit_code() != 0 || !read_samples(out, s)) {
    *why = "the calibration program " + (r.started ? r.describe() : std::string("did not start"));
    return false;
  }
  return true;
}

}  // namespace

int run_calibrate_child(const std::string& out_path) {
  std::uint32_t* counter = nullptr;
  cudaEvent_t event = nullptr;
  if (!cuda_ok(cudaMalloc(reinterpret_cast<void**>(&counter), sizeof *counter), "cudaMalloc") ||
      !cuda_ok(cudaMemset(counter, 0, sizeof *counter), "cudaMemset") ||
      !cuda_ok(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate"))
    return 2;
  std::ostringstream out;
  try {
    const auto warm_end = Clock::now() + std::chrono::milliseconds(200);
    while (Clock::now() < warm_end)
      for (int i = 0; i < 100; ++i) peak::detail::launch_count(counter, nullptr);
    if (!cuda_ok(cudaDeviceSynchronize(), "warm-up")) return 2;
    for (int b = 0; b < kBlocks; ++b) {
      const auto t0 = Clock::now();
      for (int i = 0; i < kCallsPerBlock; ++i) peak::detail::launch_count(counter, nullptr);
      out << "launch " << ns_per_call(t0, Clock::now()) << "\n";
      if (!cuda_ok(cudaDeviceSynchronize(), "launch block")) return 2;
    }
    for (int b = 0; b < kBlocks; ++b) {
      const auto t0 = Clock::now();
      for (int i = 0; i < kCallsPerBlock; ++i) (void)cudaEventRecord(event, nullptr);
      out << "api " << ns_per_call(t0, Clock::now()) << "\n";
      if (!cuda_ok(cudaDeviceSynchronize(), "event block")) return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "gpuscope __calibrate-child: " << e.what() << "\n";
    return 2;
  }
  (void)cudaEventDestroy(event);
  (void)cudaFree(counter);
  try {
    store::write_file_atomically(out_path, store::Overwrite::kReplace, out.str());  // in the parent's private folder
  } catch (const store::FileWriteError& e) {
    std::cerr << "gpuscope __calibrate-child: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

std::optional<TracerCost> calibrate_tracer(const std::vector<std::pair<std::string, std::string>>& collector_env,
                                           const fs::path& inject, bool use_cache, std::string* why) {
  // The statistic is part of the key: a cost cached by an older one is measured again.
  std::string key = std::string(kVersion) + "|paired-median-of-run-minima|" + host_name();
  for (const auto& [k, v] : collector_env) key += "|" + k + "=" + v;
  const fs::path dir = cache_dir();
  const fs::path cache = dir.empty() ? fs::path() : dir / ("tracer-cost-" + std::to_string(fnv1a(key)) + ".txt");
  if (use_cache && !cache.empty())
    if (auto c = read_cache(cache)) return c;
  std::cerr << "gpuscope: measuring gpuscope's own cost per CUDA call on this machine (about 10 s, once a week; "
               "gpuscope trace --calibrate=never skips it)\n";

  std::error_code ec;
  char tmpl[] = "/tmp/gpuscope-calibrate-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    *why = "cannot create a temporary directory";
    return std::nullopt;
  }
  const fs::path tmp(tmpl);
  // Untraced: no collector even if the user's environment names one.
  const std::vector<std::pair<std::string, std::string>> plain{{"CUDA_INJECTION64_PATH", ""}, {"GPUSCOPE_LOG_DIR", ""}};
  std::vector<std::pair<std::string, std::string>> traced{{"CUDA_INJECTION64_PATH", inject.string()},
                                                          {"GPUSCOPE_LOG_DIR", (tmp / "logs").string()}};
  for (const auto& kv : collector_env) traced.push_back(kv);
  fs::create_directories(tmp / "logs", ec);

  std::vector<Samples> untraced(kRunsPerVariant), with(kRunsPerVariant);
  bool ok = true;
  // Pair i: an untraced and a traced process one after the other, which one first alternating,
  // so that a machine speeding up or slowing down steadily does not favour one side.
  for (int i = 0; i < kRunsPerVariant && ok; ++i) {
    const auto plain_run = [&] { return run_child(plain, tmp / ("plain" + std::to_string(i)), &untraced[i], why); };
    const auto traced_run = [&] { return run_child(traced, tmp / ("traced" + std::to_string(i)), &with[i], why); };
    ok = i % 2 == 0 ? plain_run() && traced_run() : traced_run() && plain_run();
  }
  fs::remove_all(tmp, ec);
  if (!ok) return std::nullopt;
  const auto runs = [](const std::vector<Samples>& v, std::vector<double> Samples::*kind) {
    std::vector<std::vector<double>> out;
    for (const Samples& s : v) out.push_back(s.*kind);
    return out;
  };
  const auto launch_untraced = runs(untraced, &Samples::launch), launch_traced = runs(with, &Samples::launch);
  const auto launch = core::tracer_cost_per_call(launch_untraced, launch_traced);
  const auto api = core::tracer_cost_per_call(runs(untraced, &Samples::api), runs(with, &Samples::api));
  if (!launch || !api) {
    *why = "the calibration program wrote unusable timings";
    return std::nullopt;
  }
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", std::localtime(&now));
  TracerCost c;
  c.launch_ns = *launch;
  c.api_ns = *api;
  const auto joined = [](const std::optional<std::vector<double>>& ns) {  // "a, b, c", whole ns
    std::string text;
    for (const double v : ns.value_or(std::vector<double>{}))
      text += (text.empty() ? "" : ", ") + std::to_string(std::llround(v));
    return text;
  };
  const std::string pairs = joined(core::paired_run_minima_differences(launch_untraced, launch_traced));
  std::ostringstream m;
  m << "calibrated " << when << " on " << host_name() << ": " << kRunsPerVariant
    << " pairs of processes (untraced and traced, one after the other), each of " << kBlocks << " blocks of "
    << kCallsPerBlock << " <<<1,1>>> launches (and cudaEventRecord calls); median over the pairs of the traced "
    << "process's fastest block minus its partner's (" << pairs << " ns per launch; fastest blocks traced "
    << joined(core::run_minima(launch_traced)) << ", untraced " << joined(core::run_minima(launch_untraced)) << " ns)";
  c.method = m.str();
  if (!cache.empty()) write_cache(cache, c);
  return c;
}

}  // namespace gpuscope::cli
