// Our own NVTX v3 injection (NVTX_INJECTION64_PATH = libgpuscope_inject.so):
// NVTX calls InitializeInjectionNvtx2 once per NVTX instance in the process
// (each library built with its own NVTX headers has one) and we fill its
// CORE/CORE2 function tables. We do not forward to libcupti's NVTX injection
// (it crashed in nvtxNameOsThreadA with CUDA 13.0: CUPTI_NOTES.md).
//
// Hot path (push/pop, start/end, mark): depth bookkeeping in thread-locals, a
// cuptiGetTimestamp() read, a message copy and a mutex-protected vector append;
// interning happens on the writer thread. Outside capture windows only the
// depth bookkeeping runs.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "collect/collector.hpp"
#include "collect/kernel_profiler.hpp"
#include "collect/nvtx_attributes.hpp"
#include "collect/nvtx_support.hpp"

namespace gpuscope::collect::detail {
namespace {

using collect::CaptureRange;
using collect::NvtxCaptureSpec;
using collect::NvtxDepths;
using collect::NvtxIncludeStack;

// Our nvtxDomainHandle_t points at a DomainInfo, our nvtxStringHandle_t at a
// collect::NvtxRegisteredString (collect/nvtx_attributes.hpp); never freed
// (handles may be used after nvtxDomainDestroy by other threads).
struct DomainInfo {
  std::uint64_t id;
  std::string name;
};

struct NvtxState {
  std::mutex mutex;  // domains and registered strings (rare calls)
  std::unordered_map<std::string, DomainInfo*> domains;
  std::unordered_map<std::string, collect::NvtxRegisteredString*> strings;  // key: domain id + '\0' + text
  std::uint64_t next_domain = 1;
  std::atomic<std::uint64_t> next_range{1};
  std::atomic<std::uint64_t> capture_range_id{0};  // start/end range that opened the window
  NvtxCaptureSpec capture;
  bool capture_enabled = false;
  NvtxCaptureSpec include;  // gpuscope kernels --nvtx-include
  bool include_enabled = false;
  std::mutex include_mutex;
  std::vector<nvtxRangeId_t> include_ranges;  // open start/end ranges that match
  std::atomic<int> include_open{0};           // their number
};
NvtxState* g_nvtx = nullptr;  // leaked on purpose: used until the last NVTX call

thread_local NvtxDepths t_depths;
thread_local std::uint32_t t_tid = 0;
thread_local int t_capture_level = -1;  // push level that opened the window on this thread
thread_local std::uint64_t t_capture_domain = 0;
thread_local NvtxIncludeStack t_include;  // open push/pop ranges matching --nvtx-include

std::uint32_t tid() noexcept {
  if (t_tid == 0) t_tid = static_cast<std::uint32_t>(::syscall(SYS_gettid));
  return t_tid;
}

std::uint64_t domain_id(nvtxDomainHandle_t d) { return d == nullptr ? 0 : reinterpret_cast<const DomainInfo*>(d)->id; }
std::string_view domain_name(nvtxDomainHandle_t d) {
  return d == nullptr ? std::string_view{} : reinterpret_cast<const DomainInfo*>(d)->name;
}

using Payload = collect::NvtxPayload;

Payload from_attributes(const nvtxEventAttributes_t* a) { return collect::decode_nvtx_attributes(a); }

void post_nvtx(Collector* c, log::NvtxEventType type, std::uint64_t domain, std::uint64_t range, Payload&& p,
               std::uint64_t ts = 0) {
  HostEvent e;
  e.kind = HostEvent::Kind::kNvtx;
  e.type = static_cast<std::uint8_t>(type);
  e.ts_ns = ts != 0 ? ts : Collector::now_ns();
  e.thread_id = tid();
  e.domain_id = domain;
  e.range_id = range;
  e.color = p.color;
  e.has_color = p.has_color ? 1 : 0;
  e.category = p.category;
  e.text = std::move(p.message);
  c->post(std::move(e));
}

bool record_nvtx(const Collector* c) { return c->config().trace_nvtx && c->recording(); }

// ---- push / pop

int push(nvtxDomainHandle_t domain, Payload&& p) noexcept {
  // One timestamp for the range and the capture window it may open, taken before
  // opening the window (which enables CUPTI kinds and takes time).
  const std::uint64_t ts = Collector::now_ns();
  const std::uint64_t dom = domain_id(domain);
  const int level = t_depths.push(dom);
  try {
    if (g_nvtx->include_enabled) t_include.push(g_nvtx->include.matches(p.message, domain_name(domain)), dom, level);
    Collector* c = Collector::active();
    if (c == nullptr) return level;
    if (g_nvtx->capture_enabled && t_capture_level < 0 && g_nvtx->capture.matches(p.message, domain_name(domain)) &&
        c->range_start(g_nvtx->capture.reason(), ts)) {
      t_capture_level = level;
      t_capture_domain = dom;
    }
    if (record_nvtx(c)) post_nvtx(c, log::NvtxEventType::kPush, dom, 0, std::move(p), ts);
  } catch (...) {
  }
  return level;
}

int pop(nvtxDomainHandle_t domain) noexcept {
  const std::uint64_t dom = domain_id(domain);
  const int level = t_depths.pop(dom);
  if (level < 0) return level;  // unbalanced pop: nothing to close
  if (g_nvtx->include_enabled) t_include.pop(dom, level);
  try {
    Collector* c = Collector::active();
    if (c == nullptr) return level;
    if (record_nvtx(c)) post_nvtx(c, log::NvtxEventType::kPop, dom, 0, Payload{});
    if (t_capture_level == level && t_capture_domain == dom) {
      t_capture_level = -1;
      c->range_stop(g_nvtx->capture.reason());
    }
  } catch (...) {
  }
  return level;
}

// ---- start / end

nvtxRangeId_t start(nvtxDomainHandle_t domain, Payload&& p) noexcept {
  const std::uint64_t ts = Collector::now_ns();  // as in push()
  const nvtxRangeId_t id = g_nvtx->next_range.fetch_add(1, std::memory_order_relaxed);
  try {
    if (g_nvtx->include_enabled && g_nvtx->include.matches(p.message, domain_name(domain))) {
      std::lock_guard lock(g_nvtx->include_mutex);
      g_nvtx->include_ranges.push_back(id);
      g_nvtx->include_open.store(static_cast<int>(g_nvtx->include_ranges.size()));
    }
    Collector* c = Collector::active();
    if (c == nullptr) return id;
    if (g_nvtx->capture_enabled && g_nvtx->capture_range_id.load() == 0 &&
        g_nvtx->capture.matches(p.message, domain_name(domain)) && c->range_start(g_nvtx->capture.reason(), ts)) {
      g_nvtx->capture_range_id.store(id);
    }
    if (record_nvtx(c)) post_nvtx(c, log::NvtxEventType::kStart, domain_id(domain), id, std::move(p), ts);
  } catch (...) {
  }
  return id;
}

void end(nvtxDomainHandle_t domain, nvtxRangeId_t id) noexcept {
  try {
    if (g_nvtx->include_enabled && g_nvtx->include_open.load() > 0) {
      std::lock_guard lock(g_nvtx->include_mutex);
      auto& open = g_nvtx->include_ranges;
      open.erase(std::remove(open.begin(), open.end(), id), open.end());
      g_nvtx->include_open.store(static_cast<int>(open.size()));
    }
    Collector* c = Collector::active();
    if (c == nullptr) return;
    if (record_nvtx(c)) post_nvtx(c, log::NvtxEventType::kEnd, domain_id(domain), id, Payload{});
    std::uint64_t expected = id;
    if (id != 0 && g_nvtx->capture_range_id.compare_exchange_strong(expected, 0)) {
      c->range_stop(g_nvtx->capture.reason());
    }
  } catch (...) {
  }
}

void mark(nvtxDomainHandle_t domain, Payload&& p) noexcept {
  try {
    Collector* c = Collector::active();
    if (c == nullptr || !record_nvtx(c)) return;
    post_nvtx(c, log::NvtxEventType::kMark, domain_id(domain), 0, std::move(p));
  } catch (...) {
  }
}

Payload text(const char* s) {
  Payload p;
  if (s != nullptr) p.message = s;
  return p;
}
Payload wtext(const wchar_t* s) {
  Payload p;
  p.message = collect::wide_to_utf8(s);
  return p;
}

// ---- the NVTX entry points (C ABI, noexcept: nothing may unwind into the app)

void NVTX_API mark_ex(const nvtxEventAttributes_t* a) noexcept {
  try {
    mark(nullptr, from_attributes(a));
  } catch (...) {
  }
}
void NVTX_API mark_a(const char* m) noexcept {
  try {
    mark(nullptr, text(m));
  } catch (...) {
  }
}
void NVTX_API mark_w(const wchar_t* m) noexcept {
  try {
    mark(nullptr, wtext(m));
  } catch (...) {
  }
}
nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t* a) noexcept {
  try {
    return start(nullptr, from_attributes(a));
  } catch (...) {
    return 0;
  }
}
nvtxRangeId_t NVTX_API range_start_a(const char* m) noexcept {
  try {
    return start(nullptr, text(m));
  } catch (...) {
    return 0;
  }
}
nvtxRangeId_t NVTX_API range_start_w(const wchar_t* m) noexcept {
  try {
    return start(nullptr, wtext(m));
  } catch (...) {
    return 0;
  }
}
void NVTX_API range_end(nvtxRangeId_t id) noexcept { end(nullptr, id); }
int NVTX_API range_push_ex(const nvtxEventAttributes_t* a) noexcept {
  try {
    return push(nullptr, from_attributes(a));
  } catch (...) {
    return t_depths.push(0);
  }
}
int NVTX_API range_push_a(const char* m) noexcept {
  try {
    return push(nullptr, text(m));
  } catch (...) {
    return t_depths.push(0);
  }
}
int NVTX_API range_push_w(const wchar_t* m) noexcept {
  try {
    return push(nullptr, wtext(m));
  } catch (...) {
    return t_depths.push(0);
  }
}
int NVTX_API range_pop() noexcept { return pop(nullptr); }

void name_os_thread(std::uint32_t thread_id, std::string name) noexcept {
  try {
    Collector* c = Collector::active();
    if (c == nullptr || !c->config().trace_nvtx) return;
    HostEvent e;
    e.kind = HostEvent::Kind::kThreadName;
    e.thread_id = thread_id;
    e.text = std::move(name);
    c->post(std::move(e));
  } catch (...) {
  }
}
void NVTX_API name_os_thread_a(std::uint32_t id, const char* name) noexcept {
  try {
    name_os_thread(id, name != nullptr ? name : "");
  } catch (...) {
  }
}
void NVTX_API name_os_thread_w(std::uint32_t id, const wchar_t* name) noexcept {
  try {
    name_os_thread(id, collect::wide_to_utf8(name));
  } catch (...) {
  }
}

void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept {
  try {
    mark(d, from_attributes(a));
  } catch (...) {
  }
}
nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept {
  try {
    return start(d, from_attributes(a));
  } catch (...) {
    return 0;
  }
}
void NVTX_API domain_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id) noexcept { end(d, id); }
int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) noexcept {
  try {
    return push(d, from_attributes(a));
  } catch (...) {
    return t_depths.push(domain_id(d));
  }
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t d) noexcept { return pop(d); }

nvtxDomainHandle_t create_domain(std::string name) noexcept {
  try {
    DomainInfo* info = nullptr;
    bool created = false;
    {
      std::lock_guard lock(g_nvtx->mutex);
      auto it = g_nvtx->domains.find(name);
      if (it != g_nvtx->domains.end()) {
        info = it->second;
      } else {
        info = new DomainInfo{g_nvtx->next_domain++, name};
        g_nvtx->domains.emplace(std::move(name), info);
        created = true;
      }
    }
    if (created) {
      if (Collector* c = Collector::active()) {
        HostEvent e;
        e.kind = HostEvent::Kind::kNvtxDomain;
        e.domain_id = info->id;
        e.text = info->name;
        c->post(std::move(e));
      }
    }
    return reinterpret_cast<nvtxDomainHandle_t>(info);
  } catch (...) {
    return nullptr;  // = the default domain
  }
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) noexcept {
  try {
    return create_domain(name != nullptr ? name : "");
  } catch (...) {
    return nullptr;
  }
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t* name) noexcept {
  try {
    return create_domain(collect::wide_to_utf8(name));
  } catch (...) {
    return nullptr;
  }
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) noexcept {}  // handles stay valid

nvtxStringHandle_t register_string(nvtxDomainHandle_t d, std::string s) noexcept {
  try {
    std::string key = std::to_string(domain_id(d));
    key.push_back('\0');
    key += s;
    std::lock_guard lock(g_nvtx->mutex);
    auto it = g_nvtx->strings.find(key);
    if (it != g_nvtx->strings.end()) return reinterpret_cast<nvtxStringHandle_t>(it->second);
    auto* r = new collect::NvtxRegisteredString{std::move(s)};
    g_nvtx->strings.emplace(std::move(key), r);
    return reinterpret_cast<nvtxStringHandle_t>(r);
  } catch (...) {
    return nullptr;
  }
}
nvtxStringHandle_t NVTX_API domain_register_string_a(nvtxDomainHandle_t d, const char* s) noexcept {
  try {
    return register_string(d, s != nullptr ? s : "");
  } catch (...) {
    return nullptr;
  }
}
nvtxStringHandle_t NVTX_API domain_register_string_w(nvtxDomainHandle_t d, const wchar_t* s) noexcept {
  try {
    return register_string(d, collect::wide_to_utf8(s));
  } catch (...) {
    return nullptr;
  }
}

template <class F>
void assign(NvtxFunctionTable table, unsigned size, unsigned cbid, F* fn) {
  if (cbid < size && table[cbid] != nullptr) {
    *table[cbid] = reinterpret_cast<NvtxFunctionPointer>(fn);
  }
}

std::once_flag g_nvtx_once;

}  // namespace
}  // namespace gpuscope::collect::detail

using namespace gpuscope::collect::detail;  // NOLINT: entry point below only

/// NVTX injection entry point (NVTX_INJECTION64_PATH). May be called once per
/// NVTX instance, before or after InitializeInjection. Returns 1 even when the
/// collector is off (the NVTX calls then stay no-ops).
namespace gpuscope::collect::detail {
bool inside_nvtx_include() noexcept {
  return g_nvtx != nullptr && g_nvtx->include_enabled && (t_include.inside() || g_nvtx->include_open.load() > 0);
}
}  // namespace gpuscope::collect::detail

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  try {
    Collector* c = Collector::get_or_init();
    if (c == nullptr || get_export_table == nullptr) return 1;
    const auto& cfg = c->config();
    const bool capture = cfg.capture_range == gpuscope::collect::CaptureRange::kNvtx;
    const bool include = !cfg.nvtx_include_message.empty();
    if (!cfg.trace_nvtx && !capture && !include) return 1;
    std::call_once(g_nvtx_once, [&] {
      auto* s = new NvtxState();
      s->capture_enabled = capture;
      s->capture.message = cfg.nvtx_capture_message;
      s->capture.domain = cfg.nvtx_capture_domain;
      s->include_enabled = include;
      s->include.message = cfg.nvtx_include_message;
      s->include.domain = cfg.nvtx_include_domain;
      g_nvtx = s;
    });

    if (const auto* version = static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
        version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
        version->SetInjectionNvtxVersion != nullptr) {
      version->SetInjectionNvtxVersion(NVTX_VERSION);
    }
    const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
        callbacks->GetModuleFunctionTable == nullptr) {
      return 1;
    }

    NvtxFunctionTable table = nullptr;
    unsigned size = 0;
    if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) && table != nullptr) {
      assign(table, size, NVTX_CBID_CORE_MarkEx, &mark_ex);
      assign(table, size, NVTX_CBID_CORE_MarkA, &mark_a);
      assign(table, size, NVTX_CBID_CORE_MarkW, &mark_w);
      assign(table, size, NVTX_CBID_CORE_RangeStartEx, &range_start_ex);
      assign(table, size, NVTX_CBID_CORE_RangeStartA, &range_start_a);
      assign(table, size, NVTX_CBID_CORE_RangeStartW, &range_start_w);
      assign(table, size, NVTX_CBID_CORE_RangeEnd, &range_end);
      assign(table, size, NVTX_CBID_CORE_RangePushEx, &range_push_ex);
      assign(table, size, NVTX_CBID_CORE_RangePushA, &range_push_a);
      assign(table, size, NVTX_CBID_CORE_RangePushW, &range_push_w);
      assign(table, size, NVTX_CBID_CORE_RangePop, &range_pop);
      assign(table, size, NVTX_CBID_CORE_NameOsThreadA, &name_os_thread_a);
      assign(table, size, NVTX_CBID_CORE_NameOsThreadW, &name_os_thread_w);
      // NameCategoryA/W: left unassigned (NVTX makes them no-ops).
    }
    table = nullptr;
    size = 0;
    if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) && table != nullptr) {
      assign(table, size, NVTX_CBID_CORE2_DomainMarkEx, &domain_mark_ex);
      assign(table, size, NVTX_CBID_CORE2_DomainRangeStartEx, &domain_range_start_ex);
      assign(table, size, NVTX_CBID_CORE2_DomainRangeEnd, &domain_range_end);
      assign(table, size, NVTX_CBID_CORE2_DomainRangePushEx, &domain_range_push_ex);
      assign(table, size, NVTX_CBID_CORE2_DomainRangePop, &domain_range_pop);
      assign(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, &domain_register_string_a);
      assign(table, size, NVTX_CBID_CORE2_DomainRegisterStringW, &domain_register_string_w);
      assign(table, size, NVTX_CBID_CORE2_DomainCreateA, &domain_create_a);
      assign(table, size, NVTX_CBID_CORE2_DomainCreateW, &domain_create_w);
      assign(table, size, NVTX_CBID_CORE2_DomainDestroy, &domain_destroy);
    }
    if (cfg.verbose) std::fprintf(stderr, "gpuscope: NVTX injection attached\n");
  } catch (...) {
  }
  return 1;
}
