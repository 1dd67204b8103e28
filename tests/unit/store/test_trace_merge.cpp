#include "store/trace_merge.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "log_builder.hpp"
#include "store/importer.hpp"
#include "store/schema.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

using test::LogBuilder;
using test::TempDir;

constexpr const char* kAllReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

// ---------------------------------------------------------------- clock_offset

TEST(ClockOffset, MedianOfInstanceDifferences) {
  // Reference: two ranks whose collectives end at 1000, 2000, 3000 (+-1 ns).
  const RankEnds ref = {{1000, 2000, 3000}, {1001, 2001, 3001}};
  // The other host's clock is 500 ns behind; instance 2 ended 40 ns late there.
  const RankEnds other = {{500, 1500, 2540}, {500, 1500, 2540}};
  const ClockOffset o = estimate_clock_offset(ref, other);
  EXPECT_EQ(o.matched, 3u);
  EXPECT_EQ(o.offset_ns, 500);  // differences 500, 500, 460: median 500
  EXPECT_EQ(o.residual_median_ns, 0);
  EXPECT_EQ(o.residual_max_ns, 40);
}

TEST(ClockOffset, NoCommonInstances) {
  EXPECT_EQ(estimate_clock_offset({}, {{1}}).matched, 0u);
  // A rank without NCCL kernels: no instance is on every rank.
  const ClockOffset o = estimate_clock_offset({{1, 2}, {}}, {{1, 2}});
  EXPECT_EQ(o.matched, 0u);
  EXPECT_EQ(o.offset_ns, 0);
  EXPECT_FALSE(o.residual_max_ns.has_value());
  // Counts differ: the shortest rank bounds the instances.
  EXPECT_EQ(estimate_clock_offset({{10, 20, 30}}, {{5, 15}}).matched, 2u);
}

// ---------------------------------------------------------------- merge_role

// Every column holding an id is merged on purpose: a new *_id column must be named here (an
// id that needs no remapping) or get a rule in trace_merge.cpp.
TEST(TraceMerge, EveryIdColumnHasARule) {
  const std::set<std::string_view> plain_ids = {"device_id", "context_id",    "stream_id",     "correlation_id",
                                                "graph_id",  "graph_node_id", "src_device_id", "dst_device_id",
                                                "event_id",  "object_id",     "op_id"};
  for (const TableDef& t : tables()) {
    if (t.name == "meta" || t.name == "strings" || t.name == "gpu_metric_names" || t.name == "merged_traces" ||
        t.name == "merged_pids")
      continue;
    for (const ColumnDef& c : t.columns) {
      const std::string_view n = c.name;
      const bool id_like =
          n == "id" || n.ends_with("_id") || n.starts_with("parent_") || n.ends_with("_op") || n.ends_with("_module");
      if (!id_like || plain_ids.contains(n) ||
          (n == "device_id" && merge_role(t.name, c).role == MergeRole::kGpuMetricDevice))
        continue;
      EXPECT_NE(merge_role(t.name, c).role, MergeRole::kCopy) << t.name << "." << n;
    }
  }
  const ColumnDef start{"start_ns", "INTEGER", "ns", ""};
  const ColumnDef interval{"interval_ns", "INTEGER", "ns", ""};
  EXPECT_EQ(merge_role("kernels", start).role, MergeRole::kTime);
  EXPECT_EQ(merge_role("gpu_metrics_sessions", interval).role, MergeRole::kCopy);
}

// ---------------------------------------------------------------- merge_traces

class TraceMergeTest : public ::testing::Test {
 protected:
  // A trace of one host: processes 100 and 101 (ranks base, base+1), each with an NVTX range
  // holding a compute kernel and `collectives` all-reduce kernels ending at 10'000 x k on the
  // job's clock, seen `skew` ns later on this host's clock.
  std::string host_trace(const std::string& name, const std::string& host, int base_rank, std::int64_t skew,
                         int collectives = 4) {
    std::vector<std::string> logs;
    for (std::uint32_t pid : {100u, 101u}) {
      logs.push_back(m_dir.file(name + std::to_string(pid) + ".gslog"));
      LogBuilder b(logs.back(), pid);
      const int rank = base_rank + static_cast<int>(pid - 100);
      b.process_rank = rank;
      b.process(1000 + skew, host);
      b.rank(rank, static_cast<int>(pid - 100), 4, log::RankLauncher::kSlurm);
      b.device(0, "NVIDIA H100 80GB HBM3", static_cast<std::uint8_t>(rank + 1));
      b.push(2000 + skew, pid, "step");
      b.api(2100 + skew, 2200 + skew, pid, 1, "cudaLaunchKernel");
      b.kernel(2300 + skew, 2900 + skew, 1, "gemm_kernel");
      for (int k = 1; k <= collectives; ++k) {
        const std::uint64_t end = static_cast<std::uint64_t>(10'000 * k + skew);
        b.api(end - 3000, end - 2900, pid, 10 + k, "cudaLaunchKernel");
        b.kernel(end - 2000 + 100 * (pid - 100), end, 10 + k, kAllReduce);
      }
      b.pop(60'000 + skew, pid);
      b.end(70'000 + skew);
    }
    const std::string db = m_dir.file(name + ".sqlite");
    ImportOptions opts;
    opts.overwrite = true;
    opts.command = "python train.py";
    (void)import_logs(logs, db, opts);
    return db;
  }
  std::int64_t q(Database& db, const std::string& sql) {
    const auto v = db.query_int(sql);
    EXPECT_TRUE(v.has_value()) << sql;
    return v.value_or(-1);
  }

  TempDir m_dir;
  std::string m_out = m_dir.file("job.sqlite");
};

TEST_F(TraceMergeTest, KeepsEveryRowAndAlignsClocks) {
  const std::string a = host_trace("a", "node1", 0, 0);
  const std::string b = host_trace("b", "node2", 2, 7'000);  // node2's clock is 7 us ahead
  const MergeResult r = merge_traces({a, b}, m_out, Overwrite::kRefuse);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].method, "reference");
  EXPECT_EQ(r.inputs[1].method, "nccl_kernel_ends");
  EXPECT_EQ(r.inputs[1].offset.offset_ns, -7'000);
  EXPECT_EQ(r.inputs[1].offset.matched, 4u);
  EXPECT_EQ(r.inputs[1].offset.residual_max_ns, 0);
  EXPECT_EQ(r.inputs[1].renumbered_pids, 2);

  Database da = open_trace(a);
  Database db = open_trace(b);
  Database m = open_trace(m_out);
  // Every row kept (strings are shared: one per distinct value).
  for (const TableDef& t : tables()) {
    const std::string name(t.name);
    if (name == "meta" || name == "strings" || name == "merged_traces" || name == "merged_pids") continue;
    const std::string count = "SELECT COUNT(*) FROM " + name;
    EXPECT_EQ(q(m, count), q(da, count) + q(db, count)) << name;
  }
  EXPECT_EQ(q(m, "SELECT COUNT(*) FROM strings"), q(da, "SELECT COUNT(*) FROM strings"));
  // Pids: node2's 100 and 101 collide with node1's and are renumbered above any Linux pid.
  EXPECT_EQ(q(m, "SELECT COUNT(DISTINCT pid) FROM processes"), 4);
  EXPECT_EQ(q(m, "SELECT pid FROM processes WHERE rank = 2"), 100 + 4194304);
  EXPECT_EQ(q(m, "SELECT pid FROM merged_pids WHERE trace = 1 AND original_pid = 101"), 101 + 4194304);
  EXPECT_EQ(q(m, "SELECT COUNT(*) FROM processes WHERE launcher = 'slurm' AND world_size = 4"), 4);
  // Each kernel still joins its launch, and its NVTX range its process.
  EXPECT_EQ(q(m, "SELECT COUNT(*) FROM kernels k JOIN api_calls a USING (pid, correlation_id)"), 20);
  EXPECT_EQ(q(m, "SELECT COUNT(*) FROM v_kernels WHERE name LIKE 'ncclDevKernel_AllReduce%'"), 16);
  EXPECT_EQ(q(m, "SELECT COUNT(*) FROM v_nvtx WHERE text = 'step'"), 4);
  EXPECT_EQ(q(m, "SELECT COUNT(DISTINCT id) FROM kernels"), 20);
  // Clocks: node2's events moved onto node1's clock; the k-th all-reduce ends together.
  EXPECT_EQ(q(m, "SELECT COUNT(DISTINCT end_ns) FROM v_kernels WHERE name LIKE 'nccl%'"), 4);
  EXPECT_EQ(q(m, "SELECT MIN(start_ns) FROM processes WHERE rank >= 2"), 1000);
  EXPECT_EQ(q(m, "SELECT clock_offset_ns FROM merged_traces WHERE trace = 1"), -7'000);
  EXPECT_EQ(q(m, "SELECT residual_max_ns FROM merged_traces WHERE trace = 1"), 0);
  EXPECT_EQ(*m.query_text("SELECT value FROM meta WHERE key = 'host'"), "node1,node2");
  EXPECT_EQ(*m.query_text("SELECT value FROM meta WHERE key = 'process_count'"), "4");
}

TEST_F(TraceMergeTest, WithoutNcclTheOffsetIsNoneAndSaidSo) {
  const std::string a = host_trace("a", "node1", 0, 0, 0);
  const std::string b = host_trace("b", "node2", 2, 7'000, 0);
  const MergeResult r = merge_traces({a, b}, m_out, Overwrite::kRefuse);
  EXPECT_EQ(r.inputs[1].method, "none");
  Database m = open_trace(m_out);
  EXPECT_EQ(*m.query_text("SELECT offset_method FROM merged_traces WHERE trace = 1"), "none");
  EXPECT_EQ(q(m, "SELECT clock_offset_ns FROM merged_traces WHERE trace = 1"), 0);
}

TEST_F(TraceMergeTest, ClearErrors) {
  const std::string a = host_trace("a", "node1", 0, 0);
  const std::string b = host_trace("b", "node2", 2, 0);
  auto message = [&](const std::vector<std::string>& in) -> std::string {
    try {
      (void)merge_traces(in, m_out, Overwrite::kReplace);
    } catch (const MergeInputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message({a}).find("two or more"), std::string::npos);
  EXPECT_NE(message({a, m_dir.file("missing.sqlite")}).find("missing.sqlite: no such file"), std::string::npos);
  EXPECT_NE(message({a, a}).find("given twice"), std::string::npos);
  {
    std::ofstream(m_dir.file("notes.sqlite")) << "not a database at all, just text";
    EXPECT_NE(message({a, m_dir.file("notes.sqlite")}).find("cannot merge"), std::string::npos);
  }
  {
    Database other(m_dir.file("v99.sqlite"), Database::Mode::kReadWriteCreate);
    other.exec(create_tables_sql());
    other.exec("INSERT INTO meta VALUES ('schema_version', '99')");
  }
  const std::string v99 = message({a, m_dir.file("v99.sqlite")});
  EXPECT_NE(v99.find("99"), std::string::npos) << v99;
  EXPECT_NE(v99.find("schema version"), std::string::npos) << v99;
  // A merged trace is not merged again.
  (void)merge_traces({a, b}, m_out, Overwrite::kReplace);
  const std::string job2 = m_dir.file("job2.sqlite");
  try {
    (void)merge_traces({m_out, a}, job2, Overwrite::kRefuse);
    ADD_FAILURE() << "merged a merge";
  } catch (const MergeInputError& e) {
    EXPECT_NE(std::string(e.what()).find("itself a merged trace"), std::string::npos);
  }
  // An existing output is kept without Overwrite::kReplace.
  EXPECT_THROW((void)merge_traces({a, b}, m_out, Overwrite::kRefuse), DatabaseError);
  EXPECT_EQ(open_trace(m_out).query_int("SELECT COUNT(*) FROM merged_traces").value_or(0), 2);
}

}  // namespace
}  // namespace gpuscope::store
