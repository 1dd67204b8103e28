// PyTorch references of gpuscope peak (peak/reference.hpp): parsing the python program's
// output, and the warning when a reference beats its ceiling.
#include <gtest/gtest.h>

#include "peak/reference.hpp"

using namespace gpuscope;

namespace {

MachineProfile profile_with(double dram_copy, double tensor_bf16) {
  MachineProfile p;
  Ceiling c;
  c.name = "dram_copy";
  c.measured = dram_copy;
  p.ceilings.push_back(c);
  c.name = "tensor_bf16";
  c.measured = tensor_bf16;
  p.ceilings.push_back(c);
  return p;
}

}  // namespace

TEST(ParseReferenceOutput, ReferencesVersionAndBadLinesSkipped) {
  const peak::ReferenceRun run = peak::parse_reference_output(
      "torch 2.11.0+cu130\n"
      "reference torch_copy dram_copy 4299000000000.0 4250000000000.0 torch dst.copy_(src) of 4.00 GiB\n"
      "reference torch_matmul_bf16 tensor_bf16 7.98e14 7.7e14 torch.matmul bf16 8192x8192x8192\n"
      "reference broken dram_copy nan 1\n"
      "reference unknown_ceiling no_such 1 1 x\n"
      "something else\n");
  EXPECT_EQ(run.torch_version, "2.11.0+cu130");
  EXPECT_EQ(run.unavailable, "");
  ASSERT_EQ(run.references.size(), 2u);
  EXPECT_EQ(run.references[0].name, "torch_copy");
  EXPECT_EQ(run.references[0].ceiling, "dram_copy");
  EXPECT_DOUBLE_EQ(run.references[0].best, 4.299e12);
  EXPECT_DOUBLE_EQ(run.references[0].median, 4.25e12);
  EXPECT_EQ(run.references[0].what, "torch dst.copy_(src) of 4.00 GiB");
  EXPECT_DOUBLE_EQ(run.references[1].best, 7.98e14);
}

TEST(ParseReferenceOutput, UnavailableIsANoteNotAnError) {
  EXPECT_EQ(peak::parse_reference_output("unavailable torch is not importable (ModuleNotFoundError: x)\n").unavailable,
            "torch is not importable (ModuleNotFoundError: x)");
  EXPECT_EQ(peak::parse_reference_output("").unavailable, "the reference program wrote no result");
  EXPECT_TRUE(peak::parse_reference_output("torch 2.1\n").references.empty());
}

TEST(ReferenceWarnings, AReferenceAboveItsCeilingNamesBoth) {
  // The numbers: torch copy 4299 GB/s (best) against a 4033 GB/s ceiling.
  const MachineProfile low = profile_with(4.033e12, 8.04e14);
  const std::vector<peak::Reference> refs{
      {"torch_copy", "dram_copy", 4.299e12, 4.25e12, "torch dst.copy_(src) of 4.00 GiB"},
      {"torch_matmul_bf16", "tensor_bf16", 7.98e14, 7.7e14, "torch.matmul bf16 8192x8192x8192"}};
  const std::vector<std::string> w = peak::reference_warnings(low, refs);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "PyTorch torch_copy (torch dst.copy_(src) of 4.00 GiB) reached 4299 GB/s (best; median 4250), 107 % of "
            "the dram_copy ceiling 4033 GB/s: the ceiling is too low, and every verdict measured against it too "
            "generous");
  // At or above the reference (and a best within 1 % of noise above): no warning.
  EXPECT_TRUE(peak::reference_warnings(profile_with(4.30e12, 8.04e14), refs).empty());
  EXPECT_TRUE(peak::reference_warnings(profile_with(4.27e12, 8.04e14), refs).empty());  // best 0.7 % above
  // A median more than 0.5 % above the ceiling warns even within the tolerance of the best.
  const std::vector<peak::Reference> steady{{"torch_copy", "dram_copy", 4.30e12, 4.295e12, "x"}};
  EXPECT_EQ(peak::reference_warnings(profile_with(4.27e12, 8.04e14), steady).size(), 1u);
  // The same cudaMemcpyAsync timed twice (H100, 2026-12-06: dram_copy 3049.1 GB/s, torch's copy_
  // median 3052.6, best 3055.6): +0.11 % is within the timing's precision, no warning.
  const std::vector<peak::Reference> tie{{"torch_copy", "dram_copy", 3.0556e12, 3.0526e12, "x"}};
  EXPECT_TRUE(peak::reference_warnings(profile_with(3.0491e12, 8.04e14), tie).empty());
  // A ceiling that was not measured: nothing to compare.
  EXPECT_TRUE(peak::reference_warnings(MachineProfile{}, refs).empty());
}

TEST(ReferenceReport, RowsInDisplayUnitsWithVerdicts) {
  peak::ReferenceRun run;
  run.torch_version = "2.11.0";
  run.references = {{"torch_copy", "dram_copy", 4.299e12, 4.25e12, "copy"},
                    {"torch_matmul_bf16", "tensor_bf16", 7.98e14, 7.7e14, "matmul"}};
  const Report r = peak::reference_report(profile_with(4.033e12, 8.04e14), run);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(std::get<double>(r.rows[0][2]), 4299.0);
  EXPECT_EQ(std::get<std::string>(r.rows[0][5]), "GB/s");
  EXPECT_EQ(std::get<std::string>(r.rows[0][7]), "ABOVE");
  EXPECT_EQ(std::get<std::string>(r.rows[1][7]), "below");
  EXPECT_EQ(std::get<std::string>(r.rows[1][5]), "TFLOP/s");
  peak::ReferenceRun tied;
  tied.references = {{"torch_copy", "dram_copy", 3.0556e12, 3.0526e12, "copy"}};
  EXPECT_EQ(std::get<std::string>(peak::reference_report(profile_with(3.0491e12, 8.04e14), tied).rows[0][7]), "equal");
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0].text, "torch 2.11.0");
  EXPECT_EQ(r.notes[1].level, NoteLevel::kWarning);
}
