// crash: launches kernels, waits for them, then kills itself with SIGKILL, to test that
// a trace keeps what the collector flushed before the process died.
//
//   crash [K] [--sleep-ms MS]     K launches (default 50); sleeps MS ms (default 1000)
//                                 after the final synchronize so the collector can flush
//
// Prints "RESULT pid=PID launches=K" before it sleeps, then raises SIGKILL on itself, so
// a shell (and gpuscope, which passes the status through) reports exit code 137.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "example_check.cuh"

__global__ void fill(int* data, int value) { data[threadIdx.x] = value; }

int main(int argc, char** argv) {
  using gpuscope::examples::parse_count;
  long long launches = 50;
  long long sleep_ms = 1000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--sleep-ms") == 0 && i + 1 < argc) {
      sleep_ms = parse_count(argv[++i], "--sleep-ms");
    } else {
      launches = parse_count(argv[i], "K");
    }
  }

  int* data = nullptr;
  GPUSCOPE_EXAMPLE_CHECK(cudaMalloc(&data, 32 * sizeof(int)));
  for (long long i = 0; i < launches; ++i) {
    fill<<<1, 32>>>(data, static_cast<int>(i));
    GPUSCOPE_EXAMPLE_CHECK_LAUNCH();
  }
  GPUSCOPE_EXAMPLE_CHECK(cudaDeviceSynchronize());
  int first = -1;
  GPUSCOPE_EXAMPLE_CHECK(cudaMemcpy(&first, data, sizeof(int), cudaMemcpyDeviceToHost));
  if (launches > 0 && first != launches - 1) {
    std::fprintf(stderr, "crash: data[0] is %d, expected %lld\n", first, launches - 1);
    return 1;
  }
  std::printf("RESULT pid=%d launches=%lld\n", static_cast<int>(getpid()), launches);
  std::fflush(stdout);

  std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  kill(getpid(), SIGKILL);
  pause();  // not reached
  return 3;
}
