// method_summary() against the catalog, and the Ceiling arithmetic of peak/context.hpp.
#include <gtest/gtest.h>

#include <cmath>

#include "peak/context.hpp"
#include "peak/peak.hpp"

using namespace gpuscope;

TEST(MethodSummary, OneRowPerCatalogCeilingInCatalogOrder) {
  const auto methods = peak::method_summary();
  const auto catalog = ceiling_catalog();
  ASSERT_EQ(methods.size(), catalog.size());
  for (std::size_t i = 0; i < catalog.size(); ++i) {
    EXPECT_EQ(methods[i].ceiling, catalog[i].name);
    EXPECT_GT(methods[i].method.size(), 20u) << methods[i].ceiling;
  }
}

TEST(CeilingFromTiming, RateIsWorkOverMedian) {
  bench::TimingResult t;
  t.samples_s = {2e-3, 1e-3, 1.1e-3};
  t.median_s = 1.1e-3;
  t.sm_clock_mhz_before = 1980;
  t.sm_clock_mhz_after = 1900;  // fell by 4 %: throttled
  t.mem_clock_mhz = 2619;
  const Ceiling c = peak::detail::ceiling_from_timing("dram_copy", 2.2e9, t, "copy");
  EXPECT_DOUBLE_EQ(c.measured, 2e12);
  EXPECT_EQ(c.samples, 3);
  EXPECT_NEAR(c.rel_spread, (2e-3 - 1e-3) / 1.1e-3, 1e-12);
  EXPECT_TRUE(c.throttled);
  EXPECT_FALSE(c.verified);
  EXPECT_EQ(c.method.rfind("copy; ", 0), 0u);
}

TEST(CeilingFromHostSamples, RateOrLatency) {
  const Ceiling rate = peak::detail::ceiling_from_host_samples("launch_rate", {2e-6, 4e-6, 3e-6}, true, kUnknown,
                                                               kUnknown, kUnknown, "m");
  EXPECT_NEAR(rate.measured, 1.0 / 3e-6, 1e-6);
  EXPECT_FALSE(rate.throttled);
  EXPECT_TRUE(std::isnan(rate.sm_clock_mhz_begin));
  const Ceiling lat =
      peak::detail::ceiling_from_host_samples("stream_sync", {2e-6, 4e-6, 3e-6}, false, 1980, 1980, 2619, "m");
  EXPECT_DOUBLE_EQ(lat.measured, 3e-6);
}

TEST(AddReferenceValues, UsesTheObservedClock) {
  DeviceFacts d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.sm_count = 132;
  d.max_sm_clock_mhz = 1980;
  Ceiling c;
  c.name = "fp32_fma";
  c.measured = 60e12;
  c.sm_clock_mhz_begin = 1700;
  c.sm_clock_mhz_end = 1900;
  peak::detail::add_reference_values(c, d);
  EXPECT_DOUBLE_EQ(c.theoretical, 132.0 * 256 * 1800e6);
  EXPECT_DOUBLE_EQ(c.datasheet, 67e12);
  Ceiling no_clock;
  no_clock.name = "fp32_fma";
  peak::detail::add_reference_values(no_clock, d);
  EXPECT_DOUBLE_EQ(no_clock.theoretical, 132.0 * 256 * 1980e6);
  EXPECT_NE(no_clock.method.find("at the maximum SM"), std::string::npos);
}

TEST(MarkVerified, SaysWhatDiffered) {
  Ceiling c;
  c.method = "m";
  peak::detail::mark_verified(c, true, "x");
  EXPECT_TRUE(c.verified);
  EXPECT_EQ(c.method, "m");
  peak::detail::mark_verified(c, false, "got 1, want 2");
  EXPECT_FALSE(c.verified);
  EXPECT_EQ(c.method, "m; CHECKSUM MISMATCH (got 1, want 2)");
}
