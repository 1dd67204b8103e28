// A stand-in for libgpuscope_inject.so's PyTorch observer interface (collect/torch_ops_abi.hpp)
// for tests/unit/collect/test_torch_observer.py: it hands each thread a ring as the collector
// does, keeps the names and the cost in memory, and hands everything to the test as JSON
// (fake_torch_collector_dump, the rings drained in the order they were handed out), so the
// observer built against a real torch is tested without a GPU or a collector.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "collect/torch_ops_abi.hpp"

namespace {
struct Thread {
  long tid;
  std::unique_ptr<gpuscope::collect::TorchOpRing> ring;
};
std::mutex g_mutex;
std::vector<std::string> g_names;
std::unordered_map<std::string, std::uint32_t> g_ids;
std::vector<Thread> g_threads;  // every ring handed out, in order
std::atomic<bool> g_recording{true};
std::atomic<std::uint64_t> g_clock{0};
std::string g_cost = "null";
std::string g_dump;

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}
}  // namespace

extern "C" {
int gpuscope_torch_attach() noexcept { return kGpuscopeTorchAbiVersion; }
std::uint32_t gpuscope_torch_intern(const char* text, std::size_t len) noexcept {
  std::lock_guard lock(g_mutex);
  std::string s(text, len);
  const auto it = g_ids.find(s);
  if (it != g_ids.end()) return it->second;
  g_names.push_back(s);
  const auto id = static_cast<std::uint32_t>(g_names.size());
  g_ids.emplace(s, id);
  return id;
}
GpuscopeTorchChannel gpuscope_torch_open_thread() noexcept {
  std::lock_guard lock(g_mutex);
  g_threads.push_back(Thread{syscall(SYS_gettid), std::make_unique<gpuscope::collect::TorchOpRing>(1 << 16)});
  return GpuscopeTorchChannel{g_threads.back().ring.get(), &g_recording, false};
}
void gpuscope_torch_close_thread(gpuscope::collect::TorchOpRing*) noexcept {}
void gpuscope_torch_wake() noexcept {}
std::uint64_t gpuscope_torch_clock() noexcept { return g_clock.fetch_add(1) + 1; }
void gpuscope_torch_cost(double op_ns, double module_ns, const char* method) noexcept {
  std::lock_guard lock(g_mutex);
  const auto num = [](double v) { return v == v ? std::to_string(v) : std::string("null"); };
  g_cost = "[" + num(op_ns) + ", " + num(module_ns) + ", " + quoted(method ? method : "") + "]";
}
// {"names": [...], "events": [[tid, type, name, seq, op_id, shapes], ...], "cost": [...]}; names
// by id - 1; type 1 op begin, 2 end, 3 module begin.
const char* fake_torch_collector_dump() {
  std::lock_guard lock(g_mutex);
  g_dump = "{\"names\": [";
  for (std::size_t i = 0; i < g_names.size(); ++i) g_dump += (i ? ", " : "") + quoted(g_names[i]);
  g_dump += "], \"events\": [";
  bool first = true;
  for (const Thread& t : g_threads) {
    t.ring->drain([&](const gpuscope::collect::TorchOpEvent& e) {
      g_dump += (first ? "[" : ", [") + std::to_string(t.tid) + ", " + std::to_string(e.type) + ", " +
                std::to_string(e.name_id) + ", " + std::to_string(e.seq) + ", " + std::to_string(e.op_id) + ", " +
                std::to_string(e.shapes_id) + "]";
      first = false;
    });
  }
  g_dump += "], \"cost\": " + g_cost + "}";
  return g_dump.c_str();
}
}
