// The Tokens section of `gpuscope report` (analyze/llm/llm_token_timeline.hpp gathers it,
// render/token_timeline_svg.hpp draws it) on the hand-built generate loops of
// llm_loop_log.hpp, whose every time is known: prefill D = 300 µs, decode step k D = 90 + 10k
// µs; TTFT 308 µs, decode interval k = D + 10 µs, GPU busy D + 2 µs (its file comment).
#include "analyze/llm/llm_token_timeline.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../committed_traces.hpp"
#include "../store/log_builder.hpp"
#include "analyze/report/report_page.hpp"
#include "llm_loop_log.hpp"
#include "render/html_report.hpp"
#include "render/token_timeline_svg.hpp"
#include "store/database.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::analyze {
namespace {

using namespace llm_test;  // NOLINT(google-build-using-namespace)

class Tokens : public ::testing::Test {
 protected:
  store::Database& trace(const std::vector<Gen>& gens) {
    {
      LoopLog log(m_dir.file("g.gslog"), Shapes::kEmbedding);
      std::uint64_t t = 0;
      for (const Gen& g : gens) t = log.generation(g);
      log.finish(t + 100);
    }
    (void)store::import_logs({m_dir.file("g.gslog")}, m_dir.file("g.sqlite"), store::ImportOptions{});
    m_db.emplace(store::open_trace(m_dir.file("g.sqlite")));
    return *m_db;
  }
  std::string html(store::Database& db) {
    ReportPageOptions o;
    o.trace_name = "g.sqlite";
    o.timeline = false;
    std::ostringstream out;
    render::write_html_report(report_page(db, o), out);
    return out.str();
  }
  store::test::TempDir m_dir;
  std::optional<store::Database> m_db;
};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The <title> of the step group whose opening tag holds `tag` in the chart of `generation`.
std::string step_title(const std::string& html, int generation, const std::string& tag) {
  const std::size_t chart =
      html.find("class=\"token-timeline\" data-generation=\"" + std::to_string(generation) + "\"");
  if (chart == std::string::npos) return {};
  const std::size_t g = html.find(tag, chart);
  const std::size_t open = html.find("<title>", g), close = html.find("</title>", g);
  if (g == std::string::npos || open == std::string::npos || close == std::string::npos) return {};
  return html.substr(open + 7, close - open - 7);
}

// Generation 1 cold (every decode step 400 µs longer, 400 µs of module loading in each), two warm
// ones: 3 decode steps each.
TEST_F(Tokens, StepsTileEachGenerationWithTheirTimesAndCauses) {
  const core::TokenTimeline t = token_timeline(trace({{1000, 1, 7, 3, 400}, {5000, 1, 7, 3}, {9000, 1, 7, 3}}));
  ASSERT_EQ(t.generations_total, 3);
  ASSERT_EQ(t.generations.size(), 3u);
  ASSERT_EQ(t.causes.size(), 7u);
  EXPECT_EQ(t.causes[0], "Module Load");

  const core::TokenGeneration& warm = t.generations[1];
  EXPECT_EQ(warm.number, 2);
  EXPECT_EQ(warm.pid, kPid);
  EXPECT_EQ(warm.model, "GPT");
  EXPECT_EQ(warm.tokens, 4);
  EXPECT_EQ(warm.batch, 1);
  EXPECT_EQ(warm.ttft_ns, 308'000);
  EXPECT_EQ(warm.tpot_mean_ns, 120'000);  // 110, 120, 130 µs
  EXPECT_EQ(warm.tpot_median_ns, 120'000);
  ASSERT_EQ(warm.steps.size(), 4u);
  EXPECT_TRUE(warm.steps[0].prefill);
  EXPECT_EQ(warm.steps[0].index, 0);
  EXPECT_EQ(warm.steps[0].start_ns, 0);
  EXPECT_EQ(warm.steps[0].wall_ns, 308'000);
  EXPECT_EQ(warm.steps[0].gpu_busy_ns, 302'000);  // its kernel 300 µs + the sampling 2 µs
  const std::int64_t starts[] = {308'000, 418'000, 538'000}, walls[] = {110'000, 120'000, 130'000};
  for (int k = 1; k <= 3; ++k) {
    const core::TokenStep& s = warm.steps[k];
    EXPECT_FALSE(s.prefill);
    EXPECT_EQ(s.index, k);
    EXPECT_EQ(s.start_ns, starts[k - 1]);
    EXPECT_EQ(s.wall_ns, walls[k - 1]);
    EXPECT_EQ(s.gpu_busy_ns, walls[k - 1] - 8'000);  // D + 2 of D + 10
    EXPECT_FALSE(s.stands_out);
    ASSERT_EQ(s.cpu_ns.size(), 7u);
    std::int64_t sum = 0;
    for (std::int64_t c : s.cpu_ns) sum += c;
    EXPECT_EQ(sum, s.cpu_window_ns) << "the causes add up to the CPU window";
    EXPECT_EQ(s.cpu_ns[3], 1'000) << "two launches of 0.5 µs";
  }
  EXPECT_FALSE(warm.cold_tpot_ns);

  const core::TokenGeneration& cold = t.generations[0];
  EXPECT_EQ(cold.tpot_mean_ns, 520'000);  // 510, 520, 530 µs
  EXPECT_EQ(cold.cold_tpot_ns, 520'000);
  EXPECT_EQ(cold.warm_tpot_ns, 120'000);
  EXPECT_EQ(cold.steps[1].cpu_ns[0], 400'000) << "its module loading";
  EXPECT_EQ(cold.steps[1].cpu_window_ns, 510'000);
  EXPECT_FALSE(cold.steps[0].stands_out) << "the prefills are alike";
}

// Decode step 3 of 4 runs 300 µs longer: 430 µs against the median 130 µs (110, 120, 430, 140).
TEST_F(Tokens, ASlowDecodeStepStandsOut) {
  const core::TokenTimeline t = token_timeline(trace({{1000, 1, 7, 4, 0, 3, 300}}));
  ASSERT_EQ(t.generations.size(), 1u);
  const core::TokenGeneration& g = t.generations[0];
  EXPECT_EQ(g.tpot_median_ns, 130'000);
  ASSERT_EQ(g.steps.size(), 5u);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(g.steps[k].stands_out, k == 3) << k;
  EXPECT_EQ(g.steps[3].wall_ns, 430'000);
}

TEST_F(Tokens, TheReportPageHasATokensSectionWithOneSegmentPerStep) {
  store::Database& db = trace({{1000, 1, 7, 3, 400}, {5000, 1, 7, 3}, {9000, 1, 7, 3}});
  const std::string page = html(db);
  EXPECT_EQ(count(page, "<section id=\"tokens\">"), 1u);
  EXPECT_EQ(count(page, "<a href=\"#tokens\">Tokens</a>"), 1u);
  EXPECT_EQ(count(page, "@@"), 0u);
  EXPECT_EQ(count(page, "<svg class=\"token-timeline\""), 3u);
  EXPECT_EQ(count(page, "<g class=\"token-step"), 12u);  // 3 x (prefill + 3 decode steps)
  EXPECT_EQ(count(page, "data-kind=\"prefill\""), 3u);
  EXPECT_EQ(count(page, "data-kind=\"decode\""), 9u);
  EXPECT_EQ(count(page, "class=\"step-busy\""), 12u);
  EXPECT_EQ(count(page, "<text class=\"kind-label\""), 6u) << "prefill and decode labelled in each chart";
  // The section sits after "Where the time goes".
  EXPECT_LT(page.find("<section id=\"where\">"), page.find("<section id=\"tokens\">"));
  EXPECT_LT(page.find("<section id=\"tokens\">"), page.find("<section id=\"timeline\">"));

  EXPECT_EQ(step_title(page, 2, "data-kind=\"prefill\""),
            "prefill (step 0): wall 0.308 ms (0.000 ms to 0.308 ms, TTFT); GPU busy 0.302 ms (98.1 %); CPU 0.310 ms "
            "(call to next call): Launch 0.001 ms, Framework 0.003 ms, Python/Other 0.307 ms");
  EXPECT_EQ(step_title(page, 2, "data-step=\"1\""),
            "decode step 1: wall 0.110 ms (0.308 ms to 0.418 ms, its TPOT interval); GPU busy 0.102 ms (92.7 %); CPU "
            "0.110 ms (call to next call): Launch 0.001 ms, Framework 0.003 ms, Python/Other 0.107 ms");
  const std::string cold = step_title(page, 1, "data-step=\"2\"");
  EXPECT_NE(cold.find("decode step 2: wall 0.520 ms"), std::string::npos) << cold;
  EXPECT_NE(cold.find("Module Load 0.400 ms"), std::string::npos) << cold;
  // The words beside each chart.
  EXPECT_NE(page.find("TTFT 0.308 ms, TPOT mean 0.120 ms (median 0.120 ms), 4 tokens per sequence (batch 1), wall "
                      "0.668 ms. No step stands out"),
            std::string::npos);
  EXPECT_NE(page.find("Cold generation: TPOT mean 0.520 ms against 0.120 ms for the others (median)"),
            std::string::npos);
  EXPECT_NE(page.find("<h3>Generation 1 (PID 300, model GPT), cold</h3>"), std::string::npos);
  EXPECT_NE(page.find("<h3>Generation 2 (PID 300, model GPT)</h3>"), std::string::npos);
}

TEST_F(Tokens, AStepThatStandsOutIsOutlinedAndNamed) {
  const std::string page = html(trace({{1000, 1, 7, 4, 0, 3, 300}}));
  EXPECT_EQ(count(page, "<g class=\"token-step"), 5u);
  EXPECT_EQ(count(page, "<g class=\"token-step stands-out\""), 1u);
  EXPECT_EQ(count(page, "class=\"stand-out-mark\""), 1u);
  EXPECT_NE(step_title(page, 1, "stands-out").find("decode step 3: wall 0.430 ms"), std::string::npos);
  EXPECT_NE(step_title(page, 1, "stands-out").find("stands out: 3.3 x the median decode step (0.130 ms)"),
            std::string::npos);
  EXPECT_NE(page.find("Stand out (over 1.5 x the median of their kind): step 3 (0.430 ms)."), std::string::npos);
}

TEST_F(Tokens, TheFirstEightGenerationsAreDrawnAndTheRestCounted) {
  std::vector<Gen> gens;
  for (std::uint64_t i = 0; i < 10; ++i) gens.push_back({1000 + 2000 * i, 1, 7, 2});
  store::Database& db = trace(gens);
  const core::TokenTimeline t = token_timeline(db);
  EXPECT_EQ(t.generations_total, 10);
  ASSERT_EQ(t.generations.size(), core::kMaxTokenGenerations);
  EXPECT_EQ(t.generations.back().number, 8);
  const std::string page = html(db);
  EXPECT_EQ(count(page, "<svg class=\"token-timeline\""), 8u);
  EXPECT_NE(page.find("2 more generation(s) left out: the first 8 of 10 are drawn"), std::string::npos);
}

// 1,100 decode steps: the first 1,024 steps are drawn, the words say so.
TEST_F(Tokens, ALongGenerationDrawsItsFirstStepsAndSaysSo) {
  store::Database& db = trace({{1000, 1, 7, 1100}});
  const core::TokenTimeline t = token_timeline(db);
  ASSERT_EQ(t.generations.size(), 1u);
  EXPECT_EQ(t.generations[0].steps.size(), core::kMaxTokenSteps);
  EXPECT_EQ(t.generations[0].steps_total, 1101);
  const std::string page = html(db);
  EXPECT_EQ(count(page, "<g class=\"token-step"), core::kMaxTokenSteps);
  EXPECT_NE(page.find("The first 1024 of its 1101 steps are drawn."), std::string::npos);
}

// Traces without a generate loop: no section, no nav link (the page is as before issue 24).
TEST(TokensAbsent, NoGenerateLoopNoTokensSection) {
  for (const char* name : {"cnn", "cnn-pytorch"}) {  // CUDA only; PyTorch training
    store::Database db = store::open_trace(test::committed_trace(name));
    EXPECT_TRUE(token_timeline(db).generations.empty()) << name;
    ReportPageOptions o;
    o.timeline = false;
    const core::ReportPage p = report_page(db, o);
    EXPECT_TRUE(p.tokens.generations.empty()) << name;
    std::ostringstream out;
    render::write_html_report(p, out);
    EXPECT_EQ(out.str().find("id=\"tokens\""), std::string::npos) << name;
    EXPECT_EQ(out.str().find("href=\"#tokens\""), std::string::npos) << name;
    EXPECT_EQ(out.str().find("@@TOKENS"), std::string::npos) << name;
  }
  std::ostringstream none;
  render::write_tokens_section(core::TokenTimeline{}, none);
  render::write_tokens_nav(core::TokenTimeline{}, none);
  EXPECT_EQ(none.str(), "");
}

TEST(TokensRender, MillisecondsCarryTheirUnit) {
  EXPECT_EQ(render::ms_text(308'000), "0.308 ms");
  EXPECT_EQ(render::ms_text(41'900'000), "41.900 ms");
  EXPECT_EQ(render::ms_text(0), "0.000 ms");
  EXPECT_EQ(render::ms_text(306'500), "0.307 ms");
  EXPECT_EQ(render::ms_text(1'234'567'499), "1234.567 ms");
}

}  // namespace
}  // namespace gpuscope::analyze
