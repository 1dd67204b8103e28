// llm_sum and the generate-loop detection (analyze/llm/llm_reports.hpp, llm_generations.hpp) on
// hand-built logs of what `gpuscope trace --pytorch=ops,modules[,shapes]` records from a
// generate loop, where every number is computed by hand: the loop is llm_loop_log.hpp's
// (its file comment gives every time).
#include "analyze/llm/llm_reports.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "../store/log_builder.hpp"
#include "../store/pytorch_log.hpp"
#include "llm_loop_log.hpp"
#include "profile_cache.hpp"
#include "analyze/llm/llm_generations.hpp"
#include "analyze/report_registry.hpp"
#include "store/database.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using store::test::TempDir;
using test::cell;
using namespace llm_test;  // NOLINT(google-build-using-namespace)

// Imports the log and returns llm_sum.
class Llm : public ::testing::Test {
 protected:
  Report run(const std::vector<Gen>& gens, Shapes shapes, bool to_host = false,
             const std::optional<ModelBytesSpec>& bytes = std::nullopt) {
    return run_with(
        [&](LoopLog& log) {
          if (bytes) log.model_bytes(*bytes);
          std::uint64_t t = 0;
          for (const Gen& g : gens) t = log.generation(g);
          return t;
        },
        shapes, to_host);
  }
  // `write` writes the log and returns when it ends.
  Report run_with(const std::function<std::uint64_t(LoopLog&)>& write, Shapes shapes, bool to_host = false) {
    {
      LoopLog log(m_dir.file("g.gslog"), shapes, to_host);
      log.finish(write(log) + 100);
    }
    (void)store::import_logs({m_dir.file("g.gslog")}, m_dir.file("g.sqlite"), store::ImportOptions{});
    m_db.emplace(store::open_trace(m_dir.file("g.sqlite")));
    if (m_profile) {  // `gpuscope peak`'s profile of the trace's GPU
      MachineProfile p;
      p.device.name = "NVIDIA H100 80GB HBM3";
      p.device.uuid = m_db->query_text("SELECT uuid FROM devices LIMIT 1").value_or("");
      for (const auto& [name, value] : *m_profile) {
        core::Ceiling c;
        c.name = name;
        c.measured = value;
        p.ceilings.push_back(c);
      }
      (void)store::save_to_cache(p);
    }
    return llm_sum(*m_db);
  }
  TempDir m_dir;
  std::optional<store::Database> m_db;
  test::ProfileCache m_cache;  // an empty profile cache of the test's own
  std::optional<std::vector<std::pair<std::string, double>>> m_profile;
};

// The decode intervals of Gen{.decode_steps = 4}: 110, 120, 130, 140 µs.
constexpr double kTpotMean = 0.125, kTpotP50 = 0.125, kTpotP90 = 0.137, kTpotP99 = 0.1397;
// Wall: prefill call → last token's GPU end = 310 + 110 + 120 + 130 + 138 µs.
constexpr double kWallMs = 0.808;

TEST_F(Llm, PrefillAndDecodeStepsGiveExactTtftAndTpot) {
  const Report r = run({{1000, 1, 7, 4}}, Shapes::kEmbedding);
  ASSERT_EQ(r.rows.size(), 2u);  // the generation, "all"
  EXPECT_EQ(cell<std::string>(r, 0, "Generation"), "1");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "PID"), kPid);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Batch"), 1);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Prompt"), 7);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Output"), 5);  // the prefill's token + 4 decode steps
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "TTFT"), 0.308);
  EXPECT_NEAR(cell<double>(r, 0, "TPOT Mean"), kTpotMean, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "TPOT p50"), kTpotP50, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "TPOT p90"), kTpotP90, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "TPOT p99"), kTpotP99, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "Wall"), kWallMs, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "Per Seq Rate"), 5 / (kWallMs * 1e-3), 1e-6);
  EXPECT_NEAR(cell<double>(r, 0, "Output Rate"), 5 / (kWallMs * 1e-3), 1e-6);
  // Busy D + 2 of D + 10 µs per step: (102 + 112 + 122 + 132) / 500.
  EXPECT_NEAR(cell<double>(r, 0, "Decode GPU Busy"), 93.6, 1e-9);
  EXPECT_EQ(cell<std::string>(r, 1, "Generation"), "all");
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "TTFT"), 0.308);
  EXPECT_TRUE(test::has_note(r, "model GPT in PID 300: 5 forward passes")) << r.notes.at(0).text;
  EXPECT_TRUE(test::has_note(r, "recorded input shapes"));
  EXPECT_TRUE(test::has_note(r, NoteLevel::kInfo, "decode is GPU-bound"));
  // A trace without the model's bytes (gpuscope before issue 24's item 2): no bandwidth columns.
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][14])) << "no Decode Bytes";
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][17])) << "no SOL TPOT";
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][18])) << "no Prefill FLOPs without their ops";
  EXPECT_TRUE(test::has_note(r, "no decode bytes: the model's range carries no weight_bytes"));
  EXPECT_TRUE(test::has_note(r, "TTFT: from the prefill's model call (no generate() call recorded around it"));
}

// generate() (gpuscope's range around transformers' GenerationMixin.generate) called 30 µs
// before the prefill: TTFT and Wall start at the call, the user's request; the decode steps
// and the prefill's own rate (its model call to its token, 308 µs) stay as they were.
TEST_F(Llm, AGenerateCallStartsTtftAndWall) {
  m_profile = {{{"dram_read", 3.0e12}, {"tensor_fp16", 8.0e14}}};
  Gen g{1000, 1, 7, 4};
  g.generate_us = 30;
  const Report r = run_with(
      [&](LoopLog& log) {
        log.model_bytes(ModelBytesSpec{200'000'000, false, 64, true});
        log.builder().push(500'000, kTid, "load prompts");  // the program's own range
        log.builder().pop(600'000, kTid);
        return log.generation(g);
      },
      Shapes::kEmbedding);
  ASSERT_EQ(r.rows.size(), 2u);
  for (std::size_t row : {0u, 1u}) {
    EXPECT_DOUBLE_EQ(cell<double>(r, row, "TTFT"), 0.338);
    EXPECT_NEAR(cell<double>(r, row, "Wall"), kWallMs + 0.030, 1e-12);
    EXPECT_NEAR(cell<double>(r, row, "Per Seq Rate"), 5 / ((kWallMs + 0.030) * 1e-3), 1e-6);
    EXPECT_NEAR(cell<double>(r, row, "TPOT Mean"), kTpotMean, 1e-12);
    EXPECT_NEAR(cell<double>(r, row, "Prefill Rate"), prefill_flops(7) / 308e-6 / 1e12, 1e-9);
  }
  EXPECT_TRUE(test::has_note(r,
                             "TTFT: from the generate() call (the user's request: gpuscope's range around it) "
                             "to the first token done on the GPU"));
  EXPECT_TRUE(test::has_note(r, "in 308 µs (its model call to the first token): 763 GFLOP/s"));
  EXPECT_EQ(m_db->query_int("SELECT COUNT(*) FROM v_torch_modules WHERE parent_module IS NULL"), 5)
      << "the model's calls stay top-level modules inside the generate() range";
  // nvtx_sum reports the program's own ranges: not gpuscope's generate() range.
  const std::vector<Report> nvtx = run_report(*m_db, "nvtx_sum");
  ASSERT_EQ(nvtx.at(0).rows.size(), 1u);
  EXPECT_EQ(cell<std::string>(nvtx.at(0), 0, "Range"), "load prompts");
}

// Only a generate() call on the prefill's thread that holds the prefill's call counts: one on
// another thread (another program thread's) or one that returned before the prefill does not.
TEST_F(Llm, OnlyAGenerateCallHoldingThePrefillOnItsThreadStartsTheRequest) {
  const Report r = run_with(
      [](LoopLog& log) {
        Gen a{1000, 1, 7, 4}, b{5000, 1, 7, 2}, c{9000, 1, 7, 2};
        a.generate_us = 30;
        b.generate_us = 50;
        b.generate_tid = kTid + 1;
        c.generate_us = 40;
        log.generation(a);
        log.generation(b);
        log.open_generate(8900);  // an earlier call that returned before generation c's
        log.close_generate(8910);
        return log.generation(c);
      },
      Shapes::kEmbedding);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "TTFT"), 0.338);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "TTFT"), 0.308) << "the call on another thread is not this request";
  EXPECT_DOUBLE_EQ(cell<double>(r, 2, "TTFT"), 0.348) << "the call holding the prefill, not the one before";
  EXPECT_NEAR(cell<double>(r, 3, "TTFT"), (0.338 + 0.308 + 0.348) / 3, 1e-12);
  EXPECT_TRUE(test::has_note(r,
                             "TTFT: from the generate() call for 2 of 3 generations, from the prefill's model "
                             "call for the others"));
}

// Nested generate() calls (an assistant model's inside the main one's): the innermost holding
// the prefill starts it. One call holding two prefills (two generations in one call): the
// first starts at the call, the second at its own model call.
TEST_F(Llm, NestedCallsTheInnermostAndTwoPrefillsInOneCallTheFirst) {
  const Report r = run_with(
      [](LoopLog& log) {
        log.open_generate(900);
        log.open_generate(960);
        std::uint64_t t = log.generation({1000, 1, 7, 2});
        log.close_generate(t + 1);
        log.close_generate(t + 2);
        log.open_generate(5000);
        t = log.generation({5050, 1, 7, 2});
        t = log.generation({t + 100, 1, 7, 2});
        log.close_generate(t + 1);
        return t + 2;
      },
      Shapes::kEmbedding);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "TTFT"), 0.348) << "the inner call, 40 µs before the prefill";
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "TTFT"), 0.358);
  EXPECT_DOUBLE_EQ(cell<double>(r, 2, "TTFT"), 0.308) << "the second prefill in one call: its own model call";
}

// Decode step k reads the weights (200 MB) and the cache of 6 + k positions plus its own
// new one, 1 MB each: 208, 209, 210, 211 MB, mean 209.5 MB, over the median step 125 µs:
// 1676 GB/s. The measured DRAM read ceiling 3 TB/s: 55.87 %, speed of light 209.5 MB / 3 TB/s =
// 69.83 µs. Prefill: prefill_flops(7) = 235 031 552 FLOP in TTFT 308 µs = 0.763 TFLOP/s, of
// the measured tensor_fp16 ceiling 800 TFLOP/s 0.0954 %.
TEST_F(Llm, DecodeBytesBandwidthAndSpeedOfLightAgainstTheMeasuredCeilings) {
  m_profile = {{{"dram_read", 3.0e12}, {"tensor_fp16", 8.0e14}}};
  const Report r = run({{1000, 1, 7, 4}}, Shapes::kEmbedding, false, ModelBytesSpec{200'000'000, false, 64, true});
  ASSERT_EQ(r.rows.size(), 2u);
  for (std::size_t row : {0u, 1u}) {  // one generation: "all" agrees
    EXPECT_NEAR(cell<double>(r, row, "Decode Bytes"), 209.5, 1e-9);
    EXPECT_NEAR(cell<double>(r, row, "Decode BW"), 1676.0, 1e-6);
    EXPECT_NEAR(cell<double>(r, row, "BW of Ceiling"), 1676e9 / 3e12 * 100, 1e-9);
    EXPECT_NEAR(cell<double>(r, row, "SOL TPOT"), 209.5e6 / 3e12 * 1e3, 1e-12);
    EXPECT_NEAR(cell<double>(r, row, "Prefill FLOPs"), prefill_flops(7) / 1e9, 1e-12);
    EXPECT_NEAR(cell<double>(r, row, "Prefill Rate"), prefill_flops(7) / 308e-6 / 1e12, 1e-9);
    EXPECT_NEAR(cell<double>(r, row, "Prefill of Ceiling"), prefill_flops(7) / 308e-6 / 8e14 * 100, 1e-9);
  }
  EXPECT_DOUBLE_EQ(prefill_flops(7), 235'031'552.0);
  // The verdict carries the numbers.
  EXPECT_TRUE(test::has_note(r,
                             "decode step 125 µs (median TPOT), speed of light 69.8 µs (56 %): 210 MB per step "
                             "(weights 200 MB, KV cache 9.5 MB) at 3 TB/s, the measured DRAM read bandwidth of "
                             "NVIDIA H100 80GB HBM3 (gpuscope peak's dram_read); achieved 1.68 TB/s"))
      << r.notes.at(1).text;
  EXPECT_TRUE(test::has_note(r, "decode is GPU-bound but reaches 56 % of the DRAM ceiling"));
  EXPECT_TRUE(test::has_note(r, "prefill: 235 MFLOP per prefill (2·M·N·K over its 3 matrix products"));
  EXPECT_TRUE(test::has_note(r,
                             "763 GFLOP/s, 0.1 % of 800 TFLOP/s, the measured tensor_fp16 ceiling of NVIDIA H100 "
                             "80GB HBM3 (gpuscope peak; float16 weights)"));
  // The model's range keeps its path: the bytes after it are not part of the name.
  EXPECT_EQ(m_db->query_text("SELECT path FROM v_torch_modules WHERE parent_module IS NULL LIMIT 1"), "GPT");
  EXPECT_EQ(m_db->query_text("SELECT class_name FROM v_torch_modules WHERE parent_module IS NULL LIMIT 1"), "GPT");
}

// No profile cached: CUPTI's theoretical bandwidth of the devices row (3.352 TB/s) and no
// tensor ceiling (the row has no clock), each said. Two generations: the second's steps read
// 213 and 214 MB over its median step 115 µs; "all" pools the six steps (mean 1265 / 6 MB) over
// the median of every interval, 120 µs.
TEST_F(Llm, WithoutAProfileTheTheoreticalBandwidthIsUsedAndSaid) {
  const Report r =
      run({{1000, 1, 7, 4}, {5000, 1, 12, 2}}, Shapes::kEmbedding, false, ModelBytesSpec{200'000'000, false, 64, true});
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_NEAR(cell<double>(r, 0, "BW of Ceiling"), 1676e9 / 3.352e12 * 100, 1e-9);
  EXPECT_NEAR(cell<double>(r, 1, "Decode Bytes"), 213.5, 1e-9);
  EXPECT_NEAR(cell<double>(r, 1, "Decode BW"), 213.5e6 / 115e-6 / 1e9, 1e-6);
  EXPECT_NEAR(cell<double>(r, 1, "Prefill FLOPs"), prefill_flops(12) / 1e9, 1e-12);
  EXPECT_NEAR(cell<double>(r, 2, "Decode Bytes"), 1265.0 / 6, 1e-9);
  EXPECT_NEAR(cell<double>(r, 2, "Decode BW"), 1265e6 / 6 / 120e-6 / 1e9, 1e-6);
  EXPECT_NEAR(cell<double>(r, 2, "SOL TPOT"), 1265e6 / 6 / 3.352e12 * 1e3, 1e-12);
  EXPECT_NEAR(cell<double>(r, 2, "Prefill FLOPs"), (prefill_flops(7) + prefill_flops(12)) / 2 / 1e9, 1e-12);
  EXPECT_NEAR(cell<double>(r, 2, "Prefill Rate"), (prefill_flops(7) + prefill_flops(12)) / 616e-6 / 1e12, 1e-9);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[2][20])) << "no tensor ceiling known";
  EXPECT_TRUE(test::has_note(r,
                             "speed of light 62.9 µs (52 %): 211 MB per step (weights 200 MB, KV cache 10.8 MB) at "
                             "3.35 TB/s, the theoretical DRAM bandwidth of NVIDIA H100 80GB HBM3 (CUPTI's; no "
                             "`gpuscope peak` profile of this GPU is cached"))
      << r.notes.at(1).text;
  EXPECT_TRUE(test::has_note(r,
                             "no tensor_fp16 ceiling is known for NVIDIA H100 80GB HBM3 (float16 weights; no "
                             "`gpuscope peak` profile"));
}

// A static cache says its allocation (2 sequences x 64 positions x 1 MB = 128 MB), which every
// step reads whole: 328 MB per step, 2.624 TB/s over 125 µs = 87.5 % of the 3 TB/s ceiling:
// bandwidth-bound.
TEST_F(Llm, AStaticCacheCountsItsAllocationAndABandwidthBoundDecodeIsSaid) {
  m_profile = {{{"dram_read", 3.0e12}}};
  const Report r = run({{1000, 2, 7, 4}}, Shapes::kEmbedding, false, ModelBytesSpec{200'000'000, true, 64, false});
  EXPECT_NEAR(cell<double>(r, 0, "Decode Bytes"), 328.0, 1e-9);
  EXPECT_NEAR(cell<double>(r, 0, "BW of Ceiling"), 2624e9 / 3e12 * 100, 1e-9);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][18])) << "no FLOPs: the prefill ran no matrix product";
  EXPECT_TRUE(test::has_note(r, "decode is GPU-bound at 87 % of the DRAM ceiling: memory bandwidth sets its pace"))
      << r.notes.at(1).text;
}

// The token reaches the host with a device-to-host copy (a streamer's .cpu()): the token is
// done when the copy ends, not after the stopping check's kernel that follows it.
TEST_F(Llm, TheTokensCopyToTheHostEndsIt) {
  const Report r = run({{1000, 1, 7, 4}}, Shapes::kEmbedding, true);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "TTFT"), 0.309);
  EXPECT_NEAR(cell<double>(r, 0, "TPOT Mean"), kTpotMean, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "TPOT p99"), kTpotP99, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "Wall"), kWallMs + 0.001, 1e-12);
  // Busy: the kernel, the sampling and the copy, D + 3 of D + 10 µs: 472 / 500.
  EXPECT_NEAR(cell<double>(r, 0, "Decode GPU Busy"), 94.4, 1e-9);
}

TEST_F(Llm, Batch8CountsEverySequencesTokens) {
  const Report r = run({{1000, 8, 7, 4}}, Shapes::kEmbedding);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Batch"), 8);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Prompt"), 7);
  EXPECT_NEAR(cell<double>(r, 0, "TPOT Mean"), kTpotMean, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "Output Rate"), 8 * 5 / (kWallMs * 1e-3), 1e-6);
  EXPECT_NEAR(cell<double>(r, 0, "Per Seq Rate"), 5 / (kWallMs * 1e-3), 1e-6);
}

// Two generate() calls; the second's prompts are ragged (padded to 12 tokens: the trace sees
// the padded [4, 12]) and its preparation launches a kernel between the generations, which
// must not lengthen the first generation's last token.
TEST_F(Llm, TwoGenerationsWithRaggedPromptsAreSplitAtThePrefill) {
  const Report r = run({{1000, 4, 7, 4}, {5000, 4, 12, 2}}, Shapes::kEmbedding);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Prompt"), 7);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Prompt"), 12);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Output"), 3);
  EXPECT_NEAR(cell<double>(r, 0, "Wall"), kWallMs, 1e-12);  // the prelude at 4980 µs is not its
  EXPECT_NEAR(cell<double>(r, 0, "TPOT p99"), kTpotP99, 1e-12);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "TTFT"), 0.308);
  EXPECT_NEAR(cell<double>(r, 1, "TPOT Mean"), 0.115, 1e-12);  // 110, 120 µs
  // all: TTFT the mean, TPOT over the six intervals, Batch common, Prompt differs.
  EXPECT_EQ(cell<std::string>(r, 2, "Generation"), "all");
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Batch"), 4);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[2][3])) << "Prompt differs";
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[2][4])) << "Output differs";
  EXPECT_DOUBLE_EQ(cell<double>(r, 2, "TTFT"), 0.308);
  EXPECT_NEAR(cell<double>(r, 2, "TPOT Mean"), (110 + 120 + 130 + 140 + 110 + 120) / 6.0 / 1e3, 1e-12);
  EXPECT_NEAR(cell<double>(r, 2, "TPOT p50"), 0.120, 1e-12);
  const double wall2 = (310 + 110 + 118) / 1e3;
  EXPECT_NEAR(cell<double>(r, 1, "Wall"), wall2, 1e-12);
  EXPECT_NEAR(cell<double>(r, 2, "Output Rate"), 4 * (5 + 3) / ((kWallMs + wall2) * 1e-3), 1e-6);
}

// Without shapes: the kernels each forward launches tell the prefill from the decode steps;
// the times are the same, batch and prompt length unknown.
TEST_F(Llm, WithoutShapesTheKernelSetsSplitTheGenerations) {
  const Report r = run({{1000, 1, 7, 4}, {5000, 1, 12, 2}}, Shapes::kNone);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "TTFT"), 0.308);
  EXPECT_NEAR(cell<double>(r, 0, "TPOT p90"), kTpotP90, 1e-12);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Output"), 3);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][2])) << "no batch without shapes";
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][3])) << "no prompt length without shapes";
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][10])) << "no all-sequence rate without batch";
  EXPECT_NEAR(cell<double>(r, 0, "Per Seq Rate"), 5 / (kWallMs * 1e-3), 1e-6);
  EXPECT_TRUE(test::has_note(r, "from the kernels each forward launches"));
}

// torch.compile lowers the embedding into a Triton kernel: the matrix product's rows (B x S)
// tell the phases, the first decode step the batch.
TEST_F(Llm, CompiledForwardsAreToldApartByTheirMatmulRows) {
  const Report r = run({{1000, 8, 7, 4}}, Shapes::kMatmul);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Batch"), 8);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Prompt"), 7);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "TTFT"), 0.308);
  EXPECT_NEAR(cell<double>(r, 0, "TPOT Mean"), kTpotMean, 1e-12);
  EXPECT_TRUE(test::has_note(r, "matrix product"));
}

// A launch-bound decode: the GPU idles most of each step and the verdict says what a CUDA
// graph would save.
TEST_F(Llm, LaunchBoundDecodeGetsAVerdictWithNumbers) {
  {
    LogBuilder b(m_dir.file("g.gslog"), kPid);
    b.process(0);
    std::uint32_t corr = 1;
    // 6 forwards 1000 µs apart; each launches one 50 µs kernel at T+10 (GPU T+12..T+62); the
    // prefill (S = 5) too. Intervals 1000 µs, busy 50 µs each.
    for (int i = 0; i < 6; ++i) {
      const std::uint64_t t = 1000 + 1000 * static_cast<std::uint64_t>(i);
      b.push(t * 1000, kTid, "nn.Module: Tiny (Tiny)");
      b.push((t + 1) * 1000, kTid,
             std::string("aten::embedding, op_id = ") + std::to_string(i + 1) + ", sizes = [[10, 4], [1, " +
                 (i == 0 ? "5" : "1") + "]]");
      b.pop((t + 2) * 1000, kTid);
      b.api((t + 10) * 1000, (t + 11) * 1000, kTid, corr, "cudaLaunchKernel");
      b.kernel((t + 12) * 1000, (t + 62) * 1000, corr++, "k");
      b.pop((t + 900) * 1000, kTid);
    }
    b.end(8'000'000);
  }
  (void)store::import_logs({m_dir.file("g.gslog")}, m_dir.file("g.sqlite"), store::ImportOptions{});
  store::Database db = store::open_trace(m_dir.file("g.sqlite"));
  const Report r = llm_sum(db);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "TTFT"), 0.062);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "TPOT p50"), 1.0);
  EXPECT_NEAR(cell<double>(r, 0, "Decode GPU Busy"), 5.0, 1e-9);
  EXPECT_TRUE(test::has_note(r, NoteLevel::kWarning, "the GPU waits 95 % of each step")) << r.notes.at(1).text;
  EXPECT_TRUE(test::has_note(r, NoteLevel::kWarning, "save up to about 950 µs per token"));
  // top names the loop.
  const std::vector<Report> top = run_report(db, "top");
  EXPECT_TRUE(test::has_note(top.at(0), "generate loop: 1 generation(s) of Tiny, TTFT 62 µs (mean), TPOT 1 ms"))
      << top.at(0).notes.back().text;
}

// The capture began inside a generation: its decode steps form a generation with no TTFT.
TEST_F(Llm, DecodeStepsBeforeAnyPrefillHaveNoTtft) {
  const Report r = run({{1000, 1, 1, 3}, {5000, 1, 7, 2}}, Shapes::kEmbedding);  // "prompt" of 1: a decode step
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][5])) << "no TTFT";
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Output"), 4);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "TTFT"), 0.308);
  EXPECT_DOUBLE_EQ(cell<double>(r, 2, "TTFT"), 0.308);  // the mean of those known
}

// Every forward processes several tokens and none follows with one: an encoder's forwards.
TEST_F(Llm, PrefillsWithoutDecodeStepsAreNotAGenerateLoop) {
  const Report r = run({{1000, 2, 7, 0}, {5000, 2, 9, 0}, {9000, 2, 7, 0}}, Shapes::kEmbedding);
  EXPECT_TRUE(r.rows.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].text.find("no generate loop in the capture range (PID 300: the 3 calls of GPT are prefills"),
            std::string::npos)
      << r.notes[0].text;
  EXPECT_FALSE(llm_top_line(*m_db));
}

TEST(LlmNoModel, KernelsOnlyTraceSaysHowToRecord) {
  TempDir dir;
  {
    LogBuilder b(dir.file("k.gslog"), kPid);
    b.process(0);
    b.api(1000, 2000, kTid, 1, "cudaLaunchKernel");
    b.kernel(3000, 9000, 1, "k");
    b.end(10'000);
  }
  (void)store::import_logs({dir.file("k.gslog")}, dir.file("k.sqlite"), store::ImportOptions{});
  store::Database db = store::open_trace(dir.file("k.sqlite"));
  const Report r = llm_sum(db);
  EXPECT_TRUE(r.rows.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].text.rfind("no PyTorch module forwards in the capture range", 0), 0u) << r.notes[0].text;
  EXPECT_NE(r.notes[0].text.find("--pytorch=ops,modules,shapes"), std::string::npos);
  EXPECT_FALSE(llm_top_line(db));
}

TEST(LlmNoModel, TrainingTraceIsNotAGenerateLoop) {
  TempDir dir;
  store::test::write_pytorch_log(dir.file("p.gslog"));
  (void)store::import_logs({dir.file("p.gslog")}, dir.file("p.sqlite"), store::ImportOptions{});
  store::Database db = store::open_trace(dir.file("p.sqlite"));
  const Report r = llm_sum(db);
  EXPECT_TRUE(r.rows.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].text.find("no generate loop in the capture range"), std::string::npos) << r.notes[0].text;
  EXPECT_NE(r.notes[0].text.find("PID 77 trains"), std::string::npos) << r.notes[0].text;
  EXPECT_FALSE(llm_top_line(db));
}

TEST(LlmNoModel, EmptyDatabase) {
  test::TraceDb t;
  const Report r = llm_sum(t.db());
  EXPECT_TRUE(r.rows.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].text.rfind("no ", 0), 0u);
}

TEST(LlmPieces, PercentileInterpolatesLikeNumpy) {
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 90), 3.7);  // numpy.percentile([1,2,3,4], 90)
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 100), 4);
}

TEST(LlmPieces, ParseSizes) {
  const auto s = parse_sizes("[[50257, 768], [8, 1], [], []]");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->size(), 4u);
  EXPECT_EQ(s->at(1), (std::vector<std::int64_t>{8, 1}));
  EXPECT_TRUE(s->at(2).empty());
  EXPECT_TRUE(parse_sizes("[]"));
  EXPECT_FALSE(parse_sizes("[[1, x]]"));
  EXPECT_FALSE(parse_sizes("[[1, 2]"));
  EXPECT_FALSE(parse_sizes(""));
}

TEST(LlmPieces, ParseModelBytes) {
  const ModelBytes b = parse_model_bytes(
      "nn.Module: GPT2LMHeadModel (GPT2LMHeadModel), weight_bytes = 248912640, weight_dtype = bfloat16, kv_bytes = "
      "1179648, kv_tokens = 32");
  EXPECT_EQ(b.weight_bytes, 248912640);
  EXPECT_EQ(b.weight_dtype, "bfloat16");
  EXPECT_EQ(b.kv_bytes, 1179648);
  EXPECT_EQ(b.kv_tokens, 32);
  EXPECT_FALSE(b.kv_static);
  const ModelBytes s = parse_model_bytes(
      "nn.Module: M (M), weight_bytes = 10, weight_dtype = float16, kv_bytes = 4, "
      "kv_static = 1");
  EXPECT_TRUE(s.kv_static);
  EXPECT_FALSE(s.kv_tokens);
  const ModelBytes none = parse_model_bytes("nn.Module: M (M)");
  EXPECT_FALSE(none.weight_bytes);
  EXPECT_FALSE(none.kv_bytes);
  EXPECT_EQ(none.weight_dtype, "");
}

TEST(LlmPieces, StepReadBytes) {
  ForwardPass f;
  EXPECT_FALSE(step_read_bytes(f));
  f.bytes.weight_bytes = 1000;
  EXPECT_EQ(step_read_bytes(f), 1000);  // no cache passed
  f.bytes.kv_bytes = 300;
  f.bytes.kv_tokens = 3;  // 100 bytes per position: + 1 new
  EXPECT_EQ(step_read_bytes(f), 1400);
  f.seq = 4;  // 4 new positions (a chunk)
  EXPECT_EQ(step_read_bytes(f), 1700);
  f.bytes.kv_static = true;  // the allocation holds them already
  EXPECT_EQ(step_read_bytes(f), 1300);
}

TEST(LlmPieces, MatmulFlops) {
  using S = std::vector<std::vector<std::int64_t>>;
  EXPECT_EQ(matmul_flops("aten::mm", S{{3, 4}, {4, 5}}), 2.0 * 3 * 4 * 5);
  EXPECT_EQ(matmul_flops("aten::addmm", S{{5}, {3, 4}, {4, 5}, {}, {}}), 120.0);
  EXPECT_EQ(matmul_flops("aten::bmm", S{{2, 3, 4}, {2, 4, 5}}), 240.0);
  EXPECT_EQ(matmul_flops("aten::baddbmm", S{{2, 3, 5}, {2, 3, 4}, {2, 4, 5}, {}, {}}), 240.0);
  EXPECT_EQ(matmul_flops("aten::linear", S{{2, 3, 4}, {5, 4}, {5}}), 2.0 * 6 * 4 * 5);
  EXPECT_EQ(matmul_flops("aten::linear", S{{4}, {5, 4}, {}}), 40.0);                          // one vector
  EXPECT_EQ(matmul_flops("aten::matmul", S{{2, 1, 3, 4}, {6, 4, 5}}), 2.0 * 12 * 3 * 4 * 5);  // broadcast 2 x 6
  EXPECT_EQ(matmul_flops("aten::matmul", S{{4}, {4, 5}}), 40.0);                              // a row
  EXPECT_EQ(matmul_flops("aten::matmul", S{{3, 4}, {4}}), 24.0);                              // a column
  EXPECT_EQ(matmul_flops("aten::scaled_dot_product_attention", S{{1, 8, 7, 64}, {1, 8, 9, 64}, {1, 8, 9, 32}, {}}),
            2.0 * 8 * 7 * 9 * (64 + 32));
  EXPECT_FALSE(matmul_flops("aten::add", S{{3, 4}, {3, 4}}));
  EXPECT_FALSE(matmul_flops("aten::mm", S{{3, 4}}));           // an operand missing
  EXPECT_FALSE(matmul_flops("aten::bmm", S{{3, 4}, {4, 5}}));  // not 3-D
  EXPECT_FALSE(matmul_flops("aten::linear", S{{}, {5, 4}}));
}

TEST(LlmPieces, TokensRuleMarksTheForwardThatProcessesMoreThanTheNext) {
  std::vector<ForwardPass> f(6);
  const std::int64_t tokens[] = {56, 8, 8, 96, 8, 8};
  for (std::size_t i = 0; i < f.size(); ++i) f[i].tokens = tokens[i];
  EXPECT_EQ(phase_source(f), PhaseSource::kTokens);
  classify_forwards(f, PhaseSource::kTokens);
  std::string phases;
  for (const ForwardPass& x : f) phases += x.phase == ForwardPhase::kPrefill ? 'P' : 'd';
  EXPECT_EQ(phases, "PddPdd");
}

// CPU time by cause (llm_generations.hpp): each API cause from the call's name.
TEST(LlmCpu, ApiCausesFromNames) {
  EXPECT_EQ(api_cause("cudaLaunchKernel"), ApiCause::kLaunch);
  EXPECT_EQ(api_cause("cuLaunchKernel"), ApiCause::kLaunch);
  EXPECT_EQ(api_cause("cudaGraphLaunch"), ApiCause::kLaunch);
  EXPECT_EQ(api_cause("cuModuleLoadData"), ApiCause::kModuleLoad);
  EXPECT_EQ(api_cause("cuLibraryLoadData"), ApiCause::kModuleLoad);
  EXPECT_EQ(api_cause("cuModuleGetFunction"), ApiCause::kModuleLoad);
  EXPECT_EQ(api_cause("nvrtcCompileProgram"), ApiCause::kModuleLoad);
  EXPECT_EQ(api_cause("cudaMalloc"), ApiCause::kAlloc);
  EXPECT_EQ(api_cause("cudaFreeAsync"), ApiCause::kAlloc);
  EXPECT_EQ(api_cause("cuMemAlloc_v2"), ApiCause::kAlloc);
  EXPECT_EQ(api_cause("cudaStreamSynchronize"), ApiCause::kSync);
  EXPECT_EQ(api_cause("cudaDeviceSynchronize"), ApiCause::kSync);
  EXPECT_EQ(api_cause("cudaEventSynchronize"), ApiCause::kSync);
  EXPECT_EQ(api_cause("cudaMemcpy"), ApiCause::kSync);
  EXPECT_EQ(api_cause("cudaMemcpyAsync"), ApiCause::kOther);  // to the host: kSync, from its copy's kind
  EXPECT_EQ(api_cause("cudaEventRecord"), ApiCause::kOther);
}

// Window [0, 100): a launch [10, 30) with a module load nested [15, 25), a malloc [50, 60), a
// call [90, 120) clipped to 10; operators [5, 40) and [45, 55). Module 10, alloc 10, launch
// 20 - 10, other API 10; API union 40; with the operators 35 + 15 + 10 = 60 covered: framework
// 20, the rest 40.
TEST(LlmCpu, SplitGivesNestedTimeToTheFirstCause) {
  const std::vector<ApiSpan> api = {{10, 30, ApiCause::kLaunch},
                                    {15, 25, ApiCause::kModuleLoad},
                                    {50, 60, ApiCause::kAlloc},
                                    {90, 120, ApiCause::kOther}};
  const std::vector<std::pair<std::int64_t, std::int64_t>> ops = {{5, 40}, {45, 55}};
  const CpuCauses c = cpu_split(0, 100, api, ops);
  EXPECT_EQ(c.window_ns, 100);
  EXPECT_EQ(c.api_ns[static_cast<int>(ApiCause::kModuleLoad)], 10);
  EXPECT_EQ(c.api_ns[static_cast<int>(ApiCause::kAlloc)], 10);
  EXPECT_EQ(c.api_ns[static_cast<int>(ApiCause::kSync)], 0);
  EXPECT_EQ(c.api_ns[static_cast<int>(ApiCause::kLaunch)], 10);
  EXPECT_EQ(c.api_ns[static_cast<int>(ApiCause::kOther)], 10);
  EXPECT_EQ(c.framework_ns, 20);
  EXPECT_EQ(c.other_ns, 40);
  EXPECT_EQ(cpu_split(10, 10, api, ops).window_ns, 0);
}

// A cold generation (cold_us = 400: each decode step's kernel D = 490 + 10k µs, a cuModuleLoadData
// of 400 µs inside aten::_scaled_dot_product_cudnn_attention T+16 .. T+440) and two warm ones
// (D = 90 + 10k), 3 decode steps each. A decode step's CPU window is D + 10 µs (call to call), the
// last one's D + 8 (to its token's GPU end). In every step: launches 2 x 0.5 µs; operators
// embedding (1 µs) and argmax (2 µs, its launch 0.5 µs inside): framework 2.5 µs.
//   warm decode: windows 110, 120, 128 → 119.333 µs; GPU work D + 2 → 112 µs; other = window - 3.5.
//   cold decode: windows 510, 520, 528 → 519.333 µs; module load 400; framework 2.5 + 424 - 400 =
//     26.5; other = window - 427.5 → 91.833; GPU work 512.
//   prefill (D = 300): window 310, GPU work 302, launch 1, framework 2.5, other 306.5.
TEST_F(Llm, StepSumExplainsAColdGenerationByCause) {
  const Report s0 = run({{1000, 1, 7, 3, 400}, {5000, 1, 7, 3}, {9000, 1, 7, 3}}, Shapes::kEmbedding);
  ASSERT_EQ(s0.rows.size(), 4u);
  const Report r = llm_step_sum(*m_db);
  ASSERT_EQ(r.rows.size(), 6u);  // 3 generations x (prefill, decode)
  EXPECT_EQ(cell<std::string>(r, 0, "Generation"), "1");
  EXPECT_EQ(cell<std::string>(r, 0, "Phase"), "prefill");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Steps"), 1);
  EXPECT_NEAR(cell<double>(r, 0, "Step"), 0.310, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "GPU Work"), 0.302, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "Launch"), 0.001, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "Framework"), 0.0025, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "Python/Other"), 0.3065, 1e-12);
  EXPECT_NEAR(cell<double>(r, 0, "Module Load"), 0.0, 1e-12);

  EXPECT_EQ(cell<std::string>(r, 1, "Phase"), "decode");
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Steps"), 3);
  EXPECT_NEAR(cell<double>(r, 1, "Step"), 1.558 / 3, 1e-12);
  EXPECT_NEAR(cell<double>(r, 1, "GPU Work"), 0.512, 1e-12);
  EXPECT_NEAR(cell<double>(r, 1, "Module Load"), 0.400, 1e-12);
  EXPECT_NEAR(cell<double>(r, 1, "Launch"), 0.001, 1e-12);
  EXPECT_NEAR(cell<double>(r, 1, "Framework"), 0.0265, 1e-12);
  EXPECT_NEAR(cell<double>(r, 1, "Python/Other"), 0.2755 / 3, 1e-12);
  EXPECT_NEAR(cell<double>(r, 1, "Alloc") + cell<double>(r, 1, "Sync") + cell<double>(r, 1, "Other API"), 0.0, 1e-12);

  for (int row : {3, 5}) {  // the warm generations' decode steps
    EXPECT_EQ(cell<std::string>(r, row, "Phase"), "decode");
    EXPECT_NEAR(cell<double>(r, row, "Step"), 0.358 / 3, 1e-12);
    EXPECT_NEAR(cell<double>(r, row, "GPU Work"), 0.112, 1e-12);
    EXPECT_NEAR(cell<double>(r, row, "Module Load"), 0.0, 1e-12);
    EXPECT_NEAR(cell<double>(r, row, "Framework"), 0.0025, 1e-12);
    EXPECT_NEAR(cell<double>(r, row, "Python/Other"), 0.3475 / 3, 1e-12);
  }
  // 519.3 - 119.3 = 400 µs more: 400 module loading, 24 operators (Python/Other 24 less).
  EXPECT_TRUE(test::has_note(r, NoteLevel::kWarning, "generation 1 is cold: its decode steps took"));
  EXPECT_TRUE(test::has_note(s0, "stats -r llm_step_sum splits each step's CPU time by cause"));
  EXPECT_TRUE(test::has_note(r, "400 µs more than warm ones")) << r.notes.at(0).text;
  EXPECT_TRUE(test::has_note(r, ": 400 µs of it in module loading")) << r.notes.at(0).text;
  EXPECT_TRUE(test::has_note(r, ", 24 µs of it in PyTorch operators")) << r.notes.at(0).text;
  // The cuDNN operator's own CPU time: 424 µs per cold step less the 1 µs of aten::empty nested in it,
  // absent in warm ones.
  EXPECT_TRUE(test::has_note(r, "grew most: aten::_scaled_dot_product_cudnn_attention, 423 µs more per step"))
      << r.notes.at(0).text;
  EXPECT_FALSE(test::has_note(r, "its prefill took")) << "the prefills are alike";
}

// The same loop in llm_sum: generation 1's TPOT (510, 520, 530 µs) over 1.5 x the warm ones' (110,
// 120, 130): the decode verdict judges generations 2-3 (median 120 µs, the GPU busy 336 of 360 µs
// = 93 %), while the "all" row pools every step (median 130 µs).
TEST_F(Llm, TheVerdictJudgesTheWarmGenerationsWhenTheFirstIsCold) {
  const Report r = run({{1000, 1, 7, 3, 400}, {5000, 1, 7, 3}, {9000, 1, 7, 3}}, Shapes::kEmbedding);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(cell<std::string>(r, 3, "Generation"), "all");
  EXPECT_NEAR(cell<double>(r, 3, "TPOT p50"), 0.130, 1e-12);
  EXPECT_TRUE(test::has_note(r, "warm generations 2–3: decode: median step 120 µs (TPOT)")) << r.notes.at(1).text;
  EXPECT_TRUE(test::has_note(r, "the GPU was busy 93 % of the step")) << r.notes.at(1).text;
  EXPECT_TRUE(test::has_note(r, "generation 1 is cold: TPOT 520 µs against 120 µs"));
  EXPECT_TRUE(test::has_note(r, "the decode verdict judges the warm generations 2–3 only"));
}

TEST_F(Llm, TwoGenerationsTheFirstColdJudgeTheSecond) {
  const Report r = run({{1000, 1, 7, 3, 400}, {5000, 1, 7, 3}}, Shapes::kEmbedding);
  EXPECT_TRUE(test::has_note(r, "warm generation 2: decode: median step 120 µs (TPOT)"));
}

TEST_F(Llm, WithoutAColdGenerationTheVerdictJudgesEveryOne) {
  const Report r = run({{1000, 1, 7, 3}, {5000, 1, 7, 3}}, Shapes::kEmbedding);
  EXPECT_TRUE(test::has_note(r, "decode: median step 120 µs (TPOT)"));
  EXPECT_FALSE(test::has_note(r, "warm generation"));
}

TEST_F(Llm, StepSumWithoutAColdGenerationHasNoVerdict) {
  (void)run({{1000, 1, 7, 3}, {5000, 1, 7, 3}}, Shapes::kEmbedding);
  const Report r = llm_step_sum(*m_db);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_NEAR(cell<double>(r, 1, "Step"), 0.358 / 3, 1e-12);
  EXPECT_FALSE(test::has_note(r, "is cold"));
  EXPECT_FALSE(test::has_note(r, "--cuda-api=all"));
  // Recorded with --cuda-api=gpu (the default): module loading is not recorded; a note says so.
  m_db.reset();
  store::Database w(m_dir.file("g.sqlite"), store::Database::Mode::kReadWriteCreate);
  w.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('cuda_api_calls', 'gpu')");
  EXPECT_TRUE(test::has_note(llm_step_sum(w), "module loading and other driver calls are not recorded"));
}

}  // namespace
}  // namespace gpuscope::analyze
