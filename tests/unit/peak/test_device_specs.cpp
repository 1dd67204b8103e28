// Theoretical and datasheet values (peak/device_specs.hpp) on known GPUs.
#include <gtest/gtest.h>

#include <cmath>

#include "peak/device_specs.hpp"

using namespace gpuscope;
using namespace gpuscope::peak;

namespace {
DeviceFacts h100() {
  DeviceFacts d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.memory_bus_width_bits = 5120;
  return d;
}
}  // namespace

TEST(DeviceSpecs, Fp32IsSmsTimes128FmaTimes2TimesClock) {
  EXPECT_DOUBLE_EQ(theoretical_value("fp32_fma", h100(), 1980, kUnknown), 132.0 * 128 * 2 * 1980e6);
  EXPECT_DOUBLE_EQ(theoretical_value("tensor_bf16", h100(), 1830, kUnknown), 132.0 * 4096 * 1830e6);
}

TEST(DeviceSpecs, DramIsDoubleDataRateTimesBusWidth) {
  // H100 SXM: 2619 MHz x 2 x 5120 bit / 8 = 3.35 TB/s, the datasheet value.
  EXPECT_NEAR(theoretical_value("dram_copy", h100(), kUnknown, 2619), 3.352e12, 1e9);
  EXPECT_DOUBLE_EQ(datasheet_value("dram_copy", h100()), 3.35e12);
}

TEST(DeviceSpecs, UnknownGivesNaN) {
  DeviceFacts other = h100();
  other.cc_major = 12;
  EXPECT_TRUE(std::isnan(theoretical_value("fp32_fma", other, 1980, kUnknown)));
  EXPECT_TRUE(std::isnan(theoretical_value("l2_read", h100(), 1980, 2619)));
  EXPECT_TRUE(std::isnan(theoretical_value("fp32_fma", h100(), kUnknown, kUnknown)));
  other = h100();
  other.name = "NVIDIA GeForce RTX 4090";
  EXPECT_TRUE(std::isnan(datasheet_value("fp32_fma", other)));
  EXPECT_EQ(datasheet_source(other), "");
}
