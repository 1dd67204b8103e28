#include "store/output_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

namespace fs = std::filesystem;

namespace gpuscope::store {
namespace {

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "unknown";
  return host;
}

struct Holder {
  long pid = 0;
  std::string host;
};

Holder read_holder(int fd) {
  char buf[512] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  Holder h;
  if (n > 0) {
    std::istringstream in(std::string(buf, static_cast<std::size_t>(n)));
    in >> h.pid >> h.host;
  }
  return h;
}

bool write_holder(int fd) {
  const std::string text = std::to_string(::getpid()) + " " + host_name() + "\n";
  return ::ftruncate(fd, 0) == 0 && ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
}

[[noreturn]] void busy(const fs::path& target, const fs::path& lock, const Holder& h) {
  const std::string who =
      h.pid > 0 ? "pid " + std::to_string(h.pid) + (h.host.empty() ? "" : " on " + h.host) : "pid unknown";
  throw OutputBusyError(target.string() + " is being written by another gpuscope (" + who + "; lock " + lock.string() +
                        ")");
}

[[noreturn]] void cannot(const fs::path& lock, int err) {
  throw FileWriteError("cannot create the lock file " + lock.string() + " (" + std::strerror(err) +
                       "); nothing was run");
}

// The same open file as the path still names (its previous holder may have removed it
// between our open and our flock).
bool still_named(int fd, const fs::path& path) {
  struct stat a {
  }, b{};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// No flock on this file system: O_EXCL, with a dead holder's file replaced.
int lock_by_pid(const fs::path& target, const fs::path& lock) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      (void)write_holder(fd);
      return fd;
    }
    if (errno != EEXIST) cannot(lock, errno);
    const int old = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
    if (old < 0) continue;  // removed meanwhile: try again
    const Holder h = read_holder(old);
    ::close(old);
    const bool dead = h.pid > 0 && h.host == host_name() && ::kill(static_cast<pid_t>(h.pid), 0) != 0 && errno == ESRCH;
    if (!dead) busy(target, lock, h);
    ::unlink(lock.c_str());
  }
  busy(target, lock, {});
}

}  // namespace

OutputLock::OutputLock(const fs::path& target) : m_target(target), m_path(target.string() + ".lock") {
  for (int attempt = 0; attempt < 8 && m_fd < 0; ++attempt) {
    const int fd = ::open(m_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) cannot(m_path, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK) {
        const Holder h = read_holder(fd);
        ::close(fd);
        busy(m_target, m_path, h);
      }
      ::close(fd);
      if (err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS || err == EINVAL) {
        m_fd = lock_by_pid(m_target, m_path);
        break;
      }
      cannot(m_path, err);
    }
    if (!still_named(fd, m_path)) {
      ::close(fd);
      continue;
    }
    (void)write_holder(fd);
    m_fd = fd;
  }
  if (m_fd < 0) busy(m_target, m_path, {});
  m_slot = detail::register_for_cleanup(m_path);
}

OutputLock::~OutputLock() {
  detail::release_cleanup(m_slot);
  ::unlink(m_path.c_str());  // before the close: a waiting opener then sees another file and retries
  ::close(m_fd);
}

int OutputLock::remove_stale_temporaries() const {
  const fs::path dir = m_target.has_parent_path() ? m_target.parent_path() : fs::path(".");
  const std::string prefix = detail::temp_prefix(m_target);
  int removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() == prefix.size() + 6 && name.starts_with(prefix) && e.is_regular_file(ec) &&
        fs::remove(e.path(), ec))
      ++removed;
  }
  return removed;
}

}  // namespace gpuscope::store
