// nccl_sum, comm_overlap, rank_sum, stragglers and top's communication diagnoses on
// synthetic jobs (comm_trace.hpp) whose every number is worked out by hand below.
#include "analyze/comm/nccl_reports.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <variant>

#include "analyze/comm/comm_findings.hpp"
#include "analyze/report_registry.hpp"
#include "analyze/nsys/top_report.hpp"
#include "../store/log_builder.hpp"
#include "comm_trace.hpp"
#include "store/importer.hpp"
#include "profile_cache.hpp"
#include "store/machine_profile_json.hpp"
#include "store/trace.hpp"

namespace gpuscope::analyze {
namespace {

using test::build_comm_job;
using test::cell;
using test::CommJob;
using test::has_note;
using test::ProfileCache;
using test::TraceDb;
namespace rows = store::rows;

bool is_null(const Report& r, std::size_t row, const std::string& column) {
  return std::holds_alternative<std::monostate>(r.rows.at(row).at(test::col(r, column)));
}

// The default job: 4 ranks, 3 steps of 1 ms, rank 2 arrives 100 us late at the AllReduce
// from step 1 (the second) on.
//   per step, every rank: compute = [0,400) ∪ [100,200) ∪ [500,700) ∪ [900,950) = 650 us
//   on time: comm [600,900) = 300 us, overlapped with [500,700) = 100 us, exposed 200 us
//   rank 2 late: comm [700,900) = 200 us, overlapped 0, exposed 200 us
class FourRanks : public ::testing::Test {
 protected:
  void SetUp() override { build_comm_job(t, CommJob{}); }
  ProfileCache cache;
  TraceDb t;
};

TEST_F(FourRanks, CommOverlapPerRankAndStep) {
  const Report r = comm_overlap(t.db());
  ASSERT_EQ(r.rows.size(), 12u);  // 4 ranks x 3 steps, rank-major
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const std::int64_t rank = cell<std::int64_t>(r, i, "Rank");
    const std::int64_t step = cell<std::int64_t>(r, i, "Step");
    EXPECT_EQ(rank, static_cast<std::int64_t>(i / 3));
    EXPECT_EQ(step, static_cast<std::int64_t>(i % 3));
    const bool late = rank == 2 && step >= 1;
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Wall"), 1.0);
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Compute"), 0.65);
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Communication"), late ? 0.2 : 0.3);
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Overlapped"), late ? 0.0 : 0.1);
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Exposed Comm"), 0.2);
    EXPECT_NEAR(cell<double>(r, i, "Overlap"), late ? 0.0 : 100.0 / 3.0, 1e-9);
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Exposed of Wall"), 20.0);
    EXPECT_EQ(cell<std::int64_t>(r, i, "PID"), 100 + rank);
  }
  // All ranks: 3.4 ms of communication, 1.0 ms hidden (29 %), 2.4 ms exposed of 12 ms.
  EXPECT_TRUE(has_note(r, "communication 3.4 ms, 29 % of it behind compute")) << r.notes[0].text;
  EXPECT_TRUE(has_note(r, "exposed communication 2.4 ms, 20 % of the wall time")) << r.notes[0].text;
}

TEST_F(FourRanks, RankSumPerRank) {
  const Report r = rank_sum(t.db());
  ASSERT_EQ(r.rows.size(), 4u);
  // Span 0 .. 2 ms + 950 us = 2.95 ms; busy per step [0,400) ∪ [500,950) = 850 us → 2.55 ms.
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(cell<std::int64_t>(r, i, "Rank"), static_cast<std::int64_t>(i));
    EXPECT_EQ(cell<std::int64_t>(r, i, "Local Rank"), static_cast<std::int64_t>(i));
    EXPECT_EQ(cell<std::string>(r, i, "Host"), "node0");
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Wall"), 2.95);
    EXPECT_NEAR(cell<double>(r, i, "Idle"), 0.4, 1e-12);
    EXPECT_NEAR(cell<double>(r, i, "Communication"), i == 2 ? 0.7 : 0.9, 1e-12);
    EXPECT_NEAR(cell<double>(r, i, "Exposed Comm"), 0.6, 1e-12);
    EXPECT_EQ(cell<std::int64_t>(r, i, "Steps"), 3);
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Median Step"), 1.0);
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Step vs Median"), 0.0);
  }
  // "Busy" is there twice: ms, then %.
  EXPECT_DOUBLE_EQ(std::get<double>(r.rows[0][5]), 2.55);
  EXPECT_NEAR(std::get<double>(r.rows[0][6]), 2.55 / 2.95 * 100.0, 1e-9);
  EXPECT_TRUE(has_note(r, "step time across 4 ranks: median 1 ms")) << r.notes.back().text;
}

TEST_F(FourRanks, StragglersNameRank2FromStep1) {
  const Report r = stragglers(t.db());
  ASSERT_EQ(r.rows.size(), 4u);
  // 3 instances (one AllReduce per step). Step 0: all arrive together (no one last).
  // Steps 1, 2: rank 2 arrives 100 us after the others: held back 2 x 100 us = 0.2 ms; the
  // share is of the steps after warm-up (step 0 is warm-up: 2 ms of steps), 10 %; each time
  // the 3 others wait 100 us (0.6 ms in all).
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Last Arrivals"), 2);
  EXPECT_NEAR(cell<double>(r, 2, "Last"), 200.0 / 3.0, 1e-9);
  EXPECT_NEAR(std::get<double>(r.rows[2][4]), 0.2, 1e-12);             // Held Back (ms)
  EXPECT_NEAR(std::get<double>(r.rows[2][5]), 100.0 * 0.2 / 2, 1e-9);  // Held Back (%)
  EXPECT_NEAR(cell<double>(r, 2, "Others Waited"), 0.6, 1e-12);
  EXPECT_DOUBLE_EQ(cell<double>(r, 2, "Waited"), 0.0);
  EXPECT_NEAR(cell<double>(r, 2, "Avg Arrival Delay"), 200.0 / 3.0, 1e-9);  // us
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Last From Step"), 1);
  for (std::size_t i : {0u, 1u, 3u}) {
    EXPECT_EQ(cell<std::int64_t>(r, i, "Last Arrivals"), 0);
    EXPECT_NEAR(cell<double>(r, i, "Waited"), 0.2, 1e-12);
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Avg Arrival Delay"), 0.0);
    EXPECT_TRUE(is_null(r, i, "Last From Step"));
  }
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "rank 2 holds the job back by 10 % of step time after warm-up"))
      << r.notes[0].text;
  EXPECT_TRUE(has_note(r, "arrived last at 2 of 3 collectives, 200 µs after the next-to-last rank")) << r.notes[0].text;
  EXPECT_TRUE(has_note(r, "from step 1 on")) << r.notes[0].text;
  EXPECT_TRUE(has_note(r, "3 collective instances matched")) << r.notes[1].text;
}

TEST_F(FourRanks, CollectiveTraceOneRowPerInstance) {
  const Report r = collective_trace(t.db());
  ASSERT_EQ(r.rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(cell<std::string>(r, i, "Collective"), "AllReduce");
    EXPECT_EQ(cell<std::int64_t>(r, i, "Number"), static_cast<std::int64_t>(i));
    EXPECT_EQ(cell<std::int64_t>(r, i, "Step"), static_cast<std::int64_t>(i));
    EXPECT_EQ(cell<std::int64_t>(r, i, "Ranks"), 4);
    EXPECT_EQ(cell<std::int64_t>(r, i, "Start"), static_cast<std::int64_t>(i) * 1'000'000 + 600'000);
    EXPECT_EQ(cell<std::int64_t>(r, i, "Size"), 4194304);
  }
  // Step 0: a tie (no one last, no wait); steps 1 and 2: rank 2, 100 us late, 3 x 100 us waited.
  EXPECT_TRUE(is_null(r, 0, "Last Rank"));
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Lateness"), 0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Others Waited"), 0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Transfer"), 300'000);
  for (std::size_t i : {1u, 2u}) {
    EXPECT_EQ(cell<std::int64_t>(r, i, "Last Rank"), 2);
    EXPECT_EQ(cell<std::int64_t>(r, i, "Lateness"), 100'000);
    EXPECT_EQ(cell<std::int64_t>(r, i, "Spread"), 100'000);
    EXPECT_EQ(cell<std::int64_t>(r, i, "Others Waited"), 300'000);
    EXPECT_EQ(cell<std::int64_t>(r, i, "Transfer"), 200'000);
  }
  EXPECT_EQ(collective_trace(t.db(), 2).rows.size(), 2u);
}

TEST_F(FourRanks, NcclSumBytesAndBandwidths) {
  const Report r = nccl_sum(t.db());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(cell<std::string>(r, 0, "Collective"), "AllReduce");
  EXPECT_EQ(cell<std::string>(r, 0, "Size Range"), "[4 MiB, 8 MiB)");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Count"), 12);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Ranks"), 4);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Avg Size"), 4194304);  // 1048576 f32
  // 11 kernels of 300 us and rank 2's two of 200 us: 3.4 ms; avg 283,333 ns.
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Time"), 3'400'000);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Avg Time"), 283'333);
  // 3 instances, timed by the last arrival's kernel: step 0 (a tie: rank 0's) 300 us, steps 1
  // and 2 rank 2's 200 us → 700 us, 233,333 ns on average; algbw = 3 x 4 MiB / 700 us,
  // busbw = algbw x 2 (4 - 1) / 4.
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Instances"), 3);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Avg Transfer"), 233'333);
  const double algbw = 3.0 * 4194304.0 / 700'000.0;
  EXPECT_NEAR(cell<double>(r, 0, "Algbw"), algbw, 1e-9);
  EXPECT_NEAR(cell<double>(r, 0, "Busbw"), algbw * 1.5, 1e-9);
  EXPECT_TRUE(is_null(r, 0, "Link Ceiling"));
  EXPECT_TRUE(has_note(r, "world size 4 ranks"));
  EXPECT_TRUE(has_note(r, "sizes: 12 of 12 kernels"));
  EXPECT_TRUE(has_note(r, "Link Ceiling (%) is empty"));
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Back-to-Back Instances"), 0);  // no launch calls in this job
  EXPECT_TRUE(is_null(r, 0, "Back-to-Back Busbw"));
}

TEST_F(FourRanks, LinkCeilingFromTheMeasuredPeerToPeerCopy) {
  cache.add("GPU-100", "p2p", 300e9);  // rank 0's GPU: 300 GB/s
  const Report r = nccl_sum(t.db());
  EXPECT_NEAR(cell<double>(r, 0, "Link Ceiling"), cell<double>(r, 0, "Busbw") / 300.0 * 100.0, 1e-9);
  EXPECT_TRUE(has_note(r, "peer-to-peer copy bandwidth gpuscope peak measured: the p2p ceiling of GPU-100"));
  EXPECT_TRUE(has_note(r, "300 GB/s"));
}

TEST_F(FourRanks, LinkCeilingIsTheSlowestPairAmongTheJobsGpus) {
  // Ranks 0-3 run on GPU-100..GPU-103. Pairs with a GPU outside the job (GPU-999, slower
  // still) do not count; the slowest pair inside it, GPU 1 to GPU 2 at 150 GB/s, bounds the ring.
  cache.add("GPU-100", "p2p", 50e9,
            {{0, 1, "GPU-100", "GPU-101", 300e9, true},
             {1, 2, "GPU-101", "GPU-102", 150e9, true},
             {2, 3, "GPU-102", "GPU-103", 280e9, true},
             {0, 7, "GPU-100", "GPU-999", 50e9, true}});
  const Report r = nccl_sum(t.db());
  EXPECT_NEAR(cell<double>(r, 0, "Link Ceiling"), cell<double>(r, 0, "Busbw") / 150.0 * 100.0, 1e-9);
  EXPECT_TRUE(has_note(r, "the slowest pair of the job's GPUs, GPU 1 to GPU 2 (GPU-101 to GPU-102), 150 GB/s"));
}

// Two ranks, each: four 1 MiB AllReduce kernels on stream 20, 10 us each, at 0, 12, 24 and
// 100 us. The second and third were launched (API call ended at 5 and 15 us) while the one
// before still ran: back to back, 12 us each from the previous end to their own. The fourth
// was launched at 90 us, after the third ended at 34 us: the CPU set its pace, not counted.
// `rank1_third_late`: rank 1 launched its third call only at 30 us, after its second kernel
// ended (the kernel waited inside for it on rank 0): that instance is not back to back.
void build_back_to_back(TraceDb& t, bool rank1_third_late) {
  t.strings({{1, test::kAllReduceName}, {2, "nccl:all_reduce"}, {3, "cudaLaunchKernelExC"}});
  for (int r = 0; r < 2; ++r) {
    const int pid = 100 + r;
    t.add(rows::Process{.pid = pid, .start_ns = 0, .end_ns = 200'000, .ended_cleanly = 1, .rank = r, .local_rank = r});
    t.h100(pid);
    const long long starts[] = {0, 12'000, 24'000, 100'000};
    long long launched[] = {-1'000, 5'000, 15'000, 90'000};
    if (r == 1 && rank1_third_late) launched[2] = 30'000;
    for (int k = 0; k < 4; ++k) {
      const int corr = k + 1;
      const long long start = r == 1 && rank1_third_late && k == 2 ? 30'500 : starts[k];
      t.kernel(pid, 0, 20, corr, start, starts[k] + 10'000 + (rank1_third_late && k == 2 ? 6'500 : 0), 1);
      t.add(rows::ApiCall{.pid = pid,
                          .tid = pid,
                          .domain = "runtime",
                          .cbid = 0,
                          .name_id = 3,
                          .start_ns = launched[k] - 500,
                          .end_ns = launched[k],
                          .correlation_id = corr});
      const long long op = pid * 10 + k;
      t.add(rows::TorchOp{.nvtx_id = op, .pid = pid, .tid = pid, .name_id = 2, .sizes = "[[262144]]"});
      t.add(rows::TorchOpActivity{.pid = pid, .correlation_id = corr, .op_nvtx_id = op});
    }
  }
}

TEST(CommReports, BackToBackInstancesAreTimedEndToEnd) {
  TraceDb t;
  build_back_to_back(t, false);
  const Report r = nccl_sum(t.db());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Instances"), 4);
  EXPECT_NEAR(cell<double>(r, 0, "Busbw"), 1048576.0 / 10'000.0, 1e-9);  // 2 ranks: factor 2 (2 - 1) / 2 = 1
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Back-to-Back Instances"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Back-to-Back Time"), 12'000);
  EXPECT_NEAR(cell<double>(r, 0, "Back-to-Back Busbw"), 1048576.0 / 12'000.0, 1e-9);
  EXPECT_TRUE(has_note(r, "Back-to-Back: the instances whose call on every rank was launched while"));
}

TEST(CommReports, AnInstanceOneRankLaunchedLateIsNotBackToBack) {
  // The third instance: rank 0 queued it, rank 1 launched it after its previous kernel ended,
  // so its 22.5 us (waiting for rank 1's CPU) is not the GPUs' pace; only the second counts.
  TraceDb t;
  build_back_to_back(t, true);
  const Report r = nccl_sum(t.db());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Back-to-Back Instances"), 1);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Back-to-Back Time"), 12'000);
}

TEST_F(FourRanks, TopDiagnosesExposedCommunicationAndTheStraggler) {
  const std::vector<Report> r = top(t.db());
  const std::vector<std::string> w = test::warnings(r[0]);
  EXPECT_NE(std::find(w.begin(), w.end(), "exposed communication"), w.end());
  EXPECT_NE(std::find(w.begin(), w.end(), "straggler"), w.end());
  EXPECT_TRUE(has_note(r[0], NoteLevel::kWarning, "2.4 ms of 3.4 ms of NCCL communication ran with no compute"));
  EXPECT_TRUE(
      has_note(r[0], NoteLevel::kWarning, "straggler: rank 2 holds the job back by 10 % of step time after warm-up"));
  const detail::CommFindings f = detail::comm_findings(t.db());
  EXPECT_EQ(f.exposed_ns, 2'400'000);
  EXPECT_EQ(f.comm_ns, 3'400'000);
  EXPECT_EQ(f.wall_ns, 12'000'000);
  EXPECT_EQ(f.straggler, 2u);
}

TEST(CommReports, NoDelayNoStragglerAndNoDiagnosis) {
  TraceDb t;
  build_comm_job(t, CommJob{.delay_ns = 0});
  const Report r = stragglers(t.db());
  for (std::size_t i = 0; i < r.rows.size(); ++i) EXPECT_EQ(cell<std::int64_t>(r, i, "Last Arrivals"), 0);
  EXPECT_FALSE(detail::comm_findings(t.db()).straggler);
  const std::vector<std::string> w = test::warnings(top(t.db())[0]);
  EXPECT_EQ(std::find(w.begin(), w.end(), "straggler"), w.end());
}

// Late in steps 1 and 3 of 0..3 but on time in step 2, where no rank comes last: never late
// two steps in a row, so no onset; late in 2 and 3: from step 2.
TEST(CommReports, OnsetNeedsConsecutiveSteps) {
  TraceDb apart;
  build_comm_job(apart, CommJob{.steps = 4, .delayed_steps = {1, 3}});
  const Report a = stragglers(apart.db());
  EXPECT_EQ(cell<std::int64_t>(a, 2, "Last Arrivals"), 2);
  EXPECT_TRUE(is_null(a, 2, "Last From Step"));
  TraceDb together;
  build_comm_job(together, CommJob{.steps = 4, .delayed_steps = {2, 3}});
  EXPECT_EQ(cell<std::int64_t>(stragglers(together.db()), 2, "Last From Step"), 2);
  // Last in steps 1-3 by 20 us of 1 ms steps (2 % < 5 %): jitter, no onset.
  TraceDb jitter;
  build_comm_job(jitter, CommJob{.steps = 4, .delay_ns = 20'000, .delayed_steps = {1, 2, 3}});
  const Report j = stragglers(jitter.db());
  EXPECT_EQ(cell<std::int64_t>(j, 2, "Last Arrivals"), 3);
  EXPECT_TRUE(is_null(j, 2, "Last From Step"));
  // Late by 60 us in step 2 (6 %: a straggler step), then 200 us a step from step 3: the run
  // is steps 2-5, but 60 us is under half its median (200 us): a lead-in, the onset is 3.
  TraceDb lead;
  build_comm_job(lead,
                 CommJob{.steps = 6, .delay_from = 3, .delay_ns = 200'000, .lead_in_step = 2, .lead_in_ns = 60'000});
  EXPECT_EQ(cell<std::int64_t>(stragglers(lead.db()), 2, "Last From Step"), 3);
}

TEST(CommReports, WithoutOpsOrStepsSizesAreUnknownAndRanksAreWhole) {
  TraceDb t;
  build_comm_job(t, CommJob{.with_ops = false, .with_steps = false});
  const Report s = nccl_sum(t.db());
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(cell<std::string>(s, 0, "Size Range"), "unknown");
  EXPECT_TRUE(is_null(s, 0, "Avg Size"));
  EXPECT_TRUE(is_null(s, 0, "Algbw"));
  EXPECT_TRUE(is_null(s, 0, "Busbw"));
  EXPECT_TRUE(has_note(s, "sizes: 0 of 12 kernels"));
  // One row per rank over its span (2.95 ms): exposed 3 x 200 us = 0.6 ms.
  const Report o = comm_overlap(t.db());
  ASSERT_EQ(o.rows.size(), 4u);
  EXPECT_TRUE(is_null(o, 0, "Step"));
  EXPECT_DOUBLE_EQ(cell<double>(o, 0, "Wall"), 2.95);
  EXPECT_NEAR(cell<double>(o, 0, "Exposed Comm"), 0.6, 1e-12);
  EXPECT_NEAR(cell<double>(o, 2, "Communication"), 0.7, 1e-12);
  // Without steps the straggler is measured against the span and found by instances: rank 2
  // is last at instances 1 and 2 only (a run of 2 < 3), so no onset.
  const Report g = stragglers(t.db());
  EXPECT_TRUE(is_null(g, 2, "Last From Step"));
  EXPECT_TRUE(has_note(g, "rank 2 holds the job back by 6.8 % of the wall time")) << g.notes[0].text;
}

TEST(CommReports, GenericKernelsTakeTheOperatorsCollective) {
  TraceDb t;
  t.strings({{2, "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"}, {3, "nccl:all_to_all"}});
  for (int pid : {1, 2}) {
    t.add(rows::Process{.pid = pid, .start_ns = 0, .end_ns = 1000, .ended_cleanly = 1, .rank = pid - 1});
    t.kernel(pid, 0, 20, 1, 0, 1000, 2);
    t.kernel(pid, 0, 20, 2, 2000, 3000, 2);  // outside any operator: generic
    t.add(rows::TorchOp{.nvtx_id = pid, .pid = pid, .tid = pid, .name_id = 3, .sizes = "[[256]]"});
    t.add(rows::TorchOpActivity{.pid = pid, .correlation_id = 1, .op_nvtx_id = pid});
  }
  const Report r = nccl_sum(t.db());
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(cell<std::string>(r, 0, "Collective"), "AllToAll");
  EXPECT_TRUE(is_null(r, 0, "Avg Size"));  // the generic kernel names no type
  EXPECT_EQ(cell<std::string>(r, 1, "Collective"), "NCCL (generic)");
  EXPECT_TRUE(has_note(r, "2 kernels are NCCL's generic kernel"));
}

TEST(CommReports, OneRankKernelsAreInstancesOfTheirOwn) {
  TraceDb t;
  build_comm_job(t, CommJob{.ranks = 1, .delayed_rank = -1});
  const Report r = nccl_sum(t.db());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Instances"), 3);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Avg Transfer"), 300'000);
  EXPECT_NEAR(cell<double>(r, 0, "Algbw"), 4194304.0 / 300'000.0, 1e-9);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Busbw"), 0.0);  // one rank: nothing crosses a link
  const Report g = stragglers(t.db());
  EXPECT_TRUE(g.rows.empty());
  EXPECT_TRUE(has_note(g, "no collective ran on two or more ranks"));
}

TEST(CommReports, ProcessesWithoutRankAreRanksOfTheirOwn) {
  TraceDb t;
  t.strings({{1, "gemm(float*)"}});
  t.kernel(7, 0, 7, 1, 0, 1000, 1);
  t.kernel(9, 0, 7, 1, 500, 2500, 1);
  const Report r = rank_sum(t.db());
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_TRUE(is_null(r, 0, "Rank"));
  EXPECT_EQ(cell<std::int64_t>(r, 0, "PID"), 7);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "PID"), 9);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "Wall"), 0.002);
  EXPECT_TRUE(has_note(r, "no steps"));
  for (std::string_view name : {"nccl_sum", "comm_overlap", "stragglers", "collective_trace"}) {
    const Report n = run_report(t.db(), name).at(0);
    EXPECT_TRUE(n.rows.empty()) << name;
    ASSERT_EQ(n.notes.size(), 1u) << name;
    EXPECT_EQ(n.notes[0].text.rfind("no NCCL kernels in the capture range", 0), 0u) << name;
  }
}

// Through the collector's event logs and the importer: two torchrun ranks (RankRecord), each
// a 100 us GEMM then an AllReduce (bf16, old-generation name on rank 0, new on rank 1, as two
// NCCL builds would not mix, but the parser takes both) that rank 1 reaches 30 us late, twice.
TEST(CommReports, ImportedTwoRankLogs) {
  store::test::TempDir dir;
  std::vector<std::string> logs;
  constexpr std::uint64_t kT0 = 1'000'000;
  for (std::uint32_t rank = 0; rank < 2; ++rank) {
    logs.push_back(dir.file("r" + std::to_string(rank) + ".gslog"));
    store::test::LogBuilder b(logs.back(), 200 + rank);
    b.process(kT0 - 1000);
    b.rank(static_cast<std::int32_t>(rank), static_cast<std::int32_t>(rank), 2, log::RankLauncher::kTorchrun);
    b.device(0, "NVIDIA H100 80GB HBM3", static_cast<std::uint8_t>(0x10 + rank));
    std::uint32_t corr = 0;
    for (std::uint64_t i = 0; i < 2; ++i) {
      const std::uint64_t o = kT0 + i * 1'000'000;
      const std::uint64_t late = rank == 1 ? 30'000 : 0;
      b.kernel(o, o + 100'000 + late, ++corr, "gemm_kernel");
      b.kernel(o + 100'000 + late, o + 300'000, ++corr,
               rank == 0 ? "ncclKernel_AllReduce_RING_LL_Sum___nv_bfloat16(ncclDevComm*, unsigned long, ncclWork*)"
                         : "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
               20);
    }
    b.end(kT0 + 2'000'000);
    b.flush();
  }
  (void)store::import_logs(logs, dir.file("job.sqlite"), store::ImportOptions{});
  store::Database db = store::open_trace(dir.file("job.sqlite"));
  const Report g = stragglers(db);
  ASSERT_EQ(g.rows.size(), 2u);
  EXPECT_EQ(cell<std::int64_t>(g, 1, "Rank"), 1);
  EXPECT_EQ(cell<std::int64_t>(g, 1, "Last Arrivals"), 2);
  EXPECT_NEAR(std::get<double>(g.rows[1][4]), 0.06, 1e-12);  // Held Back: 2 x 30 us
  EXPECT_NEAR(cell<double>(g, 0, "Waited"), 0.06, 1e-12);
  // Each GEMM ends where its rank's AllReduce starts: all communication is exposed. Rank 0:
  // 2 x 200 us (30 us of each waiting for rank 1); rank 1: 2 x 170 us.
  const Report o = comm_overlap(db);
  ASSERT_EQ(o.rows.size(), 2u);
  EXPECT_NEAR(cell<double>(o, 0, "Communication"), 0.4, 1e-12);
  EXPECT_NEAR(cell<double>(o, 0, "Exposed Comm"), 0.4, 1e-12);
  EXPECT_NEAR(cell<double>(o, 1, "Communication"), 0.34, 1e-12);
  const Report s = nccl_sum(db);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(cell<std::int64_t>(s, 0, "Count"), 4);
  EXPECT_EQ(cell<std::int64_t>(s, 0, "Instances"), 2);
  EXPECT_EQ(cell<std::int64_t>(s, 0, "Avg Transfer"), 170'000);  // rank 1's kernels
  EXPECT_TRUE(has_note(s, "world size 2 ranks"));
  const Report k = rank_sum(db);
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_EQ(cell<std::int64_t>(k, 1, "Local Rank"), 1);
}

// One process driving two GPUs (as nccl-tests -g 2 runs): NCCL's two ranks are its two GPUs.
// On device 1 the AllReduce starts 50 us after device 0's, both end at 300 us.
TEST(CommReports, OneProcessTwoGpusIsTwoRanks) {
  TraceDb t;
  t.strings({{1, "gemm(float*)"}, {2, test::kAllReduceName}});
  t.add(rows::Process{.pid = 7, .start_ns = 0, .end_ns = 1000, .ended_cleanly = 1});
  t.kernel(7, 0, 20, 1, 100'000, 300'000, 2);
  t.kernel(7, 1, 20, 2, 150'000, 300'000, 2);
  t.kernel(7, 1, 7, 3, 0, 150'000, 1);
  const Report g = stragglers(t.db());
  ASSERT_EQ(g.rows.size(), 2u);
  EXPECT_EQ(cell<std::int64_t>(g, 1, "Device"), 1);
  EXPECT_EQ(cell<std::int64_t>(g, 1, "Last Arrivals"), 1);
  EXPECT_NEAR(cell<double>(g, 0, "Waited"), 0.05, 1e-12);
  EXPECT_TRUE(has_note(g, "pid 7 GPU 1 holds the job back")) << g.notes[0].text;
  EXPECT_TRUE(has_note(nccl_sum(t.db()), "world size 2 ranks"));
  const Report k = rank_sum(t.db());
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(cell<double>(k, 1, "Wall"), 0.3);  // device 1: 0 .. 300 us
  EXPECT_DOUBLE_EQ(cell<double>(k, 0, "Wall"), 0.2);  // device 0: 100 .. 300 us
}

// The generated 64-rank job: rank 37 late by 100 us from step 2 of 5. Each of its 3 late
// AllReduces holds the job back 100 us (0.3 ms of the 4 ms of steps after warm-up: 7.5 %) and makes the
// 63 others wait 100 us each (18.9 ms in all). Exposed communication is 200 us per rank and
// step whatever the delay: 20 % of the wall.
TEST(CommReports, SixtyFourRanks) {
  TraceDb t;
  const auto start = std::chrono::steady_clock::now();
  build_comm_job(t, CommJob{.ranks = 64, .steps = 5, .delayed_rank = 37, .delay_from = 2});
  const Report g = stragglers(t.db());
  ASSERT_EQ(g.rows.size(), 64u);
  EXPECT_EQ(cell<std::int64_t>(g, 37, "Last Arrivals"), 3);
  EXPECT_EQ(cell<std::int64_t>(g, 37, "Last From Step"), 2);
  EXPECT_NEAR(std::get<double>(g.rows[37][5]), 7.5, 1e-9);  // 300 us of the 4 ms of steps after warm-up
  EXPECT_NEAR(cell<double>(g, 37, "Others Waited"), 18.9, 1e-9);
  EXPECT_TRUE(has_note(g, "rank 37 holds the job back by 7.5 % of step time after warm-up")) << g.notes[0].text;
  // Run of 3 late instances (2, 3, 4 in time order): AllReduce #2.
  EXPECT_TRUE(has_note(g, "last repeatedly from AllReduce #2, collective 2 of 5")) << g.notes[0].text;
  const Report o = comm_overlap(t.db());
  ASSERT_EQ(o.rows.size(), 64u * 5u);
  for (std::size_t i = 0; i < o.rows.size(); ++i) EXPECT_DOUBLE_EQ(cell<double>(o, i, "Exposed of Wall"), 20.0);
  const Report s = nccl_sum(t.db());
  EXPECT_EQ(cell<std::int64_t>(s, 0, "Count"), 320);
  EXPECT_EQ(cell<std::int64_t>(s, 0, "Ranks"), 64);
  EXPECT_TRUE(has_note(s, "world size 64 ranks"));
  // busbw factor 2 x 63 / 64.
  EXPECT_NEAR(cell<double>(s, 0, "Busbw") / cell<double>(s, 0, "Algbw"), 2.0 * 63 / 64, 1e-12);
  EXPECT_EQ(rank_sum(t.db()).rows.size(), 64u);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0);  // a guard against a quadratic blow-up, not a benchmark
}

// A benchmark, not a test (run with --gtest_also_run_disabled_tests): the four reports on
// 64 ranks x 200 steps (64,000 kernels, 12,800 AllReduces, 200 instances), timed apart from
// building the trace; the seconds go to the test's properties (--gtest_output=xml).
TEST(CommReports, DISABLED_SixtyFourRanksBenchmark) {
  TraceDb t;
  build_comm_job(t, CommJob{.ranks = 64, .steps = 200, .delayed_rank = 37, .delay_from = 100});
  const auto start = std::chrono::steady_clock::now();
  for (std::string_view name : {"nccl_sum", "comm_overlap", "rank_sum", "stragglers", "collective_trace", "top"})
    (void)run_report(t.db(), name);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::testing::Test::RecordProperty("report_seconds", std::to_string(seconds));
  EXPECT_EQ(cell<std::int64_t>(stragglers(t.db()), 37, "Last From Step"), 100);
}

}  // namespace
}  // namespace gpuscope::analyze
