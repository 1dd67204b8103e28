#include "cli/tracer_calibration.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <regex>
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
constexpr int kRunsPerVariant = 2;
constexpr std::int64_t kCacheSeconds = 7 * 24 * 3600;
constexpr const char* kNoTorchMethod = "no PyTorch";

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

// One child run of `argv` (writing its samples to `out`, its last argument); false (with *why)
// when it did not produce samples. *exit_code: the child's exit status (-1: did not start).
bool run_child(std::vector<std::string> argv, const std::vector<std::pair<std::string, std::string>>& env,
               const fs::path& out, Samples* s, std::string* why, int* exit_code = nullptr) {
  LaunchSpec spec;
  argv.push_back(out.string());
  spec.argv = std::move(argv);
  spec.env = env;
  spec.kill_after = std::chrono::seconds(60);
  const LaunchResult r = launch_and_wait(spec);
  if (exit_code != nullptr) *exit_code = r.started ? r.shell_exit_code() : -1;
  if (r.shell_exit_code() != 0 || !read_samples(out, s)) {
    *why = "the calibration program " + (r.started ? r.describe() : std::string("did not start"));
    return false;
  }
  return true;
}

std::optional<std::vector<std::string>> self_child(std::string* why) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    *why = "cannot find the gpuscope executable (/proc/self/exe)";
    return std::nullopt;
  }
  return std::vector<std::string>{self.string(), "__calibrate-child"};
}

// The environments of the untraced and the traced children: no collector even if the user's
// environment names one; the trace's collector settings, logs into `logs`.
std::pair<std::vector<std::pair<std::string, std::string>>, std::vector<std::pair<std::string, std::string>>>
child_envs(const std::vector<std::pair<std::string, std::string>>& collector_env, const fs::path& inject,
           const fs::path& logs) {
  std::vector<std::pair<std::string, std::string>> plain{{"CUDA_INJECTION64_PATH", ""}, {"GPUSCOPE_LOG_DIR", ""}};
  std::vector<std::pair<std::string, std::string>> traced{{"CUDA_INJECTION64_PATH", inject.string()},
                                                          {"GPUSCOPE_LOG_DIR", logs.string()}};
  for (const auto& kv : collector_env) traced.push_back(kv);
  return {plain, traced};
}

std::string cache_key(const std::vector<std::pair<std::string, std::string>>& collector_env, std::string key) {
  key += "|" + std::string(kVersion) + "|" + host_name();
  for (const auto& [k, v] : collector_env) key += "|" + k + "=" + v;
  return key;
}

fs::path cache_file(const std::string& stem, const std::string& key) {
  const fs::path dir = cache_dir();
  return dir.empty() ? fs::path() : dir / (stem + "-" + std::to_string(fnv1a(key)) + ".txt");
}

std::string now_text() {
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", std::localtime(&now));
  return when;
}

// A private temporary folder, removed with its contents when the holder goes.
struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/gpuscope-calibrate-XXXXXX";
    if (::mkdtemp(tmpl) != nullptr) path = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// The PyTorch child (torch_launch_child_code): exit status when torch or a GPU is missing.
constexpr int kNoTorch = 77;

// Times the same blocks as __calibrate-child, with one PyTorch operator a launch (x.add_(1) on 32
// elements: the dispatcher, the caching allocator's stream and PyTorch's own cudaLaunchKernel),
// after 300 ms of warm-up, and writes one "launch NS" line a block to argv[1]; the API samples
// repeat them (read_samples wants both kinds). Exit 77 without torch or a GPU.
constexpr const char* kTorchChild = R"PY(import sys, time
try:
    import torch
    assert torch.cuda.is_available()
except Exception:
    sys.exit(77)
x = torch.zeros(32, device="cuda")
end = time.perf_counter() + 0.3
while time.perf_counter() < end:
    for _ in range(100):
        x.add_(1)
torch.cuda.synchronize()
lines = []
for _ in range(30):
    t0 = time.perf_counter_ns()
    for _ in range(200):
        x.add_(1)
    ns = (time.perf_counter_ns() - t0) / 200
    torch.cuda.synchronize()
    lines += ["launch %.1f" % ns, "api %.1f" % ns]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
print(torch.__version__)
)PY";

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
  const fs::path cache = cache_file("tracer-cost", cache_key(collector_env, ""));
  if (use_cache && !cache.empty())
    if (auto c = read_cache(cache)) return c;
  std::cerr << "gpuscope: measuring gpuscope's own cost per CUDA call on this machine (about 3 s, once a week; "
               "gpuscope trace --calibrate=never skips it)\n";
  const auto child = self_child(why);
  if (!child) return std::nullopt;
  const TempDir tmp;
  if (tmp.path.empty()) {
    *why = "cannot create a temporary directory";
    return std::nullopt;
  }
  const auto [plain, traced] = child_envs(collector_env, inject, tmp.path / "logs");
  std::error_code ec;
  fs::create_directories(tmp.path / "logs", ec);

  Samples untraced, with;
  bool ok = true;
  for (int i = 0; i < kRunsPerVariant && ok; ++i) {
    ok = run_child(*child, plain, tmp.path / ("plain" + std::to_string(i)), &untraced, why) &&
         run_child(*child, traced, tmp.path / ("traced" + std::to_string(i)), &with, why);
  }
  if (!ok) return std::nullopt;
  const auto launch = core::tracer_cost_per_call(untraced.launch, with.launch);
  const auto api = core::tracer_cost_per_call(untraced.api, with.api);
  if (!launch || !api) {
    *why = "the calibration program wrote unusable timings";
    return std::nullopt;
  }
  TracerCost c;
  c.launch_ns = *launch;
  c.api_ns = *api;
  std::ostringstream m;
  m.precision(0);
  m << std::fixed << "calibrated " << now_text() << " on " << host_name() << ": " << kRunsPerVariant * kBlocks
    << " blocks of " << kCallsPerBlock << " <<<1,1>>> launches (and cudaEventRecord calls) with and without the "
    << "collector, difference of the fastest blocks (" << *std::min_element(with.launch.begin(), with.launch.end())
    << " - " << *std::min_element(untraced.launch.begin(), untraced.launch.end()) << " ns per launch)";
  c.method = m.str();
  if (!cache.empty()) write_cache(cache, c);
  return c;
}

namespace {

bool python_name(const std::string& name) {
  static const std::regex kPython(R"(python[0-9.]*)");
  return std::regex_match(name, kPython);
}

}  // namespace

std::optional<fs::path> python_interpreter(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::nullopt;
  const auto program = find_executable(argv[0], nullptr);
  if (!program) return std::nullopt;
  if (python_name(fs::path(*program).filename().string())) return fs::path(*program);
  std::ifstream in(*program, std::ios::binary);
  std::string line;
  if (!std::getline(in, line) || line.rfind("#!", 0) != 0) return std::nullopt;
  std::istringstream words(line.substr(2));
  std::string interpreter, first;
  words >> interpreter >> first;
  if (fs::path(interpreter).filename() == "env") {
    while (first.rfind('-', 0) == 0 && words >> first) {  // env -S python3, env -i ...
    }
    interpreter = first;
  }
  if (interpreter.empty() || !python_name(fs::path(interpreter).filename().string())) return std::nullopt;
  if (const auto found = find_executable(interpreter, nullptr)) return fs::path(*found);
  return std::nullopt;
}

std::optional<TracerCost> calibrate_torch_launch(const fs::path& python,
                                                 const std::vector<std::pair<std::string, std::string>>& collector_env,
                                                 const fs::path& inject, bool use_cache, std::string* why) {
  std::error_code ec;
  const auto mtime = fs::last_write_time(python, ec);
  const fs::path cache = cache_file(
      "torch-launch-cost",
      cache_key(collector_env, python.string() + "|" + std::to_string(ec ? 0 : mtime.time_since_epoch().count())));
  if (use_cache && !cache.empty())
    if (auto c = read_cache(cache)) {
      if (c->method.rfind(kNoTorchMethod, 0) == 0) {
        *why = c->method;
        return std::nullopt;
      }
      return c;
    }
  const TempDir tmp;
  if (tmp.path.empty()) {
    *why = "cannot create a temporary directory";
    return std::nullopt;
  }
  const auto [plain, traced] = child_envs(collector_env, inject, tmp.path / "logs");
  fs::create_directories(tmp.path / "logs", ec);
  const std::vector<std::string> argv{python.string(), "-c", kTorchChild};
  Samples untraced, with;
  int status = 0;
  if (!run_child(argv, plain, tmp.path / "plain0", &untraced, why, &status)) {
    if (status == kNoTorch) {  // not a PyTorch interpreter: remembered, so later runs pay nothing
      TracerCost none;
      none.method = std::string(kNoTorchMethod) + " (" + python.string() + " cannot import torch or sees no GPU)";
      *why = none.method;
      if (!cache.empty()) write_cache(cache, none);
    }
    return std::nullopt;
  }
  std::cerr << "gpuscope: measuring what tracing adds to a PyTorch kernel launch with " << python.string()
            << " (about 15 s, once a week; gpuscope trace --calibrate=never skips it)\n";
  bool ok = run_child(argv, traced, tmp.path / "traced0", &with, why);
  for (int i = 1; i < kRunsPerVariant && ok; ++i) {
    ok = run_child(argv, plain, tmp.path / ("plain" + std::to_string(i)), &untraced, why) &&
         run_child(argv, traced, tmp.path / ("traced" + std::to_string(i)), &with, why);
  }
  if (!ok) return std::nullopt;
  const auto launch = core::tracer_cost_per_call(untraced.launch, with.launch);
  if (!launch) {
    *why = "the PyTorch calibration wrote unusable timings";
    return std::nullopt;
  }
  TracerCost c;
  c.launch_ns = *launch;
  std::ostringstream m;
  m.precision(0);
  m << std::fixed << "calibrated " << now_text() << " on " << host_name() << " with " << python.string() << ": "
    << kRunsPerVariant * kBlocks << " blocks of " << kCallsPerBlock
    << " PyTorch x.add_(1) calls (one kernel launch each) with and without the collector, difference of the "
    << "fastest blocks (" << *std::min_element(with.launch.begin(), with.launch.end()) << " - "
    << *std::min_element(untraced.launch.begin(), untraced.launch.end()) << " ns per launch)";
  c.method = m.str();
  if (!cache.empty()) write_cache(cache, c);
  return c;
}

}  // namespace gpuscope::cli
