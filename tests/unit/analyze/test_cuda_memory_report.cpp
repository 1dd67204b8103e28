// The cuda_memory report on hand-built logs (the event-log builder writes what the collector
// would with --cuda-memory-usage; the importer makes the trace): per-GPU peaks summed over the
// processes on a GPU, per top-level NVTX range or per PyTorch step, the notes, and a diff of
// the whole report against tests/expected/cuda_memory/ (GPUSCOPE_REWRITE_EXPECTED=1 rewrites).
#include "analyze/memory/cuda_memory_report.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../expect_file.hpp"
#include "../store/log_builder.hpp"
#include "analyze/report_registry.hpp"
#include "render/report_render.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::analyze {
namespace {

using store::test::LogBuilder;
using store::test::TempDir;

constexpr std::uint64_t kMiB = 1 << 20;
constexpr std::uint64_t kUs = 1000;     // log times in µs
constexpr std::int64_t kT0 = 10 * kUs;  // both processes start here: the trace start

// Columns of cuda_memory, by position.
enum Col {
  kScope,
  kName,
  kPid,
  kGpu,
  kStart,
  kPeakBytes,
  kPeakMiB,
  kPeakAt,
  kPeakCall,
  kPeakAlloc,
  kAllocs,
  kAllocBytes,
  kFrees,
  kFreedBytes,
  kEndInUse,
  kTorchReserved,
  kTorchTensors,
  kOutsideTorch
};

std::int64_t i(const Row& r, Col c) { return std::get<std::int64_t>(r[c]); }
std::string t(const Row& r, Col c) { return std::get<std::string>(r[c]); }
bool null(const Row& r, Col c) { return std::holds_alternative<std::monostate>(r[c]); }

// pid 100 on GPU 0 (device 0) and GPU 1 (device 1); pid 200 on GPU 0 too (same UUID).
// pid 100: cudaMalloc 2 MiB at 50 µs (before any range); NVTX "step 0" [100, 200) with a
// nested "forward": cudaMalloc 20 MiB at 120, 40 MiB at 150, cudaFree of the 20 MiB at 180;
// "step 1" [200, 300): cudaMalloc 8 MiB on device 1 at 210, cudaFree of the 40 MiB at 250;
// cudaFree of the 2 MiB at 350. Pinned host memory (1 MiB) at 130: not counted.
// pid 200: cudaMalloc 10 MiB at 160: GPU 0 holds 62 + 10 = 72 MiB then, its peak.
// `steps`: pid 100 is a PyTorch program instead (a module forward at 60..90 and
// optimizer.step() marks at 200 and 300: torch_steps 0 = [60, 200), 1 = [200, 300)).
std::string build(const TempDir& dir, bool steps, const std::string& torch_memory = "") {
  const std::string a = dir.file("a.gslog"), b = dir.file("b.gslog");
  {
    LogBuilder l(a, 100);
    l.process(kT0);
    l.device(0, "NVIDIA H100 80GB HBM3", 0xab, 80 * 1024 * kMiB);
    l.device(1, "NVIDIA H100 80GB HBM3", 0xcd, 80 * 1024 * kMiB);
    std::uint32_t corr = 0;
    const auto malloc = [&](std::uint64_t at, std::uint64_t address, std::uint64_t bytes, std::uint32_t device) {
      l.api(at * kUs, at * kUs + 800, 100, ++corr, "cudaMalloc_v3020");
      l.alloc(at * kUs + 400, address, bytes, corr, device);
    };
    const auto free = [&](std::uint64_t at, std::uint64_t address, std::uint32_t device) {
      l.api(at * kUs, at * kUs + 800, 100, ++corr, "cudaFree_v3020");
      l.free(at * kUs + 400, address, 0, corr, device);
    };
    malloc(50, 0x1000000, 2 * kMiB, 0);
    if (steps) {
      l.push(60 * kUs, 100, "nn.Module: Net (Net)");
      l.pop(90 * kUs, 100);
    }
    l.push(100 * kUs, 100, "step 0");
    l.push(110 * kUs, 100, "forward");
    malloc(120, 0x2000000, 20 * kMiB, 0);
    l.api(130 * kUs, 130 * kUs + 800, 100, ++corr, "cudaHostAlloc_v3020");
    l.alloc(130 * kUs + 400, 0x9000000, kMiB, corr, 0, log::MemoryKind::kPinned);
    malloc(150, 0x4000000, 40 * kMiB, 0);
    l.pop(170 * kUs, 100);
    free(180, 0x2000000, 0);
    l.pop(200 * kUs, 100);
    l.push(200 * kUs, 100, "step 1");
    malloc(210, 0x8000000, 8 * kMiB, 1);
    free(250, 0x4000000, 0);
    l.pop(300 * kUs, 100);
    if (steps) {
      l.nvtx(log::NvtxEventType::kMark, 200 * kUs, 100, "gpuscope.step");
      l.nvtx(log::NvtxEventType::kMark, 300 * kUs, 100, "gpuscope.step");
    }
    free(350, 0x1000000, 0);
    l.end(400 * kUs);
    l.flush();
  }
  {
    LogBuilder l(b, 200);
    l.process(kT0);
    l.device(0, "NVIDIA H100 80GB HBM3", 0xab, 80 * 1024 * kMiB);
    l.api(160 * kUs, 160 * kUs + 800, 200, 1, "cudaMalloc_v3020");
    l.alloc(160 * kUs + 400, 0x1000000, 10 * kMiB, 1);
    l.end(400 * kUs);
    l.flush();
  }
  const std::string db = dir.file("t.sqlite");
  store::ImportOptions opts;
  opts.command = "python3 train.py";
  opts.launched_pid = 100;
  opts.start_time = "2026-11-25T08:00:00+0000";
  opts.gpuscope_version = "0.1.0";
  std::vector<std::string> inputs{a, b};
  if (!torch_memory.empty()) {
    inputs.push_back(dir.file("torch-memory-100.json"));
    std::ofstream(inputs.back()) << torch_memory;
  }
  (void)store::import_logs(inputs, db, opts);
  return db;
}

// pid 100's allocator state at exit (what gpuscope's PyTorch hooks write): on device 0 its
// segments are the 20 MiB and 40 MiB cudaMallocs (0x2000000, 0x4000000), torch said
// max_memory_reserved() = 60 MiB; its history: a 8 MiB tensor at 121 us, a 4 MiB one at
// 151 us, the 8 MiB freed at 175 us (requested_bytes.all.peak = 12 MiB, 4 MiB at exit).
const std::string kTorchMemory = R"({"format": "gpuscope torch memory 1", "pid": 100, "time_ns": 400000,
  "torch_version": "2.11.0", "history_max_entries": 1000, "devices": [{"device": 0,
  "max_reserved": 62914560, "reserved": 62914560, "max_allocated": 12582912, "allocated": 4194304,
  "max_requested": 12582912, "requested": 4194304,
  "segments": [{"address": 33554432, "bytes": 20971520, "stream": 0, "pool": "large"},
               {"address": 67108864, "bytes": 41943040, "stream": 0, "pool": "large"}],
  "history": [["alloc", 33554432, 8388608, 0, 121], ["alloc", 67108864, 4194304, 0, 151],
              ["free_requested", 33554432, 8388608, 0, 175], ["free_completed", 33554432, 8388608, 0, 175]]}]})";

std::string rendered(const Report& r, render::Format format) {
  std::ostringstream out;
  render::render(std::vector<Report>{r}, format, out);
  return out.str();
}

bool has_note(const Report& r, const std::string& text) {
  for (const Note& n : r.notes)
    if (n.text.find(text) != std::string::npos) return true;
  return false;
}

std::string notes(const Report& r) {
  std::string s;
  for (const Note& n : r.notes) s += n.text + "\n";
  return s;
}

TEST(CudaMemoryReport, DevicePeaksSumTheProcessesOnAGpu) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, false));
  const Report r = cuda_memory(db);
  ASSERT_GE(r.rows.size(), 2u);
  // GPU 0: 2 + 20 + 40 (pid 100) + 10 (pid 200) = 72 MiB at 160.4 µs, by pid 200's cudaMalloc.
  const Row& g0 = r.rows[0];
  EXPECT_EQ(t(g0, kScope), "device");
  EXPECT_EQ(t(g0, kName), "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(null(g0, kPid));
  EXPECT_EQ(i(g0, kGpu), 0);
  EXPECT_TRUE(null(g0, kStart));
  EXPECT_EQ(i(g0, kPeakBytes), static_cast<std::int64_t>(72 * kMiB));
  EXPECT_DOUBLE_EQ(std::get<double>(g0[kPeakMiB]), 72.0);
  EXPECT_EQ(i(g0, kPeakAt), static_cast<std::int64_t>(160 * kUs + 400) - kT0);
  EXPECT_EQ(t(g0, kPeakCall), "cudaMalloc");
  EXPECT_EQ(i(g0, kPeakAlloc), static_cast<std::int64_t>(10 * kMiB));
  EXPECT_EQ(i(g0, kAllocs), 4);
  EXPECT_EQ(i(g0, kAllocBytes), static_cast<std::int64_t>(72 * kMiB));
  EXPECT_EQ(i(g0, kFrees), 3);
  EXPECT_EQ(i(g0, kFreedBytes), static_cast<std::int64_t>(62 * kMiB));  // 20 + 40 + 2: the allocations' sizes
  EXPECT_EQ(i(g0, kEndInUse), static_cast<std::int64_t>(10 * kMiB));    // pid 200 never freed
  // GPU 1: pid 100's 8 MiB.
  const Row& g1 = r.rows[1];
  EXPECT_EQ(t(g1, kScope), "device");
  EXPECT_EQ(i(g1, kGpu), 1);
  EXPECT_EQ(i(g1, kPeakBytes), static_cast<std::int64_t>(8 * kMiB));
  EXPECT_EQ(i(g1, kAllocs), 1);
  EXPECT_EQ(i(g1, kFrees), 0);
  EXPECT_EQ(i(g1, kEndInUse), static_cast<std::int64_t>(8 * kMiB));

  EXPECT_TRUE(has_note(r, "PyTorch's caching allocator shows here as segments, not tensors")) << notes(r);
  EXPECT_TRUE(has_note(r,
                       "GPU 0: peak 72 MiB (0.1 % of its 80 GiB) in use at 150 µs into the trace, reached by "
                       "cudaMalloc of 10 MiB (pid 200)"))
      << notes(r);
  EXPECT_TRUE(has_note(r, "allocations not counted as GPU memory in use (host or managed memory): 1 pinned (1 MiB)"))
      << notes(r);
}

TEST(CudaMemoryReport, PerTopLevelNvtxRangeWithoutSteps) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, false));
  const Report r = cuda_memory(db);
  // 2 device rows, then step 0 on GPU 0 (nothing on GPU 1 during it), step 1 on GPU 0 and 1;
  // the nested "forward" range is not top-level.
  ASSERT_EQ(r.rows.size(), 5u) << rendered(r, render::Format::kTable);
  const Row& s0 = r.rows[2];
  EXPECT_EQ(t(s0, kScope), "nvtx");
  EXPECT_EQ(t(s0, kName), "step 0");
  EXPECT_EQ(i(s0, kPid), 100);
  EXPECT_EQ(i(s0, kGpu), 0);
  EXPECT_EQ(i(s0, kStart), static_cast<std::int64_t>(100 * kUs) - kT0);
  // pid 100's own memory: 2 MiB carried in, +20, +40 → 62 MiB (pid 200's 10 MiB is not its).
  EXPECT_EQ(i(s0, kPeakBytes), static_cast<std::int64_t>(62 * kMiB));
  EXPECT_EQ(i(s0, kPeakAt), static_cast<std::int64_t>(150 * kUs + 400) - kT0);
  EXPECT_EQ(t(s0, kPeakCall), "cudaMalloc");
  EXPECT_EQ(i(s0, kPeakAlloc), static_cast<std::int64_t>(40 * kMiB));
  EXPECT_EQ(i(s0, kAllocs), 2);
  EXPECT_EQ(i(s0, kAllocBytes), static_cast<std::int64_t>(60 * kMiB));
  EXPECT_EQ(i(s0, kFrees), 1);
  EXPECT_EQ(i(s0, kFreedBytes), static_cast<std::int64_t>(20 * kMiB));
  EXPECT_EQ(i(s0, kEndInUse), static_cast<std::int64_t>(42 * kMiB));
  // step 1 on GPU 0: nothing allocated; the peak is the 42 MiB it started with.
  const Row& s1 = r.rows[3];
  EXPECT_EQ(t(s1, kName), "step 1");
  EXPECT_EQ(i(s1, kGpu), 0);
  EXPECT_EQ(i(s1, kPeakBytes), static_cast<std::int64_t>(42 * kMiB));
  EXPECT_EQ(i(s1, kPeakAt), static_cast<std::int64_t>(200 * kUs) - kT0);
  EXPECT_TRUE(null(s1, kPeakCall));
  EXPECT_TRUE(null(s1, kPeakAlloc));
  EXPECT_EQ(i(s1, kAllocs), 0);
  EXPECT_EQ(i(s1, kFrees), 1);
  EXPECT_EQ(i(s1, kEndInUse), static_cast<std::int64_t>(2 * kMiB));
  // step 1 on GPU 1: the 8 MiB allocated in it.
  const Row& s1g1 = r.rows[4];
  EXPECT_EQ(i(s1g1, kGpu), 1);
  EXPECT_EQ(i(s1g1, kPeakBytes), static_cast<std::int64_t>(8 * kMiB));
  EXPECT_EQ(t(s1g1, kPeakCall), "cudaMalloc");
  EXPECT_TRUE(has_note(r, "NVTX range 'step 0' (pid 100) holds the most: 62 MiB on GPU 0")) << notes(r);

  test::expect_matches_file(rendered(r, render::Format::kTable), "cuda_memory/nvtx.txt");
  test::expect_matches_file(rendered(r, render::Format::kCsv), "cuda_memory/nvtx.csv");
}

TEST(CudaMemoryReport, PerPytorchStepWhenTheTraceHasSteps) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, true));
  ASSERT_EQ(db.query_int("SELECT COUNT(*) FROM torch_steps"), 2);
  const Report r = cuda_memory(db);
  std::vector<const Row*> steps;
  for (const Row& row : r.rows)
    if (t(row, kScope) == "step") steps.push_back(&row);
  ASSERT_EQ(steps.size(), 3u) << rendered(r, render::Format::kTable);
  // step 0 = [60, 200): the 2 MiB from 50 µs carried in, then 62 MiB.
  EXPECT_EQ(t(*steps[0], kName), "step 0");
  EXPECT_EQ(i(*steps[0], kStart), static_cast<std::int64_t>(60 * kUs) - kT0);
  EXPECT_EQ(i(*steps[0], kPeakBytes), static_cast<std::int64_t>(62 * kMiB));
  EXPECT_EQ(t(*steps[1], kName), "step 1");
  EXPECT_EQ(i(*steps[1], kPeakBytes), static_cast<std::int64_t>(42 * kMiB));
  EXPECT_EQ(t(*steps[2], kName), "step 1");
  EXPECT_EQ(i(*steps[2], kGpu), 1);
  for (const Row& row : r.rows) EXPECT_NE(t(row, kScope), "nvtx");  // steps replace NVTX ranges
  EXPECT_TRUE(has_note(r, "step 0 (pid 100) holds the most: 62 MiB on GPU 0")) << notes(r);
  test::expect_matches_file(rendered(r, render::Format::kTable), "cuda_memory/steps.txt");
}

TEST(CudaMemoryReport, PytorchSegmentsAndTensorsFromTheAllocatorState) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, true, kTorchMemory));
  ASSERT_EQ(db.query_int("SELECT COUNT(*) FROM torch_memory_events"), 4);
  const Report r = cuda_memory(db);
  ASSERT_GE(r.rows.size(), 2u) << rendered(r, render::Format::kTable);
  // GPU 0: PyTorch's segments reach 20 + 40 MiB at 150 us; the GPU's peak, 72 MiB at 160 us,
  // holds pid 100's other 2 MiB and pid 200's 10 MiB outside them; tensors peak at 12 MiB.
  const Row& gpu0 = r.rows[0];
  EXPECT_EQ(i(gpu0, kGpu), 0);
  EXPECT_EQ(i(gpu0, kPeakBytes), static_cast<std::int64_t>(72 * kMiB));
  EXPECT_EQ(i(gpu0, kTorchReserved), static_cast<std::int64_t>(60 * kMiB));
  EXPECT_EQ(i(gpu0, kTorchTensors), static_cast<std::int64_t>(12 * kMiB));
  EXPECT_EQ(i(gpu0, kOutsideTorch), static_cast<std::int64_t>(12 * kMiB));
  // GPU 1 (pid 100's device 1): no allocator state for it.
  const Row& gpu1 = r.rows[1];
  EXPECT_EQ(i(gpu1, kGpu), 1);
  EXPECT_TRUE(null(gpu1, kTorchReserved) && null(gpu1, kTorchTensors) && null(gpu1, kOutsideTorch));
  // step 0 = [60, 200) of pid 100 on GPU 0: 62 MiB at 150 us, 60 of them PyTorch's.
  const Row* step0 = nullptr;
  for (const Row& row : r.rows)
    if (t(row, kScope) == "step" && t(row, kName) == "step 0") step0 = &row;
  ASSERT_NE(step0, nullptr);
  EXPECT_EQ(i(*step0, kTorchReserved), static_cast<std::int64_t>(60 * kMiB));
  EXPECT_EQ(i(*step0, kTorchTensors), static_cast<std::int64_t>(12 * kMiB));
  EXPECT_EQ(i(*step0, kOutsideTorch), static_cast<std::int64_t>(2 * kMiB));
  EXPECT_TRUE(has_note(r,
                       "PyTorch in pid 100 on GPU 0: its segments' peak in the trace 60 MiB, "
                       "torch.cuda.max_memory_reserved() at exit 60 MiB (equal); tensors' peak from the allocator's "
                       "events 12 MiB, memory_stats()['requested_bytes.all.peak'] 12 MiB (equal)"))
      << notes(r);
  test::expect_matches_file(rendered(r, render::Format::kTable), "cuda_memory/pytorch.txt");
}

TEST(CudaMemoryReport, RegisteredAndSaysWhenNothingWasRecorded) {
  TempDir dir;
  const std::string log = dir.file("a.gslog");
  {
    LogBuilder l(log, 100);
    l.process(kT0);
    l.api(20 * kUs, 21 * kUs, 100, 1, "cudaLaunchKernel");
    l.kernel(22 * kUs, 23 * kUs, 1, "k");
    l.end(30 * kUs);
    l.flush();
  }
  const std::string path = dir.file("t.sqlite");
  (void)store::import_logs({log}, path, store::ImportOptions{});
  store::Database db = store::open_trace(path);
  const std::vector<Report> r = run_report(db, "cuda_memory");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].rows.empty());
  ASSERT_EQ(r[0].notes.size(), 1u) << notes(r[0]);
  EXPECT_EQ(r[0].notes[0].text,
            "no memory allocations in the capture range: trace with gpuscope trace --cuda-memory-usage to record them");
  // A trace from before memory_events existed: no table at all.
  store::Database older(path, store::Database::Mode::kReadWriteCreate);
  older.exec("DROP VIEW v_memory; DROP TABLE memory_events");
  const Report old = cuda_memory(older);
  EXPECT_TRUE(old.rows.empty());
  ASSERT_EQ(old.notes.size(), 1u) << notes(old);
  EXPECT_NE(old.notes[0].text.find("no memory_events table"), std::string::npos) << notes(old);
}

}  // namespace
}  // namespace gpuscope::analyze
