// gpuscope_make_py_samples_trace OUTDIR: writes the trace of py_samples_trace.hpp as
// OUTDIR/samples.sqlite, the same trace without Python samples as OUTDIR/no_samples.sqlite, and
// one whose GPU is never idle as OUTDIR/busy.sqlite. For the stats CLI test
// (tests/unit/cli/test_py_samples_cli.sh).
#include <cstdio>
#include <filesystem>
#include <string>

#include "py_samples_trace.hpp"

int main(int argc, char** argv) {
  using namespace gpuscope::test;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir(argv[1]);
  std::filesystem::create_directories(dir);
  const auto write = [&](const char* name, Samples samples,
                         const std::vector<std::pair<std::uint64_t, std::uint64_t>>& kernels) {
    const gpuscope::store::test::TempDir tmp;
    std::filesystem::copy_file(build(tmp, samples, kernels), dir / name,
                               std::filesystem::copy_options::overwrite_existing);
  };
  write("samples.sqlite", Samples::kEverywhere, {{0, 10}, {20, 30}});
  write("no_samples.sqlite", Samples::kNone, {{0, 10}, {20, 30}});
  write("busy.sqlite", Samples::kEverywhere, {{0, 30}});
  return 0;
}
