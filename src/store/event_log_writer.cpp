#include "store/event_log_writer.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuscope::store {

EventLogWriter::~EventLogWriter() { close(); }

bool EventLogWriter::open(const std::string& path, std::uint32_t pid, std::string* error) {
  m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (m_fd < 0) {
    if (error) *error = "cannot create " + path + ": " + std::strerror(errno);
    return false;
  }
  log::FileHeader h{};
  std::memcpy(h.magic, log::kMagic, sizeof h.magic);
  h.format_version = log::kFormatVersion;
  h.header_size = sizeof(log::FileHeader);
  h.pid = pid;
  const char* p = reinterpret_cast<const char*>(&h);
  m_batch.insert(m_batch.end(), p, p + sizeof h);
  return flush();
}

void EventLogWriter::add_raw(log::RecordKind kind, const void* payload, std::uint32_t size) {
  if (m_failed) {
    ++m_dropped;
    return;
  }
  log::RecordHeader rh{static_cast<std::uint16_t>(kind), 0, size};
  const char* h = reinterpret_cast<const char*>(&rh);
  m_batch.insert(m_batch.end(), h, h + sizeof rh);
  const char* p = static_cast<const char*>(payload);
  m_batch.insert(m_batch.end(), p, p + size);
  ++m_records;
}

std::uint64_t EventLogWriter::intern(std::string_view s) {
  if (s.empty()) return 0;
  auto it = m_strings.find(std::string(s));
  if (it != m_strings.end()) return it->second;
  const std::uint64_t id = m_next_string++;
  m_strings.emplace(std::string(s), id);
  if (m_failed) return id;
  log::RecordHeader rh{static_cast<std::uint16_t>(log::RecordKind::kString), 0,
                       static_cast<std::uint32_t>(sizeof(log::StringRecord) + s.size())};
  log::StringRecord sr{id};
  const char* h = reinterpret_cast<const char*>(&rh);
  m_batch.insert(m_batch.end(), h, h + sizeof rh);
  const char* p = reinterpret_cast<const char*>(&sr);
  m_batch.insert(m_batch.end(), p, p + sizeof sr);
  m_batch.insert(m_batch.end(), s.begin(), s.end());
  ++m_records;
  return id;
}

bool EventLogWriter::flush() {
  if (m_fd < 0 || m_failed) {
    m_batch.clear();
    return false;
  }
  // At the file size limit the kernel sends SIGXFSZ to this thread, whose default action
  // would end the traced program: block it, then consume it, so write() returns EFBIG.
  sigset_t xfsz, old;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &old);
  std::size_t off = 0;
  int err = 0;
  while (off < m_batch.size()) {
    const ssize_t n = ::write(m_fd, m_batch.data() + off, m_batch.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    if (n == 0) {
      err = ENOSPC;
      break;
    }
    off += static_cast<std::size_t>(n);
  }
  if (err != 0) {
    const timespec zero{};
    while (sigtimedwait(&xfsz, nullptr, &zero) == SIGXFSZ) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (err != 0) {
    // Cut the log back to its last whole flush: readable to the end, nothing half written.
    const bool cut = ::ftruncate(m_fd, static_cast<off_t>(m_bytes)) == 0 &&
                     ::lseek(m_fd, static_cast<off_t>(m_bytes), SEEK_SET) >= 0;
    m_error = std::string("cannot write the event log (") + std::strerror(err) + ") after " + std::to_string(m_bytes) +
              " bytes: recording stopped in this process; " +
              (cut ? "everything written before is kept" : "the log may end in a partial record");
    m_failed = true;
    m_batch.clear();
    m_batch.shrink_to_fit();
    return false;
  }
  m_bytes += m_batch.size();
  m_batch.clear();
  return true;
}

void EventLogWriter::close() {
  if (m_fd < 0) return;
  flush();
  ::close(m_fd);
  m_fd = -1;
}

}  // namespace gpuscope::store
