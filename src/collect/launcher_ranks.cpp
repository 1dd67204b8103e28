#include "collect/launcher_ranks.hpp"

#include "collect/collector_config.hpp"

namespace gpuscope::collect {
namespace {

struct LauncherVars {
  log::RankLauncher launcher;
  const char* rank;
  const char* local_rank;  // nullptr: the launcher has none
  const char* world_size;
};

constexpr LauncherVars kLaunchers[] = {
    {log::RankLauncher::kTorchrun, "RANK", "LOCAL_RANK", "WORLD_SIZE"},
    {log::RankLauncher::kOpenMpi, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE"},
    {log::RankLauncher::kSlurm, "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS"},
    {log::RankLauncher::kPmi, "PMI_RANK", nullptr, "PMI_SIZE"},
};

[[nodiscard]] std::int32_t read_int(const EnvLookup& getenv, const char* name) {
  if (name == nullptr) return -1;
  const char* v = getenv(name);
  std::uint64_t n = 0;
  if (v == nullptr || !parse_u64(v, &n) || n > 0x7fffffff) return -1;
  return static_cast<std::int32_t>(n);
}

}  // namespace

LauncherRanks launcher_ranks(const EnvLookup& getenv) {
  for (const LauncherVars& l : kLaunchers) {
    const std::int32_t rank = read_int(getenv, l.rank);
    if (rank < 0) continue;
    return {rank, read_int(getenv, l.local_rank), read_int(getenv, l.world_size), l.launcher};
  }
  return {};
}

}  // namespace gpuscope::collect
