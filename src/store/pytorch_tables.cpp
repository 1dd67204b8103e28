#include "store/pytorch_tables.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/pytorch_ranges.hpp"
#include "core/range_sweep.hpp"
#include "store/database.hpp"
#include "store/import_state.hpp"
#include "store/row_writer.hpp"

namespace gpuscope::store {
namespace {

constexpr std::int64_t kOpen = std::numeric_limits<std::int64_t>::max();  // a range never closed

struct Op {
  std::int64_t id, pid, tid, start, end;
  core::OpRange parsed;
  std::optional<std::int64_t> parent_op, module, forward_op;
  bool backward = false;
};

struct Module {
  std::int64_t id, pid, start;
  core::ModuleRange parsed;
  std::optional<std::int64_t> parent;
};

// The nearest ancestor of `id` (through nvtx_events.parent_id) that `is` accepts.
template <class Is>
std::optional<std::int64_t> nearest(const std::unordered_map<std::int64_t, std::int64_t>& parent_of, std::int64_t id,
                                    Is&& is) {
  for (int guard = 0; guard < 100000; ++guard) {
    const auto p = parent_of.find(id);
    if (p == parent_of.end()) return std::nullopt;
    id = p->second;
    if (is(id)) return id;
  }
  return std::nullopt;  // a cycle: only a damaged log could make one
}

// torch.profiler's EventList._remove_dup_nodes: a call that is the only operator inside a
// call of the same name (aten::div.Scalar redispatching to aten::div.Tensor) is one call:
// it is dropped, its children and kernels go to the outer call. Ops are in start order per
// thread, so an outer call is merged before its inner ones (chains collapse into the top).
void merge_same_name_only_children(std::vector<Op>& ops, std::unordered_map<std::int64_t, std::size_t>& op_at) {
  std::unordered_map<std::int64_t, int> children;  // op id -> operator calls directly inside it
  for (const Op& o : ops)
    if (o.parent_op) ++children[*o.parent_op];
  std::unordered_map<std::int64_t, std::int64_t> merged_into;  // dropped op id -> the call kept
  for (Op& o : ops) {
    if (!o.parent_op) continue;
    if (const auto m = merged_into.find(*o.parent_op); m != merged_into.end()) o.parent_op = m->second;
    const Op& parent = ops[op_at.at(*o.parent_op)];
    if (parent.parsed.name != o.parsed.name || children[parent.id] != 1) continue;
    merged_into.emplace(o.id, parent.id);
    children[parent.id] = children[o.id];
  }
  if (merged_into.empty()) return;
  std::erase_if(ops, [&](const Op& o) { return merged_into.count(o.id) != 0; });
  op_at.clear();
  for (std::size_t i = 0; i < ops.size(); ++i) op_at.emplace(ops[i].id, i);
}

}  // namespace

PytorchRows write_pytorch_tables(detail::ImportState& state, Database& db) {
  PytorchRows n;
  const std::string step_mark(core::kStepMark);
  const std::string op_like = "%" + std::string(core::kOpIdField) + "%";  // an operator range's text
  const bool any = db.query_int("SELECT 1 FROM strings WHERE value = '" + step_mark +
                                "' OR value LIKE 'nn.Module: %' OR value LIKE '" + op_like + "' LIMIT 1")
                       .has_value();
  if (!any) return n;

  std::unordered_map<std::int64_t, std::int64_t> parent_of;  // nvtx id -> enclosing range id
  {
    Statement st = db.prepare("SELECT id, parent_id FROM nvtx_events WHERE parent_id IS NOT NULL");
    while (st.step()) parent_of.emplace(st.column_int(0), st.column_int(1));
  }
  std::vector<Op> ops;
  std::vector<Module> modules;
  std::map<std::int64_t, std::vector<std::int64_t>> marks;  // pid -> step mark times
  std::unordered_map<std::int64_t, std::size_t> op_at, module_at;
  {
    Statement st = db.prepare(
        "SELECT e.id, e.pid, e.tid, e.style, e.start_ns, e.end_ns, s.value FROM nvtx_events e "
        "JOIN strings s ON s.id = e.text_id WHERE e.domain_id IS NULL AND (s.value = ?1 OR s.value LIKE 'nn.Module: %' "
        "OR s.value LIKE ?2) ORDER BY e.pid, e.tid, e.start_ns, e.id");
    st.bind(1, std::string_view(step_mark));
    st.bind(2, std::string_view(op_like));
    while (st.step()) {
      const std::int64_t id = st.column_int(0), pid = st.column_int(1), tid = st.column_int(2);
      const std::string style = st.column_text(3), text = st.column_text(6);
      const std::int64_t start = st.column_int(4), end = st.is_null(5) ? kOpen : st.column_int(5);
      if (style == "Mark") {
        if (text == step_mark) marks[pid].push_back(start);
        continue;
      }
      if (auto op = core::parse_op_range(text)) {
        op_at.emplace(id, ops.size());
        ops.push_back(Op{id, pid, tid, start, end, std::move(*op), {}, {}, {}, false});
      } else if (auto m = core::parse_module_range(text)) {
        module_at.emplace(id, modules.size());
        modules.push_back(Module{id, pid, start, std::move(*m), {}});
      }
    }
  }
  const auto is_op = [&](std::int64_t id) { return op_at.count(id) != 0; };
  const auto is_module = [&](std::int64_t id) { return module_at.count(id) != 0; };
  for (Module& m : modules) m.parent = nearest(parent_of, m.id, is_module);
  for (Op& o : ops) {
    o.parent_op = nearest(parent_of, o.id, is_op);
    o.module = nearest(parent_of, o.id, is_module);
  }
  merge_same_name_only_children(ops, op_at);
  // Backward: a backward node, or anything inside one (ops are in start order per thread,
  // so a parent's flag is known before its children's).
  for (Op& o : ops) o.backward = o.parsed.backward || (o.parent_op && ops[op_at.at(*o.parent_op)].backward);

  // The forward call each backward node belongs to: the outermost forward op with the same
  // (pid, seq), the last one started before the node (sequence numbers are per process).
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::size_t>> forward_by_seq;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& o = ops[i];
    if (o.backward || !o.parsed.seq || *o.parsed.seq < 0) continue;
    const bool outer_has_seq = o.parent_op && ops[op_at.at(*o.parent_op)].parsed.seq == o.parsed.seq;
    if (!outer_has_seq) forward_by_seq[{o.pid, *o.parsed.seq}].push_back(i);
  }
  for (auto& [key, v] : forward_by_seq)
    std::sort(v.begin(), v.end(), [&](std::size_t a, std::size_t b) { return ops[a].start < ops[b].start; });
  for (Op& o : ops) {
    if (!o.backward) continue;
    const Op* parent = o.parent_op ? &ops[op_at.at(*o.parent_op)] : nullptr;
    // PyTorch records "autograd::engine::evaluate_function: XBackward0" (no seq) around
    // "XBackward0, seq = N": the first call with a seq inside a backward call names the
    // forward op; the calls inside it inherit that.
    if (parent && parent->backward && parent->forward_op) {
      o.forward_op = parent->forward_op;
    } else if (o.parsed.seq) {
      const auto it = forward_by_seq.find({o.pid, *o.parsed.seq});
      if (it != forward_by_seq.end()) {
        const std::vector<std::size_t>& v = it->second;
        auto after = std::upper_bound(v.begin(), v.end(), o.start,
                                      [&](std::int64_t t, std::size_t i) { return t < ops[i].start; });
        o.forward_op = ops[after == v.begin() ? v.front() : *(after - 1)].id;
      }
    }
    if (o.forward_op) o.module = ops[op_at.at(*o.forward_op)].module;
  }

  {
    RowWriter<rows::TorchModule> writer(db);
    for (const Module& m : modules) {
      writer.insert({.nvtx_id = m.id,
                     .pid = m.pid,
                     .path_id = state.intern(m.parsed.path),
                     .class_id = rows::id_or_null(state.intern(m.parsed.class_name)),
                     .parent_module = m.parent});
      ++n.modules;
    }
  }
  {
    RowWriter<rows::TorchOp> writer(db);
    for (const Op& o : ops) {
      writer.insert({.nvtx_id = o.id,
                     .pid = o.pid,
                     .tid = o.tid,
                     .name_id = state.intern(o.parsed.name),
                     .seq = o.parsed.seq,
                     .op_id = o.parsed.op_id,
                     .sizes = rows::text_or_null(o.parsed.sizes),
                     .is_backward = o.backward ? 1 : 0,
                     .parent_op = o.parent_op,
                     .forward_op = o.forward_op,
                     .module_id = o.module});
      ++n.ops;
    }
  }
  {
    // Step 0 starts at the process's first operator or module range before its first mark.
    std::map<std::int64_t, std::int64_t> first_range;  // pid -> earliest start
    const auto earliest = [&](std::int64_t pid, std::int64_t start) {
      auto [it, fresh] = first_range.emplace(pid, start);
      if (!fresh) it->second = std::min(it->second, start);
    };
    for (const Op& o : ops) earliest(o.pid, o.start);
    for (const Module& m : modules) earliest(m.pid, m.start);
    RowWriter<rows::TorchStep> writer(db);
    for (auto& [pid, times] : marks) {
      // A step is named by the optimizer.step() call that ends it (0 for the first call): the
      // work between mark i-1 and mark i is the program's step i. Step 0 has no mark before it,
      // so it is known only from the process's operator or module ranges.
      std::sort(times.begin(), times.end());
      const auto first = first_range.find(pid);
      if (first != first_range.end() && first->second < times.front()) {
        writer.insert({.pid = pid, .step = 0, .start_ns = first->second, .end_ns = times.front()});
        ++n.steps;
      }
      for (std::size_t i = 1; i < times.size(); ++i) {
        writer.insert({.pid = pid, .step = static_cast<std::int64_t>(i), .start_ns = times[i - 1], .end_ns = times[i]});
        ++n.steps;
      }
    }
  }
  if (!ops.empty()) {
    // Each API call that put work on the GPU (a kernel launch, a copy, a set), per thread in
    // time order, against the thread's operator ranges (properly nested: a stack holds the
    // ranges open at the call). torch.profiler charges copies and sets to operators too
    // (aten::_local_scalar_dense's device-to-host copy).
    core::RangeSweep sweep;
    for (const Op& o : ops) sweep.add({o.pid, o.tid}, {o.start, o.end, o.id});  // already in start order
    Statement st = db.prepare(
        "SELECT a.pid, a.tid, a.start_ns, a.correlation_id FROM (SELECT DISTINCT pid, correlation_id FROM (SELECT "
        "pid, correlation_id FROM kernels UNION ALL SELECT pid, correlation_id FROM memcpys UNION ALL SELECT pid, "
        "correlation_id FROM memsets)) w JOIN api_calls a ON a.pid = w.pid AND a.correlation_id = w.correlation_id "
        "ORDER BY a.pid, a.tid, a.start_ns");
    RowWriter<rows::TorchOpActivity> writer(db);
    while (st.step()) {
      const std::pair<std::int64_t, std::int64_t> t{st.column_int(0), st.column_int(1)};
      const std::optional<std::int64_t> op = sweep.innermost(t, st.column_int(2));
      if (!op) continue;
      writer.insert({.pid = t.first, .correlation_id = st.column_int(3), .op_nvtx_id = *op});
      ++n.op_activities;
    }
  }
  return n;
}

}  // namespace gpuscope::store
