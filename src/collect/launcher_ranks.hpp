// launcher_ranks: which rank a process is, read from the environment its launcher set.
//
// Launchers, in the order they are tried (the first whose rank variable is set wins, so a
// torchrun worker started under srun is the torchrun rank, not the Slurm task):
//   torchrun  RANK, LOCAL_RANK, WORLD_SIZE
//   Open MPI  OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_SIZE
//   Slurm     SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS
//   PMI       PMI_RANK, PMI_SIZE (MPICH, Intel MPI; no local rank)
// A rank variable counts only when it holds a decimal number 0..2^31-1 (anything else reads as
// unset and the next launcher is tried); a local rank or size that is missing or not such a
// number is -1. Pure: the environment comes in through `getenv`, so tests pass a map.
#pragma once

#include <cstdint>
#include <functional>

#include "core/event_log_format.hpp"

namespace gpuscope::collect {

struct LauncherRanks {
  std::int32_t rank = -1;  // -1 = no launcher set one
  std::int32_t local_rank = -1;
  std::int32_t world_size = -1;
  log::RankLauncher launcher = log::RankLauncher::kNone;
};

/// Looks a variable up: its value, or nullptr when unset (std::getenv's contract).
using EnvLookup = std::function<const char*(const char* name)>;

/// The rank, local rank and world size of the first launcher (file comment) whose rank is set.
[[nodiscard]] LauncherRanks launcher_ranks(const EnvLookup& getenv);

}  // namespace gpuscope::collect
