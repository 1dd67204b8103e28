#include "store/private_dir.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace gpuscope::store {
namespace {

namespace fs = std::filesystem;

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

PrivateStatus fail(PrivateProblem problem, std::string message, std::string_view fix = {}) {
  return PrivateStatus{problem, std::move(message), std::string(fix)};
}

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0%o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// A system error about `subject` ("directory PATH", "cannot write PATH"): kMissing, kDenied
// or kFailed.
PrivateStatus system_error(int err, const std::string& subject) {
  if (err == ENOENT) return fail(PrivateProblem::kMissing, subject + ": does not exist");
  if (err == EACCES || err == EPERM)
    return fail(PrivateProblem::kDenied, subject + ": permission denied",
                "check who owns it (ls -ld): private state belongs to the user who made it");
  return fail(PrivateProblem::kFailed, subject + ": " + std::strerror(err));
}

// The owner and mode rule on a folder's fstat/lstat result.
PrivateStatus judge_dir(const struct stat& st, const fs::path& dir, std::string_view unsafe_fix) {
  const uid_t me = ::geteuid();
  const std::string facts = "(owner " + std::to_string(st.st_uid) + ", mode " + octal_mode(st.st_mode) + ")";
  if (S_ISLNK(st.st_mode))
    return fail(PrivateProblem::kUnsafe, "directory " + dir.string() + " is a symbolic link " + facts, unsafe_fix);
  if (!S_ISDIR(st.st_mode))
    return fail(PrivateProblem::kUnsafe, dir.string() + " is not a directory " + facts, unsafe_fix);
  if (st.st_uid != me && (st.st_mode & 077) == 0)
    return fail(PrivateProblem::kDenied,
                "permission denied: directory " + dir.string() + " belongs to another user " + facts +
                    "; you are uid " + std::to_string(me),
                "run gpuscope as the user who owns it");
  if (st.st_uid != me || (st.st_mode & 07777) != 0700)
    return fail(PrivateProblem::kUnsafe, "directory " + dir.string() + " has unsafe permissions " + facts, unsafe_fix);
  return {};
}

// Opens and checks `dir`; on success *out holds its descriptor.
PrivateStatus open_checked_dir(const fs::path& dir, std::string_view unsafe_fix, bool check_owner, int* out) {
  *out = -1;
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    // Say why from lstat: a link or a file (ELOOP, ENOTDIR), another user's folder (EACCES).
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0) {
      if (check_owner || S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
        PrivateStatus judged = judge_dir(st, dir, unsafe_fix);
        if (!judged.ok()) return judged;
      }
    }
    return system_error(err, "directory " + dir.string());
  }
  Fd guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return system_error(errno, "directory " + dir.string());
  if (check_owner) {
    PrivateStatus judged = judge_dir(st, dir, unsafe_fix);
    if (!judged.ok()) return judged;
  }
  *out = guard.fd;
  guard.fd = -1;
  return {};
}

// ".NAME.tmp.XXXXXX": six characters from getrandom(2) (or the clock and a counter).
std::string temp_name(std::string_view name) {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static std::atomic<unsigned> counter{0};
  unsigned char bytes[6] = {};
  if (::getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bytes)) {
    struct timespec ts {};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    const unsigned long long mix = static_cast<unsigned long long>(ts.tv_nsec) * 2654435761u ^
                                   (static_cast<unsigned long long>(::getpid()) << 20) ^ counter.fetch_add(1);
    for (std::size_t i = 0; i < sizeof bytes; ++i) bytes[i] = static_cast<unsigned char>(mix >> (8 * i));
  }
  std::string out = "." + std::string(name.substr(0, 200)) + ".tmp.";
  for (unsigned char b : bytes) out += kChars[b % (sizeof kChars - 1)];
  return out;
}

bool is_one_component(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

// Creates a temporary file in `dirfd` (O_EXCL|O_NOFOLLOW, 0600), writes `content`, renames it
// over `name`. `where` is the folder's path, for messages.
PrivateStatus write_in(int dirfd, const fs::path& where, std::string_view name, std::string_view content) {
  const std::string target = (where / std::string(name)).string();
  if (!is_one_component(name)) return fail(PrivateProblem::kFailed, "not a file name: '" + std::string(name) + "'");
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = temp_name(name);
    fd = ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return system_error(errno, "cannot create a file in " + where.string());
  }
  if (fd < 0) return fail(PrivateProblem::kFailed, "cannot create a temporary file in " + where.string());
  Fd file(fd);
  int err = 0;
  for (std::size_t done = 0; done < content.size() && err == 0;) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n == 0) {
      err = EIO;  // no progress: do not spin
    } else if (errno != EINTR) {
      err = errno;
    }
  }
  const int closed = ::close(file.fd);  // always closed, also after a failed write
  file.fd = -1;
  if (err == 0 && closed != 0) err = errno;
  if (err == 0 && ::renameat(dirfd, tmp.c_str(), dirfd, std::string(name).c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlinkat(dirfd, tmp.c_str(), 0);
    PrivateStatus st = system_error(err, "cannot write " + target);
    if (st.problem == PrivateProblem::kMissing) st.problem = PrivateProblem::kFailed;
    return st;
  }
  return {};
}

}  // namespace

PrivateStatus make_private_dir(const fs::path& dir, std::string_view unsafe_fix) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return system_error(errno, "cannot create " + dir.string());
  return check_private_dir(dir, unsafe_fix);
}

bool create_directories_0700(const fs::path& dir, std::error_code& ec) {
  ec.clear();
  fs::path prefix;
  for (const fs::path& part : dir) {
    prefix /= part;
    if (part == prefix.root_path() || part.empty()) continue;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      ec.assign(errno, std::generic_category());
      return false;
    }
  }
  return true;
}

PrivateStatus check_private_dir(const fs::path& dir, std::string_view unsafe_fix) {
  int fd = -1;
  PrivateStatus st = open_checked_dir(dir, unsafe_fix, true, &fd);
  if (fd >= 0) ::close(fd);
  return st;
}

PrivateStatus write_private_file(const fs::path& dir, std::string_view name, std::string_view content,
                                 std::string_view unsafe_fix) {
  int fd = -1;
  PrivateStatus st = open_checked_dir(dir, unsafe_fix, true, &fd);
  if (!st.ok()) return st;
  Fd guard(fd);
  return write_in(fd, dir, name, content);
}

PrivateStatus write_new_file(const fs::path& dir, std::string_view name, std::string_view content) {
  int fd = -1;
  PrivateStatus st = open_checked_dir(dir, "use another folder", false, &fd);
  if (!st.ok()) return st;
  Fd guard(fd);
  return write_in(fd, dir, name, content);
}

PrivateRead read_private_file(const fs::path& dir, std::string_view name, std::size_t max_bytes,
                              std::string_view unsafe_fix) {
  PrivateRead out;
  int dirfd = -1;
  out.status = open_checked_dir(dir, unsafe_fix, true, &dirfd);
  if (!out.status.ok()) return out;
  Fd dir_guard(dirfd);
  const auto path = [&] { return (dir / std::string(name)).string(); };  // for messages only
  if (!is_one_component(name)) {
    out.status = fail(PrivateProblem::kFailed, "not a file name: '" + std::string(name) + "'");
    return out;
  }
  const int fd = ::openat(dirfd, std::string(name).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    struct stat st {};
    if (err == ELOOP && ::fstatat(dirfd, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode)) {
      out.status = fail(PrivateProblem::kUnsafe, path() + " is a symbolic link", "remove it");
    } else {
      out.status = system_error(err, path());
    }
    return out;
  }
  Fd file(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    out.status = system_error(errno, path());
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.status = fail(PrivateProblem::kUnsafe, path() + " is not a regular file (mode " + octal_mode(st.st_mode) + ")",
                      "remove it");
    return out;
  }
  if (st.st_uid != ::geteuid()) {
    out.status = fail(PrivateProblem::kUnsafe,
                      path() + " belongs to another user (owner " + std::to_string(st.st_uid) + ", mode " +
                          octal_mode(st.st_mode) + "); you are uid " + std::to_string(::geteuid()),
                      "remove it");
    return out;
  }
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    out.status = fail(
        PrivateProblem::kFailed,
        path() + " holds " + std::to_string(st.st_size) + " bytes, more than " + std::to_string(max_bytes) + " bytes",
        "remove it");
    return out;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      out.status = system_error(errno, path());
      out.content.clear();
      return out;
    }
    out.content.append(buf, static_cast<std::size_t>(n));
    if (out.content.size() > max_bytes) {
      out.status = fail(PrivateProblem::kFailed, path() + " holds more than " + std::to_string(max_bytes) + " bytes",
                        "remove it");
      out.content.clear();
      return out;
    }
  }
  return out;
}

}  // namespace gpuscope::store
