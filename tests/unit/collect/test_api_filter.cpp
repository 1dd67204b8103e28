#include "collect/api_filter.hpp"

#include <gtest/gtest.h>

namespace gpuscope::collect {
namespace {

TEST(ApiFilter, PollingCallsAreNoisy) {
  EXPECT_TRUE(is_noisy_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
  EXPECT_TRUE(is_noisy_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020));
  EXPECT_TRUE(is_noisy_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020));
  EXPECT_TRUE(is_noisy_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020));
  EXPECT_TRUE(is_noisy_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent));
  EXPECT_TRUE(is_noisy_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery));
  EXPECT_TRUE(is_noisy_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute));
  EXPECT_TRUE(is_noisy_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuKernelGetName));
  EXPECT_TRUE(is_noisy_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState));
}

TEST(ApiFilter, WorkIsNotNoisy) {
  EXPECT_FALSE(is_noisy_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_FALSE(is_noisy_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  EXPECT_FALSE(is_noisy_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020));
  EXPECT_FALSE(is_noisy_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  // Same number, other domain: cudaGetDevice (17) vs driver cbid 17.
  EXPECT_FALSE(is_noisy_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
  EXPECT_FALSE(is_noisy_api(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
}

TEST(ApiFilter, ProfilerControlIsNeverMuted) {
  EXPECT_FALSE(is_noisy_api(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000));
  EXPECT_FALSE(is_noisy_api(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop));
}

}  // namespace
}  // namespace gpuscope::collect
