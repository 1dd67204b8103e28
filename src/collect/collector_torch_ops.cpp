// The collector's side of gpuscope's PyTorch observer (collect/torch_ops_abi.hpp): the exported
// C functions (a ring for each of the program's threads, into which the observer writes its
// edges itself; the names; the cost) and the writer thread's drain into TorchOpRecords.
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "collect/collector.hpp"
#include "collect/os_reads.hpp"
#include "collect/torch_ops_abi.hpp"
#include "store/data_loss_kinds.hpp"

namespace gpuscope::collect::detail {

static_assert(collect::kTorchOpBegin == static_cast<std::uint8_t>(log::TorchOpEventType::kOpBegin) &&
                  collect::kTorchEnd == static_cast<std::uint8_t>(log::TorchOpEventType::kEnd) &&
                  collect::kTorchModuleBegin == static_cast<std::uint8_t>(log::TorchOpEventType::kModuleBegin),
              "the observer's edge types are the log's");

GpuscopeTorchChannel Collector::torch_open_thread() noexcept {
  GpuscopeTorchChannel channel{nullptr, &m_recording, m_torch_tsc};
  const std::uint32_t tid = current_tid();
  if (tid != m_writer_tid.load(std::memory_order_relaxed)) channel.ring = m_torch_rings.add_ring(tid);
  return channel;
}

void Collector::torch_close_thread(collect::TorchOpRing* ring) noexcept {
  if (ring != nullptr) ring->orphan();
}

void Collector::wake_writer() noexcept {
  m_wake.store(true, std::memory_order_release);
  m_wake_cv.notify_one();
}

std::uint32_t Collector::torch_intern(std::string_view text) noexcept {
  try {
    std::lock_guard lock(m_torch_names_mutex);
    // One copy of the text for the look-up and the map; the id is the next one if it is new.
    const auto [it, added] =
        m_torch_name_ids.try_emplace(std::string(text), static_cast<std::uint32_t>(m_torch_names.size() + 1));
    if (added) m_torch_names.emplace_back(text);  // id - 1 is its index: ids are 1-based
    return it->second;
  } catch (...) {
    return 0;
  }
}

void Collector::torch_cost(double op_ns, double module_ns, std::string method) noexcept {
  HostEvent e;
  e.kind = HostEvent::Kind::kTorchOpCost;
  e.domain_id = std::bit_cast<std::uint64_t>(op_ns);  // the two doubles ride in the id fields
  e.range_id = std::bit_cast<std::uint64_t>(module_ns);
  e.text = std::move(method);
  post(std::move(e));
}

// Writer thread: every thread's ring into TorchOpRecords, names interned into the log on first use.
void Collector::drain_torch_op_rings() {
  std::uint64_t dropped = 0;
  const auto log_string = [&](std::uint32_t id) -> std::uint64_t {
    if (id == 0) return 0;
    if (id >= m_torch_name_strings.size()) m_torch_name_strings.resize(id + 1, 0);
    std::uint64_t& s = m_torch_name_strings[id];
    if (s == 0) {
      std::string text;
      {
        std::lock_guard lock(m_torch_names_mutex);
        if (id <= m_torch_names.size()) text = m_torch_names[id - 1];
      }
      s = m_writer.intern(text);
    }
    return s;
  };
  m_torch_drained.clear();
  m_torch_rings.drain_all_with_ring(
      [&](const collect::TorchOpRing& ring, const collect::TorchOpEvent& e) {
        log::TorchOpRecord r{};
        r.ts_ns = e.ts;
        r.seq = e.seq;
        r.op_id = e.op_id;
        r.name_string = log_string(e.name_id);
        r.shapes_string = log_string(e.shapes_id);
        r.thread_id = ring.thread_id;
        r.type = e.type;
        m_torch_drained.push_back(r);
      },
      &dropped);
  if (m_torch_tsc) {
    // Every edge drained was stamped after the last anchor (give or take a drain's length:
    // the same line extended) and before this one. Anchored on CUPTI's clock, the trace's.
    const collect::TscAnchor now = collect::take_tsc_anchor([] { return now_ns(); });
    const collect::TscSpan span(m_torch_anchor, now, m_torch_ns_per_tick);
    for (log::TorchOpRecord& r : m_torch_drained) r.ts_ns = span.to_ns(r.ts_ns);
    m_torch_anchor = now;
    m_torch_ns_per_tick = span.ns_per_tick();
  }
  for (const log::TorchOpRecord& r : m_torch_drained) m_writer.add(log::RecordKind::kTorchOp, r);
  write_data_loss(store::DataLossKind::kTorchOpRecordsDropped, dropped);
}

}  // namespace gpuscope::collect::detail

using gpuscope::collect::detail::Collector;

extern "C" {

__attribute__((visibility("default"))) int gpuscope_torch_attach(void) noexcept {
  return Collector::get_or_init() != nullptr ? kGpuscopeTorchAbiVersion : 0;
}

__attribute__((visibility("default"))) std::uint32_t gpuscope_torch_intern(const char* text, std::size_t len) noexcept {
  Collector* c = Collector::active();
  if (c == nullptr || text == nullptr) return 0;
  return c->torch_intern(std::string_view(text, len));
}

__attribute__((visibility("default"))) GpuscopeTorchChannel gpuscope_torch_open_thread(void) noexcept {
  if (Collector* c = Collector::active()) return c->torch_open_thread();
  return GpuscopeTorchChannel{nullptr, nullptr, false};
}

__attribute__((visibility("default"))) void gpuscope_torch_close_thread(gpuscope::collect::TorchOpRing* ring) noexcept {
  // After the collector stopped (exit, a forked child) the ring is left as it is.
  if (Collector* c = Collector::active()) c->torch_close_thread(ring);
}

__attribute__((visibility("default"))) void gpuscope_torch_wake(void) noexcept {
  if (Collector* c = Collector::active()) c->wake_writer();
}

__attribute__((visibility("default"))) std::uint64_t gpuscope_torch_clock(void) noexcept {
  const Collector* c = Collector::active();
  return c != nullptr ? c->trace_clock_ns() : 0;
}

__attribute__((visibility("default"))) void gpuscope_torch_cost(double op_ns, double module_ns,
                                                                const char* method) noexcept {
  try {
    if (Collector* c = Collector::active()) c->torch_cost(op_ns, module_ns, method != nullptr ? method : "");
  } catch (...) {
  }
}

}  // extern "C"
