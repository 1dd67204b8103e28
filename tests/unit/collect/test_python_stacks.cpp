// Python stack interning (collect/python_stacks.hpp) and the frame walker in a process with
// no Python (collect/python_frames.hpp): it must stay inert. The walker inside real
// interpreters is tested by test_python_stacks.py.
#include "collect/python_stacks.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "collect/python_frames.hpp"

namespace gpuscope::collect::detail {
namespace {

TEST(PyStackTable, SharedCallersAreStoredOnce) {
  PyStackTable table;
  // Innermost first: leaf <- middle <- main, then a second leaf under the same callers.
  const std::vector<PyRawFrame> a{{0x3000, 10}, {0x2000, 4}, {0x1000, 2}};
  const std::vector<PyRawFrame> b{{0x3000, 12}, {0x2000, 4}, {0x1000, 2}};
  std::uintptr_t codes[3];
  std::size_t n_codes = 0;
  bool added_frame = false;
  const std::uint32_t id_a = table.intern(a, codes, &n_codes, &added_frame);
  EXPECT_EQ(std::vector<std::uintptr_t>(codes, codes + n_codes),
            (std::vector<std::uintptr_t>{0x1000, 0x2000, 0x3000}));  // outermost first, each code once
  EXPECT_TRUE(added_frame);
  const std::uint32_t id_b = table.intern(b, codes, &n_codes, &added_frame);
  EXPECT_EQ(n_codes, 0U);  // 0x3000 at another offset: a new frame, not a new code object
  EXPECT_TRUE(added_frame);
  EXPECT_EQ(id_a, 3U);
  EXPECT_EQ(id_b, 4U);
  EXPECT_EQ(table.intern(a), id_a);
  EXPECT_EQ(table.frame_count(), 4U);
  EXPECT_EQ(table.stack_count(), 4U);

  PyStackAdditions added;
  table.take_new(added);
  ASSERT_EQ(added.stacks.size(), 4U);
  EXPECT_EQ(added.stacks[0].parent, 0U);
  EXPECT_EQ(added.stacks[0].depth, 0U);
  EXPECT_EQ(added.stacks[2].parent, 2U);
  EXPECT_EQ(added.stacks[2].depth, 2U);
  EXPECT_EQ(added.stacks[3].parent, 2U);  // b's leaf hangs off a's middle
  std::vector<PyInternedFrame> frames;
  table.take_frames_to_resolve(frames);
  ASSERT_EQ(frames.size(), 4U);
  EXPECT_EQ(frames[0].frame, (PyRawFrame{0x1000, 2}));
  EXPECT_EQ(frames[3].frame, (PyRawFrame{0x3000, 12}));

  PyStackAdditions none;
  table.take_new(none);
  EXPECT_TRUE(none.stacks.empty());
  std::vector<PyInternedFrame> no_frames;
  table.take_frames_to_resolve(no_frames);
  EXPECT_TRUE(no_frames.empty());
}

TEST(PyStackTable, NoFramesIsStackZero) {
  PyStackTable table;
  EXPECT_EQ(table.intern({}), 0U);
  EXPECT_EQ(table.stack_count(), 0U);
}

TEST(PyStackTable, SameFrameUnderDifferentCallersIsTwoStacks) {
  PyStackTable table;
  const std::vector<PyRawFrame> from_x{{0x9000, 0}, {0x1000, 2}};
  const std::vector<PyRawFrame> from_y{{0x9000, 0}, {0x1000, 8}};
  EXPECT_NE(table.intern(from_x), table.intern(from_y));
  EXPECT_EQ(table.frame_count(), 3U);
}

TEST(PyFrameWalker, InertWithoutPython) {
  PyFrameWalker walker;  // this test program has no CPython in it
  EXPECT_EQ(walker.state(), PyWalkerState::no_python);
  EXPECT_TRUE(walker.note().empty());
  EXPECT_FALSE(walker.this_thread_holds_gil());
  EXPECT_FALSE(walker.verify_with_live_frame());
  PyRawFrame frames[4];
  EXPECT_EQ(walker.walk_this_thread(frames).frames, 0U);
  int token = 0;
  EXPECT_FALSE(walker.acquire_gil(token));
}

TEST(PyFrameWalker, KnowsTheLayoutsItChecks) {
  EXPECT_NE(PyFrameWalker::layout_for(0x030b07f0), nullptr);
  EXPECT_NE(PyFrameWalker::layout_for(0x030c01f0), nullptr);
  EXPECT_NE(PyFrameWalker::layout_for(0x030d00f0), nullptr);
  EXPECT_EQ(PyFrameWalker::layout_for(0x030a0df0), nullptr);  // 3.10: no _PyInterpreterFrame walk here
  EXPECT_EQ(PyFrameWalker::layout_for(0x030e00f0), nullptr);  // 3.14: unknown
}

}  // namespace
}  // namespace gpuscope::collect::detail
