// The filters of `gpuscope stats` (analyze/common/trace_filter.hpp) on a hand-built trace:
// every test names exactly which rows survive.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analyze/nsys/nsys_reports.hpp"
#include "analyze/common/trace_filter.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using Ids = std::vector<std::int64_t>;
namespace rows = store::rows;

// Two processes. pid 100: threads 1 (main) and 2 (a second launching thread, like
// PyTorch's autograd thread), GPU-A as device 0 and GPU-B as device 1. pid 200 sees
// GPU-B as its device 0, so GPU-B is physical GPU 1 (analyze/common/gpu_index.hpp).
// Times in ns; the capture windows start at 0, so relative time = absolute time.
//
//   NVTX (pid 100, tid 1): 1 'step' [1000,2000]   2 'step' [3000,4000]
//                          3 'other' [1500,1600]  4 'step'@dom StartEnd [5000,6000]
//                          5 mark 'other' at 1200
//   API calls: id pid tid  [start,end]  corr → GPU op
//              1  100  1   [1100,1150]  1    kernel 1 [1200,5000] dev 0
//              2  100  2   [1300,1400]  2    kernel 2 [1500,1700] dev 0
//              3  100  1   [2500,2600]  3    kernel 3 [2700,2800] dev 0
//              4  100  1   [3900,4100]  4    kernel 4 [4200,4300] dev 0 (call straddles step 2's end)
//              5  100  1   [3100,3200]  5    memcpy 1 [3300,3400] dev 0
//              6  100  1   [3500,3600]  6    (cudaDeviceSynchronize: no GPU op)
//              7  100  1   [5100,5200]  7    kernel 5 [5300,5400] dev 1 (GPU-B)
//              8  200  7   [1100,1200]  1    kernel 6 [1300,1400] dev 0 (GPU-B)
class TraceFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t.strings({{1, "kA"},
               {2, "kB"},
               {3, "cudaLaunchKernel"},
               {4, "step"},
               {5, "other"},
               {6, "dom"},
               {7, "cudaDeviceSynchronize"}});
    t.add(rows::Meta{.key = "schema_version", .value = "1"});
    t.add<rows::Process>({{.pid = 100, .cmdline = "python3 train.py", .start_ns = 0, .end_ns = 10000},
                          {.pid = 200, .cmdline = "worker", .start_ns = 0, .end_ns = 10000}});
    t.add<rows::CaptureWindow>({{.pid = 100, .start_ns = 0, .end_ns = 10000, .reason = "all"},
                                {.pid = 200, .start_ns = 0, .end_ns = 10000, .reason = "all"}});
    t.add<rows::Thread>({{.pid = 100, .tid = 1}, {.pid = 100, .tid = 2}, {.pid = 200, .tid = 7}});
    t.add<rows::Device>({{.pid = 100, .device_id = 0, .name = "A", .uuid = "GPU-A"},
                         {.pid = 100, .device_id = 1, .name = "B", .uuid = "GPU-B"},
                         {.pid = 200, .device_id = 0, .name = "B", .uuid = "GPU-B"}});
    auto api = [](std::int64_t id, std::int64_t pid, std::int64_t tid, std::int64_t name, std::int64_t start,
                  std::int64_t end, std::int64_t corr) {
      return rows::ApiCall{.id = id,
                           .pid = pid,
                           .tid = tid,
                           .domain = "runtime",
                           .name_id = name,
                           .start_ns = start,
                           .end_ns = end,
                           .correlation_id = corr};
    };
    t.add<rows::ApiCall>({api(1, 100, 1, 3, 1100, 1150, 1), api(2, 100, 2, 3, 1300, 1400, 2),
                          api(3, 100, 1, 3, 2500, 2600, 3), api(4, 100, 1, 3, 3900, 4100, 4),
                          api(5, 100, 1, 3, 3100, 3200, 5), api(6, 100, 1, 7, 3500, 3600, 6),
                          api(7, 100, 1, 3, 5100, 5200, 7), api(8, 200, 7, 3, 1100, 1200, 1)});
    t.kernel(100, 0, 7, 1, 1200, 5000, 1);
    t.kernel(100, 0, 7, 2, 1500, 1700, 2);
    t.kernel(100, 0, 7, 3, 2700, 2800, 1);
    t.kernel(100, 0, 7, 4, 4200, 4300, 1);
    t.kernel(100, 1, 9, 7, 5300, 5400, 2);
    t.kernel(200, 0, 7, 1, 1300, 1400, 1);
    t.add(rows::Memcpy{.pid = 100,
                       .device_id = 0,
                       .context_id = 1,
                       .stream_id = 7,
                       .correlation_id = 5,
                       .start_ns = 3300,
                       .end_ns = 3400,
                       .bytes = 4096,
                       .copy_kind = "HtoD"});
    auto nvtx = [](std::int64_t id, std::string_view style, std::int64_t text, std::int64_t start,
                   std::optional<std::int64_t> end) {
      return rows::NvtxEvent{.id = id,
                             .pid = 100,
                             .tid = 1,
                             .end_tid = 1,
                             .style = style,
                             .text_id = text,
                             .start_ns = start,
                             .end_ns = end};
    };
    rows::NvtxEvent in_dom = nvtx(4, "StartEnd", 4, 5000, 6000);
    in_dom.domain_id = 6;
    t.add<rows::NvtxEvent>({nvtx(1, "PushPop", 4, 1000, 2000), nvtx(2, "PushPop", 4, 3000, 4000),
                            nvtx(3, "PushPop", 5, 1500, 1600), in_dom, nvtx(5, "Mark", 5, 1200, std::nullopt)});
  }

  FilteredTrace run(const TraceFilter& f) { return filter_trace(t.db(), f); }

  static Ids ids(store::Database& db, const std::string& table) {
    Ids out;
    store::Statement st = db.prepare("SELECT id FROM " + table + " ORDER BY id");
    while (st.step()) out.push_back(st.column_int(0));
    return out;
  }
  static std::int64_t one(store::Database& db, const std::string& sql) { return db.query_int(sql).value_or(-1); }

  static TraceFilter nvtx(const std::string& text) {
    TraceFilter f;
    f.nvtx = parse_nvtx_filter(text);
    return f;
  }

  test::TraceDb t;
};

TEST(ParseNvtxFilter, NameDomainAndInstance) {
  const NvtxRangeFilter a = parse_nvtx_filter("step@dom/3");
  EXPECT_EQ(a.name, "step");
  EXPECT_EQ(a.domain, "dom");
  EXPECT_EQ(a.instance, 3);
  const NvtxRangeFilter b = parse_nvtx_filter("fwd/bwd");  // '/' not followed by digits only
  EXPECT_EQ(b.name, "fwd/bwd");
  EXPECT_FALSE(b.domain);
  EXPECT_FALSE(b.instance);
  EXPECT_EQ(parse_nvtx_filter("x@").domain, "");  // the default domain
  EXPECT_EQ(parse_nvtx_filter("a@b@c").name, "a@b");
  EXPECT_THROW((void)parse_nvtx_filter("/2"), std::invalid_argument);
  EXPECT_THROW((void)parse_nvtx_filter("step/0"), std::invalid_argument);
  EXPECT_THROW((void)parse_nvtx_filter(""), std::invalid_argument);
}

TEST(ParseTraceTime, UnitsDefaultSeconds) {
  EXPECT_EQ(parse_trace_time("1.5"), 1'500'000'000);
  EXPECT_EQ(parse_trace_time("2s"), 2'000'000'000);
  EXPECT_EQ(parse_trace_time(" 250 ms "), 250'000'000);
  EXPECT_EQ(parse_trace_time("10us"), 10'000);
  EXPECT_EQ(parse_trace_time("42ns"), 42);
  EXPECT_EQ(parse_trace_time("1e-6"), 1'000);
  EXPECT_EQ(parse_trace_time("0"), 0);
  for (const char* bad : {"", "abc", "-1", "1h", "1.5 sec", "ms", "1e30"}) {
    try {
      (void)parse_trace_time(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("250ms"), std::string::npos) << e.what();  // says what works
    }
  }
}

TEST_F(TraceFilterTest, NoFilterCopiesEverything) {
  FilteredTrace f = run({});
  EXPECT_EQ(ids(f.db, "api_calls"), (Ids{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(ids(f.db, "kernels"), (Ids{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ids(f.db, "nvtx_events"), (Ids{1, 2, 3, 4, 5}));
  EXPECT_EQ(one(f.db, "SELECT COUNT(*) FROM strings"), 7);
  EXPECT_EQ(one(f.db, "SELECT COUNT(*) FROM v_kernels WHERE name = 'kA'"), 4);  // views exist
  EXPECT_EQ(one(f.db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"),
            static_cast<std::int64_t>(store::indexes().size()));
  EXPECT_TRUE(f.warnings.empty());
}

TEST_F(TraceFilterTest, NvtxRangeAnyThreadOfTheProcessAndTheGpuWorkItLaunched) {
  FilteredTrace f = run(nvtx("step"));                      // all three 'step' instances, any domain
  EXPECT_EQ(ids(f.db, "api_calls"), (Ids{1, 2, 5, 6, 7}));  // 2: another thread; 4 straddles the end
  EXPECT_EQ(ids(f.db, "kernels"), (Ids{1, 2, 5}));          // 1 runs past the step: kept whole
  EXPECT_EQ(ids(f.db, "memcpys"), (Ids{1}));
  EXPECT_EQ(ids(f.db, "nvtx_events"), (Ids{1, 2, 3, 4, 5}));
  EXPECT_EQ(one(f.db, "SELECT COUNT(*) FROM capture_windows WHERE reason = 'nvtx:step'"), 3);
  EXPECT_EQ(one(f.db, "SELECT MIN(start_ns) FROM capture_windows"), 1000);
  EXPECT_EQ(one(f.db, "SELECT MAX(end_ns) FROM capture_windows"), 6000);
  EXPECT_TRUE(f.warnings.empty());

  // The reports run unchanged on the copy.
  const Report k = cuda_gpu_kern_sum(f.db);
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_EQ(test::cell<std::string>(k, 0, "Name"), "kA");
  EXPECT_EQ(test::cell<std::int64_t>(k, 0, "Instances"), 1);
  EXPECT_EQ(test::cell<std::int64_t>(k, 0, "Total Time"), 3800);
  EXPECT_EQ(test::cell<std::int64_t>(k, 1, "Instances"), 2);
}

TEST_F(TraceFilterTest, NvtxDefaultDomainWidensTheWallToTheKeptWork) {
  FilteredTrace f = run(nvtx("step@"));  // instances 1 and 2 only
  EXPECT_EQ(ids(f.db, "api_calls"), (Ids{1, 2, 5, 6}));
  EXPECT_EQ(ids(f.db, "kernels"), (Ids{1, 2}));
  EXPECT_EQ(ids(f.db, "nvtx_events"), (Ids{1, 2, 3, 5}));
  // Kernel 1 ends at 5000, after step 2: the last window grows to hold it.
  EXPECT_EQ(one(f.db, "SELECT MIN(start_ns) FROM capture_windows"), 1000);
  EXPECT_EQ(one(f.db, "SELECT MAX(end_ns) FROM capture_windows"), 5000);
}

TEST_F(TraceFilterTest, NvtxNamedDomainAndGlob) {
  FilteredTrace d = run(nvtx("step@dom"));
  EXPECT_EQ(ids(d.db, "api_calls"), (Ids{7}));
  EXPECT_EQ(ids(d.db, "kernels"), (Ids{5}));
  FilteredTrace g = run(nvtx("st*"));
  EXPECT_EQ(ids(g.db, "api_calls"), (Ids{1, 2, 5, 6, 7}));
}

TEST_F(TraceFilterTest, NvtxInstanceCountsFromOneInStartOrder) {
  FilteredTrace f = run(nvtx("step/2"));  // [3000,4000]
  EXPECT_EQ(ids(f.db, "api_calls"), (Ids{5, 6}));
  EXPECT_EQ(ids(f.db, "kernels"), Ids{});
  EXPECT_EQ(ids(f.db, "memcpys"), (Ids{1}));
  EXPECT_EQ(ids(f.db, "nvtx_events"), (Ids{2}));
}

TEST_F(TraceFilterTest, NvtxMatchingNothingWarnsWithTheNamesSeen) {
  FilteredTrace f = run(nvtx("stepp"));
  EXPECT_EQ(ids(f.db, "api_calls"), Ids{});
  EXPECT_EQ(ids(f.db, "kernels"), Ids{});
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_NE(f.warnings[0].find("no NVTX range 'stepp'"), std::string::npos) << f.warnings[0];
  EXPECT_NE(f.warnings[0].find("ranges seen: 'step' (2), 'other' (1), 'step@dom' (1)"), std::string::npos)
      << f.warnings[0];
  const Report k = cuda_gpu_kern_sum(f.db);  // an empty trace, not an error
  EXPECT_TRUE(k.rows.empty());

  FilteredTrace g = run(nvtx("step/4"));
  ASSERT_EQ(g.warnings.size(), 1u);
  EXPECT_NE(g.warnings[0].find("no instance 4 of NVTX range 'step'"), std::string::npos) << g.warnings[0];
}

TEST_F(TraceFilterTest, TimeWindowKeepsOverlappingEventsUnclipped) {
  TraceFilter f;
  f.from_ns = parse_trace_time("1.2us");
  f.to_ns = parse_trace_time("1450ns");
  FilteredTrace r = run(f);
  EXPECT_EQ(ids(r.db, "api_calls"), (Ids{2, 8}));  // 8 ends exactly at 1200: overlaps
  EXPECT_EQ(ids(r.db, "kernels"), (Ids{1, 6}));
  EXPECT_EQ(one(r.db, "SELECT end_ns - start_ns FROM kernels WHERE id = 1"), 3800);  // not clipped
  EXPECT_EQ(ids(r.db, "nvtx_events"), (Ids{1, 5}));                                  // the mark at 1200
  EXPECT_EQ(ids(r.db, "memcpys"), Ids{});
  // Windows clipped to [1200,1450], then widened to the kept events [1100,5000].
  EXPECT_EQ(one(r.db, "SELECT MIN(start_ns) FROM capture_windows"), 1100);
  EXPECT_EQ(one(r.db, "SELECT MAX(end_ns) FROM capture_windows"), 5000);
  EXPECT_EQ(one(r.db, "SELECT COUNT(*) FROM capture_windows"), 2);
  EXPECT_TRUE(r.warnings.empty());
}

TEST_F(TraceFilterTest, TimeWindowOutsideTheTraceWarns) {
  TraceFilter f;
  f.from_ns = parse_trace_time("1s");
  FilteredTrace r = run(f);
  EXPECT_EQ(ids(r.db, "kernels"), Ids{});
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("no events in [1 s, end]"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("lasts 10 µs"), std::string::npos) << r.warnings[0];

  f.to_ns = 0;
  EXPECT_THROW((void)run(f), std::invalid_argument);  // from after to
}

TEST_F(TraceFilterTest, Process) {
  TraceFilter f;
  f.pid = 200;
  FilteredTrace r = run(f);
  EXPECT_EQ(ids(r.db, "api_calls"), (Ids{8}));
  EXPECT_EQ(ids(r.db, "kernels"), (Ids{6}));
  EXPECT_EQ(ids(r.db, "nvtx_events"), Ids{});
  EXPECT_EQ(one(r.db, "SELECT COUNT(*) FROM devices"), 1);
  EXPECT_EQ(one(r.db, "SELECT COUNT(*) FROM processes"), 1);

  f.pid = 999;
  FilteredTrace none = run(f);
  ASSERT_EQ(none.warnings.size(), 1u);
  EXPECT_NE(none.warnings[0].find("no process 999"), std::string::npos) << none.warnings[0];
  EXPECT_NE(none.warnings[0].find("100 (python3 train.py), 200 (worker)"), std::string::npos) << none.warnings[0];
}

TEST_F(TraceFilterTest, DeviceIsThePhysicalGpuIndex) {
  TraceFilter f;
  f.gpu = 1;  // GPU-B: pid 100's device 1 and pid 200's device 0
  FilteredTrace r = run(f);
  EXPECT_EQ(ids(r.db, "kernels"), (Ids{5, 6}));
  EXPECT_EQ(ids(r.db, "memcpys"), Ids{});
  EXPECT_EQ(ids(r.db, "api_calls"), (Ids{6, 7, 8}));  // 1-5 launched work on GPU-A
  EXPECT_EQ(one(r.db, "SELECT COUNT(*) FROM devices"), 2);

  f.gpu = 0;
  FilteredTrace a = run(f);
  EXPECT_EQ(ids(a.db, "kernels"), (Ids{1, 2, 3, 4}));
  EXPECT_EQ(ids(a.db, "memcpys"), (Ids{1}));
  EXPECT_EQ(ids(a.db, "api_calls"), (Ids{1, 2, 3, 4, 5, 6}));

  f.gpu = 5;
  FilteredTrace none = run(f);
  ASSERT_EQ(none.warnings.size(), 1u);
  EXPECT_NE(none.warnings[0].find("no GPU 5 in the trace; GPUs: 0 (A), 1 (B)"), std::string::npos) << none.warnings[0];
}

TEST_F(TraceFilterTest, FiltersCombineWithAnd) {
  TraceFilter f = nvtx("step");
  f.gpu = 1;
  FilteredTrace r = run(f);
  EXPECT_EQ(ids(r.db, "api_calls"), (Ids{6, 7}));
  EXPECT_EQ(ids(r.db, "kernels"), (Ids{5}));
  EXPECT_TRUE(r.warnings.empty());

  TraceFilter g = nvtx("step");
  g.pid = 200;  // pid 200 has no 'step' range
  FilteredTrace none = run(g);
  EXPECT_EQ(ids(none.db, "api_calls"), Ids{});
  ASSERT_EQ(none.warnings.size(), 1u);
  EXPECT_NE(none.warnings[0].find("in process 200"), std::string::npos) << none.warnings[0];
}

TEST_F(TraceFilterTest, SourceIsLeftAsItWas) {
  (void)run(nvtx("step"));
  EXPECT_EQ(one(t.db(), "SELECT COUNT(*) FROM kernels"), 6);
  EXPECT_EQ(one(t.db(), "SELECT COUNT(*) FROM capture_windows"), 2);
  EXPECT_EQ(one(t.db(), "SELECT COUNT(*) FROM sqlite_temp_master"), 0);
}

}  // namespace
}  // namespace gpuscope::analyze
