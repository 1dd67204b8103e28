// Checks, before running a target, that a CUDA driver and at least one GPU are
// present, so `gpuscope trace` on a machine without a GPU says so instead of
// recording an empty trace. The check runs in a forked child with a timeout so a
// wedged driver cannot hang gpuscope. Uses dlopen("libcuda.so.1"), cuInit,
// cuDeviceGetCount; gpuscope itself does not link the driver.
#pragma once

#include <chrono>
#include <string>

namespace gpuscope::cli {

struct DriverCheck {
  bool ok = false;
  int device_count = 0;
  std::string problem;  // plain-language reason when !ok
};

[[nodiscard]] DriverCheck check_cuda_driver(std::chrono::seconds timeout = std::chrono::seconds(60));

}  // namespace gpuscope::cli
