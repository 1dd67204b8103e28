// collect/pm_sampler without a GPU: the --gpu-metrics rate parser, and a sampler started on a
// machine with no driver says so and writes nothing (the trace goes on without metrics).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "collect/pm_sampler.hpp"

namespace gpuscope::collect {
namespace {

TEST(PmSampler, RatesInHertz) {
  double hz = 0;
  EXPECT_TRUE(parse_sampling_rate("10k", &hz));
  EXPECT_DOUBLE_EQ(hz, 10'000);
  EXPECT_TRUE(parse_sampling_rate("2kHz", &hz));
  EXPECT_DOUBLE_EQ(hz, 2'000);
  EXPECT_TRUE(parse_sampling_rate("1.5K", &hz));
  EXPECT_DOUBLE_EQ(hz, 1'500);
  EXPECT_TRUE(parse_sampling_rate("500", &hz));
  EXPECT_DOUBLE_EQ(hz, 500);
  EXPECT_TRUE(parse_sampling_rate("20k", &hz));  // the highest
  for (const char* bad : {"", "k", "0", "9", "20001", "100k", "-5", "nan", "inf", "1e308", "10 k", "10kk", "fast"}) {
    EXPECT_FALSE(parse_sampling_rate(bad, &hz)) << bad;
  }
}

TEST(PmSampler, NoDriverMeansNoSamplingAndAMessage) {
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "a GPU driver is present";
  PmSampler sampler;
  std::vector<std::string> messages;
  const std::string log = ::testing::TempDir() + "/gpu-metrics-test.gslog";
  std::filesystem::remove(log);
  EXPECT_EQ(sampler.start(log, PmSamplerOptions{}, &messages), 0u);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("GPU metrics are off"), std::string::npos) << messages[0];
  sampler.stop();
  sampler.stop();  // idempotent
  EXPECT_EQ(sampler.samples(), 0u);
  EXPECT_FALSE(std::filesystem::exists(log));
}

}  // namespace
}  // namespace gpuscope::collect
