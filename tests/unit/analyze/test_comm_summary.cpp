// The many-GPU reports as map → reduce (analyze/comm/comm_data.hpp, comm_summary.hpp): the reduce
// of per-rank maps, each through its JSON summary, gives the one-trace path's reports exactly;
// hosts' clocks are aligned; the summary format round-trips and refuses other versions.
#include "analyze/comm/comm_summary.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "analyze/comm/comm_data.hpp"
#include "analyze/comm/comm_findings.hpp"
#include "analyze/comm/nccl_reports.hpp"
#include "comm_trace.hpp"

namespace gpuscope::analyze {
namespace {

using detail::CommSummary;
using test::build_comm_job;
using test::CommJob;
using test::TraceDb;

// Rank r's summary, through its JSON document, as gpuscope comm-summary would write it.
CommSummary rank_summary(const CommJob& job, int r) {
  TraceDb t;
  CommJob one = job;
  one.only_rank = r;
  build_comm_job(t, one);
  return parse_comm_summary(comm_summary_json(detail::comm_map(t.db())), "rank" + std::to_string(r));
}

std::vector<CommSummary> rank_summaries(const CommJob& job) {
  std::vector<CommSummary> out;
  for (int r = 0; r < job.ranks; ++r) out.push_back(rank_summary(job, r));
  return out;
}

std::vector<Report> one_trace_reports(store::Database& db) {
  return {nccl_sum(db), comm_overlap(db), rank_sum(db), stragglers(db), collective_trace(db)};
}

std::vector<Report> reduce_reports(std::vector<CommSummary> parts) {
  const detail::CommData d = detail::comm_reduce(std::move(parts));
  const detail::StragglerMatch m = detail::match_collectives(d);
  std::vector<Report> out;
  for (std::string_view n : comm_report_names()) out.push_back(comm_report(n, d, m));
  return out;
}

// Same columns, rows and notes; `skip_note` (when not empty) leaves out the reduce's notes
// that start with it.
void expect_same(const std::vector<Report>& a, const std::vector<Report>& b, const std::string& skip_note = {}) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(a[i].name);
    EXPECT_EQ(a[i].name, b[i].name);
    ASSERT_EQ(a[i].columns.size(), b[i].columns.size());
    ASSERT_EQ(a[i].rows.size(), b[i].rows.size());
    for (std::size_t r = 0; r < a[i].rows.size(); ++r) EXPECT_EQ(a[i].rows[r], b[i].rows[r]) << "row " << r;
    std::vector<std::string> an, bn;
    for (const auto& n : a[i].notes) an.push_back(n.text);
    for (const auto& n : b[i].notes)
      if (skip_note.empty() || !n.text.starts_with(skip_note)) bn.push_back(n.text);
    EXPECT_EQ(an, bn);
  }
}

TEST(CommSummary, ReduceOfPerRankMapsIsTheOneTracePath) {
  const CommJob job{};  // 4 ranks, rank 2 late from step 1, sizes from the PyTorch operator
  TraceDb whole;
  build_comm_job(whole, job);
  expect_same(one_trace_reports(whole.db()), reduce_reports(rank_summaries(job)));
}

TEST(CommSummary, WithoutOpsOrStepsToo) {
  const CommJob job{.ranks = 3, .steps = 4, .delayed_rank = 0, .delay_from = 2, .with_ops = false, .with_steps = false};
  TraceDb whole;
  build_comm_job(whole, job);
  expect_same(one_trace_reports(whole.db()), reduce_reports(rank_summaries(job)));
}

TEST(CommSummary, SummariesInAnyOrderGiveTheSameReports) {
  const CommJob job{};
  std::vector<CommSummary> parts = rank_summaries(job);
  std::vector<CommSummary> reversed(parts.rbegin(), parts.rend());
  expect_same(reduce_reports(parts), reduce_reports(std::move(reversed)));
}

// Ranks 2 and 3 recorded on host "b", whose clock is 5 ms ahead: the reduce moves them back
// by the collectives' ends, and the reports are the one-clock job's, with a note saying so.
TEST(CommSummary, HostClocksAreAlignedByTheCollectives) {
  const CommJob job{};
  TraceDb whole;
  build_comm_job(whole, job);
  std::vector<CommSummary> parts = rank_summaries(job);
  constexpr std::int64_t kSkew = 5'000'000;
  for (int r = 0; r < 4; ++r) parts[static_cast<std::size_t>(r)].clock_domain = r < 2 ? "a" : "b";
  for (int r = 2; r < 4; ++r) {
    for (detail::RankFacts& f : parts[static_cast<std::size_t>(r)].ranks) {
      f.span = {f.span.start_ns + kSkew, f.span.end_ns + kSkew};
      for (detail::StepSplit& s : f.steps) s.start_ns += kSkew, s.end_ns += kSkew;
      for (detail::NcclCall& c : f.nccl) c.start_ns += kSkew, c.end_ns += kSkew;
    }
  }
  const std::vector<Report> reduced = reduce_reports(parts);
  expect_same(one_trace_reports(whole.db()), reduced, "clocks of 2 hosts");
  EXPECT_TRUE(test::has_note(reduced[3], "clocks of 2 hosts aligned onto a's: b moved by -5 ms (3 collectives"))
      << reduced[3].notes.back().text;
  const detail::CommData d = detail::comm_reduce(parts);
  ASSERT_EQ(d.clocks.size(), 2u);
  EXPECT_EQ(d.clocks[1].offset_ns, -kSkew);
  EXPECT_EQ(d.clocks[1].residual_max_ns, 0);
}

TEST(CommSummary, JsonRoundTripsExactly) {
  CommSummary s = rank_summary(CommJob{}, 2);
  s.source = "rank2.sqlite";
  s.world_size = 4;
  const std::string text = comm_summary_json(s);
  EXPECT_EQ(comm_summary_json(parse_comm_summary(text, "x")), text);
  EXPECT_NE(text.find("\"format\":\"gpuscope-comm-summary\",\"version\":1"), std::string::npos) << text;
  // Rank 2's AllReduce of step 1 (100 us late): [kind, stream, start, end, 1048576 x 4 bytes].
  // [kind, stream, start, end, 1048576 x 4 bytes, launch end (-1: no api_calls in this job)].
  EXPECT_NE(text.find("[\"AllReduce\",20,1700000,1900000,4194304,-1]"), std::string::npos) << text;
  // A summary written before the launch end was kept (5 fields per call) still reads.
  std::string old = text;
  for (std::string::size_type at; (at = old.find(",-1]")) != std::string::npos;) old.replace(at, 4, "]");
  const CommSummary back = parse_comm_summary(old, "old");
  ASSERT_FALSE(back.ranks.empty());
  ASSERT_FALSE(back.ranks[0].nccl.empty());
  EXPECT_EQ(back.ranks[0].nccl[0].launch_end_ns, -1);
  EXPECT_EQ(back.ranks[0].nccl[0].end_ns, 900000);
}

TEST(CommSummary, RefusesAnotherVersionOrFormatNamingBoth) {
  std::string text = comm_summary_json(rank_summary(CommJob{}, 0));
  const std::string v1 = "\"version\":1";
  text.replace(text.find(v1), v1.size(), "\"version\":2");
  try {
    (void)parse_comm_summary(text, "old.json");
    FAIL() << "no error";
  } catch (const CommSummaryError& e) {
    EXPECT_NE(std::string(e.what()).find("old.json: comm summary version 2, this gpuscope reads version 1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)parse_comm_summary("{\"format\":\"other\"}", "x.json"), CommSummaryError);
  EXPECT_THROW((void)parse_comm_summary("not json", "x.json"), CommSummaryError);
  EXPECT_THROW((void)parse_comm_summary(R"({"format":"gpuscope-comm-summary","version":1})", "x.json"),
               CommSummaryError);
}

// The generated 64-rank job (rank 37 late by 100 us from step 2 of 5): the reduce of 64
// per-rank maps gives the one-trace path's reports (test_nccl_reports.cpp's SixtyFourRanks
// checks their numbers by hand).
TEST(CommSummary, SixtyFourRanksReduceIsTheOneTracePath) {
  const CommJob job{.ranks = 64, .steps = 5, .delayed_rank = 37, .delay_from = 2};
  TraceDb whole;
  build_comm_job(whole, job);
  const std::vector<Report> reduced = reduce_reports(rank_summaries(job));
  expect_same(one_trace_reports(whole.db()), reduced);
  EXPECT_TRUE(test::has_note(reduced[3], "rank 37 holds the job back by 7.5 % of step time after warm-up"));
}

}  // namespace
}  // namespace gpuscope::analyze
