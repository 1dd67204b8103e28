// DeviceBuffer: an owned cudaMalloc allocation (move-only; freed in the destructor, whose
// errors are ignored). Allocation failures throw gpuscope::bench::CudaError naming the
// call and the size.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "gpuscope/bench.hpp"

namespace gpuscope::bench::ops {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : m_bytes(bytes) {
    if (bytes == 0) return;
    const cudaError_t status = cudaMalloc(&m_data, bytes);
    if (status != cudaSuccess) {
      m_data = nullptr;
      throw CudaError(status, "cudaMalloc(" + std::to_string(bytes) + " bytes)", __FILE__, __LINE__);
    }
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : m_data(std::exchange(other.m_data, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      m_data = std::exchange(other.m_data, nullptr);
      m_bytes = std::exchange(other.m_bytes, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  [[nodiscard]] void* get() const { return m_data; }
  template <class T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(m_data);
  }
  [[nodiscard]] std::size_t bytes() const { return m_bytes; }

  /// Fills every byte with 0xFF: NaN in f32, f16 and bf16, so an output the kernel never
  /// wrote fails the reference check.
  void poison() const {
    if (m_data) GPUSCOPE_CUDA_CALL(cudaMemset(m_data, 0xFF, m_bytes));
  }

 private:
  void reset() noexcept {
    if (m_data) cudaFree(m_data);
    m_data = nullptr;
    m_bytes = 0;
  }
  void* m_data = nullptr;
  std::size_t m_bytes = 0;
};

}  // namespace gpuscope::bench::ops
