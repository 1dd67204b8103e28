// A stand-in for libgpuscope_inject.so's PyTorch observer interface (collect/torch_ops_abi.hpp)
// for tests/unit/collect/test_torch_observer.py: it keeps every call in memory and hands them
// to the test as JSON (fake_torch_collector_dump), so the observer built against a real torch is
// tested without a GPU or a collector.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {
struct Event {
  long tid;
  int type;  // 1 op begin, 2 end, 3 module begin
  std::uint32_t name;
  std::int64_t seq;
  std::uint64_t op_id;
  std::uint32_t shapes;
};
std::mutex g_mutex;
std::vector<std::string> g_names;
std::unordered_map<std::string, std::uint32_t> g_ids;
std::vector<Event> g_events;
std::string g_cost = "null";
std::string g_dump;

void add(int type, std::uint32_t name, std::int64_t seq, std::uint64_t op_id, std::uint32_t shapes) {
  const long tid = syscall(SYS_gettid);
  std::lock_guard lock(g_mutex);
  g_events.push_back(Event{tid, type, name, seq, op_id, shapes});
}

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
int gpuscope_torch_attach() { return 1; }
std::uint32_t gpuscope_torch_intern(const char* text, std::size_t len) {
  std::lock_guard lock(g_mutex);
  std::string s(text, len);
  const auto it = g_ids.find(s);
  if (it != g_ids.end()) return it->second;
  g_names.push_back(s);
  const auto id = static_cast<std::uint32_t>(g_names.size());
  g_ids.emplace(s, id);
  return id;
}
void gpuscope_torch_op_begin(std::uint32_t name, std::int64_t seq, std::uint64_t op_id, std::uint32_t shapes) {
  add(1, name, seq, op_id, shapes);
}
void gpuscope_torch_module_begin(std::uint32_t name) { add(3, name, 0, 0, 0); }
void gpuscope_torch_end() { add(2, 0, 0, 0, 0); }
void gpuscope_torch_cost(double op_ns, double module_ns, const char* method) {
  std::lock_guard lock(g_mutex);
  const auto num = [](double v) { return v == v ? std::to_string(v) : std::string("null"); };
  g_cost = "[" + num(op_ns) + ", " + num(module_ns) + ", " + quoted(method ? method : "") + "]";
}
// {"names": [...], "events": [[tid, type, name, seq, op_id, shapes], ...], "cost": [...]}; names by id - 1.
const char* fake_torch_collector_dump() {
  std::lock_guard lock(g_mutex);
  g_dump = "{\"names\": [";
  for (std::size_t i = 0; i < g_names.size(); ++i) g_dump += (i ? ", " : "") + quoted(g_names[i]);
  g_dump += "], \"events\": [";
  for (std::size_t i = 0; i < g_events.size(); ++i) {
    const Event& e = g_events[i];
    g_dump += (i ? ", [" : "[") + std::to_string(e.tid) + ", " + std::to_string(e.type) + ", " +
              std::to_string(e.name) + ", " + std::to_string(e.seq) + ", " + std::to_string(e.op_id) + ", " +
              std::to_string(e.shapes) + "]";
  }
  g_dump += "], \"cost\": " + g_cost + "}";
  return g_dump.c_str();
}
}
