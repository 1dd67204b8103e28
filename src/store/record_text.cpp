#include "store/record_text.hpp"

#include <algorithm>
#include <cstdio>

#include "core/event_log_format.hpp"

namespace gpuscope::store::detail {

std::string_view memcpy_kind_text(std::uint8_t k) {
  using K = log::MemcpyKind;
  switch (static_cast<K>(k)) {
    case K::kHtoD:
      return "HtoD";
    case K::kDtoH:
      return "DtoH";
    case K::kHtoA:
      return "HtoA";
    case K::kAtoH:
      return "AtoH";
    case K::kAtoA:
      return "AtoA";
    case K::kAtoD:
      return "AtoD";
    case K::kDtoA:
      return "DtoA";
    case K::kDtoD:
      return "DtoD";
    case K::kHtoH:
      return "HtoH";
    case K::kPtoP:
      return "PtoP";
    default:
      return "unknown";
  }
}

std::string_view memory_kind_text(std::uint8_t k) {
  using K = log::MemoryKind;
  switch (static_cast<K>(k)) {
    case K::kPageable:
      return "pageable";
    case K::kPinned:
      return "pinned";
    case K::kDevice:
      return "device";
    case K::kArray:
      return "array";
    case K::kManaged:
      return "managed";
    case K::kDeviceStatic:
      return "device_static";
    case K::kManagedStatic:
      return "managed_static";
    default:
      return "unknown";
  }
}

std::string_view memory_operation_text(std::uint8_t op) {
  using O = log::MemoryOperation;
  switch (static_cast<O>(op)) {
    case O::kAlloc:
      return "alloc";
    case O::kFree:
      return "free";
    case O::kPoolCreate:
      return "pool_create";
    case O::kPoolDestroy:
      return "pool_destroy";
    case O::kPoolTrim:
      return "pool_trim";
    default:
      return "unknown";
  }
}

std::string_view memory_pool_type_text(std::uint8_t type) {
  using P = log::MemoryPoolType;
  switch (static_cast<P>(type)) {
    case P::kLocal:
      return "local";
    case P::kImported:
      return "imported";
    default:
      return "unknown";
  }
}

std::string_view sync_type_text(std::uint8_t t) {
  using S = log::SyncType;
  switch (static_cast<S>(t)) {
    case S::kEventSynchronize:
      return "event_synchronize";
    case S::kStreamWaitEvent:
      return "stream_wait_event";
    case S::kStreamSynchronize:
      return "stream_synchronize";
    case S::kContextSynchronize:
      return "context_synchronize";
    default:
      return "unknown";
  }
}

// CUpti_ActivityOverheadKind values (cupti_activity.h).
std::string_view overhead_kind_text(std::uint32_t k) {
  switch (k) {
    case 1:
      return "driver_compiler";
    case 1u << 16:
      return "cupti_buffer_flush";
    case 2u << 16:
      return "cupti_instrumentation";
    case 3u << 16:
      return "cupti_resource";
    case 4u << 16:
      return "runtime_triggered_module_loading";
    case 5u << 16:
      return "lazy_function_loading";
    case 6u << 16:
      return "command_buffer_full";
    case 7u << 16:
      return "activity_buffer_request";
    default:
      return "unknown";
  }
}

std::string_view api_domain_text(std::uint8_t d) {
  switch (static_cast<log::ApiDomain>(d)) {
    case log::ApiDomain::kRuntime:
      return "runtime";
    case log::ApiDomain::kDriver:
      return "driver";
    default:
      return "unknown";
  }
}

std::string_view message_severity_text(std::uint8_t s) {
  switch (static_cast<log::Severity>(s)) {
    case log::Severity::kWarning:
      return "warning";
    case log::Severity::kError:
      return "error";
    default:
      return "info";
  }
}

std::string_view rank_launcher_text(std::uint8_t launcher) {
  switch (static_cast<log::RankLauncher>(launcher)) {
    case log::RankLauncher::kTorchrun:
      return "torchrun";
    case log::RankLauncher::kOpenMpi:
      return "openmpi";
    case log::RankLauncher::kSlurm:
      return "slurm";
    case log::RankLauncher::kPmi:
      return "pmi";
    default:
      return "";
  }
}

bool is_kernel_launch(std::string_view name) {
  if (name.find("HostFunc") != std::string_view::npos) return false;
  return name.starts_with("cudaLaunch") || name.starts_with("cuLaunch") ||
         name.find("LaunchKernel") != std::string_view::npos || name.find("GraphLaunch") != std::string_view::npos;
}

std::string uuid_text(const std::uint8_t (&u)[16]) {
  bool all_zero = true;
  for (std::uint8_t b : u) all_zero = all_zero && b == 0;
  if (all_zero) return {};
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

// /proc/self/cmdline joins argv with NULs (and may end with one).
std::string cmdline_text(std::string_view raw) {
  while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  std::string s(raw);
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s;
}

}  // namespace gpuscope::store::detail
