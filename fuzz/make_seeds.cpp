// fuzz_make_seeds REPO: writes the generated seeds of the fuzz harnesses into
// REPO/fuzz/corpus/<harness>/ (scripts/fuzz --make-seeds runs it after a change of the event
// log format or of the trace schema). Hand-written seeds (option texts) and copies of
// tests/data files are written too, so the corpus is made in one place. Seed files carry no
// .gslog or .sqlite suffix: those are build products to .gitignore and scripts/check-tree.
//   fuzz_event_log_import  a log holding every record kind; the same log cut mid-record
//                          (a killed process); the same log with its first kernel record's
//                          size or first API record's flags damaged, and damaged then cut
//                          (fuzz_log_reader gets these and the first three); a header-only log; names that are not
//                          UTF-8 or hold quotes and newlines; two processes in one input;
//                          the GPU-metrics sampler's log (no process) alone, cut, and
//                          after a process log whose GPU it samples;
//                          tests/data/kernels-h100's log; the first 16 KiB of cnn's;
//   fuzz_trace_reports     traces imported from those logs, VACUUMed to 512-byte pages so
//                          a mutation hits a page header, a cell or the schema often;
//   fuzz_machine_profile, fuzz_bench_result, fuzz_run_description: tests/data's files (and
//                          a bench CSV written from one);
//   fuzz_nvtx_decode, fuzz_option_values, fuzz_session_files: small hand-made inputs.
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_log_format.hpp"
#include "store/bench_result_json.hpp"
#include "store/database.hpp"
#include "store/event_log_writer.hpp"
#include "store/importer.hpp"

namespace fs = std::filesystem;
using namespace gpuscope;

namespace {

constexpr std::string_view kLogSeparator = "\n--gpuscope-fuzz-next-log--\n";  // fuzz_event_log_import.cpp

// `bytes` (an event log) with the header of its first record of `kind` damaged: its size set
// past the end of the file, or its reserved flags set (store/event_log_reader.hpp resyncs).
std::string damage_first(std::string bytes, log::RecordKind kind, bool flags) {
  std::uint32_t header_size = 0;
  std::memcpy(&header_size, bytes.data() + offsetof(log::FileHeader, header_size), sizeof header_size);
  for (std::size_t off = header_size; off + sizeof(log::RecordHeader) <= bytes.size();) {
    log::RecordHeader rh{};
    std::memcpy(&rh, bytes.data() + off, sizeof rh);
    if (rh.kind == static_cast<std::uint16_t>(kind)) {
      if (flags)
        rh.flags = 1;
      else
        rh.size = 0xFFFFFF00u;
      std::memcpy(bytes.data() + off, &rh, sizeof rh);
      return bytes;
    }
    off += sizeof rh + rh.size;
  }
  throw std::runtime_error("no record of that kind to damage");
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& path, std::string_view bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
  std::cout << "  " << path.string() << " (" << bytes.size() << " B)\n";
}

// GPU-metrics records (trace --gpu-metrics): a session of `metrics` on GPU `uuid0` (the
// process logs' device has 0xab) and `samples` samples 1 us apart from `t0`, every third
// value NaN.
void write_gpu_metrics(store::EventLogWriter& w, std::uint32_t device, std::uint8_t uuid0,
                       const std::vector<std::string_view>& metrics, std::uint64_t t0, int samples) {
  log::GpuMetricsSessionRecord s{};
  s.start_ns = t0 - 500;
  s.interval_ns = 1'000;
  s.chip_string = w.intern("GH100");
  s.device_name_string = w.intern("NVIDIA H100 80GB HBM3");
  s.uuid[0] = uuid0;
  s.clock_offset_ns = -1'234;
  s.hardware_buffer_bytes = 512u << 20;
  s.device_id = device;
  s.metric_count = static_cast<std::uint32_t>(metrics.size());
  std::string payload(reinterpret_cast<const char*>(&s), sizeof s);
  for (std::string_view m : metrics) {
    const std::uint64_t id = w.intern(m);
    payload.append(reinterpret_cast<const char*>(&id), sizeof id);
  }
  w.add_raw(log::RecordKind::kGpuMetricsSession, payload.data(), static_cast<std::uint32_t>(payload.size()));
  int n = 0;
  for (int i = 0; i < samples; ++i) {
    log::GpuMetricSampleRecord r{};
    r.start_ns = t0 + static_cast<std::uint64_t>(i) * 1'000;
    r.end_ns = r.start_ns + 1'000;
    r.device_id = device;
    r.count = s.metric_count;
    std::string p(reinterpret_cast<const char*>(&r), sizeof r);
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const double v = ++n % 3 == 0 ? std::numeric_limits<double>::quiet_NaN() : 10.0 * static_cast<double>(n);
      p.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    w.add_raw(log::RecordKind::kGpuMetricSample, p.data(), static_cast<std::uint32_t>(p.size()));
  }
}

// A log of one process holding every record kind, as the collector writes them.
void write_log(const fs::path& path, std::uint32_t pid, std::string_view name_a, std::string_view name_b, bool end) {
  store::EventLogWriter w;
  std::string err;
  if (!w.open(path.string(), pid, &err)) throw std::runtime_error(err);
  log::ProcessRecord p{};
  p.pid = pid;
  p.ppid = 1;
  p.start_ns = 1'000'000;
  p.host_string = w.intern("node1");
  p.cmdline_string = w.intern(std::string_view("python\0train.py", 15));
  p.exe_string = w.intern("/usr/bin/python3");
  p.version_string = w.intern("0.1.0");
  p.rank = p.local_rank = -1;
  p.cupti_api_version = 26;
  p.cuda_driver_version = 13000;
  w.add(log::RecordKind::kProcess, p);
  log::DeviceRecord d{};
  d.name_string = w.intern("NVIDIA H100 80GB HBM3");
  d.uuid[0] = 0xab;
  d.cc_major = 9;
  d.sm_count = 132;
  d.global_memory_bytes = 80ull << 30;
  d.global_memory_bandwidth_kbps = 3'352'000'000;
  d.core_clock_khz = 1'980'000;
  d.memory_clock_khz = 2'619'000;
  d.memory_bus_width_bits = 5120;
  d.max_threads_per_block = 1024;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.max_registers_per_sm = d.max_registers_per_block = 65536;
  d.max_shared_memory_per_sm = 233472;
  d.max_shared_memory_per_block = 49152;
  w.add(log::RecordKind::kDevice, d);
  log::ContextRecord ctx{1, 0, 7};
  w.add(log::RecordKind::kContext, ctx);
  log::NvtxDomainRecord dom{1, w.intern("mylib")};
  w.add(log::RecordKind::kNvtxDomain, dom);
  log::ThreadNameRecord tn{pid, 0, w.intern(name_b)};
  w.add(log::RecordKind::kThreadName, tn);
  log::CaptureRecord cap{};
  cap.ts_ns = 1'500'000;
  cap.reason_string = w.intern("cudaProfilerStart");
  cap.state = static_cast<std::uint8_t>(log::CaptureState::kStart);
  w.add(log::RecordKind::kCapture, cap);

  auto nvtx = [&](log::NvtxEventType type, std::uint64_t ts, std::string_view msg, std::uint64_t range,
                  std::uint64_t domain) {
    log::NvtxRecord r{};
    r.ts_ns = ts;
    r.thread_id = pid;
    r.type = static_cast<std::uint8_t>(type);
    r.message_string = msg.empty() ? 0 : w.intern(msg);
    r.range_id = range;
    r.domain_id = domain;
    w.add(log::RecordKind::kNvtx, r);
  };
  nvtx(log::NvtxEventType::kPush, 2'000'000, "step", 0, 0);
  nvtx(log::NvtxEventType::kStart, 2'000'100, name_a, 5, 1);
  for (std::uint32_t i = 0; i < 3; ++i) {
    const std::uint64_t t = 2'001'000 + i * 10'000;
    const std::uint32_t corr = 10 + i;
    log::ApiRecord api{};
    api.start_ns = t;
    api.end_ns = t + 4'000;
    api.thread_id = pid;
    api.correlation_id = corr;
    api.cbid = 211;
    api.name_string = w.intern(i == 2 ? "cudaMemcpyAsync" : "cudaLaunchKernel");
    api.domain = static_cast<std::uint8_t>(log::ApiDomain::kRuntime);
    w.add(log::RecordKind::kApi, api);
    if (i < 2) {
      log::KernelRecord k{};
      k.start_ns = t + 6'000;
      k.end_ns = t + 9'000;
      k.stream_id = 7;
      k.correlation_id = corr;
      k.context_id = 1;
      k.grid[0] = 128;
      k.grid[1] = k.grid[2] = 1;
      k.block[0] = 256;
      k.block[1] = k.block[2] = 1;
      k.registers_per_thread = 32;
      k.name_string = w.intern(i == 0 ? name_a : "_Z6kernelPfi");
      w.add(log::RecordKind::kKernel, k);
    } else {
      log::MemcpyRecord m{};
      m.start_ns = t + 5'000;
      m.end_ns = t + 8'000;
      m.bytes = 1 << 20;
      m.stream_id = 7;
      m.correlation_id = corr;
      m.copy_kind = static_cast<std::uint8_t>(log::MemcpyKind::kHtoD);
      m.src_kind = static_cast<std::uint8_t>(log::MemoryKind::kPageable);
      m.dst_kind = static_cast<std::uint8_t>(log::MemoryKind::kDevice);
      w.add(log::RecordKind::kMemcpy, m);
    }
  }
  log::MemsetRecord ms{};
  ms.start_ns = 2'040'000;
  ms.end_ns = 2'041'000;
  ms.bytes = 4096;
  ms.stream_id = 7;
  ms.correlation_id = 20;
  ms.memory_kind = static_cast<std::uint8_t>(log::MemoryKind::kDevice);
  w.add(log::RecordKind::kMemset, ms);
  log::SyncRecord sy{};
  sy.start_ns = 2'050'000;
  sy.end_ns = 2'060'000;
  sy.correlation_id = 21;
  sy.stream_id = 7;
  sy.event_id = 0xffffffff;
  sy.sync_type = static_cast<std::uint8_t>(log::SyncType::kStreamSynchronize);
  w.add(log::RecordKind::kSync, sy);
  log::OverheadRecord oh{2'060'000, 2'061'000, 1, 0, 0, 0};
  w.add(log::RecordKind::kOverhead, oh);
  nvtx(log::NvtxEventType::kMark, 2'062'000, "checkpoint", 0, 0);
  nvtx(log::NvtxEventType::kEnd, 2'063'000, "", 5, 1);
  nvtx(log::NvtxEventType::kPop, 2'064'000, "", 0, 0);
  nvtx(log::NvtxEventType::kPop, 2'065'000, "", 0, 0);  // unbalanced: counted, not fatal

  log::KernelProfileRecord kp{};
  kp.launch_ns = 2'001'000;
  kp.profile_id = 1;
  kp.name_string = w.intern(name_a);
  kp.metric_set_string = w.intern("quick");
  kp.stream_id = 7;
  kp.correlation_id = 10;
  kp.grid[0] = 128;
  kp.grid[1] = kp.grid[2] = 1;
  kp.block[0] = 256;
  kp.block[1] = kp.block[2] = 1;
  kp.registers_per_thread = kp.static_shared_memory = kp.dynamic_shared_memory = kp.local_memory_per_thread = -1;
  kp.passes = 1;
  w.add(log::RecordKind::kKernelProfile, kp);
  for (const auto& [metric, value] :
       {std::pair{"gpu__time_duration.sum", 3000.0}, std::pair{"dram__bytes_read.sum", 1048576.0},
        std::pair{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 41.5}}) {
    log::KernelMetricRecord km{1, w.intern(metric), value};
    w.add(log::RecordKind::kKernelMetric, km);
  }
  // Memory records (trace --cuda-memory-usage): a pool, allocations, a matched free, a free
  // never seen allocated, pinned host memory.
  auto memory = [&w](log::MemoryOperation op, std::uint64_t ts, std::uint64_t address, std::uint64_t bytes,
                     log::MemoryKind kind, std::uint32_t corr) {
    log::MemoryRecord m{};
    m.ts_ns = ts;
    m.address = address;
    m.bytes = bytes;
    m.context_id = 1;
    m.stream_id = 0xffffffff;
    m.correlation_id = corr;
    m.operation = static_cast<std::uint8_t>(op);
    m.memory_kind = static_cast<std::uint8_t>(kind);
    if (op == log::MemoryOperation::kPoolCreate) {
      m.pool_type = static_cast<std::uint8_t>(log::MemoryPoolType::kLocal);
      m.pool_address = address;
      m.pool_size = bytes;
    }
    w.add(log::RecordKind::kMemory, m);
  };
  memory(log::MemoryOperation::kPoolCreate, 2'000'500, 0x50000000, 32 << 20, log::MemoryKind::kDevice, 0);
  memory(log::MemoryOperation::kAlloc, 2'001'500, 0x7f0000000000, 20 << 20, log::MemoryKind::kDevice, 10);
  memory(log::MemoryOperation::kAlloc, 2'002'500, 0x7f0001400000, 2 << 20, log::MemoryKind::kDevice, 11);
  memory(log::MemoryOperation::kFree, 2'003'500, 0x7f0000000000, 20 << 20, log::MemoryKind::kDevice, 12);
  memory(log::MemoryOperation::kFree, 2'004'500, 0x7e0000000000, 4 << 20, log::MemoryKind::kDevice, 13);
  memory(log::MemoryOperation::kAlloc, 2'005'500, 0x200000000, 1 << 20, log::MemoryKind::kPinned, 14);
  // GPU-metrics records, which only the launcher's log holds: here in a process's log too.
  write_gpu_metrics(w, 0, 0xab, {"sm__warps_active.avg.pct_of_peak_sustained_elapsed", "dram__bytes_write.sum"},
                    2'001'000, 3);
  log::DataLossRecord dl{};
  dl.ts_ns = 2'070'000;
  dl.count = 3;
  dl.what_string = w.intern("cupti_dropped_records");
  w.add(log::RecordKind::kDataLoss, dl);
  log::MessageRecord msg{};
  msg.ts_ns = 2'071'000;
  msg.text_string = w.intern("a collector warning");
  msg.severity = static_cast<std::uint8_t>(log::Severity::kWarning);
  w.add(log::RecordKind::kMessage, msg);
  cap.ts_ns = 2'080'000;
  cap.state = static_cast<std::uint8_t>(log::CaptureState::kStop);
  w.add(log::RecordKind::kCapture, cap);
  if (end) {
    log::ProcessEndRecord e{2'090'000, w.records_written(), 1, w.bytes_written()};
    w.add(log::RecordKind::kProcessEnd, e);
  }
  if (!w.flush()) throw std::runtime_error(w.last_error());
  w.close();
}

// The launcher's GPU-metrics sampler log: no ProcessRecord; a warning, two GPUs (one the
// process logs' 0xab, one no process saw), a metric outside core/gpu_metrics, an overflow.
void write_sampler_log(const fs::path& path, std::uint32_t pid) {
  store::EventLogWriter w;
  std::string err;
  if (!w.open(path.string(), pid, &err)) throw std::runtime_error(err);
  log::MessageRecord msg{};
  msg.ts_ns = 1'000'100;
  msg.text_string = w.intern("gpu metrics: nvlrx__bytes.sum dropped (two passes on this chip)");
  msg.severity = static_cast<std::uint8_t>(log::Severity::kWarning);
  w.add(log::RecordKind::kMessage, msg);
  write_gpu_metrics(w, 0, 0xab,
                    {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum",
                     "gpc__cycles_elapsed.avg.per_second", "lts__t_sectors.sum"},
                    1'990'000, 40);
  write_gpu_metrics(w, 1, 0xcd, {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed"}, 1'995'000, 20);
  log::DataLossRecord dl{};
  dl.ts_ns = 2'030'000;
  dl.count = 17;
  dl.what_string = w.intern("gpu_metrics_overflow");
  w.add(log::RecordKind::kDataLoss, dl);
  if (!w.flush()) throw std::runtime_error(w.last_error());
  w.close();
}

// Imports `logs` into `trace` and rewrites it with 512-byte pages.
void make_trace(const std::vector<std::string>& logs, const fs::path& trace) {
  const fs::path tmp = fs::temp_directory_path() / ("gpuscope_seed_" + std::to_string(::getpid()) + ".sqlite");
  store::ImportOptions options;
  options.command = "python train.py";
  options.overwrite = true;
  (void)store::import_logs(logs, tmp.string(), options);
  {
    store::Database db(tmp.string(), store::Database::Mode::kReadWriteCreate);
    db.exec("PRAGMA page_size=512; VACUUM;");
  }
  write_file(trace, read_file(tmp));
  fs::remove(tmp);
}

void write_nvtx_seed(const fs::path& path, std::int32_t message_type, std::string_view message, bool wide) {
  std::string s;
  auto put = [&s](const auto& v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(std::uint16_t{3});   // version
  put(std::uint16_t{48});  // size (NVTX_EVENT_ATTRIB_STRUCT_SIZE)
  put(std::uint32_t{2});   // category
  put(std::int32_t{1});    // colorType: ARGB
  put(std::uint32_t{0xFF00FF00});
  put(std::int32_t{1});    // payloadType: unsigned int64
  put(std::int32_t{0});    // reserved0
  put(std::uint64_t{42});  // payload
  put(message_type);
  put(std::uint8_t{0});  // flags
  if (wide) {
    for (const char c : message) put(static_cast<std::int32_t>(static_cast<unsigned char>(c)));
    put(std::int32_t{0xD800});   // a lone surrogate
    put(std::int32_t{0x1F600});  // an emoji
  } else {
    s.append(message);
  }
  write_file(path, s);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds REPO\n";
    return 2;
  }
  const fs::path repo = argv[1];
  const fs::path corpus = repo / "fuzz" / "corpus";
  const fs::path data = repo / "tests" / "data";
  try {
    const fs::path work = fs::temp_directory_path() / ("gpuscope_seeds_" + std::to_string(::getpid()));
    fs::create_directories(work);
    const fs::path imp = corpus / "fuzz_event_log_import";
    const std::string full = (work / "full.gslog").string();
    const std::string hostile = (work / "hostile.gslog").string();
    write_log(full, 4242, "_Z9gemm_tileILi128EEvPKfS1_Pfi", "main", true);
    write_log(hostile, 4343, "k\"e,r\nn<script>\xff\xfe\\", "th\x01read\xc3(", false);
    const std::string full_bytes = read_file(full);
    write_file(imp / "every-record-kind", full_bytes);
    write_file(imp / "killed-mid-record", full_bytes.substr(0, full_bytes.size() * 2 / 3 + 5));
    write_file(imp / "header-only", full_bytes.substr(0, sizeof(log::FileHeader)));
    write_file(imp / "hostile-names", read_file(hostile));
    write_file(imp / "two-processes", full_bytes + std::string(kLogSeparator) + read_file(hostile));
    const std::string sampler = (work / "gpu-metrics.gslog").string();
    write_sampler_log(sampler, 4000);
    const std::string sampler_bytes = read_file(sampler);
    write_file(imp / "gpu-metrics-log", sampler_bytes);
    write_file(imp / "gpu-metrics-log-cut", sampler_bytes.substr(0, sampler_bytes.size() / 2 + 3));
    write_file(imp / "process-and-gpu-metrics", full_bytes + std::string(kLogSeparator) + sampler_bytes);
    const fs::path kernels_log = data / "kernels-h100.logs" / "vm-681.gslog";
    write_file(imp / "kernels-h100-log", read_file(kernels_log));
    write_file(imp / "cnn-log-first-16KiB", read_file(data / "cnn.logs" / "vm-499.gslog").substr(0, 16384));
    const fs::path reader = corpus / "fuzz_log_reader";
    const std::string size_damaged = damage_first(full_bytes, log::RecordKind::kKernel, false);
    const std::string flags_damaged = damage_first(full_bytes, log::RecordKind::kApi, true);
    for (const fs::path& dir : {imp, reader}) {
      write_file(dir / "kernel-size-damaged", size_damaged);
      write_file(dir / "api-flags-damaged", flags_damaged);
      write_file(dir / "damaged-and-killed", size_damaged.substr(0, size_damaged.size() * 3 / 4 + 3));
    }
    write_file(reader / "every-record-kind", full_bytes);
    write_file(reader / "killed-mid-record", full_bytes.substr(0, full_bytes.size() * 2 / 3 + 5));
    write_file(reader / "header-only", full_bytes.substr(0, sizeof(log::FileHeader)));

    const fs::path rep = corpus / "fuzz_trace_reports";
    make_trace({full, hostile, sampler}, rep / "synthetic-trace");
    make_trace({kernels_log.string()}, rep / "kernels-h100-trace");

    for (const char* f : {"profile-test.json", "profile-h100.json"}) {
      write_file(corpus / "fuzz_machine_profile" / f, read_file(data / f));
    }
    const fs::path bench = corpus / "fuzz_bench_result";
    for (const char* f : {"bench-copy-sweep.json", "bench-copy-new.json"}) write_file(bench / f, read_file(data / f));
    std::ostringstream csv;
    store::write_bench_csv(store::read_bench_run(data / "bench-copy-sweep.json"), csv);
    write_file(bench / "bench-copy-sweep.csv", csv.str());

    const fs::path run = corpus / "fuzz_run_description";
    write_file(run / "cnn-run.json", read_file(data / "cnn.logs" / "run.json"));
    write_file(run / "kernels-h100-run.json", read_file(data / "kernels-h100.logs" / "run.json"));
    write_file(run / "killed-launcher.json",
               R"({"format": "gpuscope-run/1", "command": "python train.py", "launched_pid": 4242,)"
               R"( "exit_status": null, "term_signal": 9, "meta": {"tracer_launch_cost_ns": "812.5"}})");

    const fs::path nvtx = corpus / "fuzz_nvtx_decode";
    write_nvtx_seed(nvtx / "ascii", 1, "forward", false);
    write_nvtx_seed(nvtx / "unicode", 2, "backward", true);
    write_nvtx_seed(nvtx / "registered", 3, "optimizer.step", false);

    const fs::path opt = corpus / "fuzz_option_values";
    int i = 0;
    for (const char* text :
         {"250ms", "30s",          "1.5",    "2^20:2^30", "2^12:2^28:4", "64x4096x4096",  "1000,3000", "64MiB",
          "1k",    "4096",         "10",     "0.005",     "6.1e14",      "1e308",         "nan",       "-1",
          "2^64",  "step@mylib/2", "train*", "usec",      "csv",         "kernel,memcpy", "1h",        "10us"}) {
      write_file(opt / ("seed-" + std::to_string(i++)), text);
    }

    // A session folder's files as launch, start/stop and the collector write them, and hostile ones.
    const fs::path session = corpus / "fuzz_session_files";
    i = 0;
    for (const char* text :
         {"name=srv\nlauncher_pid=4242\noutput=/data/srv.sqlite\nlog_dir=/data/srv.logs\ncommand=python3 serve.py "
          "--port 8000\nstarted=2026-12-05T09:00:00Z\n",
          "launcher_pid=1", "launcher_pid=2147483648\n", "launcher_pid=-1\nname=x\r\n", "1 start\n", "2 stop\n",
          "1000000000000000000 stop", "18446744073709551615 start\n", "-1 start", "01 stop\n"}) {
      write_file(session / ("seed-" + std::to_string(i++)), text);
    }
    fs::remove_all(work);
  } catch (const std::exception& e) {
    std::cerr << "fuzz_make_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
