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

TEST(ApiFilter, GpuWorkCallsByName) {
  // Kept by --cuda-api=gpu: launches (runtime, driver, graph), copies, memsets, waits,
  // allocations, event records, and the profiler range calls.
  for (const char* name : {"cudaLaunchKernel_v7000",
                           "cudaLaunchKernelExC_v11060",
                           "__cudaLaunchKernel_v13000",
                           "cuLaunchKernel",
                           "cuLaunchKernelEx_ptsz",
                           "cudaGraphLaunch_v10000",
                           "cuGraphLaunch",
                           "cudaMemcpyAsync_v3020",
                           "cuMemcpyHtoDAsync_v2",
                           "cudaMemsetAsync_v3020",
                           "cuMemsetD8_v2",
                           "cudaStreamSynchronize_v3020",
                           "cuCtxSynchronize",
                           "cudaEventSynchronize_v3020",
                           "cudaEventRecord_v3020",
                           "cudaStreamWaitEvent_v3020",
                           "cudaMalloc_v3020",
                           "cudaFreeAsync_v11020",
                           "cuMemAlloc_v2",
                           "cuMemFree_v2",
                           "cudaHostAlloc_v3020",
                           "cudaProfilerStart_v4000",
                           "cuProfilerStop"}) {
    EXPECT_TRUE(is_gpu_work_api(name)) << name;
  }
  // Left out: queries, attribute calls, error strings (PyTorch's resnet18 step made 10,720
  // cudaGetErrorString and 3,220 cudaFuncGetAttributes calls in 40 steps).
  for (const char* name : {"cudaGetErrorString_v3020", "cudaFuncGetAttributes_v3020", "cudaFuncSetAttribute_v9000",
                           "cudaGetDevice_v3020", "cudaGetLastError_v3020", "cuCtxGetCurrent", "cuFuncGetAttribute",
                           "cudaStreamQuery_v3020", "cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6000",
                           "cuDeviceGetAttribute", "cuLibraryGetKernel", "", "nvtxRangePushA"}) {
    EXPECT_FALSE(is_gpu_work_api(name)) << name;
  }
}

}  // namespace
}  // namespace gpuscope::collect

namespace gpuscope::collect {
namespace {

// GPUSCOPE_PYTHON_CALLSITES=sync: the calls that wait or move, set or allocate memory take a
// Python stack; launches, event records and stream waits do not (=all takes those too).
TEST(ApiFilter, PythonCallsitesAtWaitsAndMemoryCalls) {
  for (const char* name :
       {"cudaDeviceSynchronize_v3020", "cudaStreamSynchronize_ptsz_v7000", "cuEventSynchronize", "cudaMemcpy_v3020",
        "cudaMemcpyAsync_v3020", "cuMemcpyDtoHAsync_v2", "cudaMemsetAsync_v3020", "cudaMalloc_v3020", "cuMemAlloc_v2",
        "cudaFree_v3020", "cudaHostAlloc_v3020", "cudaMallocAsync_v11020"}) {
    EXPECT_TRUE(is_python_callsite_api(name)) << name;
  }
  for (const char* name : {"cudaLaunchKernel_v7000", "cuLaunchKernel", "cudaEventRecord_v3020",
                           "cudaStreamWaitEvent_v3020", "cudaGraphLaunch_v10000", "cudaGetDevice_v3020"}) {
    EXPECT_FALSE(is_python_callsite_api(name)) << name;
  }
}

TEST(ApiFilter, CallsiteModeChoosesTheCalls) {
  // --python-callsites=none takes no stack, with Python sampling on too (the sampler's set-up
  // once selected the sync calls whatever the mode).
  EXPECT_EQ(python_callsite_filter(PythonCallsites::kNone), nullptr);
  const ApiNameFilter sync = python_callsite_filter(PythonCallsites::kSync);
  const ApiNameFilter all = python_callsite_filter(PythonCallsites::kAll);
  ASSERT_NE(sync, nullptr);
  ASSERT_NE(all, nullptr);
  EXPECT_TRUE(sync("cudaStreamSynchronize_v3020"));
  EXPECT_FALSE(sync("cudaLaunchKernel_v7000"));
  EXPECT_TRUE(all("cudaLaunchKernel_v7000"));
  EXPECT_FALSE(all("cudaGetDevice_v3020"));
}

}  // namespace
}  // namespace gpuscope::collect
