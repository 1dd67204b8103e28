// Record conversion (writer thread): CUPTI activity records of a completed buffer and the
// API calls our callbacks timed become event-log records (collect/activity_convert.hpp does
// the field mapping); kernel and API names are interned once each.
#include <algorithm>
#include <string>

#include "collect/activity_convert.hpp"
#include "collect/collector.hpp"
#include "collect/cupti_check.hpp"
#include "store/data_loss_kinds.hpp"

namespace gpuscope::collect::detail {

void Collector::process_buffer(const collect::CompletedBuffer& b) {
  ++m_buffers;
  CUpti_Activity* rec = nullptr;
  if (b.valid_size > 0) {
    while (GPUSCOPE_CUPTI_LOG_CALL_EXPECT(cuptiActivityGetNextRecord(b.data, b.valid_size, &rec),
                                          CUPTI_ERROR_MAX_LIMIT_REACHED) == CUPTI_SUCCESS) {
      convert_record(rec);
    }
  }
  if (b.dropped > 0) {
    m_cupti_dropped += b.dropped;
    log::DataLossRecord d{};
    d.ts_ns = now_ns();
    d.count = b.dropped;
    d.what_string = m_writer.intern(store::data_loss_name(store::DataLossKind::kCuptiDroppedRecords));
    d.context_id = b.context_id;
    d.stream_id = b.stream_id;
    m_writer.add(log::RecordKind::kDataLoss, d);
  }
}

void Collector::convert_record(const CUpti_Activity* rec) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      if (collect::is_range_profiler_kernel(k.name, m_config.kernels_mode())) break;
      // Session mode: kernel records stay on between windows (finish_session_stop).
      if (m_config.capture_range == collect::CaptureRange::kSession && !m_session_windows.keeps(k.start)) break;
      m_writer.add(log::RecordKind::kKernel, collect::to_kernel_record(k, kernel_name_id(k.name)));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      m_writer.add(log::RecordKind::kMemcpy,
                   collect::to_memcpy_record(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      m_writer.add(log::RecordKind::kMemcpy,
                   collect::to_memcpy_record(*reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      m_writer.add(log::RecordKind::kMemset,
                   collect::to_memset_record(*reinterpret_cast<const CUpti_ActivityMemset4*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      if (a.threadId == m_writer_tid.load(std::memory_order_relaxed)) break;  // our own calls
      const bool runtime = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      const auto domain = runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
      m_writer.add(log::RecordKind::kApi,
                   collect::to_api_record(a, runtime ? log::ApiDomain::kRuntime : log::ApiDomain::kDriver,
                                          api_name_id(domain, a.cbid)));
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      m_writer.add(log::RecordKind::kSync,
                   collect::to_sync_record(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto& d = *reinterpret_cast<const CUpti_ActivityDevice5*>(rec);
      if (std::find(m_devices_seen.begin(), m_devices_seen.end(), d.id) != m_devices_seen.end()) break;
      m_devices_seen.push_back(d.id);
      const std::uint64_t name = m_writer.intern(d.name != nullptr ? d.name : "");
      if (!write_device(d, name, false)) m_pending_devices.emplace_back(d, name);
      break;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto& c = *reinterpret_cast<const CUpti_ActivityContext3*>(rec);
      if (std::find(m_contexts_seen.begin(), m_contexts_seen.end(), c.contextId) != m_contexts_seen.end()) {
        break;
      }
      m_contexts_seen.push_back(c.contextId);
      m_writer.add(log::RecordKind::kContext, collect::to_context_record(c));
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      m_writer.add(log::RecordKind::kOverhead,
                   collect::to_overhead_record(*reinterpret_cast<const CUpti_ActivityOverhead3*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      m_writer.add(log::RecordKind::kMemory,
                   collect::to_memory_record(*reinterpret_cast<const CUpti_ActivityMemory4*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
      m_writer.add(log::RecordKind::kMemory,
                   collect::to_memory_record(*reinterpret_cast<const CUpti_ActivityMemoryPool3*>(rec)));
      break;
    default:
      break;  // kinds we do not enable
  }
}

void Collector::drain_api_rings() {
  std::uint64_t dropped = 0;
  m_api_rings.drain_all(
      [&](const collect::ApiCallRecord& a) {
        const auto domain = a.driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
        m_writer.add(log::RecordKind::kApi, collect::to_api_record(a, api_name_id(domain, a.cbid)));
      },
      &dropped);
  write_data_loss(store::DataLossKind::kApiRecordsDropped, dropped);
}

void Collector::write_data_loss(store::DataLossKind kind, std::uint64_t count) {
  if (count == 0) return;
  log::DataLossRecord d{};
  d.ts_ns = now_ns();
  d.count = count;
  d.what_string = m_writer.intern(store::data_loss_name(kind));
  m_writer.add(log::RecordKind::kDataLoss, d);
}

std::uint64_t Collector::kernel_name_id(const char* name) {
  if (name == nullptr) return 0;
  // Kernel names are CUPTI-owned shared strings: look up by address, and
  // confirm the text (a freed string's address could be reused).
  auto it = m_kernel_names.find(name);
  if (it != m_kernel_names.end() && it->second.text == name) return it->second.id;
  NameCacheEntry entry{m_writer.intern(name), name};
  const std::uint64_t id = entry.id;
  m_kernel_names.insert_or_assign(name, std::move(entry));
  return id;
}

std::uint64_t Collector::api_name_id(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  auto& cache = m_api_names[domain == CUPTI_CB_DOMAIN_RUNTIME_API ? 0 : 1];
  if (cbid < cache.size() && cache[cbid] != 0) return cache[cbid];
  if (cbid >= 100000) return 0;  // nonsense id: do not grow the cache
  if (cbid >= cache.size()) cache.resize(cbid + 1, 0);
  const char* name = nullptr;
  std::uint64_t id = 0;
  if (GPUSCOPE_CUPTI_LOG_CALL(cuptiGetCallbackName(domain, cbid, &name)) == CUPTI_SUCCESS && name != nullptr &&
      *name != '\0') {
    id = m_writer.intern(name);
  } else {
    id = m_writer.intern((domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime_cbid_" : "driver_cbid_") +
                         std::to_string(cbid));
  }
  cache[cbid] = id;
  return id;
}

}  // namespace gpuscope::collect::detail
