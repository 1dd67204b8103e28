#include "analyze/timeline/overview_builder.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyze/timeline/overview_selection.hpp"
#include "core/saturating.hpp"
#include "core/timeline_labels.hpp"

namespace gpuscope::analyze::detail::overview {
namespace {

using core::OverviewItemKind;
using core::OverviewLaneKind;

// A lane while the events are read: identity, busy time per bin, the union being built.
struct LaneState {
  OverviewLaneKind kind = OverviewLaneKind::cuda_api;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::int64_t gpu_index = -1;
  std::int64_t stream_id = -1;
  std::int64_t events = 0;
  std::int64_t busy_ns = 0;
  std::vector<double> busy;  // ns per bin
  bool open = false;         // [cur_start, cur_end) is the union being extended
  std::int64_t cur_start = 0;
  std::int64_t cur_end = 0;
};

class Builder {
 public:
  Builder(const core::TimelineHeader& header, const core::TimelineTracks& tracks, const Counts& counts,
          const TimelineOverviewOptions& options)
      : m_header(header), m_tracks(tracks), m_counts(counts), m_options(options) {
    m_base = header.base_ns;
    if (counts.first <= counts.last) {
      m_lo = core::sat_sub(counts.first, m_base);
      m_span = std::max<std::int64_t>(1, core::sat_sub(counts.last, counts.first));
    }
    for (const core::TimelineStream& s : tracks.gpu_streams) m_gpu_pids[s.gpu_index].insert(s.pid);
    for (const core::TimelineProcess& p : header.processes) m_process_end[p.pid] = p.end_ns;
    // Lanes, at most: every stream, and per CPU thread an API and an NVTX lane.
    const auto cpu = static_cast<std::int64_t>(tracks.cpu_threads.size());
    const auto gpu = static_cast<std::int64_t>(tracks.gpu_streams.size());
    const std::int64_t lanes = gpu + (counts.api > 0 ? cpu : 0) + (counts.nvtx > 0 ? cpu : 0);
    std::int64_t bins = std::max<std::int64_t>(options.max_bins, 1);
    while (bins > 256 && lanes * bins > options.density_budget) bins /= 2;
    m_bins = static_cast<std::int32_t>(bins);
    m_bin_ns = static_cast<double>(m_span) / static_cast<double>(m_bins);
    // The cap shared in proportion to the events; NVTX ranges (few, long, what a person
    // marked) get at least a fifth when they have that many.
    const std::int64_t cap = std::max<std::int64_t>(options.item_cap, 0);
    std::int64_t nvtx_cap = counts.nvtx;
    std::int64_t gpu_cap = counts.gpu;
    std::int64_t api_cap = counts.api;
    if (counts.total() > cap) {
      nvtx_cap = std::min(counts.nvtx, std::max(share(cap, counts.nvtx, counts.total()), cap / 5));
      const std::int64_t rest = cap - nvtx_cap;
      gpu_cap = share(rest, counts.gpu, counts.gpu + counts.api);
      api_cap = rest - gpu_cap;
    }
    m_api_cap = api_cap;
    m_gpu_cap = gpu_cap;
    m_nvtx_cap = nvtx_cap;
    m_gpu_sel.emplace(m_names, counts.gpu, gpu_cap, std::max<std::int64_t>(gpu, 1), m_lo, m_span);
    m_api_sel.emplace(m_names, counts.api, api_cap, std::max<std::int64_t>(cpu, 1), m_lo, m_span);
    m_nvtx_sel.emplace(m_names, counts.nvtx, nvtx_cap, std::max<std::int64_t>(cpu, 1), m_lo, m_span);
  }

  core::TimelineOverview build(core::TimelineEvents& events) {
    events.kernels([this](const core::KernelEvent& e) {
      Held h = gpu_held(e, OverviewItemKind::kernel);
      h.config = {e.grid, e.block};
      m_gpu_sel->offer(h, e.name);
    });
    flush_all();
    events.memcpys([this](const core::MemcpyEvent& e) {
      Held h = gpu_held(e, OverviewItemKind::memcpy);
      h.item.bytes = e.bytes;
      m_gpu_sel->offer(h, core::memcpy_name(e));
    });
    flush_all();
    events.memsets([this](const core::MemsetEvent& e) {
      Held h = gpu_held(e, OverviewItemKind::memset);
      h.item.bytes = e.bytes;
      m_gpu_sel->offer(h, core::memset_name(e));
    });
    flush_all();
    m_gpu_items = m_gpu_sel->take(m_gpu_cap);
    // The API calls that launched included GPU work: kept before any other call.
    std::vector<std::pair<std::int64_t, std::int64_t>> launches;  // (pid, correlation id), sorted
    for (const Held& h : m_gpu_items)
      if (h.item.correlation_id != 0) launches.emplace_back(h.pid, h.item.correlation_id);
    std::sort(launches.begin(), launches.end());
    m_launch_items.reserve(std::min(launches.size(), static_cast<std::size_t>(std::max<std::int64_t>(m_api_cap, 0))));
    events.api_calls([this, &launches](const core::ApiCallEvent& e) {
      Held h = held(cpu_lane(OverviewLaneKind::cuda_api, e.pid, e.tid), OverviewItemKind::api_call, e.start_ns,
                    e.end_ns, e.pid);
      h.item.correlation_id = e.correlation_id;
      if (e.launched_traced_gpu_work && static_cast<std::int64_t>(m_launch_items.size()) < m_api_cap &&
          std::binary_search(launches.begin(), launches.end(), std::pair{e.pid, e.correlation_id})) {
        h.item.name = m_names.acquire(e.name);
        m_launch_items.push_back(std::move(h));
        return;
      }
      m_api_sel->offer(h, e.name);
    });
    flush_all();
    events.nvtx([this](const core::NvtxEvent& e) {
      const std::int32_t lane = cpu_lane(OverviewLaneKind::nvtx, e.pid, e.tid);
      if (e.is_mark()) {
        Held h = held(lane, OverviewItemKind::nvtx_mark, e.start_ns, e.start_ns, e.pid, false);
        m_nvtx_sel->offer(h, e.text);
        return;
      }
      std::int64_t end = e.end_ns.value_or(0);
      if (!e.end_ns) {
        const auto it = m_process_end.find(e.pid);
        end = (it != m_process_end.end() && it->second) ? *it->second : m_tracks.end_ns;
      }
      m_nvtx_sel->offer(held(lane, OverviewItemKind::nvtx_range, e.start_ns, end, e.pid), e.text);
    });
    flush_all();
    return finish();
  }

 private:
  static std::int64_t share(std::int64_t cap, std::int64_t part, std::int64_t whole) {
    if (whole <= 0) return 0;
    return static_cast<std::int64_t>(static_cast<double>(cap) * static_cast<double>(part) / static_cast<double>(whole));
  }

  Held gpu_held(const core::GpuEventBase& e, OverviewItemKind kind) {
    Held h = held(gpu_lane(e.gpu_index, e.pid, e.stream_id), kind, e.start_ns, e.end_ns, e.pid);
    h.item.correlation_id = e.correlation_id;
    return h;
  }

  // A candidate item for an event on `lane`, counted there and added to its density.
  Held held(std::int32_t lane, OverviewItemKind kind, std::int64_t start_abs, std::int64_t end_abs, std::int64_t pid,
            bool busy = true) {
    const std::int64_t start = std::clamp<std::int64_t>(core::sat_sub(start_abs, m_base), m_lo, m_lo + m_span);
    const std::int64_t end = std::clamp<std::int64_t>(core::sat_sub(end_abs, m_base), start, m_lo + m_span);
    LaneState& l = m_lanes[static_cast<std::size_t>(lane)];
    ++l.events;
    ++m_total;
    if (busy && end > start) {
      if (l.open && start <= l.cur_end) {
        l.cur_end = std::max(l.cur_end, end);
      } else {
        flush(l);
        l.open = true;
        l.cur_start = start;
        l.cur_end = end;
      }
    }
    Held h;
    h.item.lane = lane;
    h.item.kind = kind;
    h.item.start_ns = start;
    h.item.duration_ns = end - start;
    h.pid = pid;
    h.serial = m_serial++;
    return h;
  }

  // Adds the lane's open union interval to its bins.
  void flush(LaneState& l) {
    if (!l.open) return;
    l.open = false;
    const std::int64_t s = l.cur_start - m_lo;
    const std::int64_t e = l.cur_end - m_lo;
    l.busy_ns += e - s;
    if (l.busy.empty()) l.busy.assign(static_cast<std::size_t>(m_bins), 0.0);
    const auto bin_of = [this](std::int64_t t) {
      return std::min<std::int64_t>(m_bins - 1, static_cast<std::int64_t>(static_cast<double>(t) / m_bin_ns));
    };
    const std::int64_t b0 = bin_of(s);
    const std::int64_t b1 = bin_of(e);
    if (b0 == b1) {
      l.busy[static_cast<std::size_t>(b0)] += static_cast<double>(e - s);
      return;
    }
    l.busy[static_cast<std::size_t>(b0)] += static_cast<double>(b0 + 1) * m_bin_ns - static_cast<double>(s);
    for (std::int64_t b = b0 + 1; b < b1; ++b) l.busy[static_cast<std::size_t>(b)] += m_bin_ns;
    l.busy[static_cast<std::size_t>(b1)] += static_cast<double>(e) - static_cast<double>(b1) * m_bin_ns;
  }

  void flush_all() {
    for (LaneState& l : m_lanes) flush(l);
  }

  std::int32_t gpu_lane(std::int64_t gpu, std::int64_t pid, std::int64_t stream) {
    const std::tuple<std::int64_t, std::int64_t, std::int64_t> key{gpu, pid, stream};
    if (m_last_gpu_lane >= 0 && key == m_last_gpu_key) return m_last_gpu_lane;
    auto it = m_gpu_lanes.find(key);
    if (it == m_gpu_lanes.end()) {
      LaneState l;
      l.kind = OverviewLaneKind::gpu_stream;
      l.pid = pid;
      l.gpu_index = gpu;
      l.stream_id = stream;
      it = m_gpu_lanes.emplace(key, new_lane(std::move(l))).first;
    }
    m_last_gpu_key = key;
    m_last_gpu_lane = it->second;
    return it->second;
  }

  std::int32_t cpu_lane(OverviewLaneKind kind, std::int64_t pid, std::int64_t tid) {
    const std::tuple<int, std::int64_t, std::int64_t> key{static_cast<int>(kind), pid, tid};
    if (m_last_cpu_lane >= 0 && key == m_last_cpu_key) return m_last_cpu_lane;
    auto it = m_cpu_lanes.find(key);
    if (it == m_cpu_lanes.end()) {
      LaneState l;
      l.kind = kind;
      l.pid = pid;
      l.tid = tid;
      it = m_cpu_lanes.emplace(key, new_lane(std::move(l))).first;
    }
    m_last_cpu_key = key;
    m_last_cpu_lane = it->second;
    return it->second;
  }

  std::int32_t new_lane(LaneState l) {
    m_lanes.push_back(std::move(l));
    return static_cast<std::int32_t>(m_lanes.size() - 1);
  }

  core::TimelineOverview finish() {
    core::TimelineOverview out;
    out.base_ns = m_base;
    out.end_ns = std::max(m_tracks.end_ns, m_base);
    out.range_begin_ns = m_lo;
    out.range_end_ns = m_lo + m_span;
    out.item_cap = std::max<std::int64_t>(m_options.item_cap, 0);
    out.total_events = m_total;

    const std::vector<std::int32_t> new_index = add_lanes(out);
    add_items(out, new_index);
    out.selection = static_cast<std::int64_t>(out.items.size()) < out.total_events ? "longest and spread" : "all";
    return out;
  }

  // Lanes in drawing order: processes by pid (main thread first, then by tid; API, then
  // NVTX), then GPUs by index (streams by pid, then stream id). Returns each lane's new index.
  std::vector<std::int32_t> add_lanes(core::TimelineOverview& out) {
    std::vector<std::int32_t> order(m_lanes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
    const auto sort_key = [this](std::int32_t i) {
      const LaneState& l = m_lanes[static_cast<std::size_t>(i)];
      const bool gpu = l.kind == OverviewLaneKind::gpu_stream;
      return std::tuple{gpu, gpu ? l.gpu_index : l.pid, gpu ? l.pid : (l.tid == l.pid ? 0 : 1),
                        gpu ? l.stream_id : l.tid, static_cast<int>(l.kind)};
    };
    std::sort(order.begin(), order.end(),
              [&sort_key](std::int32_t a, std::int32_t b) { return sort_key(a) < sort_key(b); });
    std::vector<std::int32_t> new_index(m_lanes.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      new_index[static_cast<std::size_t>(order[i])] = static_cast<std::int32_t>(i);
    out.bins = m_lanes.empty() ? 0 : m_bins;
    for (std::int32_t old : order) {
      LaneState& l = m_lanes[static_cast<std::size_t>(old)];
      const bool gpu = l.kind == OverviewLaneKind::gpu_stream;
      const std::int64_t group_id = gpu ? l.gpu_index : l.pid;
      if (out.groups.empty() || out.groups.back().is_gpu != gpu || out.groups.back().id != group_id)
        out.groups.push_back(group(gpu, group_id));
      core::OverviewLane lane;
      lane.group = static_cast<std::int32_t>(out.groups.size() - 1);
      lane.kind = l.kind;
      lane.pid = l.pid;
      lane.tid = gpu ? 0 : l.tid;
      lane.gpu_index = l.gpu_index;
      lane.stream_id = l.stream_id;
      lane.events = l.events;
      lane.busy_ns = l.busy_ns;
      if (gpu) {
        const auto it = m_gpu_pids.find(l.gpu_index);
        lane.label = core::stream_label(l.stream_id, l.pid, it != m_gpu_pids.end() && it->second.size() > 1);
      } else {
        lane.label = core::thread_label(m_header, l.pid, l.tid) +
                     (l.kind == OverviewLaneKind::nvtx ? " \u00b7 NVTX" : " \u00b7 CUDA API");
      }
      lane.density.assign(static_cast<std::size_t>(m_bins), 0);
      for (std::size_t b = 0; b < l.busy.size(); ++b) {
        const double f = std::clamp(l.busy[b] / m_bin_ns, 0.0, 1.0);
        lane.density[b] = static_cast<std::uint8_t>(std::lround(f * 255.0));
      }
      out.lanes.push_back(std::move(lane));
    }
    return new_index;
  }

  // Items: the GPU work, its launches, then the other API calls and NVTX; their lanes
  // renumbered, their names and launch configurations each once, in order of first use.
  void add_items(core::TimelineOverview& out, const std::vector<std::int32_t>& new_index) {
    std::vector<Held> all = std::move(m_gpu_items);
    all.reserve(all.size() +
                static_cast<std::size_t>(std::max<std::int64_t>(m_api_cap, 0) + std::max<std::int64_t>(m_nvtx_cap, 0)));
    for (Held& h : m_launch_items) all.push_back(std::move(h));
    for (Held& h : m_api_sel->take(m_api_cap - static_cast<std::int64_t>(m_launch_items.size())))
      all.push_back(std::move(h));
    for (Held& h : m_nvtx_sel->take(m_nvtx_cap)) all.push_back(std::move(h));
    for (Held& h : all) h.item.lane = new_index[static_cast<std::size_t>(h.item.lane)];
    std::sort(all.begin(), all.end(), [](const Held& a, const Held& b) {
      // Longer first at one start: an enclosing NVTX range before the ranges it holds.
      return std::tuple{a.item.lane, a.item.start_ns, static_cast<int>(a.item.kind), -a.item.duration_ns, a.serial} <
             std::tuple{b.item.lane, b.item.start_ns, static_cast<int>(b.item.kind), -b.item.duration_ns, b.serial};
    });
    std::unordered_map<std::int32_t, std::int32_t> name_index;
    std::map<std::pair<std::array<std::int64_t, 3>, std::array<std::int64_t, 3>>, std::int32_t> config_index;
    out.items.reserve(all.size());
    for (Held& h : all) {
      auto [it, added] = name_index.try_emplace(h.item.name, static_cast<std::int32_t>(out.names.size()));
      if (added) out.names.push_back(m_names.name(h.item.name));
      h.item.name = it->second;
      if (h.item.kind == OverviewItemKind::kernel) {
        auto [c, new_config] = config_index.try_emplace({h.config.grid, h.config.block},
                                                        static_cast<std::int32_t>(out.launch_configs.size()));
        if (new_config) out.launch_configs.push_back(h.config);
        h.item.launch_config = c->second;
      }
      out.items.push_back(h.item);
    }
  }

  core::OverviewGroup group(bool gpu, std::int64_t id) const {
    core::OverviewGroup g;
    g.is_gpu = gpu;
    g.id = id;
    if (gpu) {
      g.label = "GPU " + std::to_string(id);
      for (const core::TimelineDevice& d : m_header.devices)
        if (d.gpu_index == id && g.detail.empty()) g.detail = d.name;
    } else {
      g.label = core::process_label(m_header, id);
      for (const core::TimelineProcess& p : m_header.processes)
        if (p.pid == id) g.detail = p.cmdline;
    }
    return g;
  }

  const core::TimelineHeader& m_header;
  const core::TimelineTracks& m_tracks;
  Counts m_counts;
  const TimelineOverviewOptions& m_options;
  std::int64_t m_base = 0;
  std::int64_t m_lo = 0;  // the drawn range: [m_lo, m_lo + m_span), ns relative to m_base
  std::int64_t m_span = 1;
  std::int32_t m_bins = 1;
  double m_bin_ns = 1;
  std::int64_t m_total = 0;
  std::uint64_t m_serial = 0;
  std::int64_t m_api_cap = 0;
  std::int64_t m_gpu_cap = 0;
  std::int64_t m_nvtx_cap = 0;
  NameTable m_names;
  std::optional<Selector> m_gpu_sel;
  std::optional<Selector> m_api_sel;
  std::optional<Selector> m_nvtx_sel;
  std::vector<Held> m_gpu_items;
  std::vector<Held> m_launch_items;
  std::vector<LaneState> m_lanes;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::int32_t> m_gpu_lanes;
  std::map<std::tuple<int, std::int64_t, std::int64_t>, std::int32_t> m_cpu_lanes;
  std::tuple<std::int64_t, std::int64_t, std::int64_t> m_last_gpu_key{};
  std::int32_t m_last_gpu_lane = -1;
  std::tuple<int, std::int64_t, std::int64_t> m_last_cpu_key{};
  std::int32_t m_last_cpu_lane = -1;
  std::map<std::int64_t, std::set<std::int64_t>> m_gpu_pids;
  std::map<std::int64_t, std::optional<std::int64_t>> m_process_end;
};

}  // namespace

core::TimelineOverview build_overview(const core::TimelineHeader& header, const core::TimelineTracks& tracks,
                                      const Counts& counts, const TimelineOverviewOptions& options,
                                      core::TimelineEvents& events) {
  return Builder(header, tracks, counts, options).build(events);
}

}  // namespace gpuscope::analyze::detail::overview
