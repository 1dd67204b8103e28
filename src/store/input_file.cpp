#include "store/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace gpuscope::store {
namespace {

std::string with_article(std::string_view noun) {
  const bool vowel = !noun.empty() && std::string_view("aeiou").find(noun.front()) != std::string_view::npos;
  return (vowel ? "an " : "a ") + std::string(noun);
}

}  // namespace

std::string_view file_kind_text(unsigned mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

InputFile InputFile::open(const std::filesystem::path& path, std::string_view noun) {
  InputFile f;
  f.m_path = path.string();
  f.m_noun = noun;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  const int fd = ::open(f.m_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    f.m_error = "cannot open the " + f.m_noun + " " + f.m_path + ": " + std::strerror(errno);
    return f;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    f.m_error = "cannot stat the " + f.m_noun + " " + f.m_path + ": " + std::strerror(errno);
    ::close(fd);
    return f;
  }
  if (!S_ISREG(st.st_mode)) {
    f.m_not_regular = true;
    f.m_error = f.m_path + " is " + std::string(file_kind_text(st.st_mode)) + ", not a regular file: gpuscope reads " +
                with_article(noun) + " only from a regular file (nothing was read)";
    ::close(fd);
    return f;
  }
  f.m_fd = fd;
  f.m_size = static_cast<std::uint64_t>(st.st_size);
  return f;
}

InputFile::InputFile(InputFile&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)),
      m_size(other.m_size),
      m_not_regular(other.m_not_regular),
      m_path(std::move(other.m_path)),
      m_noun(std::move(other.m_noun)),
      m_error(std::move(other.m_error)) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = std::exchange(other.m_fd, -1);
    m_size = other.m_size;
    m_not_regular = other.m_not_regular;
    m_path = std::move(other.m_path);
    m_noun = std::move(other.m_noun);
    m_error = std::move(other.m_error);
  }
  return *this;
}

InputFile::~InputFile() {
  if (m_fd >= 0) ::close(m_fd);
}

bool InputFile::read_all(std::string& out) {
  if (m_fd < 0) return false;
  out.clear();
  out.reserve(static_cast<std::size_t>(m_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(m_fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return true;
    } else if (errno != EINTR) {
      m_error = "cannot read the " + m_noun + " " + m_path + ": " + std::strerror(errno);
      return false;
    }
  }
}

std::optional<std::string> read_input_file(const std::filesystem::path& path, std::string_view noun,
                                           std::string& error) {
  InputFile f = InputFile::open(path, noun);
  std::string text;
  if (!f.ok() || !f.read_all(text)) {
    error = f.error();
    return std::nullopt;
  }
  return text;
}

}  // namespace gpuscope::store
