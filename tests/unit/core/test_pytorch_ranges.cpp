// core/pytorch_ranges: the operator text PyTorch's NVTX observer writes, made from gpuscope's
// own observer's fields (op_range_text) and read back (parse_op_range).
#include "core/pytorch_ranges.hpp"

#include <gtest/gtest.h>

namespace gpuscope::core {
namespace {

TEST(OpRangeText, WritesWhatPytorchsNvtxObserverWrites) {
  EXPECT_EQ(op_range_text("aten::conv2d", 12, 345, ""), "aten::conv2d, seq = 12, op_id = 345");
  EXPECT_EQ(op_range_text("aten::add", -1, 346, "[[32, 64], []]"), "aten::add, op_id = 346, sizes = [[32, 64], []]");
  EXPECT_EQ(op_range_text("aten::mm", 0, 7, ""), "aten::mm, seq = 0, op_id = 7");
  // Not an operator range: no op_id (PyTorch writes none without ids), or seq < -1 and no sizes.
  EXPECT_EQ(op_range_text("aten::mm", -1, 0, ""), "aten::mm");
  EXPECT_EQ(op_range_text("aten::mm", -5, 9, ""), "aten::mm");
  EXPECT_EQ(op_range_text("aten::mm", -5, 9, "[[]]"), "aten::mm, op_id = 9, sizes = [[]]");
}

TEST(OpRangeText, ParsesBackToTheSameFields) {
  const auto r = parse_op_range(op_range_text("ConvolutionBackward0", 5, 14, "[[1, 2]]"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "ConvolutionBackward0");
  EXPECT_EQ(r->seq, 5);
  EXPECT_EQ(r->op_id, 14);
  EXPECT_EQ(r->sizes, "[[1, 2]]");
  EXPECT_TRUE(r->backward);
  const auto no_seq = parse_op_range(op_range_text("aten::empty", -1, 3, ""));
  ASSERT_TRUE(no_seq.has_value());
  EXPECT_FALSE(no_seq->seq.has_value());
  EXPECT_FALSE(parse_op_range(op_range_text("aten::empty", -1, 0, "")).has_value());
}

}  // namespace
}  // namespace gpuscope::core
