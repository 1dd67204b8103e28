// gpuscope kernels' reports over a small trace built with the real schema.
#include "analyze/kernels/kernel_reports.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::cell;
using test::col;
using test::has_note;
using test::TraceDb;

constexpr double kGiB = 1024.0 * 1024 * 1024;

MachineProfile h100_profile() {
  MachineProfile p;
  p.device.name = "NVIDIA H100";
  p.device.uuid = "GPU-100";
  for (auto [name, v] : std::initializer_list<std::pair<const char*, double>>{{"dram_copy", 3.0e12},
                                                                              {"l2_read", 10e12},
                                                                              {"shared_memory", 30e12},
                                                                              {"fp32_fma", 60e12},
                                                                              {"launch_rate", 4e5}}) {
    Ceiling c;
    c.name = name;
    c.measured = v;
    p.ceilings.push_back(c);
  }
  return p;
}

// Strings 1-3 kernel names, 10.. metric names; three launches of the quick set:
// launch 0 and 2 a 1 GiB copy ("copy_kernel"), launch 1 a <<<1,32>>> of 2 µs ("tiny").
class KernelReportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t.add(device);
    t.strings({{1, "void copy_kernel<float>(float*, const float*, int)"},
               {2, "copy_kernel"},
               {3, "tiny(int*)"},
               {4, "tiny"},
               {10, "gpu__time_duration.sum"},
               {11, "dram__bytes_read.sum"},
               {12, "dram__bytes_write.sum"},
               {13, "lts__t_bytes.sum"},
               {14, "l1tex__t_bytes.sum"},
               {15, "sm__warps_active.avg.pct_of_peak_sustained_active"}});
    launch(1, 0, 1, 2, 2112, 256, 16);
    launch(2, 1, 3, 4, 1, 32, 8);
    launch(3, 2, 1, 2, 2112, 256, 16);
    metrics(1, 0.72e6, kGiB, kGiB, 2 * kGiB, kGiB, 85);
    metrics(2, 2000, 128, 128, 256, 256, 1.5);
    metrics(3, 0.72e6, kGiB, kGiB, 2 * kGiB, kGiB, 85);
  }
  void launch(int id, int index, int name, int short_name, int grid, int block, int regs) {
    t.add(store::rows::KernelProfile{.id = id,
                                     .pid = 100,
                                     .device_id = 0,
                                     .context_id = 1,
                                     .correlation_id = 100 + id,
                                     .launch_index = index,
                                     .name_id = name,
                                     .short_name_id = short_name,
                                     .grid_x = grid,
                                     .grid_y = 1,
                                     .grid_z = 1,
                                     .block_x = block,
                                     .block_y = 1,
                                     .block_z = 1,
                                     .registers_per_thread = regs,
                                     .static_shared_memory = 0,
                                     .dynamic_shared_memory = 0,
                                     .metric_set = "quick",
                                     .passes = 1});
  }
  void metrics(int id, double ns, double rd, double wr, double l2, double l1, double occ) {
    const double v[] = {ns, rd, wr, l2, l1, occ};
    for (int m = 0; m < 6; ++m) t.add(store::rows::KernelMetric{.profile_id = id, .metric_id = 10 + m, .value = v[m]});
  }
  // The GPU (TraceDb::h100()'s); a derived fixture may change it before SetUp inserts it.
  store::rows::Device device = TraceDb::h100_row(100, "GPU-100");
  TraceDb t;
};

// The devices row also gives the clocks and the bus width: theoretical ceilings.
class KernelReportsClocksTest : public KernelReportsTest {
 protected:
  void SetUp() override {
    device.core_clock_khz = 1980000;
    device.memory_clock_khz = 2619000;
    device.memory_bus_width_bits = 5120;
    KernelReportsTest::SetUp();
  }
};

TEST_F(KernelReportsTest, PerLaunchColumnsAndBounds) {
  const MachineProfile p = h100_profile();
  KernelReportOptions o;
  o.profile = &p;
  const Report r = kernel_metrics(t.db(), o);
  EXPECT_EQ(r.name, "kernel_metrics");
  ASSERT_EQ(r.rows.size(), 3u);
  std::vector<std::string> names;
  for (const Column& c : r.columns) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"Launch",
                                             "PID",
                                             "Name",
                                             "Grid",
                                             "Block",
                                             "Reg/Trd",
                                             "Duration",
                                             "gpu__time_duration.sum",
                                             "dram__bytes_read.sum",
                                             "dram__bytes_write.sum",
                                             "lts__t_bytes.sum",
                                             "l1tex__t_bytes.sum",
                                             "sm__warps_active.avg.pct_of_peak_sustained_active",
                                             "DRAM BW",
                                             "L2 BW",
                                             "L1 BW",
                                             "Theoretical Occ",
                                             "Occ Limiter",
                                             "Ceiling",
                                             "% of Ceiling",
                                             "Bound",
                                             "Floor Time",
                                             "Est. Speedup",
                                             "GPU Time Share",
                                             "Program Gain",
                                             "Explanation"}));  // no FLOP columns for the quick set
  EXPECT_EQ(r.columns[col(r, "dram__bytes_read.sum")].unit, "bytes");
  EXPECT_EQ(r.columns[col(r, "DRAM BW")].unit, "GB/s");
  EXPECT_EQ(r.columns[col(r, "Duration")].unit, "us");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Launch"), 0);
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "copy_kernel");
  EXPECT_EQ(cell<std::string>(r, 0, "Grid"), "2112x1x1");
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Duration"), 720.0);
  EXPECT_NEAR(cell<double>(r, 0, "DRAM BW"), 2 * kGiB / 0.72e-3 * 1e-9, 1e-6);
  EXPECT_NEAR(cell<double>(r, 0, "% of Ceiling"), 99.4, 0.1);
  EXPECT_EQ(cell<std::string>(r, 0, "Ceiling"), "dram_copy");
  EXPECT_EQ(cell<std::string>(r, 0, "Bound"), "dram-bound");
  EXPECT_EQ(cell<std::string>(r, 1, "Name"), "tiny");
  EXPECT_EQ(cell<std::string>(r, 1, "Bound"), "launch-bound");
  EXPECT_EQ(cell<std::string>(r, 1, "Occ Limiter"), "blocks");
  EXPECT_TRUE(has_note(r, "measured ceilings"));
  EXPECT_TRUE(has_note(r, "--set roofline"));
  // Estimated speedup: the floor is the duration × the busiest unit's % of its ceiling; the
  // launches' time shares add up to 100 %, and the gain is share × speedup.
  EXPECT_EQ(r.columns[col(r, "Floor Time")].unit, "ns");
  EXPECT_EQ(r.columns[col(r, "Program Gain")].unit, "%");
  EXPECT_NEAR(cell<double>(r, 0, "Floor Time"), 720e3 * cell<double>(r, 0, "% of Ceiling") / 100, 1e-6);
  EXPECT_NEAR(cell<double>(r, 0, "Est. Speedup"), 100 - cell<double>(r, 0, "% of Ceiling"), 1e-9);
  double shares = 0;
  for (std::size_t i = 0; i < r.rows.size(); ++i) shares += cell<double>(r, i, "GPU Time Share");
  EXPECT_NEAR(shares, 100.0, 1e-9);
  EXPECT_NEAR(cell<double>(r, 0, "Program Gain"),
              cell<double>(r, 0, "GPU Time Share") * cell<double>(r, 0, "Est. Speedup") / 100, 1e-9);
  EXPECT_NE(cell<std::string>(r, 0, "Explanation").find("estimated speedup"), std::string::npos);
  EXPECT_EQ(cell<std::string>(r, 1, "Explanation").find("estimated speedup"), std::string::npos);  // launch-bound
}

TEST_F(KernelReportsTest, PerNameAggregates) {
  const MachineProfile p = h100_profile();
  KernelReportOptions o;
  o.profile = &p;
  const Report r = kernel_metrics_sum(t.db(), o);
  EXPECT_EQ(r.name, "kernel_metrics_sum");
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "copy_kernel");  // most time first
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Launches"), 2);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Total Time"), 1440.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Avg"), 720.0);
  EXPECT_NEAR(cell<double>(r, 0, "DRAM Bytes"), 4 * kGiB * 1e-6, 1e-6);
  EXPECT_NEAR(cell<double>(r, 0, "DRAM BW"), 2 * kGiB / 0.72e-3 * 1e-9, 1e-6);
  EXPECT_EQ(cell<std::string>(r, 0, "Bound"), "dram-bound");
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Bound Share"), 100.0);
  EXPECT_NE(cell<std::string>(r, 0, "Explanation").find("close to the limit"), std::string::npos);
  EXPECT_EQ(cell<std::string>(r, 1, "Bound"), "launch-bound");
}

TEST_F(KernelReportsTest, NameFilterAndBadRegex) {
  KernelReportOptions o;
  o.name_regex = "^tin";
  const KernelAnalysis a = analyze_kernels(t.db(), o);
  ASSERT_EQ(a.launches.size(), 1u);
  EXPECT_EQ(a.launches[0].short_name, "tiny");
  o.name_regex = "copy_kernel<float>";  // the demangled name matches too
  EXPECT_EQ(analyze_kernels(t.db(), o).launches.size(), 2u);
  o.name_regex = "nothing";
  const Report r = kernel_metrics(t.db(), o);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_TRUE(has_note(r, "no profiled launch matches"));
  o.name_regex = "(";
  EXPECT_THROW((void)analyze_kernels(t.db(), o), std::invalid_argument);
}

TEST_F(KernelReportsClocksTest, WithoutAProfileTheCeilingsAreTheoreticalFromTheDevicesTable) {
  const KernelAnalysis a = analyze_kernels(t.db());
  EXPECT_EQ(a.ceiling_source, "theoretical");
  ASSERT_FALSE(a.warnings.empty());
  EXPECT_NE(a.warnings[0].find("no machine profile"), std::string::npos);
  // 2 GiB in 0.72 ms over 2 × 2619 MHz × 640 B = 3.352 TB/s.
  EXPECT_NEAR(a.launches[0].derived.pct_of_ceiling, 2 * kGiB / 0.72e-3 / 3.35232e12 * 100, 0.01);
  const Report r = kernel_launch_report(a);
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "no machine profile"));
  EXPECT_TRUE(has_note(r, "no l2_read ceiling"));
}

TEST_F(KernelReportsTest, ProfileOfAnotherGpuWarns) {
  MachineProfile p = h100_profile();
  p.device.uuid = "GPU-other";
  KernelReportOptions o;
  o.profile = &p;
  const KernelAnalysis a = analyze_kernels(t.db(), o);
  ASSERT_EQ(a.warnings.size(), 1u);
  EXPECT_NE(a.warnings[0].find("GPU-other"), std::string::npos);
}

TEST(KernelReports, TraceWithoutProfilesSaysToRunGpuscopeKernels) {
  TraceDb t;
  const KernelAnalysis a = analyze_kernels(t.db());
  EXPECT_FALSE(a.has_profiles);
  for (const Report& r : {kernel_launch_report(a), kernel_name_report(a)}) {
    EXPECT_TRUE(r.rows.empty());
    EXPECT_FALSE(r.columns.empty());
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_NE(r.notes[0].text.find("gpuscope kernels"), std::string::npos);
  }
  // An older trace without the tables at all.
  store::Database db(":memory:", store::Database::Mode::kReadWriteCreate);
  db.exec("CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT)");
  EXPECT_FALSE(analyze_kernels(db).has_profiles);
}

}  // namespace
}  // namespace gpuscope::analyze
