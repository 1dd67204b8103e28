// gpuscope kernels' output after import: report, explanations, SVG, profile lookup.
#include "cli/kernels_output.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "store/atomic_file.hpp"
#include "store/machine_profile_json.hpp"
#include "trace_db.hpp"

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;
constexpr double kGiB = 1024.0 * 1024 * 1024;

class KernelsOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("gpuscope_kernels_output_" + std::to_string(::getpid()));
    fs::create_directories(m_dir / "cache");
    ::setenv("GPUSCOPE_CACHE_DIR", (m_dir / "cache").c_str(), 1);  // never the user's cache
    t.h100();
    t.strings({{1, "copy_kernel"},
               {2, "tiny"},
               {10, "gpu__time_duration.sum"},
               {11, "dram__bytes_read.sum"},
               {12, "dram__bytes_write.sum"},
               {13, "lts__t_bytes.sum"}});
    add(1, 0, 1, 2112, 256, {0.72e6, kGiB, kGiB, 2 * kGiB});
    add(2, 1, 2, 1, 32, {2000, 128, 128, 256});
  }
  void TearDown() override {
    ::unsetenv("GPUSCOPE_CACHE_DIR");
    fs::remove_all(m_dir);
  }
  void add(int id, int index, int name, int grid, int block, std::vector<double> v) {
    t.add(store::rows::KernelProfile{.id = id,
                                     .pid = 100,
                                     .device_id = 0,
                                     .context_id = 1,
                                     .correlation_id = id,
                                     .launch_index = index,
                                     .name_id = name,
                                     .short_name_id = name,
                                     .grid_x = grid,
                                     .grid_y = 1,
                                     .grid_z = 1,
                                     .block_x = block,
                                     .block_y = 1,
                                     .block_z = 1,
                                     .registers_per_thread = 32,
                                     .metric_set = "quick"});
    for (std::size_t m = 0; m < v.size(); ++m)
      t.add(store::rows::KernelMetric{.profile_id = id, .metric_id = 10 + static_cast<std::int64_t>(m), .value = v[m]});
  }
  MachineProfile profile() const {
    MachineProfile p;
    p.device.name = "NVIDIA H100";
    p.device.uuid = "GPU-100";
    for (auto [name, v] : std::initializer_list<std::pair<const char*, double>>{
             {"dram_copy", 3.0e12}, {"l2_read", 10e12}, {"fp32_fma", 60e12}, {"launch_rate", 4e5}}) {
      Ceiling c;
      c.name = name;
      c.measured = v;
      p.ceilings.push_back(c);
    }
    return p;
  }
  int run(const KernelOutputOptions& o) {
    out.str("");
    err.str("");
    return print_kernel_results(t.db(), o, out, err);
  }
  test::TraceDb t;
  fs::path m_dir;
  std::ostringstream out, err;
};

TEST_F(KernelsOutputTest, TableWithExplanationsAndTheCachedProfile) {
  store::save_to_cache(profile());  // the GPU of the trace is GPU-100
  EXPECT_EQ(run({}), 0);
  const std::string s = out.str();
  EXPECT_NE(s.find("Hardware counters per kernel launch"), std::string::npos) << s;  // 2 launches: per launch
  EXPECT_NE(s.find("What bounds each kernel:"), std::string::npos);
  EXPECT_NE(s.find("copy_kernel (1 launch, 720 µs in all, 720 µs each)"), std::string::npos) << s;
  EXPECT_NE(s.find("dram-bound"), std::string::npos);
  EXPECT_NE(s.find("launch-bound"), std::string::npos);
  EXPECT_NE(err.str().find("cached machine profile"), std::string::npos) << err.str();
  EXPECT_EQ(s.find("no machine profile"), std::string::npos);
}

TEST_F(KernelsOutputTest, PerNameCsvHasNoParagraphs) {
  KernelOutputOptions o;
  o.by = "name";
  o.format = "csv";
  o.no_profile = true;
  EXPECT_EQ(run(o), 0);
  EXPECT_EQ(out.str().rfind("Name,Launches,Total Time (us)", 0), 0u) << out.str();
  EXPECT_EQ(out.str().find("What bounds"), std::string::npos);
}

TEST_F(KernelsOutputTest, ProfilePathAndSvg) {
  const fs::path json = m_dir / "h100.json";
  store::write_profile(profile(), json);
  KernelOutputOptions o;
  o.profile_path = json.string();
  o.svg_path = (m_dir / "k.svg").string();
  o.format = "markdown";
  EXPECT_EQ(run(o), 0);
  EXPECT_NE(out.str().find("### What bounds each kernel"), std::string::npos);
  std::ifstream in(o.svg_path);
  std::stringstream svg;
  svg << in.rdbuf();
  EXPECT_NE(svg.str().find("Kernel bandwidth on NVIDIA H100"), std::string::npos);  // quick set: no FLOPs
  EXPECT_NE(err.str().find("roofline chart written"), std::string::npos);
}

TEST_F(KernelsOutputTest, BadOptionsAndEmptyTraces) {
  KernelOutputOptions o;
  o.by = "kernel";
  EXPECT_THROW(run(o), std::invalid_argument);
  o.by = "";
  o.format = "xml";
  EXPECT_THROW(run(o), std::invalid_argument);
  o.format = "table";
  o.name_regex = "nothing";
  EXPECT_EQ(run(o), 1);
  EXPECT_NE(err.str().find("no profiled kernel matches 'nothing'"), std::string::npos);
  t.db().exec("DELETE FROM kernel_metrics; DELETE FROM kernel_profiles");
  EXPECT_EQ(run({}), 1);
  EXPECT_NE(err.str().find("run `gpuscope kernels"), std::string::npos) << err.str();
}

// -o NAME --format csv: the results go to NAME.csv, not to `out`; an existing file is kept
// unless force_overwrite.
TEST_F(KernelsOutputTest, ResultsFileInsteadOfStdout) {
  EXPECT_EQ(kernel_results_path("run", "csv"), "run.csv");
  EXPECT_EQ(kernel_results_path("run", "json"), "run.json");
  EXPECT_EQ(kernel_results_path("run", "markdown"), "run.md");
  EXPECT_EQ(kernel_results_path("run", "table"), "");
  EXPECT_EQ(kernel_results_path("", "csv"), "");
  const fs::path json = m_dir / "h100.json";
  store::write_profile(profile(), json);
  KernelOutputOptions o;
  o.format = "csv";
  o.profile_path = json.string();
  o.results_path = (m_dir / "run.csv").string();
  EXPECT_EQ(run(o), 0);
  EXPECT_TRUE(out.str().empty()) << out.str();
  EXPECT_NE(err.str().find("results written to " + o.results_path), std::string::npos) << err.str();
  std::ifstream in(o.results_path);
  std::stringstream csv;
  csv << in.rdbuf();
  EXPECT_EQ(csv.str().rfind("Launch,PID,Name", 0), 0u) << csv.str();
  EXPECT_NE(csv.str().find("Est. Speedup (%)"), std::string::npos);
  EXPECT_THROW(run(o), store::OutputExistsError);
  o.force_overwrite = true;
  EXPECT_EQ(run(o), 0);
}

}  // namespace
}  // namespace gpuscope::cli
