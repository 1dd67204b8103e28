#include "analyze/nsys/memcpy_check.hpp"

#include <string>

#include <gtest/gtest.h>

#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::TraceDb;
namespace rows = store::rows;
using test::cell;
using test::col;
using test::has_note;

bool is_null(const Report& r, std::size_t row, const std::string& column) {
  return std::holds_alternative<std::monostate>(r.rows.at(row).at(col(r, column)));
}

// Wall [0, 10000). GPU 0 (pid 100): kernels [1000,2000) on stream 7 and [5000,6000) on stream 8.
// GPU 1 (pid 200, another UUID): a kernel [8000,9000) — it must not hide copies on GPU 0.
// Copies on GPU 0 (GB/s = bytes/ns):
//   C1 HtoD pageable  1e6 B [0,500)       sync           → serialized (a); 2000 GB/s
//   C2 HtoD pageable  2e6 B [2500,3500)   async, alone   → serialized (b); 2000 GB/s
//   C3 HtoD pinned    4e6 B [1500,2500)   overlaps K1    → not serialized;  4000 GB/s
//   C4 HtoD pinned    1000 B [5500,5600)  inside K2      → not serialized, small; 10 GB/s
//   C5 DtoH to pinned 4 B [7000,7000)     zero length    → not serialized, small; no GB/s
//   C6 DtoD           8e6 B [8000,9000)   no kernel on GPU 0, but a device copy: GPU work,
//                                         never serialized; 8000 GB/s
// Serialized time 500 + 1000 = 1500 ns = 15 % of the wall. Pageable copies ≥ 64 KiB run at
// 2000 GB/s, pinned HtoD copies ≥ 64 KiB at 4000 (C4, 1000 B, is not compared).
class MemcpyCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t.add(rows::CaptureWindow{.pid = 100, .start_ns = 0, .end_ns = 10000, .reason = "all"});
    t.add<rows::Device>({{.pid = 100, .device_id = 0, .uuid = "GPU-a"}, {.pid = 200, .device_id = 0, .uuid = "GPU-b"}});
    t.strings({{1, "k"}});
    t.kernel(100, 0, 7, 1, 1000, 2000, 1);
    t.kernel(100, 0, 8, 2, 5000, 6000, 1);
    t.kernel(200, 0, 7, 1, 8000, 9000, 1);
    t.copy({.start = 0, .end = 500, .bytes = 1000000, .src = "pageable", .is_async = 0});
    t.copy({.start = 2500, .end = 3500, .bytes = 2000000, .src = "pageable"});
    t.copy({.start = 1500, .end = 2500, .bytes = 4000000});
    t.copy({.start = 5500, .end = 5600, .bytes = 1000});
    t.copy({.start = 7000, .end = 7000, .bytes = 4, .kind = "DtoH", .src = "device", .dst = "pinned"});
    t.copy({.start = 8000, .end = 9000, .bytes = 8000000, .kind = "DtoD", .src = "device", .dst = "device"});
  }
  TraceDb t;
};

TEST_F(MemcpyCheckTest, RowsPerTransferAndMemoryKind) {
  const Report r = memcpy_check(t.db());
  EXPECT_EQ(r.name, "memcpy_check");
  ASSERT_EQ(r.rows.size(), 4u);
  // Sorted by total time: HtoD pageable 1500, HtoD pinned 1100, DtoD 1000, DtoH 0.
  EXPECT_EQ(cell<std::string>(r, 0, "Operation"), "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(cell<std::string>(r, 0, "SrcMemKd"), "pageable");
  EXPECT_EQ(cell<std::string>(r, 0, "DstMemKd"), "device");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Count"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total"), 3000000);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Time"), 1500);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Median"), 2000.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Best"), 2000.0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Small"), 0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Sync"), 1);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Serialized"), 2);

  EXPECT_EQ(cell<std::string>(r, 1, "SrcMemKd"), "pinned");
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Total"), 4001000);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Total Time"), 1100);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "Median"), (4000.0 + 10.0) / 2);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "Best"), 4000.0);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Small"), 1);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Serialized"), 0);  // one overlaps K1 partly, one lies inside K2

  EXPECT_EQ(cell<std::string>(r, 2, "Operation"), "[CUDA memcpy Device-to-Device]");
  EXPECT_DOUBLE_EQ(cell<double>(r, 2, "Best"), 8000.0);
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Serialized"), 0);  // a device copy is GPU work, never serialized

  // A zero-length copy: counted, no bandwidth, not serialized.
  EXPECT_EQ(cell<std::string>(r, 3, "Operation"), "[CUDA memcpy Device-to-Host]");
  EXPECT_EQ(cell<std::int64_t>(r, 3, "Count"), 1);
  EXPECT_EQ(cell<std::int64_t>(r, 3, "Total Time"), 0);
  EXPECT_TRUE(is_null(r, 3, "Median"));
  EXPECT_TRUE(is_null(r, 3, "Best"));
  EXPECT_EQ(cell<std::int64_t>(r, 3, "Small"), 1);
  EXPECT_EQ(cell<std::int64_t>(r, 3, "Serialized"), 0);
  EXPECT_EQ(r.columns[col(r, "Median")].unit, "GB/s");
  EXPECT_EQ(r.columns[col(r, "Total")].unit, "bytes");
}

TEST_F(MemcpyCheckTest, FlagsPageableAndSerializedCopiesWithEvidence) {
  const Report r = memcpy_check(t.db());
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning,
                       "pageable copies: 2 host-device copies (3000000 bytes, 1.5 µs, 15 % of the wall time) use "
                       "pageable host memory"));
  // Compared at comparable sizes: the 1000-byte pinned copy is left out.
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning,
                       "median 2 TB/s for those of >= 64 KiB against 4 TB/s for pinned copies of that size and "
                       "direction"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "pin the host buffer"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning,
                       "serialized copies: 2 of 5 host-device copies serialize with compute (1 synchronous, 1 with "
                       "no kernel running on their GPU): 1.5 µs, 15 % of the wall time"));
  EXPECT_TRUE(has_note(r, NoteLevel::kInfo, "1 device copies (device-to-device or peer) took 1 µs, 10 % of the wall"));
  for (const Note& n : r.notes) {
    if (n.text.find("device copies (device-to-device") != std::string::npos) {
      EXPECT_EQ(n.text.find("pinned"), std::string::npos) << n.text;
    }
  }
  EXPECT_TRUE(has_note(r, NoteLevel::kInfo, "2 of 6 copies move fewer than 64 KiB"));
  EXPECT_TRUE(has_note(r, NoteLevel::kInfo, "verdict: 6 copies took 3.6 µs of GPU time"));
  EXPECT_TRUE(has_note(r, NoteLevel::kInfo, "pin the pageable host buffers first"));

  const detail::MemcpyFindings f = detail::memcpy_check_data(t.db()).findings;
  EXPECT_EQ(f.copies, 6);
  EXPECT_EQ(f.pageable, 2);
  EXPECT_EQ(f.serialized, 2);
  EXPECT_EQ(f.serialized_sync, 1);
  EXPECT_EQ(f.serialized_ns, 1500);
  EXPECT_DOUBLE_EQ(f.serialized_share, 0.15);
  EXPECT_EQ(f.device, 1);
  EXPECT_DOUBLE_EQ(f.pageable_share, 0.15);
  EXPECT_DOUBLE_EQ(f.pageable_large_gbps, 2000.0);
  EXPECT_DOUBLE_EQ(f.pinned_large_gbps, 4000.0);
  EXPECT_EQ(f.small, 2);
}

// Pinned, overlapped copies: no warning, a calm verdict.
TEST(MemcpyCheck, OverlappedPinnedCopiesAreFine) {
  TraceDb t;
  t.add(rows::CaptureWindow{.pid = 100, .start_ns = 0, .end_ns = 100000, .reason = "all"});
  t.strings({{1, "k"}});
  t.kernel(100, 0, 7, 1, 0, 90000, 1);
  t.copy({.stream = 8, .start = 1000, .end = 2000, .bytes = 10000000});
  t.copy({.stream = 8,
          .start = 95000,
          .end = 96000,
          .bytes = 10000000,
          .kind = "DtoH",
          .src = "device",
          .dst = "pinned"});  // alone: 1 % of the wall, under the 5 % warning threshold
  const Report r = memcpy_check(t.db());
  ASSERT_EQ(r.rows.size(), 2u);
  for (const Note& n : r.notes) EXPECT_EQ(n.level, NoteLevel::kInfo) << n.text;
  EXPECT_TRUE(has_note(r,
                       "serialized copies, too little time to matter: 1 of 2 host-device copies serialize with "
                       "compute (0 synchronous, 1 with no kernel running"));
  EXPECT_TRUE(has_note(r, "copies are not what holds this program back"));
  EXPECT_FALSE(has_note(r, "pageable"));
  EXPECT_FALSE(has_note(r, "Python lines"));
}

// With Python call sites: the lines whose copies were pageable are named (the user's frame,
// not the library's); pinned copies name none (OverlappedPinnedCopiesAreFine has no such note).
TEST(MemcpyCheck, NamesThePythonLinesOfPageableCopies) {
  TraceDb t;
  t.add(rows::CaptureWindow{.pid = 100, .start_ns = 0, .end_ns = 10000, .reason = "all"});
  t.strings({{1, "k"}, {2, "cudaMemcpyAsync"}});
  t.pin_memory_stacks(100);
  t.kernel(100, 0, 7, 1, 0, 1000, 1);
  for (int i = 0; i < 2; ++i) {
    t.copy({.corr = 10 + i, .start = 2000 + 2000 * i, .end = 3000 + 2000 * i, .bytes = 1000000, .src = "pageable"});
    t.api(100, 1, 2, 1900 + 2000 * i, 1950 + 2000 * i, 10 + i, 2);
  }
  const Report r = memcpy_check(t.db());
  EXPECT_TRUE(has_note(r,
                       "the Python lines of the pageable copies: loader.py:123 Loader.__next__ (cudaMemcpyAsync: 2 "
                       "calls, 2 µs, 100 % of the pageable copies' time)"));
  EXPECT_TRUE(
      has_note(r, NoteLevel::kWarning,
               "(median 1 TB/s for those of >= 64 KiB); 100 % of their time comes from loader.py:123 Loader.__next__ "
               "(cudaMemcpyAsync) — pin the host buffer"))
      << [&] {
           std::string all;
           for (const Note& n : r.notes) all += n.text + "\n";
           return all;
         }();
}

// Small pageable copies from data.py:40 to_device ← train.py:21 <module> (through torch's own
// copy_, skipped) and one with no call site; `stacks` false: the same copies without call sites.
std::vector<Note> small_copies_notes(bool stacks) {
  TraceDb t;
  t.add(rows::CaptureWindow{.pid = 100, .start_ns = 0, .end_ns = 10000, .reason = "all"});
  t.strings({{1, "k"},
             {2, "cudaMemcpyAsync"},
             {20, "/w/train.py"},
             {21, "/w/data.py"},
             {22, "/usr/lib/python3/dist-packages/torch/_tensor.py"},
             {23, "<module>"},
             {24, "to_device"},
             {25, "copy_"}});
  if (stacks) {
    t.add({rows::PyFrame{.id = 1, .pid = 100, .file_id = 20, .function_id = 23, .line = 21, .first_line = 1},
           rows::PyFrame{.id = 2, .pid = 100, .file_id = 21, .function_id = 24, .line = 40, .first_line = 38},
           rows::PyFrame{.id = 3, .pid = 100, .file_id = 22, .function_id = 25, .line = 9, .first_line = 9}});
    t.add({rows::PyStack{.id = 1, .pid = 100, .parent_id = std::nullopt, .frame_id = 1, .depth = 0},
           rows::PyStack{.id = 2, .pid = 100, .parent_id = 1, .frame_id = 2, .depth = 1},
           rows::PyStack{.id = 3, .pid = 100, .parent_id = 2, .frame_id = 3, .depth = 2}});
  }
  t.kernel(100, 0, 7, 1, 0, 1000, 1);
  for (int i = 0; i < 4; ++i) {
    t.copy({.corr = 10 + i, .start = 2000 + 2000 * i, .end = 2400 + 2000 * i, .bytes = 4096, .src = "pageable"});
    t.api(100, 1, 2, 1900 + 2000 * i, 1950 + 2000 * i, 10 + i, stacks && i < 3 ? rows::OptInt(3) : std::nullopt);
  }
  return memcpy_check(t.db()).notes;
}

TEST(MemcpyCheck, NamesTheCallerChainOfSmallAndPageableCopies) {
  const std::vector<Note> with = small_copies_notes(true), without = small_copies_notes(false);
  ASSERT_EQ(with.size(), without.size() + 2);
  const std::string where = "data.py:40 to_device ← train.py:21 <module>";
  EXPECT_EQ(with[with.size() - 2].text, "the Python lines of the pageable copies: " + where +
                                            " (cudaMemcpyAsync: 3 calls, 1.2 µs, 75 % of the pageable copies' time)");
  EXPECT_EQ(with.back().text, "the Python lines of the small copies: " + where +
                                  " (cudaMemcpyAsync: 3 calls, 1.2 µs, 75 % of the small copies' time)");
  // The pageable verdict gains the line; every other note is as without call sites.
  ASSERT_EQ(with[0].level, NoteLevel::kWarning);
  const std::string added = "; 75 % of their time comes from " + where + " (cudaMemcpyAsync)";
  const std::size_t at = with[0].text.find(added);
  ASSERT_NE(at, std::string::npos) << with[0].text;
  EXPECT_EQ(with[0].text.substr(0, at) + with[0].text.substr(at + added.size()), without[0].text);
  for (std::size_t i = 1; i < without.size(); ++i) EXPECT_EQ(with[i].text, without[i].text);
}

TEST(MemcpyCheck, KernelsButNoCopies) {
  TraceDb t;
  t.strings({{1, "k"}});
  t.kernel(100, 0, 7, 1, 0, 10, 1);
  const Report r = memcpy_check(t.db());
  EXPECT_TRUE(r.rows.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].text, "no memory copies in the capture range");
}

}  // namespace
}  // namespace gpuscope::analyze
