// gpuscope_make_trace: writes a large synthetic trace through the typed row writer
// (store/row_writer.hpp), for timing `gpuscope stats` and friends on traces no test GPU
// run would give (validation/stats_speed.py; 10M-event tests).
//
//   gpuscope_make_trace OUT.sqlite --launches N [--seed S]
//
// The trace (schema version kSchemaVersion, every table of store/schema.hpp) is one process
// (pid 4242, thread 4242 "main") on one device (an H200-like row, uuid GPU-synthetic):
//   - N kernel launches: a cudaLaunchKernel API call (3-8 µs) and its kernel, joined by
//     correlation id, on 4 streams round-robin, 40 kernel names with a base duration each
//     (2-60 µs, ±10 % per launch); a kernel starts 0.5-3 µs after its call returns and not
//     before the previous kernel of its stream ends;
//   - every 1,000 launches: cudaMemcpyAsync and its 1 MiB pageable host-to-device copy;
//   - every 100 launches: cudaStreamSynchronize (waits for every stream) with its syncs
//     record, ending an NVTX push/pop range "step K" (depth 0); inside each step a
//     "forward" range over its first 50 launches (depth 1, parent the step);
//   - processes, threads, devices, capture_windows ('all') and meta as the importer writes them.
// So the trace holds 2N API + kernel events plus N/1000 copies, N/100 syncs and N/50 ranges
// (≈ 2.03 N events: --launches 5000000 for 10M events).
//
// Deterministic: the same N and seed give the same rows, on any platform (its own
// splitmix64 generator and integer arithmetic; no std:: distributions). Memory stays
// bounded whatever N: rows are written as they are made, committed every 100,000 rows;
// the schema's indexes are built at the end by SQLite's external sort.
//
// Writes OUT.partial and renames it to OUT when complete (OUT is replaced). Prints one
// JSON line of row counts and the trace's span to stdout. Exit 0, or 1 with the reason on
// stderr (bad arguments, SQLite or file errors).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/version.hpp"
#include "store/database.hpp"
#include "store/row_writer.hpp"
#include "store/rows.hpp"
#include "store/schema.hpp"

namespace {

using namespace gpuscope::store;

// splitmix64 (Steele, Lea, Flood 2014): small, fast, and the same numbers everywhere.
class Random {
 public:
  explicit Random(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform integer in [lo, hi] (modulo bias < 2^-40 for these ranges: irrelevant here).
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }

 private:
  std::uint64_t m_state;
};

constexpr std::int64_t kPid = 4242;
constexpr std::int64_t kTid = 4242;
constexpr std::int64_t kT0 = 1'800'000'000'000'000'000;  // 2027-01-15, on the trace clock (ns)
constexpr int kStreams = 4;
constexpr int kNames = 40;
constexpr std::int64_t kCommitEvery = 100'000;

struct Counts {
  std::int64_t kernels = 0, api_calls = 0, memcpys = 0, syncs = 0, nvtx_ranges = 0;
  std::int64_t events() const { return kernels + api_calls + memcpys + syncs + nvtx_ranges; }
};

std::string iso_time(std::int64_t ns) {
  const std::time_t s = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

class Generator {
 public:
  Generator(Database& db, std::uint64_t seed)
      : m_db(db), m_rng(seed), m_strings(db), m_api(db), m_kernels(db), m_memcpys(db), m_syncs(db), m_nvtx(db) {}

  Counts run(std::int64_t launches, std::int64_t& end_ns) {
    m_db.exec("BEGIN");
    const std::int64_t launch = string("cudaLaunchKernel"), memcpy = string("cudaMemcpyAsync");
    const std::int64_t sync = string("cudaStreamSynchronize"), forward = string("forward");
    std::array<std::int64_t, kNames> name{}, short_name{}, duration{};
    for (int k = 0; k < kNames; ++k) {
      const std::string base = "synthetic_kernel_" + std::to_string(k);
      name[k] = string("void " + base + "<float, " + std::to_string(32 * (k % 8 + 1)) + ">(float const*, float*, int)");
      short_name[k] = string(base);
      duration[k] = m_rng.between(2'000, 60'000);
    }
    std::array<std::int64_t, kStreams> stream_free{};
    stream_free.fill(kT0);
    std::int64_t cpu = kT0, corr = 0;
    Range step, fwd;
    for (std::int64_t i = 0; i < launches; ++i) {
      if (i % 100 == 0) {
        step = open(string("step " + std::to_string(i / 100)), cpu, 0, std::nullopt);
        fwd = open(forward, cpu, 1, step.id);
      }
      const std::int64_t a_start = cpu, a_end = a_start + m_rng.between(3'000, 8'000);
      api(launch, 211, a_start, a_end, ++corr);
      const int s = static_cast<int>(i % kStreams);
      const int k = static_cast<int>(m_rng.between(0, kNames - 1));
      const std::int64_t k_start = std::max(a_end + m_rng.between(500, 3'000), stream_free[s]);
      const std::int64_t k_end = k_start + duration[k] * m_rng.between(900, 1'100) / 1'000;
      stream_free[s] = k_end;
      add_kernel(s, corr, k_start, k_end, name[k], short_name[k], k);
      cpu = a_end + m_rng.between(200, 2'000);
      if (i % 100 == 49) close(fwd, cpu);
      if (i % 1000 == 999) {
        const std::int64_t m_end = cpu + 20'000;
        api(memcpy, 51, cpu, m_end, ++corr);
        const std::int64_t c_start = std::max(m_end, stream_free[0]);
        add(m_memcpys, rows::Memcpy{.pid = kPid,
                                    .device_id = 0,
                                    .context_id = 1,
                                    .stream_id = 7,
                                    .correlation_id = corr,
                                    .start_ns = c_start,
                                    .end_ns = c_start + 10'000,
                                    .bytes = 1 << 20,
                                    .copy_kind = "HtoD",
                                    .src_kind = "pageable",
                                    .dst_kind = "device",
                                    .src_device_id = 0,
                                    .dst_device_id = 0,
                                    .is_async = 1});
        ++m_counts.memcpys;
        stream_free[0] = c_start + 10'000;
        cpu = m_end + 1'000;
      }
      if (i % 100 == 99) {
        const std::int64_t s_end = std::max(cpu + 2'000, *std::max_element(stream_free.begin(), stream_free.end()));
        api(sync, 131, cpu, s_end, ++corr);
        add(m_syncs, rows::Sync{.pid = kPid,
                                .tid = kTid,
                                .context_id = 1,
                                .stream_id = 7,
                                .sync_type = "stream_synchronize",
                                .start_ns = cpu + 500,
                                .end_ns = s_end - 500,
                                .correlation_id = corr});
        ++m_counts.syncs;
        cpu = s_end + 1'000;
        close(step, cpu);
      }
    }
    close(fwd, cpu);  // a last, partial step ends with the program
    close(step, cpu);
    m_db.exec("COMMIT");
    end_ns = std::max(cpu, *std::max_element(stream_free.begin(), stream_free.end()));
    return m_counts;
  }

 private:
  struct Range {
    std::int64_t id = 0, text_id = 0, start_ns = 0, depth = 0;
    std::optional<std::int64_t> parent;
    bool open = false;
  };

  // Writes one row and commits every kCommitEvery rows, so no transaction grows with N.
  template <class Row>
  void add(RowWriter<Row>& w, const Row& row) {
    w.insert(row);
    if (++m_pending == kCommitEvery) {
      m_db.exec("COMMIT; BEGIN");
      m_pending = 0;
    }
  }
  std::int64_t string(const std::string& value) {
    add(m_strings, rows::String{.id = ++m_string_id, .value = value});
    return m_string_id;
  }
  void api(std::int64_t name_id, std::int64_t cbid, std::int64_t start, std::int64_t end, std::int64_t corr) {
    add(m_api, rows::ApiCall{.pid = kPid,
                             .tid = kTid,
                             .domain = "runtime",
                             .cbid = cbid,
                             .name_id = name_id,
                             .start_ns = start,
                             .end_ns = end,
                             .correlation_id = corr,
                             .return_value = 0});
    ++m_counts.api_calls;
  }
  void add_kernel(int stream, std::int64_t corr, std::int64_t start, std::int64_t end, std::int64_t name_id,
                  std::int64_t short_name_id, int k) {
    add(m_kernels, rows::Kernel{.pid = kPid,
                                .device_id = 0,
                                .context_id = 1,
                                .stream_id = 7 + stream,
                                .correlation_id = corr,
                                .start_ns = start,
                                .end_ns = end,
                                .name_id = name_id,
                                .short_name_id = short_name_id,
                                .grid_x = 1 + (k * 37) % 2000,
                                .grid_y = 1,
                                .grid_z = 1,
                                .block_x = 128 + 32 * (k % 8),
                                .block_y = 1,
                                .block_z = 1,
                                .registers_per_thread = 32 + k % 64,
                                .static_shared_memory = 0,
                                .dynamic_shared_memory = 1024 * (k % 4)});
    ++m_counts.kernels;
  }
  Range open(std::int64_t text_id, std::int64_t start, std::int64_t depth, std::optional<std::int64_t> parent) {
    return Range{
        .id = ++m_nvtx_id, .text_id = text_id, .start_ns = start, .depth = depth, .parent = parent, .open = true};
  }
  void close(Range& r, std::int64_t end) {
    if (!r.open) return;
    add(m_nvtx, rows::NvtxEvent{.id = r.id,
                                .pid = kPid,
                                .tid = kTid,
                                .end_tid = kTid,
                                .style = "PushPop",
                                .text_id = r.text_id,
                                .start_ns = r.start_ns,
                                .end_ns = end,
                                .depth = r.depth,
                                .parent_id = r.parent});
    ++m_counts.nvtx_ranges;
    r.open = false;
  }

  Database& m_db;
  Random m_rng;
  RowWriter<rows::String> m_strings;
  RowWriter<rows::ApiCall> m_api;
  RowWriter<rows::Kernel> m_kernels;
  RowWriter<rows::Memcpy> m_memcpys;
  RowWriter<rows::Sync> m_syncs;
  RowWriter<rows::NvtxEvent> m_nvtx;
  std::int64_t m_pending = 0, m_string_id = 0, m_nvtx_id = 0;
  Counts m_counts;
};

void write_process_tables(Database& db, std::int64_t end_ns, const std::string& command) {
  insert(db, rows::Process{.pid = kPid,
                           .ppid = 1,
                           .host = "synthetic",
                           .cmdline = command,
                           .exe = "synthetic",
                           .start_ns = kT0,
                           .end_ns = end_ns,
                           .ended_cleanly = 1,
                           .exit_status = 0,
                           .collector_version = gpuscope::kVersion,
                           .log_bytes = 0});
  insert(db, rows::Thread{.pid = kPid, .tid = kTid, .name = "main"});
  insert(db, rows::Device{.pid = kPid,
                          .device_id = 0,
                          .name = "NVIDIA H200 (synthetic)",
                          .uuid = "GPU-synthetic",
                          .cc_major = 9,
                          .cc_minor = 0,
                          .sm_count = 132,
                          .global_memory_bytes = 150'000'000'000,
                          .memory_bandwidth_bytes_per_s = 4'800'000'000'000,
                          .l2_cache_bytes = 52'428'800,
                          .core_clock_khz = 1'980'000,
                          .memory_clock_khz = 3'201'000,
                          .memory_bus_width_bits = 6144,
                          .max_threads_per_block = 1024,
                          .max_warps_per_sm = 64,
                          .max_blocks_per_sm = 32,
                          .max_registers_per_sm = 65536,
                          .max_registers_per_block = 65536,
                          .max_shared_memory_per_sm = 233472,
                          .max_shared_memory_per_block = 232448,
                          .num_memcpy_engines = 7,
                          .ecc_enabled = 1});
  insert(db, rows::CaptureWindow{.pid = kPid, .start_ns = kT0, .end_ns = end_ns, .reason = "all"});
  RowWriter<rows::Meta> meta(db);
  const std::string version = std::to_string(gpuscope::store::kSchemaVersion);
  const std::string start = iso_time(kT0), duration = std::to_string(end_ns - kT0), pid = std::to_string(kPid);
  for (const auto& [key, value] :
       std::initializer_list<std::pair<std::string_view, std::string_view>>{{"schema_version", version},
                                                                            {"gpuscope_version", gpuscope::kVersion},
                                                                            {"command", command},
                                                                            {"start_time", start},
                                                                            {"host", "synthetic"},
                                                                            {"capture_range", "none"},
                                                                            {"trace_sources", "cuda,nvtx"},
                                                                            {"clock", "CLOCK_REALTIME ns, CUPTI"},
                                                                            {"duration_ns", duration},
                                                                            {"process_count", "1"},
                                                                            {"launched_pid", pid}}) {
    meta.insert({.key = key, .value = value});
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes a synthetic gpuscope trace of N kernel launches (deterministic for a seed)."};
  std::string out;
  std::int64_t launches = 0;
  std::uint64_t seed = 1;
  app.add_option("output", out, "Trace to write (.sqlite; replaced if it exists)")->required();
  app.add_option("--launches", launches, "Kernel launches: 1 API call + 1 kernel each (≈ 2.03 events per launch)")
      ->required()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000'000}));
  app.add_option("--seed", seed, "Seed of the generator (default 1)");
  CLI11_PARSE(app, argc, argv);

  const std::filesystem::path final_path(out), partial(out + ".partial");
  try {
    std::filesystem::remove(partial);
    std::int64_t end_ns = 0;
    Counts counts;
    {
      Database db(partial.string(), Database::Mode::kReadWriteCreate);
      db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536");
      db.exec(create_tables_sql());
      const std::string command = "synthetic (gpuscope_make_trace --launches " + std::to_string(launches) + " --seed " +
                                  std::to_string(seed) + ")";
      Generator gen(db, seed);
      counts = gen.run(launches, end_ns);
      write_process_tables(db, end_ns, command);
      db.exec(create_indexes_sql());
    }
    std::filesystem::rename(partial, final_path);
    std::printf(
        "{\"kernels\": %lld, \"api_calls\": %lld, \"memcpys\": %lld, \"syncs\": %lld, \"nvtx_ranges\": %lld, "
        "\"events\": %lld, \"duration_ns\": %lld}\n",
        static_cast<long long>(counts.kernels), static_cast<long long>(counts.api_calls),
        static_cast<long long>(counts.memcpys), static_cast<long long>(counts.syncs),
        static_cast<long long>(counts.nvtx_ranges), static_cast<long long>(counts.events()),
        static_cast<long long>(end_ns - kT0));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuscope_make_trace: %s\n", e.what());
    std::error_code ec;
    std::filesystem::remove(partial, ec);
    return 1;
  }
}
