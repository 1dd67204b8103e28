#include "cli/driver_check.hpp"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace gpuscope::cli {
namespace {

// Child exit codes of the probe.
constexpr int kNoLibrary = 10, kNoSymbols = 11, kInitFailed = 12, kNoDevice = 13;

[[noreturn]] void probe_and_exit(int out_fd) {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    (void)!::write(out_fd, e, std::strlen(e));
    ::_exit(kNoLibrary);
  }
  using init_fn = int (*)(unsigned);
  using count_fn = int (*)(int*);
  auto cu_init = reinterpret_cast<init_fn>(::dlsym(lib, "cuInit"));
  auto cu_count = reinterpret_cast<count_fn>(::dlsym(lib, "cuDeviceGetCount"));
  if (!cu_init || !cu_count) ::_exit(kNoSymbols);
  const int rc = cu_init(0);
  if (rc != 0) {
    const std::string msg = "cuInit returned CUresult " + std::to_string(rc);
    (void)!::write(out_fd, msg.data(), msg.size());
    ::_exit(kInitFailed);
  }
  int n = 0;
  if (cu_count(&n) != 0 || n <= 0) ::_exit(kNoDevice);
  ::_exit(std::min(n, 9));  // 1..9 = device count (capped)
}

}  // namespace

DriverCheck check_cuda_driver(std::chrono::seconds timeout) {
  DriverCheck out;
  int fds[2];
  if (::pipe(fds) != 0) {
    out.problem = "cannot create a pipe to check the CUDA driver";
    return out;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    probe_and_exit(fds[1]);
  }
  ::close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  pid_t w = 0;
  while ((w = ::waitpid(pid, &status, WNOHANG)) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ::close(fds[0]);
      out.problem = "the CUDA driver did not answer within " + std::to_string(timeout.count()) +
                    " s (cuInit hung); check nvidia-smi";
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  char buf[512] = {};
  const ssize_t n = ::read(fds[0], buf, sizeof buf - 1);
  ::close(fds[0]);
  const std::string detail = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  if (!WIFEXITED(status)) {
    out.problem = "the CUDA driver check crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
    return out;
  }
  switch (const int code = WEXITSTATUS(status)) {
    case kNoLibrary:
      out.problem = "no NVIDIA driver found: libcuda.so.1 could not be loaded (" + detail + ")";
      break;
    case kNoSymbols:
      out.problem = "libcuda.so.1 lacks cuInit/cuDeviceGetCount: broken driver installation";
      break;
    case kInitFailed:
      out.problem = "the CUDA driver failed to initialise (" + detail +
                    "); no usable GPU (check nvidia-smi, CUDA_VISIBLE_DEVICES)";
      break;
    case kNoDevice:
      out.problem = "the CUDA driver sees no GPU (check nvidia-smi, CUDA_VISIBLE_DEVICES)";
      break;
    default:
      out.ok = code >= 1 && code <= 9;
      out.device_count = code;
      if (!out.ok) out.problem = "the CUDA driver check failed (exit code " + std::to_string(code) + ")";
  }
  return out;
}

}  // namespace gpuscope::cli
