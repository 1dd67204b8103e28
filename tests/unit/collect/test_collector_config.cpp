#include "collect/collector_config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

namespace gpuscope::collect {
namespace {

// getenv_fn is a plain function pointer: tests feed it from a global map.
std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

CollectorConfig parse(std::map<std::string, std::string> env, std::vector<std::string>* w) {
  g_env = std::move(env);
  return parse_collector_config(&fake_getenv, w);
}

TEST(CollectorConfig, DefaultsWhenOnlyLogDirIsSet) {
  std::vector<std::string> w;
  const auto c = parse({{"GPUSCOPE_LOG_DIR", "/tmp/logs/"}}, &w);
  EXPECT_TRUE(w.empty());
  EXPECT_TRUE(c.enabled());
  EXPECT_EQ(c.log_dir, "/tmp/logs");
  EXPECT_TRUE(c.trace_cuda);
  EXPECT_TRUE(c.trace_nvtx);
  EXPECT_FALSE(c.polling_calls);
  EXPECT_EQ(c.capture_range, CaptureRange::kNone);
  EXPECT_EQ(c.capture_end, CaptureEnd::kStop);
  EXPECT_EQ(c.delay_ns, 0u);
  EXPECT_EQ(c.duration_ns, 0u);
  EXPECT_EQ(c.flush_period_ms, 200u);
  EXPECT_EQ(c.buffer_bytes, 4u << 20);
  EXPECT_FALSE(c.verbose);
}

TEST(CollectorConfig, CostlySourcesAreOffByDefault) {
  std::vector<std::string> w;
  const auto c = parse({{"GPUSCOPE_LOG_DIR", "/x"}}, &w);
  EXPECT_EQ(c.api_calls, ApiCalls::kGpu);
  EXPECT_EQ(c.cuda_records & kRecordSync, 0u);    // SYNCHRONIZATION records: opt-in
  EXPECT_EQ(c.cuda_records & kRecordMemory, 0u);  // MEMORY2 + MEMORY_POOL: opt-in (--cuda-memory-usage)
  EXPECT_EQ(c.cuda_records, kAllCudaRecords & ~kRecordSync & ~kRecordMemory);
  EXPECT_TRUE(c.zero_buffers);
  EXPECT_TRUE(c.system_thread_ids);
  EXPECT_TRUE(w.empty());
}

TEST(CollectorConfig, CudaRecordsTableDefaultIsTheParsedDefault) {
  // gpuscope trace --cuda-sync-records appends ",sync" to the table's default text.
  const auto it = std::find_if(kConfigOptions.begin(), kConfigOptions.end(),
                               [](const ConfigOption& o) { return o.name == "GPUSCOPE_CUDA_RECORDS"; });
  ASSERT_NE(it, kConfigOptions.end());
  std::vector<std::string> w;
  const auto c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_CUDA_RECORDS", std::string(it->default_value)}}, &w);
  EXPECT_EQ(c.cuda_records, kDefaultCudaRecords);
  EXPECT_TRUE(w.empty());
}

TEST(CollectorConfig, CudaRecordsList) {
  std::vector<std::string> w;
  auto c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_CUDA_RECORDS", "kernel, Runtime,sync"}}, &w);
  EXPECT_EQ(c.cuda_records, kRecordKernel | kRecordRuntime | kRecordSync);
  EXPECT_TRUE(w.empty());
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_CUDA_RECORDS", "none"}}, &w);
  EXPECT_EQ(c.cuda_records, 0u);
  // gpuscope trace --cuda-memory-usage appends ",memory" to the default (with --cuda-sync-records, ",sync" too).
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"},
             {"GPUSCOPE_CUDA_RECORDS", "kernel,memcpy,memcpy_peer,memset,runtime,driver,overhead,sync,memory"}},
            &w);
  EXPECT_EQ(c.cuda_records, kAllCudaRecords);
  EXPECT_TRUE(w.empty());
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_CUDA_RECORDS", "kernel,bogus"}}, &w);
  EXPECT_EQ(c.cuda_records, kRecordKernel);  // the known kinds are kept, the unknown one named
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("bogus"), std::string::npos);
  w.clear();
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_CUDA_RECORDS", "bogus"}}, &w);
  EXPECT_EQ(c.cuda_records, kDefaultCudaRecords);  // nothing valid: the default stays
  EXPECT_EQ(w.size(), 1u);
}

TEST(CollectorConfig, ApiCallsAndSwitches) {
  std::vector<std::string> w;
  auto c = parse({{"GPUSCOPE_LOG_DIR", "/x"},
                  {"GPUSCOPE_API_CALLS", "all"},
                  {"GPUSCOPE_ZERO_BUFFERS", "0"},
                  {"GPUSCOPE_THREAD_ID_TYPE", "default"}},
                 &w);
  EXPECT_EQ(c.api_calls, ApiCalls::kAll);
  EXPECT_FALSE(c.zero_buffers);
  EXPECT_FALSE(c.system_thread_ids);
  EXPECT_TRUE(w.empty());
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_API_CALLS", "some"}, {"GPUSCOPE_THREAD_ID_TYPE", "x"}}, &w);
  EXPECT_EQ(c.api_calls, ApiCalls::kGpu);
  EXPECT_TRUE(c.system_thread_ids);
  EXPECT_EQ(w.size(), 2u);
}

// Python call sites: none where the variable is unset (gpuscope trace sets sync by default), sync,
// all (they only act in a Python process); a wrong value warns and keeps the default; whether the
// mode was gpuscope trace's default (GPUSCOPE_PYTHON_CALLSITES_DEFAULT).
TEST(CollectorConfig, PythonCallsites) {
  std::vector<std::string> w;
  EXPECT_EQ(parse({{"GPUSCOPE_LOG_DIR", "/x"}}, &w).python_callsites, PythonCallsites::kNone);
  EXPECT_EQ(parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_PYTHON_CALLSITES", "sync"}}, &w).python_callsites,
            PythonCallsites::kSync);
  EXPECT_EQ(parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_PYTHON_CALLSITES", "all"}}, &w).python_callsites,
            PythonCallsites::kAll);
  EXPECT_EQ(parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_PYTHON_CALLSITES", "none"}}, &w).python_callsites,
            PythonCallsites::kNone);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_PYTHON_CALLSITES", "launches"}}, &w).python_callsites,
            PythonCallsites::kNone);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("GPUSCOPE_PYTHON_CALLSITES"), std::string::npos) << w[0];
  w.clear();
  EXPECT_FALSE(parse({{"GPUSCOPE_LOG_DIR", "/x"}}, &w).python_callsites_by_default);
  EXPECT_TRUE(parse({{"GPUSCOPE_LOG_DIR", "/x"},
                     {"GPUSCOPE_PYTHON_CALLSITES", "sync"},
                     {"GPUSCOPE_PYTHON_CALLSITES_DEFAULT", "1"}},
                    &w)
                  .python_callsites_by_default);
  EXPECT_TRUE(w.empty());
}

TEST(CollectorConfig, KernelsModeSessionLength) {
  std::vector<std::string> w;
  auto c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_KERNEL_METRICS", "gpu__time_duration.sum"}}, &w);
  EXPECT_TRUE(c.kernels_mode());
  EXPECT_EQ(c.kernel_batch, 64u);
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_KERNEL_BATCH", "1"}}, &w);
  EXPECT_EQ(c.kernel_batch, 1u);
  EXPECT_TRUE(w.empty());
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_KERNEL_BATCH", "0"}}, &w);
  EXPECT_EQ(c.kernel_batch, 64u);  // out of 1..4096: warning, default
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("GPUSCOPE_KERNEL_BATCH"), std::string::npos);
}

TEST(CollectorConfig, KernelsModeReplayAndCacheControl) {
  std::vector<std::string> w;
  CollectorConfig c = parse({{"GPUSCOPE_LOG_DIR", "/x"}}, &w);
  EXPECT_TRUE(c.kernel_replay);
  EXPECT_FALSE(c.cache_control_all);  // CUPTI's kernel replay unless asked
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_KERNEL_REPLAY", "none"}, {"GPUSCOPE_CACHE_CONTROL", "all"}}, &w);
  EXPECT_FALSE(c.kernel_replay);
  EXPECT_TRUE(c.cache_control_all);
  EXPECT_TRUE(w.empty());
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_CACHE_CONTROL", "some"}}, &w);
  EXPECT_FALSE(c.cache_control_all);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("GPUSCOPE_CACHE_CONTROL='some' is not all or none"), std::string::npos);
  w.clear();
  EXPECT_EQ(c.range_replay, RangeReplay::kUser);  // replay none's pass: CUPTI user replay unless asked
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_RANGE_REPLAY", "application"}}, &w);
  EXPECT_EQ(c.range_replay, RangeReplay::kApplication);
  EXPECT_TRUE(w.empty());
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_RANGE_REPLAY", "userrange"}}, &w);
  EXPECT_EQ(c.range_replay, RangeReplay::kUserRange);
  EXPECT_TRUE(w.empty());
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_RANGE_REPLAY", "kernel"}}, &w);
  EXPECT_EQ(c.range_replay, RangeReplay::kUser);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("invalid GPUSCOPE_RANGE_REPLAY='kernel' (expected user, application or userrange)"),
            std::string::npos);
}

TEST(CollectorConfig, DisabledWithoutLogDirOrWithRelativeDir) {
  std::vector<std::string> w;
  EXPECT_FALSE(parse({}, &w).enabled());
  EXPECT_TRUE(w.empty());
  EXPECT_FALSE(parse({{"GPUSCOPE_LOG_DIR", "relative/dir"}}, &w).enabled());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("GPUSCOPE_LOG_DIR"), std::string::npos);
}

TEST(CollectorConfig, TraceList) {
  std::vector<std::string> w;
  auto c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_TRACE", " NVTX "}}, &w);
  EXPECT_FALSE(c.trace_cuda);
  EXPECT_TRUE(c.trace_nvtx);
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_TRACE", "cuda,osrt"}}, &w);
  EXPECT_TRUE(c.trace_cuda);
  EXPECT_FALSE(c.trace_nvtx);
  EXPECT_EQ(w.size(), 1u);  // osrt unknown
  w.clear();
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_TRACE", "bogus"}}, &w);
  EXPECT_TRUE(c.trace_cuda);  // nothing valid: default kept
  EXPECT_TRUE(c.trace_nvtx);
  EXPECT_EQ(w.size(), 2u);
}

TEST(CollectorConfig, CaptureRangeOptions) {
  std::vector<std::string> w;
  auto c = parse({{"GPUSCOPE_LOG_DIR", "/x"},
                  {"GPUSCOPE_CAPTURE_RANGE", "cudaProfilerApi"},
                  {"GPUSCOPE_CAPTURE_RANGE_END", "repeat"}},
                 &w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(c.capture_range, CaptureRange::kCudaProfilerApi);
  EXPECT_EQ(c.capture_end, CaptureEnd::kRepeat);

  c = parse({{"GPUSCOPE_LOG_DIR", "/x"},
             {"GPUSCOPE_CAPTURE_RANGE", "nvtx"},
             {"GPUSCOPE_NVTX_CAPTURE", "train step@my@domain"}},
            &w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(c.capture_range, CaptureRange::kNvtx);
  EXPECT_EQ(c.nvtx_capture_message, "train step@my");
  EXPECT_EQ(c.nvtx_capture_domain, "domain");

  // nvtx without a range name falls back to recording everything.
  c = parse({{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_CAPTURE_RANGE", "nvtx"}}, &w);
  EXPECT_EQ(c.capture_range, CaptureRange::kNone);
  EXPECT_EQ(w.size(), 1u);
  w.clear();

  c = parse(
      {{"GPUSCOPE_LOG_DIR", "/x"}, {"GPUSCOPE_CAPTURE_RANGE", "sometimes"}, {"GPUSCOPE_CAPTURE_RANGE_END", "maybe"}},
      &w);
  EXPECT_EQ(c.capture_range, CaptureRange::kNone);
  EXPECT_EQ(c.capture_end, CaptureEnd::kStop);
  EXPECT_EQ(w.size(), 2u);
}

TEST(CollectorConfig, NumbersAreRangeCheckedAndKeepDefaultsWhenInvalid) {
  std::vector<std::string> w;
  auto c = parse({{"GPUSCOPE_LOG_DIR", "/x"},
                  {"GPUSCOPE_DELAY_NS", "5000000000"},
                  {"GPUSCOPE_DURATION_NS", "1000"},
                  {"GPUSCOPE_LAUNCH_REALTIME_NS", "1700000000000000000"},
                  {"GPUSCOPE_FLUSH_PERIOD_MS", "50"},
                  {"GPUSCOPE_BUFFER_BYTES", "1048577"},
                  {"GPUSCOPE_POLLING_CALLS", "yes"},
                  {"GPUSCOPE_VERBOSE", "1"}},
                 &w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(c.delay_ns, 5000000000ull);
  EXPECT_EQ(c.duration_ns, 1000u);
  EXPECT_EQ(c.launch_realtime_ns, 1700000000000000000ull);
  EXPECT_EQ(c.flush_period_ms, 50u);
  EXPECT_EQ(c.buffer_bytes, 1048584u);  // rounded up to 8
  EXPECT_TRUE(c.polling_calls);
  EXPECT_TRUE(c.verbose);

  c = parse({{"GPUSCOPE_LOG_DIR", "/x"},
             {"GPUSCOPE_DELAY_NS", "-5"},
             {"GPUSCOPE_FLUSH_PERIOD_MS", "0"},
             {"GPUSCOPE_BUFFER_BYTES", "12k"},
             {"GPUSCOPE_VERBOSE", "2"}},
            &w);
  EXPECT_EQ(w.size(), 4u);
  for (const auto& m : w) EXPECT_NE(m.find("using the default"), std::string::npos) << m;
  EXPECT_EQ(c.delay_ns, 0u);
  EXPECT_EQ(c.flush_period_ms, 200u);
  EXPECT_EQ(c.buffer_bytes, 4u << 20);
  EXPECT_FALSE(c.verbose);
}

TEST(CollectorConfig, TableListsEveryVariableOnce) {
  std::map<std::string_view, int> seen;
  for (const auto& o : kConfigOptions) {
    EXPECT_TRUE(o.name.starts_with("GPUSCOPE_"));
    EXPECT_FALSE(o.help.empty());
    ++seen[o.name];
  }
  for (const auto& [name, n] : seen) EXPECT_EQ(n, 1) << name;
  EXPECT_TRUE(seen.contains("GPUSCOPE_CAPTURE_RANGE_END"));
}

TEST(CollectorConfig, ParseHelpers) {
  std::uint64_t v = 0;
  EXPECT_TRUE(parse_u64("18446744073709551615", &v));
  EXPECT_FALSE(parse_u64("18446744073709551616", &v));
  EXPECT_FALSE(parse_u64("", &v));
  EXPECT_FALSE(parse_u64("1 ", &v));
  bool b = false;
  EXPECT_TRUE(parse_bool("ON", &b));
  EXPECT_TRUE(b);
  EXPECT_TRUE(parse_bool("off", &b));
  EXPECT_FALSE(b);
  EXPECT_FALSE(parse_bool("2", &b));
  std::string m, d;
  split_nvtx_capture("step", &m, &d);
  EXPECT_EQ(m, "step");
  EXPECT_EQ(d, "");
}

}  // namespace
}  // namespace gpuscope::collect
