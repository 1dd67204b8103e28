// The tracer-cost calibration's parts that need no GPU: which commands are Python programs
// (python_interpreter), and the PyTorch launch calibration driven through a stand-in
// interpreter (a shell script that writes the timings a traced or an untraced run would).
#include "cli/tracer_calibration.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;

class TempFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuscope-calib-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path write(const std::string& name, const std::string& text, bool exec = true) {
    const fs::path p = dir / name;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), exec ? 0755 : 0644);
    return p;
  }
  fs::path dir;
};

using PythonInterpreter = TempFolder;

TEST_F(PythonInterpreter, NamedDirectlyOrByAScriptsFirstLine) {
  const fs::path py = write("python3.11", "#!/bin/sh\n");
  EXPECT_EQ(python_interpreter({py.string(), "train.py"}), py);
  EXPECT_EQ(python_interpreter({write("torchrun", "#!" + py.string() + " -u\nimport sys\n").string()}), py);
  // Through env, found on PATH (-S and other options skipped).
  const std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (dir.string() + ":" + old_path).c_str(), 1);
  EXPECT_EQ(python_interpreter({write("train.py", "#!/usr/bin/env -S python3.11 -u\n").string()}), py);
  EXPECT_EQ(python_interpreter({"python3.11", "-c", "pass"}), py);
  ::setenv("PATH", old_path.c_str(), 1);
  // Not Python: a shell script, a name that only starts like it, a missing command, nothing.
  EXPECT_EQ(python_interpreter({write("run.sh", "#!/bin/sh\npython3 x.py\n").string()}), std::nullopt);
  EXPECT_EQ(python_interpreter({write("pythonic", "#!/bin/sh\n").string()}), std::nullopt);
  EXPECT_EQ(python_interpreter({(dir / "no-such").string()}), std::nullopt);
  EXPECT_EQ(python_interpreter({}), std::nullopt);
}

using TorchLaunchCalibration = TempFolder;

// The stand-in interpreter: called as PYTHON -c CODE OUT, it counts its runs and writes 30 blocks
// at 1,000 ns a launch untraced and 1,500 traced (the collector named in CUDA_INJECTION64_PATH),
// one block 100 ns faster each (the fastest ones are compared): 500 ns a launch.
constexpr const char* kFakePython = R"(#!/bin/sh
echo run >> "$(dirname "$0")/runs"
[ -n "$NO_TORCH" ] && exit 77
base=1000
[ -n "$CUDA_INJECTION64_PATH" ] && base=1500
i=0
: > "$3"
while [ $i -lt 30 ]; do
  ns=$base; [ $i -eq 7 ] && ns=$((base - 100))
  echo "launch $ns" >> "$3"; echo "api $ns" >> "$3"
  i=$((i + 1))
done
)";

int runs(const fs::path& dir) {
  std::ifstream in(dir / "runs");
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST_F(TorchLaunchCalibration, FastestBlocksAlternatingAndCached) {
  ::setenv("XDG_CACHE_HOME", (dir / "cache").c_str(), 1);
  const fs::path py = write("python3", kFakePython);
  std::string why;
  const auto c = calibrate_torch_launch(py, {{"GPUSCOPE_TRACE", "cuda"}}, "/opt/inject.so", true, &why);
  ASSERT_TRUE(c.has_value()) << why;
  EXPECT_DOUBLE_EQ(c->launch_ns, 500.0);
  EXPECT_NE(c->method.find("PyTorch x.add_(1) calls"), std::string::npos) << c->method;
  EXPECT_NE(c->method.find("(1400 - 900 ns per launch)"), std::string::npos) << c->method;
  EXPECT_EQ(runs(dir), 4);  // untraced, traced, untraced, traced
  // Cached: no child the next time; --calibrate=always measures again.
  ASSERT_TRUE(calibrate_torch_launch(py, {{"GPUSCOPE_TRACE", "cuda"}}, "/opt/inject.so", true, &why));
  EXPECT_EQ(runs(dir), 4);
  ASSERT_TRUE(calibrate_torch_launch(py, {{"GPUSCOPE_TRACE", "cuda"}}, "/opt/inject.so", false, &why));
  EXPECT_EQ(runs(dir), 8);
  ::unsetenv("XDG_CACHE_HOME");
}

TEST_F(TorchLaunchCalibration, AnInterpreterWithoutTorchIsRememberedAndStartsNoChildLater) {
  ::setenv("XDG_CACHE_HOME", (dir / "cache").c_str(), 1);
  ::setenv("NO_TORCH", "1", 1);
  const fs::path py = write("python3", kFakePython);
  std::string why;
  EXPECT_EQ(calibrate_torch_launch(py, {}, "/opt/inject.so", true, &why), std::nullopt);
  EXPECT_EQ(why.rfind("no PyTorch", 0), 0u) << why;
  EXPECT_EQ(runs(dir), 1);  // one untraced child said so
  why.clear();
  EXPECT_EQ(calibrate_torch_launch(py, {}, "/opt/inject.so", true, &why), std::nullopt);
  EXPECT_EQ(why.rfind("no PyTorch", 0), 0u) << why;
  EXPECT_EQ(runs(dir), 1);
  ::unsetenv("NO_TORCH");
  ::unsetenv("XDG_CACHE_HOME");
}

}  // namespace
}  // namespace gpuscope::cli
