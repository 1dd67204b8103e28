// Internal: names physical GPUs across the processes of a trace.
//
// Device ordinals are per process: with CUDA_VISIBLE_DEVICES every torchrun
// rank may call its GPU "device 0". A GPU is identified by its UUID (devices
// table); a (pid, device_id) with no known UUID counts as its own GPU.
// Index rule: if each physical GPU can keep the smallest ordinal any process
// gave it without two GPUs clashing, that ordinal is its index (so a
// single-process trace shows "GPU 1" for device 1, as Kineto does); otherwise
// GPUs are numbered 0, 1, ... in order of (smallest ordinal, UUID).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

class GpuIndexMap {
 public:
  /// Reads devices, kernels, memcpys and memsets of `db`.
  [[nodiscard]] static GpuIndexMap load(store::Database& db);

  /// Physical GPU index of `device_id` in process `pid`; unknown pairs map to
  /// device_id itself.
  [[nodiscard]] std::int64_t index(std::int64_t pid, std::int64_t device_id) const;
  /// Number of distinct physical GPUs seen.
  [[nodiscard]] std::size_t gpu_count() const { return m_gpu_count; }

 private:
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> m_index;
  std::size_t m_gpu_count = 0;
};

}  // namespace gpuscope::analyze::detail
