#include "collect/collector_config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <initializer_list>
#include <iterator>
#include <utility>

namespace gpuscope::collect {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The non-empty, trimmed items of a comma list.
std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    if (!item.empty()) items.emplace_back(item);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return items;
}

std::string invalid(std::string_view name, std::string_view value, std::string_view expected) {
  std::string msg;
  msg.append("invalid ").append(name).append("='").append(value).append("' (expected ");
  msg.append(expected).append("); using the default");
  return msg;
}

// Reads an unsigned option within [lo, hi]; keeps *out on a bad value.
void read_u64(getenv_fn getenv, const char* name, std::uint64_t lo, std::uint64_t hi, std::uint64_t* out,
              std::vector<std::string>* warnings) {
  const char* raw = getenv(name);
  if (raw == nullptr || *raw == '\0') return;
  std::uint64_t v = 0;
  if (!parse_u64(trim(raw), &v) || v < lo || v > hi) {
    warnings->push_back(invalid(name, raw, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"));
    return;
  }
  *out = v;
}

// Reads an option that is one of `choices` (case-insensitive); keeps *out on a bad value.
template <class T>
void read_choice(getenv_fn getenv, const char* name, std::initializer_list<std::pair<std::string_view, T>> choices,
                 T* out, std::vector<std::string>* warnings) {
  const char* raw = getenv(name);
  if (raw == nullptr || *raw == '\0') return;
  const std::string v = lower(trim(raw));
  for (const auto& [text, value] : choices) {
    if (lower(text) == v) {
      *out = value;
      return;
    }
  }
  std::string expected;  // "a, b or c"
  std::size_t i = 0;
  for (const auto& choice : choices) {
    if (i > 0) expected += i + 1 == choices.size() ? " or " : ", ";
    expected += choice.first;
    ++i;
  }
  warnings->push_back(invalid(name, raw, expected));
}

void read_bool(getenv_fn getenv, const char* name, bool* out, std::vector<std::string>* warnings) {
  const char* raw = getenv(name);
  if (raw == nullptr || *raw == '\0') return;
  if (!parse_bool(trim(raw), out)) warnings->push_back(invalid(name, raw, "0 or 1"));
}

}  // namespace

bool parse_u64(std::string_view text, std::uint64_t* out) {
  if (text.empty()) return false;
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return false;
  *out = v;
  return true;
}

bool parse_bool(std::string_view text, bool* out) {
  const std::string v = lower(text);
  if (v == "1" || v == "true" || v == "yes" || v == "on") {
    *out = true;
    return true;
  }
  if (v == "0" || v == "false" || v == "no" || v == "off") {
    *out = false;
    return true;
  }
  return false;
}

void split_nvtx_capture(std::string_view spec, std::string* message, std::string* domain) {
  const auto at = spec.rfind('@');
  if (at == std::string_view::npos) {
    *message = std::string(spec);
    domain->clear();
    return;
  }
  *message = std::string(spec.substr(0, at));
  *domain = std::string(spec.substr(at + 1));
}

namespace {

constexpr std::uint64_t kMax = ~std::uint64_t{0} / 4;  // leaves room for launch + delay + duration

// GPUSCOPE_LOG_DIR and what is recorded: sources, CUDA record kinds, API calls, buffers.
void read_sources(getenv_fn getenv, CollectorConfig& c, std::vector<std::string>* warnings) {
  if (const char* dir = getenv("GPUSCOPE_LOG_DIR"); dir != nullptr && *dir != '\0') {
    if (dir[0] != '/') {
      warnings->push_back(invalid("GPUSCOPE_LOG_DIR", dir, "an absolute directory") + " (collector disabled)");
    } else {
      c.log_dir = dir;
      while (c.log_dir.size() > 1 && c.log_dir.back() == '/') c.log_dir.pop_back();
    }
  }

  if (const char* raw = getenv("GPUSCOPE_TRACE"); raw != nullptr && *raw != '\0') {
    bool cuda = false, nvtx = false, any = false;
    for (const std::string& item : split_list(raw)) {
      const std::string token = lower(item);
      if (token == "cuda") {
        cuda = any = true;
      } else if (token == "nvtx") {
        nvtx = any = true;
      } else {
        warnings->push_back("unknown GPUSCOPE_TRACE source '" + token + "' ignored (known: cuda, nvtx)");
      }
    }
    if (any) {
      c.trace_cuda = cuda;
      c.trace_nvtx = nvtx;
    } else {
      warnings->push_back(invalid("GPUSCOPE_TRACE", raw, "a list of cuda,nvtx"));
    }
  }

  read_bool(getenv, "GPUSCOPE_POLLING_CALLS", &c.polling_calls, warnings);

  if (const char* raw = getenv("GPUSCOPE_CUDA_RECORDS"); raw != nullptr && *raw != '\0') {
    static constexpr std::pair<std::string_view, CudaRecord> kNames[] = {
        {"kernel", kRecordKernel}, {"memcpy", kRecordMemcpy},     {"memcpy_peer", kRecordMemcpyPeer},
        {"memset", kRecordMemset}, {"runtime", kRecordRuntime},   {"driver", kRecordDriver},
        {"sync", kRecordSync},     {"overhead", kRecordOverhead}, {"memory", kRecordMemory}};
    std::uint32_t bits = 0;
    bool bad = false;
    for (const std::string& item : split_list(raw)) {
      const std::string token = lower(item);
      const auto it =
          std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& n) { return n.first == token; });
      if (it == std::end(kNames) && token != "none") {
        warnings->push_back(
            "unknown GPUSCOPE_CUDA_RECORDS kind '" + token +
            "' ignored (known: kernel, memcpy, memcpy_peer, memset, runtime, driver, sync, overhead, memory, none)");
        bad = true;
      } else if (it != std::end(kNames)) {
        bits |= it->second;
      }
    }
    if (!bad || bits != 0) c.cuda_records = bits;
  }
  read_choice<ApiCalls>(getenv, "GPUSCOPE_API_CALLS", {{"gpu", ApiCalls::kGpu}, {"all", ApiCalls::kAll}}, &c.api_calls,
                        warnings);
  read_choice<PythonCallsites>(
      getenv, "GPUSCOPE_PYTHON_CALLSITES",
      {{"sync", PythonCallsites::kSync}, {"all", PythonCallsites::kAll}, {"none", PythonCallsites::kNone}},
      &c.python_callsites, warnings);
  read_bool(getenv, "GPUSCOPE_PYTHON_CALLSITES_DEFAULT", &c.python_callsites_by_default, warnings);
  std::uint64_t sampling_hz = c.python_sampling_hz;
  read_u64(getenv, "GPUSCOPE_PYTHON_SAMPLING", 0, kMaxPythonSamplingHz, &sampling_hz, warnings);
  c.python_sampling_hz = static_cast<std::uint32_t>(sampling_hz);
  read_bool(getenv, "GPUSCOPE_ZERO_BUFFERS", &c.zero_buffers, warnings);
  read_bool(getenv, "GPUSCOPE_TSC", &c.tsc, warnings);
  read_choice<bool>(getenv, "GPUSCOPE_THREAD_ID_TYPE", {{"system", true}, {"default", false}}, &c.system_thread_ids,
                    warnings);
}

// When: the capture range (cudaProfilerApi, nvtx, session) and the time gate.
void read_capture(getenv_fn getenv, CollectorConfig& c, std::vector<std::string>* warnings) {
  read_choice<CaptureRange>(getenv, "GPUSCOPE_CAPTURE_RANGE",
                            {{"none", CaptureRange::kNone},
                             {"cudaProfilerApi", CaptureRange::kCudaProfilerApi},
                             {"nvtx", CaptureRange::kNvtx},
                             {"session", CaptureRange::kSession}},
                            &c.capture_range, warnings);
  if (const char* raw = getenv("GPUSCOPE_SESSION_DIR"); raw != nullptr) c.session_dir = raw;
  if (c.capture_range == CaptureRange::kSession && c.session_dir.empty()) {
    warnings->push_back(
        "GPUSCOPE_CAPTURE_RANGE=session needs GPUSCOPE_SESSION_DIR (set by gpuscope launch); recording "
        "from the start instead");
    c.capture_range = CaptureRange::kNone;
  }

  if (const char* raw = getenv("GPUSCOPE_NVTX_CAPTURE"); raw != nullptr && *raw != '\0') {
    split_nvtx_capture(raw, &c.nvtx_capture_message, &c.nvtx_capture_domain);
  }
  if (c.capture_range == CaptureRange::kNvtx && c.nvtx_capture_message.empty()) {
    warnings->push_back(
        "GPUSCOPE_CAPTURE_RANGE=nvtx needs GPUSCOPE_NVTX_CAPTURE=NAME[@DOMAIN]; recording "
        "from the start instead");
    c.capture_range = CaptureRange::kNone;
  }

  read_choice<CaptureEnd>(getenv, "GPUSCOPE_CAPTURE_RANGE_END",
                          {{"stop", CaptureEnd::kStop}, {"repeat", CaptureEnd::kRepeat}}, &c.capture_end, warnings);
  if (c.capture_range == CaptureRange::kSession) c.capture_end = CaptureEnd::kRepeat;  // start/stop, again and again

  read_u64(getenv, "GPUSCOPE_LAUNCH_REALTIME_NS", 0, kMax, &c.launch_realtime_ns, warnings);
  read_u64(getenv, "GPUSCOPE_DELAY_NS", 0, kMax, &c.delay_ns, warnings);
  read_u64(getenv, "GPUSCOPE_DURATION_NS", 0, kMax, &c.duration_ns, warnings);
}

// Kernels mode (gpuscope kernels): metrics, launch filters, replay.
void read_kernels_mode(getenv_fn getenv, CollectorConfig& c, std::vector<std::string>* warnings) {
  if (const char* raw = getenv("GPUSCOPE_KERNEL_METRICS"); raw != nullptr && *raw != '\0') {
    for (std::string& m : split_list(raw)) {
      if (std::find(c.kernel_metrics.begin(), c.kernel_metrics.end(), m) == c.kernel_metrics.end())
        c.kernel_metrics.push_back(std::move(m));
    }
  }
  if (const char* raw = getenv("GPUSCOPE_KERNEL_SET"); raw != nullptr && *raw != '\0') c.kernel_set = raw;
  if (const char* raw = getenv("GPUSCOPE_KERNEL_REGEX"); raw != nullptr) c.kernel_regex = raw;
  read_u64(getenv, "GPUSCOPE_LAUNCH_SKIP", 0, kMax, &c.launch_skip, warnings);
  read_u64(getenv, "GPUSCOPE_LAUNCH_COUNT", 0, kMax, &c.launch_count, warnings);
  read_u64(getenv, "GPUSCOPE_KERNEL_BATCH", 1, 4096, &c.kernel_batch, warnings);
  read_u64(getenv, "GPUSCOPE_MEMORY_DUTY_MS", 0, 3'600'000, &c.memory_duty_ms, warnings);
  if (const char* raw = getenv("GPUSCOPE_KERNEL_REPLAY"); raw != nullptr && *raw != '\0') {
    const std::string_view v = raw;
    if (v == "none" || v == "kernel") {
      c.kernel_replay = v == "kernel";
    } else {
      warnings->push_back("GPUSCOPE_KERNEL_REPLAY='" + std::string(v) +
                          "' is not kernel or none; using the default (kernel)");
    }
  }
  const auto choice = [&](const char* name, std::string_view yes, std::string_view no, bool* out) {
    const char* raw = getenv(name);
    if (raw == nullptr || *raw == '\0') return;
    const std::string_view v = raw;
    if (v == yes || v == no) {
      *out = v == yes;
    } else {
      warnings->push_back(std::string(name) + "='" + std::string(v) + "' is not " + std::string(yes) + " or " +
                          std::string(no) + "; using the default");
    }
  };
  choice("GPUSCOPE_CACHE_CONTROL", "all", "none", &c.cache_control_all);
  read_choice<RangeReplay>(getenv, "GPUSCOPE_RANGE_REPLAY",
                           {{"user", RangeReplay::kUser},
                            {"application", RangeReplay::kApplication},
                            {"userrange", RangeReplay::kUserRange}},
                           &c.range_replay, warnings);
  if (const char* raw = getenv("GPUSCOPE_NVTX_INCLUDE"); raw != nullptr && *raw != '\0') {
    split_nvtx_capture(raw, &c.nvtx_include_message, &c.nvtx_include_domain);
  }
}

}  // namespace

CollectorConfig parse_collector_config(getenv_fn getenv, std::vector<std::string>* warnings) {
  CollectorConfig c;
  read_sources(getenv, c, warnings);
  read_capture(getenv, c, warnings);
  std::uint64_t period = c.flush_period_ms;
  read_u64(getenv, "GPUSCOPE_FLUSH_PERIOD_MS", 1, 60000, &period, warnings);
  c.flush_period_ms = static_cast<std::uint32_t>(period);

  read_u64(getenv, "GPUSCOPE_BUFFER_BYTES", 64u << 10, 256u << 20, &c.buffer_bytes, warnings);
  c.buffer_bytes = (c.buffer_bytes + 7) & ~std::uint64_t{7};

  read_bool(getenv, "GPUSCOPE_VERBOSE", &c.verbose, warnings);
  read_kernels_mode(getenv, c, warnings);
  return c;
}

}  // namespace gpuscope::collect
