// Event-log values as the trace stores them: the enums of core/event_log_format.hpp
// turned into the TEXT values documented in store/schema_columns.hpp, and the few
// fields the importer reformats (GPU UUID, command line, API names that launch kernels).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuscope::store::detail {

/// memcpys.copy_kind of a log::MemcpyKind: "HtoD", ..., "unknown".
[[nodiscard]] std::string_view memcpy_kind_text(std::uint8_t kind);
/// memcpys.src_kind/dst_kind, memsets.memory_kind of a log::MemoryKind.
[[nodiscard]] std::string_view memory_kind_text(std::uint8_t kind);
/// memory_events.operation of a log::MemoryOperation: "alloc", "free", "pool_create",
/// "pool_destroy", "pool_trim", "unknown".
[[nodiscard]] std::string_view memory_operation_text(std::uint8_t operation);
/// memory_events.pool_type of a log::MemoryPoolType: "local", "imported", "unknown" (kNone too).
[[nodiscard]] std::string_view memory_pool_type_text(std::uint8_t type);
/// syncs.sync_type of a log::SyncType.
[[nodiscard]] std::string_view sync_type_text(std::uint8_t type);
/// overheads.overhead_kind of a CUpti_ActivityOverheadKind value.
[[nodiscard]] std::string_view overhead_kind_text(std::uint32_t kind);
/// api_calls.domain of a log::ApiDomain: "runtime", "driver", "unknown".
[[nodiscard]] std::string_view api_domain_text(std::uint8_t domain);
/// messages.severity of a log::Severity: "info", "warning", "error".
[[nodiscard]] std::string_view message_severity_text(std::uint8_t severity);
/// processes.launcher of a log::RankLauncher: "torchrun", "openmpi", "slurm", "pmi"; "" for
/// kNone or a value this gpuscope does not know.
[[nodiscard]] std::string_view rank_launcher_text(std::uint8_t launcher);

/// True for API calls that launch kernels (cudaLaunch*, cuLaunch*, *LaunchKernel*,
/// *GraphLaunch*; not host functions). Names may carry a "_v7000" suffix.
[[nodiscard]] bool is_kernel_launch(std::string_view api_name);
/// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"; "" when all 16 bytes are 0 (unknown).
[[nodiscard]] std::string uuid_text(const std::uint8_t (&uuid)[16]);
/// /proc/PID/cmdline (argv joined by NULs, maybe NUL-terminated) with spaces instead.
[[nodiscard]] std::string cmdline_text(std::string_view raw);

}  // namespace gpuscope::store::detail
