// A stand-in for a traced CUDA program on a machine without a GPU: it writes an event log
// into $GPUSCOPE_LOG_DIR the way the injected collector does (process record, one device,
// KERNELS kernels each with its launch call, flushed), touches READY_FILE, then sleeps until
// killed. test_tracer_killed.sh kills the gpuscope launcher and this target with SIGKILL and
// checks that `gpuscope import` recovers every record.
// Usage: fake_collector_target KERNELS READY_FILE
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/event_log_format.hpp"
#include "store/event_log_writer.hpp"

using namespace gpuscope;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fake_collector_target KERNELS READY_FILE\n");
    return 2;
  }
  const char* dir = std::getenv("GPUSCOPE_LOG_DIR");
  if (dir == nullptr) {
    std::fprintf(stderr, "fake_collector_target: GPUSCOPE_LOG_DIR is not set (run it under gpuscope trace)\n");
    return 2;
  }
  const int kernels = std::atoi(argv[1]);
  const auto pid = static_cast<std::uint32_t>(::getpid());
  store::EventLogWriter w;
  std::string err;
  if (!w.open(std::string(dir) + "/fake-" + std::to_string(pid) + ".gslog", pid, &err)) {
    std::fprintf(stderr, "fake_collector_target: %s\n", err.c_str());
    return 1;
  }
  const std::uint64_t t0 = 1'000'000'000;
  log::ProcessRecord p{};
  p.pid = pid;
  p.ppid = static_cast<std::uint32_t>(::getppid());
  p.start_ns = t0;
  p.host_string = w.intern("node1");
  p.cmdline_string = w.intern("fake_collector_target");
  p.exe_string = w.intern("/bin/fake_collector_target");
  p.version_string = w.intern("0.1.0");
  p.rank = -1;
  p.local_rank = -1;
  w.add(log::RecordKind::kProcess, p);
  log::DeviceRecord d{};
  d.name_string = w.intern("Fake GPU");
  d.cc_major = 9;
  d.sm_count = 132;
  w.add(log::RecordKind::kDevice, d);
  for (int i = 0; i < kernels; ++i) {
    const std::uint64_t t = t0 + 10'000 * static_cast<std::uint64_t>(i);
    log::ApiRecord a{};
    a.start_ns = t;
    a.end_ns = t + 2'000;
    a.thread_id = pid;
    a.correlation_id = static_cast<std::uint32_t>(i + 1);
    a.cbid = 211;
    a.name_string = w.intern("cudaLaunchKernel");
    a.domain = static_cast<std::uint8_t>(log::ApiDomain::kRuntime);
    w.add(log::RecordKind::kApi, a);
    log::KernelRecord k{};
    k.start_ns = t + 3'000;
    k.end_ns = t + 8'000;
    k.stream_id = 7;
    k.correlation_id = a.correlation_id;
    k.context_id = 1;
    k.grid[0] = k.grid[1] = k.grid[2] = 1;
    k.block[0] = 128;
    k.block[1] = k.block[2] = 1;
    k.name_string = w.intern("fake_kernel");
    w.add(log::RecordKind::kKernel, k);
  }
  if (!w.flush()) return 1;
  std::ofstream(argv[2]) << "ready\n";
  for (;;) ::pause();
}
