// gpuscope_make_comm_job OUTDIR [RANKS [STEPS [DELAYED_RANK [DELAY_FROM]]]]: writes the
// synthetic job of comm_trace.hpp (default 64 ranks x 5 steps, rank 37 late by 100 us from
// step 2) as one trace per rank, OUTDIR/rank<R>.sqlite (meta host node<R/8>, as 8 GPUs per
// node would record it), and the whole job as one trace, OUTDIR/job.sqlite. For the map →
// reduce tests and benchmark (tests/unit/cli/test_dask_comm.sh, docs/performance.md).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "comm_trace.hpp"

int main(int argc, char** argv) {
  using namespace gpuscope::test;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUTDIR [RANKS [STEPS [DELAYED_RANK [DELAY_FROM]]]]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir(argv[1]);
  CommJob job{.ranks = 64, .steps = 5, .delayed_rank = 37, .delay_from = 2};
  if (argc > 2) job.ranks = std::atoi(argv[2]);
  if (argc > 3) job.steps = std::atoi(argv[3]);
  if (argc > 4) job.delayed_rank = std::atoi(argv[4]);
  if (argc > 5) job.delay_from = std::atoi(argv[5]);
  std::filesystem::create_directories(dir);
  {
    TraceDb t;
    build_comm_job(t, job);
    write_trace_file(t, (dir / "job.sqlite").string(), "");
  }
  for (int r = 0; r < job.ranks; ++r) {
    TraceDb t;
    CommJob one = job;
    one.only_rank = r;
    build_comm_job(t, one);
    write_trace_file(t, (dir / ("rank" + std::to_string(r) + ".sqlite")).string(), "node" + std::to_string(r / 8));
  }
  std::printf("wrote %d rank traces and job.sqlite to %s\n", job.ranks, dir.c_str());
  return 0;
}
