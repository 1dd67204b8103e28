#include "store/event_log_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <type_traits>

#include "core/utf8.hpp"

namespace gpuscope::store {
namespace {

// Ids above this go to the sparse map so a corrupt id cannot allocate gigabytes.
constexpr std::uint64_t kMaxDenseStringId = 1u << 24;
// The smallest String record: a log of N bytes numbers at most N / this strings, so a
// writer's ids (1, 2, 3...) stay below it; a larger id is damage and goes to the sparse map
// (a 30-byte record claiming id 2^24 - 1 made each pass allocate 256 MB: found by fuzzing).
constexpr std::uint64_t kStringRecordBytes = sizeof(log::RecordHeader) + sizeof(log::StringRecord);

template <class T>
[[nodiscard]] T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

std::string log_version_message(std::uint32_t found, std::uint32_t expected) {
  std::string msg = "log format version " + std::to_string(found) + ", this gpuscope reads version " +
                    std::to_string(expected) + ": re-record with this gpuscope or use ";
  msg += found > expected ? "a newer one" : "the older gpuscope that wrote it";
  return msg;
}

EventLogReader::~EventLogReader() { close(); }

void EventLogReader::close() {
  if (m_data && m_size > 0) ::munmap(const_cast<char*>(m_data), m_size);
  m_data = nullptr;
  m_size = 0;
}

LogStatus EventLogReader::open(const std::string& path) {
  close();
  m_path = path;
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return {LogErrorKind::kCannotOpen, "cannot open event log " + path + ": " + std::strerror(errno)};
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string err = std::strerror(errno);
    ::close(fd);
    return {LogErrorKind::kCannotOpen, "cannot stat event log " + path + ": " + err};
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* what = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISDIR(st.st_mode)  ? "a folder"
                                              : "a device or other special file";
    return {LogErrorKind::kNotALog, path + " is not a gpuscope event log (" + what + ", not a regular file)"};
  }
  m_size = static_cast<std::size_t>(st.st_size);
  if (m_size < sizeof(log::FileHeader)) {
    ::close(fd);
    m_size = 0;
    return {LogErrorKind::kNotALog,
            path + " is not a gpuscope event log (" + std::to_string(st.st_size) + " bytes, shorter than its header)"};
  }
  void* p = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    m_size = 0;
    return {LogErrorKind::kCannotOpen, "cannot map event log " + path + ": " + std::strerror(errno)};
  }
  m_data = static_cast<const char*>(p);
  ::madvise(p, m_size, MADV_SEQUENTIAL);

  const auto h = load<log::FileHeader>(m_data);
  if (std::memcmp(h.magic, log::kMagic, sizeof h.magic) != 0) {
    return {LogErrorKind::kNotALog, path + " is not a gpuscope event log (bad magic)"};
  }
  if (h.format_version != log::kFormatVersion) {
    return {LogErrorKind::kVersionMismatch, path + ": " + log_version_message(h.format_version, log::kFormatVersion),
            h.format_version};
  }
  if (h.header_size < sizeof(log::FileHeader) || h.header_size > m_size) {
    return {LogErrorKind::kBadHeader, path + ": bad header size " + std::to_string(h.header_size)};
  }
  m_body = h.header_size;
  m_pid = h.pid;
  return {};
}

std::uint64_t EventLogReader::dense_string_limit() const {
  return std::min<std::uint64_t>(kMaxDenseStringId, m_size / kStringRecordBytes + 1);
}

void EventLogReader::add_string(std::uint64_t id, std::string_view value) {
  if (!core::valid_utf8(value)) {
    m_raw_strings[id] = value;
    value = m_repaired.emplace_back(core::repair_utf8(value));
  }
  if (id < dense_string_limit()) {
    if (id >= m_dense_strings.size()) m_dense_strings.resize(id + 1);
    m_dense_strings[id] = value;
  } else {
    m_sparse_strings[id] = value;
  }
}

std::optional<std::string_view> EventLogReader::raw_string(std::uint64_t id) const {
  if (m_raw_strings.empty()) return std::nullopt;
  const auto it = m_raw_strings.find(id);
  return it == m_raw_strings.end() ? std::nullopt : std::optional<std::string_view>(it->second);
}

std::string_view EventLogReader::string(std::uint64_t id) const {
  if (id < m_dense_strings.size()) return m_dense_strings[id];
  if (id < dense_string_limit()) return {};
  const auto it = m_sparse_strings.find(id);
  return it == m_sparse_strings.end() ? std::string_view{} : it->second;
}

LogReadStats EventLogReader::read(EventLogVisitor& v) {
  LogReadStats stats;
  stats.file_bytes = m_size;
  if (!m_data) return stats;
  m_dense_strings.clear();
  m_sparse_strings.clear();
  m_repaired.clear();
  m_raw_strings.clear();

  std::size_t off = m_body;
  while (off < m_size) {
    const std::size_t left = m_size - off;
    if (left < sizeof(log::RecordHeader)) break;
    const auto rh = load<log::RecordHeader>(m_data + off);
    if (rh.size > left - sizeof(log::RecordHeader)) break;  // cut short by a crash
    const char* payload = m_data + off + sizeof(log::RecordHeader);
    off += sizeof(log::RecordHeader) + rh.size;
    ++stats.records;

    // Dispatches one fixed-size record; a longer payload is read as its prefix.
    auto visit = [&](auto tag, auto&& fn) {
      using T = decltype(tag);
      if (rh.size < sizeof(T)) {
        ++stats.malformed_records;
        return;
      }
      fn(load<T>(payload));
    };
    // Dispatches a record followed by count(record) elements: its size must be exactly that
    // (anything else is damage: skipped and counted like a short record).
    auto visit_array = [&](auto tag, auto& buffer, auto&& count, auto&& fn) {
      using T = decltype(tag);
      using E = typename std::remove_reference_t<decltype(buffer)>::value_type;
      if (rh.size < sizeof(T)) {
        ++stats.malformed_records;
        return;
      }
      const auto r = load<T>(payload);
      const std::uint64_t n = count(r);
      if (rh.size - sizeof(T) != n * sizeof(E)) {
        ++stats.malformed_records;
        return;
      }
      buffer.resize(n);
      if (n > 0) std::memcpy(buffer.data(), payload + sizeof(T), n * sizeof(E));
      fn(r, std::span<const E>(buffer.data(), buffer.size()));
    };
    using K = log::RecordKind;
    switch (static_cast<K>(rh.kind)) {
      case K::kString: {
        if (rh.size < sizeof(log::StringRecord)) {
          ++stats.malformed_records;
          break;
        }
        const auto sr = load<log::StringRecord>(payload);
        const std::string_view s(payload + sizeof(log::StringRecord), rh.size - sizeof(log::StringRecord));
        add_string(sr.id, s);
        v.on_string(sr.id, string(sr.id));  // repaired, like every string(id)
        break;
      }
      case K::kProcess:
        visit(log::ProcessRecord{}, [&](const auto& r) { v.on_process(r); });
        break;
      case K::kDevice:
        visit(log::DeviceRecord{}, [&](const auto& r) { v.on_device(r); });
        break;
      case K::kContext:
        visit(log::ContextRecord{}, [&](const auto& r) { v.on_context(r); });
        break;
      case K::kKernel:
        visit(log::KernelRecord{}, [&](const auto& r) { v.on_kernel(r); });
        break;
      case K::kMemcpy:
        visit(log::MemcpyRecord{}, [&](const auto& r) { v.on_memcpy(r); });
        break;
      case K::kMemset:
        visit(log::MemsetRecord{}, [&](const auto& r) { v.on_memset(r); });
        break;
      case K::kApi:
        visit(log::ApiRecord{}, [&](const auto& r) { v.on_api(r); });
        break;
      case K::kSync:
        visit(log::SyncRecord{}, [&](const auto& r) { v.on_sync(r); });
        break;
      case K::kNvtx:
        visit(log::NvtxRecord{}, [&](const auto& r) { v.on_nvtx(r); });
        break;
      case K::kNvtxDomain:
        visit(log::NvtxDomainRecord{}, [&](const auto& r) { v.on_nvtx_domain(r); });
        break;
      case K::kThreadName:
        visit(log::ThreadNameRecord{}, [&](const auto& r) { v.on_thread_name(r); });
        break;
      case K::kOverhead:
        visit(log::OverheadRecord{}, [&](const auto& r) { v.on_overhead(r); });
        break;
      case K::kDataLoss:
        visit(log::DataLossRecord{}, [&](const auto& r) { v.on_data_loss(r); });
        break;
      case K::kCapture:
        visit(log::CaptureRecord{}, [&](const auto& r) { v.on_capture(r); });
        break;
      case K::kProcessEnd:
        visit(log::ProcessEndRecord{}, [&](const auto& r) { v.on_process_end(r); });
        break;
      case K::kMessage:
        visit(log::MessageRecord{}, [&](const auto& r) { v.on_message(r); });
        break;
      case K::kKernelProfile:
        visit(log::KernelProfileRecord{}, [&](const auto& r) { v.on_kernel_profile(r); });
        break;
      case K::kKernelMetric:
        visit(log::KernelMetricRecord{}, [&](const auto& r) { v.on_kernel_metric(r); });
        break;
      case K::kMemory:
        visit(log::MemoryRecord{}, [&](const auto& r) { v.on_memory(r); });
        break;
      case K::kRank:
        visit(log::RankRecord{}, [&](const auto& r) { v.on_rank(r); });
        break;
      case K::kGpuMetricsSession:
        visit_array(
            log::GpuMetricsSessionRecord{}, m_ids, [](const auto& r) { return r.metric_count; },
            [&](const auto& r, std::span<const std::uint64_t> ids) { v.on_gpu_metrics_session(r, ids); });
        break;
      case K::kGpuMetricSample:
        visit_array(
            log::GpuMetricSampleRecord{}, m_values, [](const auto& r) { return r.count; },
            [&](const auto& r, std::span<const double> values) { v.on_gpu_metric_sample(r, values); });
        break;
      default:
        ++stats.unknown_records;
        break;
    }
  }
  stats.truncated_bytes = m_size - off;
  return stats;
}

}  // namespace gpuscope::store
