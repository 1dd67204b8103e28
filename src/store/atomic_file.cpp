#include "store/atomic_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <streambuf>
#include <vector>

namespace fs = std::filesystem;

namespace gpuscope::store {
namespace {

// ---- signal cleanup registry (async-signal-safe reads: fixed slots, atomics, unlink) ----
struct CleanupSlot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 ready
  char path[PATH_MAX] = {};
};
constexpr int kSlots = 16;
CleanupSlot g_slots[kSlots];

void cleanup_and_die(int sig) {
  for (CleanupSlot& s : g_slots)
    if (s.state.load() == 2) ::unlink(s.path);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);  // blocked until this handler returns, then the default action
}

// ---- helpers ----
std::string errno_text(int err) { return std::strerror(err); }

// The file the name stands for, to rename over: a symbolic link is followed, so the link
// stays. (Modes are read with stat(2) on the name itself, which also follows the kernel's
// magic links such as /dev/stdout -> /proc/self/fd/1 -> pipe:[N].)
fs::path resolve(const fs::path& path) {
  std::error_code ec;
  if (fs::is_symlink(path, ec)) {
    fs::path real = fs::weakly_canonical(path, ec);
    if (!ec) return real;
  }
  return path;
}

// 0: absent (or unreadable: the write itself then says why); else st_mode.
mode_t mode_of(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode : 0;
}

bool is_special(mode_t mode) { return S_ISCHR(mode) || S_ISFIFO(mode) || S_ISSOCK(mode) || S_ISBLK(mode); }

// The mode a new file gets: 0666 less the umask (read without changing it where possible).
mode_t new_file_mode() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "Umask:") {
      unsigned mask = 0;
      if (status >> std::oct >> mask) return static_cast<mode_t>(0666 & ~mask);
      break;
    }
    std::getline(status, key);
  }
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return 0666 & ~mask;
}

// "cannot write PATH (REASON); the file that was there is unchanged" / "; nothing was written".
[[noreturn]] void fail(const fs::path& shown, const fs::path& real, const std::string& reason) {
  const bool kept = S_ISREG(mode_of(real));
  throw FileWriteError("cannot write " + shown.string() + " (" + reason + "); " +
                       (kept ? "the file that was there is unchanged" : "nothing was written"));
}

// An ostream buffer over a file descriptor that keeps the first write error (errno), so the
// message can say "No space left on device" or "File too large" exactly.
class FdStreambuf : public std::streambuf {
 public:
  explicit FdStreambuf(int fd) : m_fd(fd), m_buf(1 << 16) { setp(m_buf.data(), m_buf.data() + m_buf.size()); }
  [[nodiscard]] int error() const { return m_error; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    if (m_error != 0) return false;
    const char* p = pbase();
    while (p < pptr()) {
      const ssize_t n = ::write(m_fd, p, static_cast<std::size_t>(pptr() - p));
      if (n < 0) {
        if (errno == EINTR) continue;
        m_error = errno;
        return false;
      }
      p += n;
    }
    setp(m_buf.data(), m_buf.data() + m_buf.size());
    return true;
  }

  int m_fd;
  std::vector<char> m_buf;
  int m_error = 0;
};

// Runs `write` on a stream over `fd`; a failed write becomes the errno text in *reason.
// Returns false on a write error (the stream's exception swallowed); other exceptions pass.
bool stream_to(int fd, const std::function<void(std::ostream&)>& write, std::string* reason) {
  FdStreambuf buf(fd);
  std::ostream out(&buf);
  out.exceptions(std::ios::badbit);
  try {
    write(out);
    out.flush();
  } catch (...) {
    if (buf.error() == 0) throw;
  }
  if (buf.error() != 0) {
    *reason = errno_text(buf.error());
    return false;
  }
  return true;
}

}  // namespace

OutputExistsError::OutputExistsError(const fs::path& path)
    : FileWriteError(path.string() + " already exists; use --force-overwrite (-f) to replace it"), m_path(path) {}

void check_output(const fs::path& path, Overwrite overwrite) {
  if (path.empty()) throw FileWriteError("no output file name given");
  const mode_t mode = mode_of(path);  // stat(2) follows links, /proc/self/fd/N included
  if (S_ISDIR(mode)) throw FileWriteError("cannot write " + path.string() + ": it is a folder; give a file name");
  if (S_ISREG(mode) && overwrite == Overwrite::kRefuse) throw OutputExistsError(path);
}

AtomicFile::AtomicFile(fs::path target, Overwrite overwrite) : m_target(resolve(target)), m_overwrite(overwrite) {
  check_output(target, overwrite);
  if (is_special(mode_of(target)))
    throw FileWriteError("cannot write " + target.string() + ": it is not a regular file (a device, FIFO or socket)");
  const fs::path dir = m_target.has_parent_path() ? m_target.parent_path() : fs::path(".");
  std::string temp = (dir / (detail::temp_prefix(m_target) + "XXXXXX")).string();
  m_fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (m_fd < 0) {
    const int err = errno;
    fail(target, m_target, "cannot create a file in " + dir.string() + ": " + errno_text(err));
  }
  m_temp = temp;
  m_slot = detail::register_for_cleanup(m_temp);
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
  if (!m_done && !m_temp.empty()) ::unlink(m_temp.c_str());
  detail::release_cleanup(m_slot);
  m_slot = -1;
  m_done = true;
}

void AtomicFile::commit() {
  if (m_done) throw FileWriteError("cannot write " + m_target.string() + ": committed or discarded already");
  const auto failed = [&](const std::string& step, int err) {
    discard();
    fail(m_target, m_target, step + ": " + errno_text(err));
  };
  if (::fsync(m_fd) != 0) failed("fsync", errno);
  const mode_t old = mode_of(m_target);
  const mode_t mode = S_ISREG(old) ? (old & 07777) : new_file_mode();
  (void)::fchmod(m_fd, mode);  // a file system without modes keeps 0600: still readable by its owner
  const int fd = m_fd;
  m_fd = -1;
  if (::close(fd) != 0) failed("close", errno);

  bool linked = false;
  int rc = 0;
  if (m_overwrite == Overwrite::kReplace) {
    rc = ::rename(m_temp.c_str(), m_target.c_str());
  } else {
    rc = ::renameat2(AT_FDCWD, m_temp.c_str(), AT_FDCWD, m_target.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP)) {
      rc = ::link(m_temp.c_str(), m_target.c_str());  // fails with EEXIST, never replaces
      linked = rc == 0;
      if (rc != 0 && errno != EEXIST) {  // no hard links either (vfat): check, then rename
        if (S_ISREG(mode_of(m_target))) {
          errno = EEXIST;
        } else {
          rc = ::rename(m_temp.c_str(), m_target.c_str());
        }
      }
    }
  }
  if (rc != 0) {
    const int err = errno;
    discard();
    if (err == EEXIST) throw OutputExistsError(m_target);
    fail(m_target, m_target, "rename: " + errno_text(err));
  }
  if (linked) ::unlink(m_temp.c_str());
  m_done = true;
  discard();
  // The rename itself durable: fsync the folder (best effort: not every file system allows it).
  const fs::path dir = m_target.has_parent_path() ? m_target.parent_path() : fs::path(".");
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomically(const fs::path& path, Overwrite overwrite, const std::function<void(std::ostream&)>& write) {
  std::string reason;
  if (is_special(mode_of(path))) {  // -o /dev/stdout, a FIFO: nothing to replace or keep
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw FileWriteError("cannot write " + path.string() + " (" + errno_text(errno) + ")");
    bool ok = false;
    try {
      ok = stream_to(fd, write, &reason);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    if (!ok) throw FileWriteError("cannot write " + path.string() + " (" + reason + ")");
    return;
  }
  AtomicFile file(path, overwrite);
  if (!stream_to(file.fd(), write, &reason)) {
    file.discard();
    fail(path, file.target(), reason);
  }
  file.commit();
}

void write_file_atomically(const fs::path& path, Overwrite overwrite, std::string_view content) {
  write_file_atomically(path, overwrite, [content](std::ostream& out) {
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  });
}

void remove_temporary_files_on_signals() {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // ignored (nohup) or taken
    struct sigaction act {};
    act.sa_handler = cleanup_and_die;
    sigemptyset(&act.sa_mask);
    ::sigaction(sig, &act, nullptr);
  }
}

namespace detail {

std::string temp_prefix(const fs::path& target) {
  std::string name = target.filename().string();
  constexpr std::size_t kNameMax = 255 - sizeof(".tmp.XXXXXX");  // the leading '.' and the suffix fit NAME_MAX
  if (name.size() > kNameMax) name.resize(kNameMax);
  return "." + name + ".tmp.";
}

int register_for_cleanup(const fs::path& path) noexcept {
  const std::string& text = path.native();
  if (text.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_slots[i].path, text.c_str(), text.size() + 1);
    g_slots[i].state.store(2);
    return i;
  }
  return -1;
}

void release_cleanup(int slot) noexcept {
  if (slot >= 0 && slot < kSlots) g_slots[slot].state.store(0);
}

}  // namespace detail

}  // namespace gpuscope::store
