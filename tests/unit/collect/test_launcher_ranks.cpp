#include "collect/launcher_ranks.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace gpuscope::collect {
namespace {

using Env = std::map<std::string, std::string>;

[[nodiscard]] LauncherRanks ranks_of(const Env& env) {
  return launcher_ranks([&env](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

void expect_ranks(const LauncherRanks& r, int rank, int local_rank, int world_size, log::RankLauncher launcher) {
  EXPECT_EQ(r.rank, rank);
  EXPECT_EQ(r.local_rank, local_rank);
  EXPECT_EQ(r.world_size, world_size);
  EXPECT_EQ(r.launcher, launcher);
}

TEST(LauncherRanks, NoLauncher) { expect_ranks(ranks_of({}), -1, -1, -1, log::RankLauncher::kNone); }

TEST(LauncherRanks, EachLauncher) {
  expect_ranks(ranks_of({{"RANK", "5"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}}), 5, 1, 8,
               log::RankLauncher::kTorchrun);
  expect_ranks(
      ranks_of({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}}), 3,
      3, 4, log::RankLauncher::kOpenMpi);
  expect_ranks(ranks_of({{"SLURM_PROCID", "12"}, {"SLURM_LOCALID", "4"}, {"SLURM_NTASKS", "16"}}), 12, 4, 16,
               log::RankLauncher::kSlurm);
  expect_ranks(ranks_of({{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}}), 2, -1, 3, log::RankLauncher::kPmi);
}

TEST(LauncherRanks, FirstFoundWins) {
  // torchrun under srun: the worker is the torchrun rank, not the Slurm task.
  expect_ranks(ranks_of({{"RANK", "7"},
                         {"LOCAL_RANK", "3"},
                         {"WORLD_SIZE", "16"},
                         {"SLURM_PROCID", "1"},
                         {"SLURM_LOCALID", "0"},
                         {"SLURM_NTASKS", "2"}}),
               7, 3, 16, log::RankLauncher::kTorchrun);
  // mpirun inside a Slurm allocation: Open MPI before Slurm, Slurm before PMI.
  expect_ranks(ranks_of({{"OMPI_COMM_WORLD_RANK", "1"}, {"SLURM_PROCID", "0"}}), 1, -1, -1,
               log::RankLauncher::kOpenMpi);
  expect_ranks(ranks_of({{"SLURM_PROCID", "0"}, {"PMI_RANK", "9"}}), 0, -1, -1, log::RankLauncher::kSlurm);
}

TEST(LauncherRanks, BadValues) {
  // A rank that is not a number does not count: the next launcher is tried.
  expect_ranks(ranks_of({{"RANK", ""}, {"SLURM_PROCID", "2"}}), 2, -1, -1, log::RankLauncher::kSlurm);
  expect_ranks(ranks_of({{"RANK", "-1"}}), -1, -1, -1, log::RankLauncher::kNone);
  expect_ranks(ranks_of({{"RANK", "2147483648"}}), -1, -1, -1, log::RankLauncher::kNone);
  // A bad local rank or size is -1; the rank still counts.
  expect_ranks(ranks_of({{"RANK", "0"}, {"LOCAL_RANK", "x"}, {"WORLD_SIZE", " 2"}}), 0, -1, -1,
               log::RankLauncher::kTorchrun);
}

}  // namespace
}  // namespace gpuscope::collect
