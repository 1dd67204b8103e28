#include "cli/launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace gpuscope::cli {
namespace {

std::atomic<pid_t> g_child_pid{0};

// SIGXFSZ as gpuscope inherited it, restored in the target (ignore_file_size_signal).
struct sigaction g_inherited_xfsz {};
bool g_xfsz_changed = false;

void forward_signal(int sig) {
  const pid_t pid = g_child_pid.load();
  if (pid > 0) ::kill(pid, sig);
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

void ignore_file_size_signal() {
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  g_xfsz_changed = ::sigaction(SIGXFSZ, &ign, &g_inherited_xfsz) == 0;
}

std::optional<std::string> find_executable(const std::string& name, bool* not_executable) {
  if (not_executable) *not_executable = false;
  auto check = [&](const std::string& path) -> std::optional<std::string> {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    if (is_executable_file(path)) return path;
    if (not_executable) *not_executable = true;
    return std::nullopt;
  };
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) return check(name);
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  bool any_not_exec = false;
  while (begin <= path.size()) {
    std::size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(begin, end - begin);
    if (dir.empty()) dir = ".";
    bool ne = false;
    if (not_executable) *not_executable = false;
    if (auto found = check(dir + "/" + name)) return found;
    if (not_executable) ne = *not_executable;
    any_not_exec = any_not_exec || ne;
    begin = end + 1;
  }
  if (not_executable) *not_executable = any_not_exec;
  return std::nullopt;
}

int LaunchResult::shell_exit_code() const {
  if (!started) return exec_errno == ENOENT ? 127 : 126;
  if (exit_status) return *exit_status;
  if (term_signal) return 128 + *term_signal;
  return 1;
}

std::string LaunchResult::describe() const {
  if (!started) return std::string("could not be started: ") + std::strerror(exec_errno);
  if (exit_status) return "exited with code " + std::to_string(*exit_status);
  if (term_signal) {
    std::string s = "was killed by signal " + std::to_string(*term_signal) + " (" + ::strsignal(*term_signal) + ")";
    if (core_dumped) s += ", core dumped";
    if (killed_by_us) s += " sent by gpuscope at the end of --duration";
    return s;
  }
  return "ended in an unknown way";
}

LaunchResult launch_and_wait(const LaunchSpec& spec) {
  LaunchResult result;
  // A close-on-exec pipe tells the parent whether exec succeeded (EOF) or failed (errno).
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.exec_errno = errno;
    return result;
  }
  // Build argv/envp before fork: only async-signal-safe calls in the child.
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    bool overridden = false;
    for (const auto& [k, v] : spec.env) {
      if (kv.size() > k.size() && kv.substr(0, k.size()) == k && kv[k.size()] == '=') overridden = true;
    }
    if (!overridden) env_strings.emplace_back(kv);
  }
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) {
    result.exec_errno = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return result;
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (g_xfsz_changed) ::sigaction(SIGXFSZ, &g_inherited_xfsz, nullptr);  // the target as it would run alone
    ::execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    (void)!::write(fds[1], &err, sizeof err);
    ::_exit(127);
  }
  ::close(fds[1]);
  int err = 0;
  ssize_t n;
  do {
    n = ::read(fds[0], &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  ::close(fds[0]);
  result.pid = pid;
  if (n == static_cast<ssize_t>(sizeof err)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.exec_errno = err;
    return result;
  }
  result.started = true;
  if (spec.on_started) spec.on_started(pid);

  // The target stays in gpuscope's process group, so a terminal's Ctrl-C (SIGINT,
  // SIGQUIT) reaches it directly: gpuscope ignores those and stays alive to build the
  // trace of what was recorded. SIGTERM/SIGHUP sent to gpuscope alone are forwarded.
  g_child_pid = pid;
  struct sigaction fwd {};
  fwd.sa_handler = forward_signal;
  sigemptyset(&fwd.sa_mask);
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  struct sigaction old_int {
  }, old_term{}, old_hup{}, old_quit{};
  ::sigaction(SIGINT, &ign, &old_int);
  ::sigaction(SIGQUIT, &ign, &old_quit);
  ::sigaction(SIGTERM, &fwd, &old_term);
  ::sigaction(SIGHUP, &fwd, &old_hup);

  std::atomic<bool> done{false};
  std::thread timer;
  if (spec.kill_after) {
    timer = std::thread([&, deadline = std::chrono::steady_clock::now() + *spec.kill_after] {
      while (!done.load()) {
        if (std::chrono::steady_clock::now() >= deadline) {
          result.killed_by_us = true;
          ::kill(pid, spec.kill_signal);
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  done = true;
  if (timer.joinable()) timer.join();
  g_child_pid = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);

  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
    result.core_dumped = WCOREDUMP(status);
  }
  return result;
}

}  // namespace gpuscope::cli
