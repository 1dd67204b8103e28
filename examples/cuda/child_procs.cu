// child_procs: a parent and a child process that both launch kernels, for tests of
// tracing across fork/exec.
//
//   child_procs [K1] [K2]        parent launches K1 kernels (default 7), child K2 (default 13)
//   child_procs --child K2       (internal) the child's role
//
// The parent fork()s and execv()s /proc/self/exe --child K2 before touching CUDA (CUDA
// must not be initialised before fork), waits for the child, then launches its own K1
// kernels. Each process prints
//   RESULT role=parent|child pid=PID ppid=PPID launches=K
// Exit status: 0 if both processes' counters are right, 1 if not, 2 on errors.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "example_check.cuh"

__global__ void bump(int* counter) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *counter += 1;
}

namespace {

// Launches `launches` kernels, checks the counter, prints the RESULT line.
int launch_and_report(const char* role, long long launches) {
  int* counter = nullptr;
  GPUSCOPE_EXAMPLE_CHECK(cudaMalloc(&counter, sizeof(int)));
  GPUSCOPE_EXAMPLE_CHECK(cudaMemset(counter, 0, sizeof(int)));
  for (long long i = 0; i < launches; ++i) {
    bump<<<1, 32>>>(counter);
    GPUSCOPE_EXAMPLE_CHECK_LAUNCH();
  }
  int host = -1;
  GPUSCOPE_EXAMPLE_CHECK(cudaMemcpy(&host, counter, sizeof(int), cudaMemcpyDeviceToHost));
  GPUSCOPE_EXAMPLE_CHECK(cudaFree(counter));
  std::printf("RESULT role=%s pid=%d ppid=%d launches=%lld\n", role, static_cast<int>(getpid()),
              static_cast<int>(getppid()), launches);
  std::fflush(stdout);
  if (host != launches) {
    std::fprintf(stderr, "child_procs (%s): counter is %d, expected %lld\n", role, host, launches);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using gpuscope::examples::parse_count;
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) {
    return launch_and_report("child", parse_count(argv[2], "K2"));
  }
  long long k1 = argc > 1 ? parse_count(argv[1], "K1") : 7;
  long long k2 = argc > 2 ? parse_count(argv[2], "K2") : 13;

  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) {
    std::perror("fork");
    return 2;
  }
  if (child == 0) {
    std::string k2_text = std::to_string(k2);
    char* child_argv[] = {argv[0], const_cast<char*>("--child"), k2_text.data(), nullptr};
    execv("/proc/self/exe", child_argv);
    std::perror("execv /proc/self/exe");
    _exit(127);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) {
    std::perror("waitpid");
    return 2;
  }
  const bool child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!child_ok) std::fprintf(stderr, "child_procs: child failed (wait status %d)\n", status);

  const int parent_rc = launch_and_report("parent", k1);
  return (child_ok && parent_rc == 0) ? 0 : 1;
}
