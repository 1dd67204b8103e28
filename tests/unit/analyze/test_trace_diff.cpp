// gpuscope diff (analyze/diff/trace_diff.hpp) on hand-built traces: a trace against itself says
// nothing changed; a kernel made 20 % slower is named, and only it; kernels in one trace only
// are added / deleted; too few instances give 'unknown'; the noise decides what is called.
#include "analyze/diff/trace_diff.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::TraceDb;

// The verdicts over every instance: back-to-back runs of one kernel would otherwise be found as
// iterations of one launch, and only their steady window compared (test_judged_window).
const DiffOptions kWhole{3.0, 0.05, true};

// name id -> per-instance durations (ns); instances back to back from t = 1000.
void fill(TraceDb& t, const std::map<int, std::vector<long long>>& kernels) {
  t.strings({{1, "k_same"}, {2, "k_slow"}, {3, "k_new"}, {4, "k_gone"}, {5, "k_once"}});
  long long at = 1000;
  int corr = 0;
  for (const auto& [name, durations] : kernels)
    for (long long d : durations) {
      t.kernel(100, 0, 7, ++corr, at, at + d, name);
      at += d + 100;
    }
}

// Ten instances around `base` ns with a +-1 % jitter pattern.
std::vector<long long> around(long long base) {
  std::vector<long long> v;
  for (int i = 0; i < 10; ++i) v.push_back(base + (base / 100) * ((i * 7) % 3 - 1));
  return v;
}

std::map<std::string, std::string> categories(const Report& r) {
  std::map<std::string, std::string> out;
  for (const Row& row : r.rows) out[std::get<std::string>(row[1])] = std::get<std::string>(row[11]);
  return out;
}

TEST(TraceDiff, ATraceAgainstItselfChangedNothing) {
  TraceDb a;
  fill(a, {{1, around(10000)}, {2, around(50000)}, {5, {3000}}});
  const Report r = diff_traces(a.db(), a.db(), kWhole);
  for (const Row& row : r.rows) {
    const std::string cat = std::get<std::string>(row[11]);
    EXPECT_TRUE(cat == "unchanged" || cat == "unknown") << std::get<std::string>(row[1]) << " " << cat;
    EXPECT_EQ(std::get<double>(row[8]), 0.0);
  }
  EXPECT_EQ(categories(r)["k_once"], "unknown");  // one instance: no spread to judge by
  EXPECT_EQ(r.notes.front().text, "nothing changed beyond the noise the repeated instances show");
}

TEST(TraceDiff, NamesTheKernelMadeTwentyPercentSlowerAndOnlyIt) {
  TraceDb a, b;
  fill(a, {{1, around(10000)}, {2, around(50000)}, {4, around(2000)}});
  fill(b, {{1, around(10000)}, {2, around(60000)}, {3, around(4000)}});
  const Report r = diff_traces(a.db(), b.db(), kWhole);
  const auto cat = categories(r);
  EXPECT_EQ(cat.at("k_slow"), "increased");
  EXPECT_EQ(cat.at("k_same"), "unchanged");
  EXPECT_EQ(cat.at("k_new"), "added");
  EXPECT_EQ(cat.at("k_gone"), "deleted");
  // The biggest change of time first: k_slow's +100 us.
  ASSERT_FALSE(r.rows.empty());
  EXPECT_EQ(std::get<std::string>(r.rows[0][1]), "k_slow");
  EXPECT_NEAR(std::get<double>(r.rows[0][8]), 20.0, 1e-9);
  EXPECT_EQ(std::get<std::string>(r.rows[0][10]), "slower");
  EXPECT_NE(r.notes.front().text.find("changed most: kernel k_slow, slower by 20"), std::string::npos)
      << r.notes.front().text;
}

TEST(TraceDiff, NoiseDecidesWhatIsCalled) {
  // 8 % slower, but instances spread by +-30 %: within the noise.
  TraceDb a, b;
  std::vector<long long> wide_a, wide_b;
  for (int i = 0; i < 10; ++i) {
    wide_a.push_back(10000 + 3000 * ((i % 3) - 1));
    wide_b.push_back(10800 + 3000 * ((i % 3) - 1));
  }
  fill(a, {{1, wide_a}});
  fill(b, {{1, wide_b}});
  EXPECT_EQ(categories(diff_traces(a.db(), b.db()))["k_same"], "unchanged");
  // The same 8 % with a tight spread: called; 3 % stays under the 5 % floor.
  TraceDb c, d;
  fill(c, {{1, std::vector<long long>(10, 10000)}});
  fill(d, {{1, std::vector<long long>(10, 10800)}});
  EXPECT_EQ(categories(diff_traces(c.db(), d.db()))["k_same"], "increased");
  TraceDb e;
  fill(e, {{1, std::vector<long long>(10, 10300)}});
  EXPECT_EQ(categories(diff_traces(c.db(), e.db()))["k_same"], "unchanged");
  EXPECT_EQ(categories(diff_traces(c.db(), e.db(), DiffOptions{3, 0.01}))["k_same"], "increased");
  EXPECT_THROW((void)diff_traces(c.db(), d.db(), DiffOptions{-1, 0.01}), std::invalid_argument);
}

}  // namespace
}  // namespace gpuscope::analyze
