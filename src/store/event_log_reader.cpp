#include "store/event_log_reader.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <type_traits>

#include "core/utf8.hpp"
#include "store/input_file.hpp"

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

// The smallest payload of each record kind this reader knows; 0 = not a known kind.
std::size_t min_payload(std::uint16_t kind) {
  using K = log::RecordKind;
  switch (static_cast<K>(kind)) {
    case K::kString:
      return sizeof(log::StringRecord);
    case K::kProcess:
      return sizeof(log::ProcessRecord);
    case K::kDevice:
      return sizeof(log::DeviceRecord);
    case K::kContext:
      return sizeof(log::ContextRecord);
    case K::kKernel:
      return sizeof(log::KernelRecord);
    case K::kMemcpy:
      return sizeof(log::MemcpyRecord);
    case K::kMemset:
      return sizeof(log::MemsetRecord);
    case K::kApi:
      return sizeof(log::ApiRecord);
    case K::kSync:
      return sizeof(log::SyncRecord);
    case K::kNvtx:
      return sizeof(log::NvtxRecord);
    case K::kNvtxDomain:
      return sizeof(log::NvtxDomainRecord);
    case K::kThreadName:
      return sizeof(log::ThreadNameRecord);
    case K::kOverhead:
      return sizeof(log::OverheadRecord);
    case K::kDataLoss:
      return sizeof(log::DataLossRecord);
    case K::kCapture:
      return sizeof(log::CaptureRecord);
    case K::kProcessEnd:
      return sizeof(log::ProcessEndRecord);
    case K::kMessage:
      return sizeof(log::MessageRecord);
    case K::kKernelProfile:
      return sizeof(log::KernelProfileRecord);
    case K::kKernelMetric:
      return sizeof(log::KernelMetricRecord);
    case K::kMemory:
      return sizeof(log::MemoryRecord);
    case K::kGpuMetricsSession:
      return sizeof(log::GpuMetricsSessionRecord);
    case K::kGpuMetricSample:
      return sizeof(log::GpuMetricSampleRecord);
    case K::kRank:
      return sizeof(log::RankRecord);
    case K::kTorchOp:
      return sizeof(log::TorchOpRecord);
    case K::kTorchOpCost:
      return sizeof(log::TorchOpCostRecord);
    case K::kPyFrame:
      return sizeof(log::PyFrameRecord);
    case K::kPyStack:
      return sizeof(log::PyStackRecord);
    case K::kPySample:
      return sizeof(log::PySampleRecord);
  }
  return 0;
}

// A chain of this many plausible headers in a row marks where whole records start again.
constexpr int kResyncChain = 4;

}  // namespace

std::optional<std::size_t> EventLogReader::resync(std::size_t from) const {
  // A header a writer could have written at `p`: a known kind, flags 0, a size that fits.
  auto plausible = [this](std::size_t p) -> std::optional<log::RecordHeader> {
    if (m_size - p < sizeof(log::RecordHeader)) return std::nullopt;
    const auto rh = load<log::RecordHeader>(m_data + p);
    const std::size_t need = min_payload(rh.kind);
    if (rh.flags != 0 || need == 0 || rh.size < need || rh.size > m_size - p - sizeof(log::RecordHeader))
      return std::nullopt;
    return rh;
  };
  for (std::size_t start = from + 1; start + sizeof(log::RecordHeader) <= m_size; ++start) {
    std::size_t p = start;
    int chain = 0;
    std::uint16_t last_kind = 0;
    while (chain < kResyncChain) {
      const auto rh = plausible(p);
      if (!rh) break;
      p += sizeof(log::RecordHeader) + rh->size;
      last_kind = rh->kind;
      ++chain;
      if (p == m_size) break;
    }
    const bool to_the_end =
        p == m_size &&
        (chain >= 2 || (chain == 1 && last_kind == static_cast<std::uint16_t>(log::RecordKind::kProcessEnd)));
    if (chain >= kResyncChain || to_the_end) return start;
  }
  return std::nullopt;
}

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
  InputFile file = InputFile::open(path, "event log");
  if (!file.ok()) {
    return {file.not_regular() ? LogErrorKind::kNotALog : LogErrorKind::kCannotOpen, file.error()};
  }
  m_size = static_cast<std::size_t>(file.size());
  if (m_size < sizeof(log::FileHeader)) {
    const std::uint64_t bytes = file.size();
    m_size = 0;
    return {LogErrorKind::kNotALog,
            path + " is not a gpuscope event log (" + std::to_string(bytes) + " bytes, shorter than its header)"};
  }
  void* p = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
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
    if (rh.size > left - sizeof(log::RecordHeader) || rh.flags != 0) {
      // Whole records further on: damage, skipped; none: cut short by a crash.
      const std::optional<std::size_t> next = resync(off);
      if (!next) break;
      if (stats.corrupt_regions++ == 0) stats.first_corrupt_offset = off;
      stats.corrupt_bytes += *next - off;
      off = *next;
      continue;
    }
    if (stats.corrupt_regions > 0) ++stats.records_after_corruption;
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
      case K::kTorchOp:
        visit(log::TorchOpRecord{}, [&](const auto& r) { v.on_torch_op(r); });
        break;
      case K::kTorchOpCost:
        visit(log::TorchOpCostRecord{}, [&](const auto& r) { v.on_torch_op_cost(r); });
        break;
      case K::kPyFrame:
        visit(log::PyFrameRecord{}, [&](const auto& r) { v.on_py_frame(r); });
        break;
      case K::kPyStack:
        visit(log::PyStackRecord{}, [&](const auto& r) { v.on_py_stack(r); });
        break;
      case K::kPySample:
        visit(log::PySampleRecord{}, [&](const auto& r) { v.on_py_sample(r); });
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
