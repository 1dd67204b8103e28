// gpuscope's PyTorch operator observer (`gpuscope trace --pytorch=ops[,modules,shapes]`): a
// global RecordFunction callback that writes each operator call's edges into the calling
// thread's ring from gpuscope's collector (src/collect/torch_ops_abi.hpp: the ring asked for once
// per thread, then a time-stamp counter read and a ring write per edge, no call into the
// collector): an interned name id, the sequence number, the call's id (op_id: a count of the
// thread's own, not PyTorch's RecordFunction handle, which costs a global atomic a call) and,
// with shapes, an interned shapes id. No text is formatted or copied per call (PyTorch's NVTX
// observer formats "NAME, seq = N, op_id = M" for every call); the importer makes the same text
// back from the records (core::op_range_text).
//
// Built on first use against the program's own torch by sitecustomize.py
// (torch.utils.cpp_extension, cached per torch version, C++ ABI, Python version, the hash of this
// file, the two headers it shares with the collector, module_table.hpp and name_cache.hpp); a plain CPython module (no
// pybind11) so that it compiles in seconds and a module range costs one C call per edge. Nothing here throws into
// PyTorch: a callback that cannot record records nothing.
//
// Python API (module gpuscope_torch_ops):
//   attach(path) -> int          dlopen the collector (CUDA_INJECTION64_PATH) and resolve the ABI;
//                                returns the ABI version; raises RuntimeError when it cannot
//   install_ops(shapes: bool)    adds the global callback (all RecordFunction scopes, as PyTorch's
//                                NVTX observer: operators, backward nodes, user scopes)
//   uninstall_ops()              removes it (at exit)
//   install_floor(), uninstall_floor()  a global callback that does nothing: the cost floor of
//                                any RecordFunction observer (validation/observer_cost.py)
//   intern(text) -> int          a module range's text -> its id
//   module_begin(id), end()      a module range's edges (the nn.Module.__call__ wrapper)
//   scratch_mode(on)             this thread's callbacks write into a scratch sink (calibration:
//                                the same work, no trace rows) instead of the collector
//   scratch_count() -> int       edges written into this thread's scratch sink so far
//   scratch_begin(id), scratch_end()  the module edges' work into the scratch sink (calibration)
//   cost(op_ns, module_ns, method)    stores the measured costs in the trace
//   module_caller(call, slow, scratch) -> caller   the module wrapper's per-call work in C: caller(
//                                module, *args, **kwargs) records the module's range around
//                                call(module, ...) when remember(module, id) named it, else calls slow
//   remember(module, id), known_modules()  the callers' table (module_table.hpp: weak
//                                references; entries go with their modules)
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <ATen/record_function.h>
#include <torch/version.h>

#include "module_table.hpp"   // shipped beside this file
#include "name_cache.hpp"     // shipped beside this file
#include "torch_ops_abi.hpp"  // and spsc_ring.hpp: shipped beside this file (sitecustomize.py's -I)

#include <atomic>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace {

struct Abi {
  decltype(&gpuscope_torch_attach) attach = nullptr;
  decltype(&gpuscope_torch_intern) intern = nullptr;
  decltype(&gpuscope_torch_open_thread) open_thread = nullptr;
  decltype(&gpuscope_torch_close_thread) close_thread = nullptr;
  decltype(&gpuscope_torch_wake) wake = nullptr;
  decltype(&gpuscope_torch_clock) clock = nullptr;
  decltype(&gpuscope_torch_cost) cost = nullptr;
};
Abi g_abi;
bool g_shapes = false;
bool g_installed = false;
at::CallbackHandle g_handle = 0;

// Calibration: the callback's work goes into this thread's scratch sink instead of the
// collector (a timestamp read as the collector takes it, and a record store; no trace rows).
struct ScratchRecord {
  std::uint64_t ts;
  std::int64_t seq;
  std::uint64_t op_id;
  std::uint32_t name_id, shapes_id;
};

// Everything a thread's callbacks touch, on the heap, found through one pointer-sized
// thread_local (state()).
struct ThreadState {
  // The thread's ring from the collector, asked for on its first edge; handed back at its end.
  GpuscopeTorchChannel channel{nullptr, nullptr, false};
  bool opened = false;
  bool scratch = false;
  unsigned sink_at = 0;
  // This thread's operator call ids (op_id): (thread number << 40) + count. PyTorch's own
  // RecordFunction handle would cost every call a global atomic increment (needsIds).
  std::uint64_t next_op_id = 0;
  ScratchRecord sink[64];
  // Operator names -> ids (name_cache.hpp). Calibration (scratch mode) interns for real too: its
  // names are plain operator names, never a wrong id.
  gpuscope::torch_observer::NameCache names;
  std::unordered_map<std::string, std::uint32_t> shapes;

  ThreadState() = default;
  ThreadState(const ThreadState&) = delete;
  ThreadState& operator=(const ThreadState&) = delete;
  ~ThreadState() {
    if (channel.ring != nullptr && g_abi.close_thread != nullptr) g_abi.close_thread(channel.ring);
    channel.ring = nullptr;
  }
};
std::atomic<std::uint64_t> g_threads{0};

// The thread's state through a plain pointer: a thread_local of a trivial type, constant-initialized,
// is read with no guard and no initialization call, and one so small fits the static TLS block that
// glibc keeps for dlopen'ed modules, where sitecustomize.py's -mtls-dialect=gnu2 (TLS descriptors)
// makes the read a load from the thread pointer instead of a __tls_get_addr call. On CPU-machine
// profiles those calls were, after the time-stamp read, the callbacks' largest part. The owner,
// touched once per thread, deletes the state at the thread's end (closing its ring); an edge after
// that (another thread_local's destructor running an operator) records nothing.
thread_local ThreadState* t_state = nullptr;
thread_local bool t_ended = false;
struct ThreadOwner {
  ThreadState* state = nullptr;
  ThreadOwner() = default;
  ThreadOwner(const ThreadOwner&) = delete;
  ThreadOwner& operator=(const ThreadOwner&) = delete;
  ~ThreadOwner() {
    t_state = nullptr;
    t_ended = true;
    delete state;
  }
};
thread_local ThreadOwner t_owner;

[[gnu::noinline]] ThreadState* new_state() {
  if (t_ended) return nullptr;
  t_owner.state = new (std::nothrow) ThreadState;
  t_state = t_owner.state;
  return t_state;
}

// This thread's state; nullptr once the thread has ended (or when none could be made).
inline ThreadState* state() {
  ThreadState* s = t_state;
  return __builtin_expect(s != nullptr, 1) ? s : new_state();
}

// An edge's timestamp: the TSC where the collector converts it (x86-64, channel.tsc), else the
// trace clock through the collector.
inline std::uint64_t stamp(const ThreadState& t) {
#if defined(__x86_64__)
  if (t.channel.tsc) return __rdtsc();
#endif
  return g_abi.clock();
}

// The thread's channel, asked for on its first edge (calibration's scratch edges too, so that
// they are stamped as the real ones).
inline const GpuscopeTorchChannel& channel(ThreadState& t) {
  if (!t.opened) {
    t.opened = true;
    t.channel = g_abi.open_thread();
  }
  return t.channel;
}

// One edge into the thread's ring (while the collector records), stamped now.
inline void edge(ThreadState& t, std::uint8_t type, std::uint32_t name_id = 0, std::int64_t seq = 0,
                 std::uint64_t op_id = 0, std::uint32_t shapes_id = 0) {
  channel(t);
  if (t.channel.ring == nullptr || !t.channel.recording->load(std::memory_order_relaxed)) return;
  bool wake = false;
  t.channel.ring->push(gpuscope::collect::TorchOpEvent{stamp(t), seq, op_id, name_id, shapes_id, type}, &wake);
  if (wake) g_abi.wake();
}

void scratch(ThreadState& t, std::uint32_t name_id, std::int64_t seq, std::uint64_t op_id, std::uint32_t shapes_id) {
  channel(t);
  t.sink[t.sink_at++ & 63] = ScratchRecord{stamp(t), seq, op_id, name_id, shapes_id};
}

std::uint64_t next_op_id(ThreadState& t) {
  if (t.next_op_id == 0) t.next_op_id = (g_threads.fetch_add(1, std::memory_order_relaxed) + 1) << 40;
  return ++t.next_op_id;
}

// The input shapes as PyTorch's NVTX observer writes them (torch/csrc/profiler/util.cpp:
// inputSizes + shapesToStr), interned per distinct text.
std::uint32_t shapes_id(ThreadState& t, const at::RecordFunction& fn) {
  std::string text = "[";
  bool first = true;
  const auto add = [&](const c10::IValue& v) {
    if (!first) text += ", ";
    first = false;
    text += '[';
    if (v.isTensor() && v.toTensor().defined()) {
      bool d_first = true;
      for (const std::int64_t d : v.toTensor().sizes()) {
        if (!d_first) text += ", ";
        d_first = false;
        text += std::to_string(d);
      }
    }
    text += ']';
  };
  for (const c10::IValue& input : fn.inputs()) {
#if TORCH_VERSION_MAJOR >= 2
    if (input.isList()) {  // inputSizes(fn, true): a list's tensors flattened in
      bool any = false;
      for (const c10::IValue& element : input.toListRef()) {
        if (element.isTensor() && element.toTensor().defined()) {
          add(element);
          any = true;
        }
      }
      if (!any) add(c10::IValue());
      continue;
    }
#endif
    add(input);
  }
  text += ']';
  if (t.scratch) return 1;
  const auto it = t.shapes.find(text);
  if (it != t.shapes.end()) return it->second;
  const std::uint32_t id = g_abi.intern(text.data(), text.size());
  t.shapes.emplace(std::move(text), id);
  return id;
}

// The begin is written whatever fails before it, so every end has its begin.
std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ThreadState* tp = state();
  if (tp == nullptr) return nullptr;
  ThreadState& t = *tp;
  std::uint32_t name = 0, shapes = 0;
  try {
    name = t.names.id(fn.name(), g_abi.intern);
  } catch (...) {
  }
  if (g_shapes && fn.needsInputs()) {
    try {
      shapes = shapes_id(t, fn);
    } catch (...) {  // inputs PyTorch did not box for this call: no shapes
    }
  }
  if (t.scratch) {
    scratch(t, name, fn.seqNr(), next_op_id(t), shapes);
  } else {
    edge(t, gpuscope::collect::kTorchOpBegin, name, fn.seqNr(), next_op_id(t), shapes);
  }
  return nullptr;
}

void on_end(const at::RecordFunction&, at::ObserverContext*) {
  ThreadState* tp = state();
  if (tp == nullptr) return;
  ThreadState& t = *tp;
  if (t.scratch) {
    scratch(t, 0, 0, 0, 0);
  } else {
    edge(t, gpuscope::collect::kTorchEnd);
  }
}

PyObject* attach(PyObject*, PyObject* arg) {
  const char* path = PyUnicode_AsUTF8(arg);
  if (path == nullptr) return nullptr;
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    PyErr_Format(PyExc_RuntimeError, "cannot open the collector %s: %s", path, dlerror());
    return nullptr;
  }
  Abi a;
  const auto find = [lib](auto& f, const char* name) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib, name));
  };
  find(a.attach, "gpuscope_torch_attach");
  find(a.intern, "gpuscope_torch_intern");
  find(a.open_thread, "gpuscope_torch_open_thread");
  find(a.close_thread, "gpuscope_torch_close_thread");
  find(a.wake, "gpuscope_torch_wake");
  find(a.clock, "gpuscope_torch_clock");
  find(a.cost, "gpuscope_torch_cost");
  if (!a.attach || !a.intern || !a.open_thread || !a.close_thread || !a.wake || !a.clock || !a.cost) {
    PyErr_Format(PyExc_RuntimeError, "the collector %s has no PyTorch observer interface %d (another gpuscope)", path,
                 kGpuscopeTorchAbiVersion);
    return nullptr;
  }
  const int version = a.attach();
  if (version != kGpuscopeTorchAbiVersion) {
    PyErr_Format(PyExc_RuntimeError, "the collector %s is off or speaks interface %d (this observer: %d)", path,
                 version, kGpuscopeTorchAbiVersion);
    return nullptr;
  }
  g_abi = a;
  return PyLong_FromLong(version);
}

PyObject* install_ops(PyObject*, PyObject* arg) {
  if (g_abi.open_thread == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "attach() first");
    return nullptr;
  }
  if (g_installed) Py_RETURN_NONE;
  g_shapes = PyObject_IsTrue(arg) == 1;
  try {
    g_handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end).needsInputs(g_shapes));
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_RuntimeError, "PyTorch refused the RecordFunction callback: %s", e.what());
    return nullptr;
  }
  g_installed = true;
  Py_RETURN_NONE;
}

// The floor of any RecordFunction observer (validation/observer_cost.py): a global callback
// that does nothing, as PyTorch calls it (no ids, no inputs).
std::unique_ptr<at::ObserverContext> on_start_nothing(const at::RecordFunction&) { return nullptr; }
void on_end_nothing(const at::RecordFunction&, at::ObserverContext*) {}
at::CallbackHandle g_floor_handle = 0;

PyObject* install_floor(PyObject*, PyObject*) {
  if (g_floor_handle == 0) {
    try {
      g_floor_handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start_nothing, on_end_nothing));
    } catch (const std::exception& e) {
      PyErr_Format(PyExc_RuntimeError, "PyTorch refused the RecordFunction callback: %s", e.what());
      return nullptr;
    }
  }
  Py_RETURN_NONE;
}

PyObject* uninstall_floor(PyObject*, PyObject*) {
  if (g_floor_handle != 0) {
    at::removeCallback(g_floor_handle);
    g_floor_handle = 0;
  }
  Py_RETURN_NONE;
}

PyObject* uninstall_ops(PyObject*, PyObject*) {
  if (g_installed) {
    at::removeCallback(g_handle);
    g_installed = false;
  }
  Py_RETURN_NONE;
}

PyObject* intern(PyObject*, PyObject* arg) {
  Py_ssize_t len = 0;
  const char* text = PyUnicode_AsUTF8AndSize(arg, &len);
  if (text == nullptr) return nullptr;
  if (g_abi.intern == nullptr) return PyLong_FromLong(0);
  return PyLong_FromUnsignedLong(g_abi.intern(text, static_cast<std::size_t>(len)));
}

// A module range's edge from Python (the wrapper, the C caller, the calibration): into the
// thread's ring while the collector is attached, or with `to_scratch` into its scratch sink.
void module_edge(bool to_scratch, std::uint8_t type, std::uint32_t label) {
  ThreadState* t = state();
  if (t == nullptr) return;
  if (to_scratch) {
    scratch(*t, label, 0, 0, 0);
  } else if (g_abi.open_thread != nullptr) {
    edge(*t, type, label);
  }
}

// module_begin(id) and scratch_begin(id): the begin edge of the range whose text has this id.
PyObject* begin_edge(PyObject* arg, bool to_scratch) {
  const unsigned long id = PyLong_AsUnsignedLong(arg);
  if (id == static_cast<unsigned long>(-1) && PyErr_Occurred()) return nullptr;
  module_edge(to_scratch, gpuscope::collect::kTorchModuleBegin, static_cast<std::uint32_t>(id));
  Py_RETURN_NONE;
}

PyObject* module_begin(PyObject*, PyObject* arg) { return begin_edge(arg, false); }

PyObject* end(PyObject*, PyObject*) {
  module_edge(false, gpuscope::collect::kTorchEnd, 0);
  Py_RETURN_NONE;
}

// ---------------------------------------------------------------- module calls

// The nn.Module.__call__ wrapper's work per call, in one C call (sitecustomize.py's
// _module_call_wrapper calls a caller after its torch.compile check): the module's range id
// looked up by the module's address, its begin edge, the original __call__ with the same
// argument tuple and keyword dict, its end edge (also when the call raised). A module the table
// does not hold, or holds for a dead object whose address came back, goes to the Python `slow`
// path, which names it, records its range itself and, for a module whose range text is fixed,
// hands the id to remember(); a model's root, whose text is made per call (the KV cache's bytes),
// is never remembered and always takes the slow path. All under the GIL.
gpuscope::torch_observer::ModuleTable g_known;  // module_table.hpp

// The weak reference's callback: the module died; its entry goes.
PyObject* forget_module(PyObject*, PyObject* ref) {
  g_known.forget(ref);
  Py_RETURN_NONE;
}
PyMethodDef g_forget_def = {"_forget_module", forget_module, METH_O, nullptr};
PyObject* g_forget = nullptr;

// remember(module, id): module calls through a caller record this range id from now on.
PyObject* remember(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "remember(module, id)");
    return nullptr;
  }
  const unsigned long label = PyLong_AsUnsignedLong(args[1]);
  if (label == static_cast<unsigned long>(-1) && PyErr_Occurred()) return nullptr;
  if (label > UINT32_MAX) Py_RETURN_NONE;  // not an id: the slow path keeps the module
  if (g_forget == nullptr && (g_forget = PyCFunction_New(&g_forget_def, nullptr)) == nullptr) return nullptr;
  if (!g_known.remember(args[0], static_cast<std::uint32_t>(label), g_forget)) return nullptr;
  Py_RETURN_NONE;
}

struct ModuleCaller {
  PyObject_HEAD PyObject* call;  // the original nn.Module.__call__
  PyObject* slow;                // slow(module, *args, **kwargs): names, records and calls a module not known here
  bool scratch;                  // calibration: the edges' work into the scratch sink
};

PyObject* caller_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  auto* c = reinterpret_cast<ModuleCaller*>(self);
  if (PyTuple_GET_SIZE(args) < 1) return PyObject_Call(c->call, args, kwargs);
  PyObject* module = PyTuple_GET_ITEM(args, 0);
  const std::uint32_t label = g_known.find(module);
  if (label == 0) return PyObject_Call(c->slow, args, kwargs);
  module_edge(c->scratch, gpuscope::collect::kTorchModuleBegin, label);
  PyObject* result = PyObject_Call(c->call, args, kwargs);
  module_edge(c->scratch, gpuscope::collect::kTorchEnd, 0);  // also when the call raised: ranges stay balanced
  return result;
}

void caller_dealloc(PyObject* self) {
  auto* c = reinterpret_cast<ModuleCaller*>(self);
  Py_XDECREF(c->call);
  Py_XDECREF(c->slow);
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);  // a heap type: each instance holds a reference
}

PyType_Slot g_caller_slots[] = {{Py_tp_call, reinterpret_cast<void*>(caller_call)},
                                {Py_tp_dealloc, reinterpret_cast<void*>(caller_dealloc)},
                                {0, nullptr}};
PyType_Spec g_caller_spec = {"gpuscope_torch_ops.ModuleCaller", sizeof(ModuleCaller), 0, Py_TPFLAGS_DEFAULT,
                             g_caller_slots};
PyObject* g_caller_type = nullptr;

// module_caller(call, slow, scratch) -> a callable caller(module, *args, **kwargs).
PyObject* module_caller(PyObject*, PyObject* args) {
  PyObject *call = nullptr, *slow = nullptr;
  int scratch = 0;
  if (!PyArg_ParseTuple(args, "OOp", &call, &slow, &scratch)) return nullptr;
  if (g_caller_type == nullptr && (g_caller_type = PyType_FromSpec(&g_caller_spec)) == nullptr) return nullptr;
  auto* c = PyObject_New(ModuleCaller, reinterpret_cast<PyTypeObject*>(g_caller_type));
  if (c == nullptr) return nullptr;
  Py_INCREF(call);
  Py_INCREF(slow);
  c->call = call;
  c->slow = slow;
  c->scratch = scratch != 0;
  return reinterpret_cast<PyObject*>(c);
}

// How many modules the table holds (tests: entries go when their modules die).
PyObject* known_modules(PyObject*, PyObject*) { return PyLong_FromSize_t(g_known.size()); }

PyObject* scratch_begin(PyObject*, PyObject* arg) { return begin_edge(arg, true); }

PyObject* scratch_end(PyObject*, PyObject*) {
  module_edge(true, gpuscope::collect::kTorchEnd, 0);
  Py_RETURN_NONE;
}

// Calibration (sitecustomize.py, _record_observer_cost): this thread's callbacks write into
// the scratch sink instead of the collector while on; the count says how many edges they wrote.
PyObject* scratch_mode(PyObject*, PyObject* arg) {
  if (ThreadState* t = state()) t->scratch = PyObject_IsTrue(arg) == 1;
  Py_RETURN_NONE;
}

PyObject* scratch_count(PyObject*, PyObject*) {
  const ThreadState* t = state();
  return PyLong_FromUnsignedLong(t != nullptr ? t->sink_at : 0);
}

PyObject* cost(PyObject*, PyObject* args) {
  double op_ns = 0, module_ns = 0;
  const char* method = nullptr;
  if (!PyArg_ParseTuple(args, "dds", &op_ns, &module_ns, &method)) return nullptr;
  if (g_abi.cost != nullptr) g_abi.cost(op_ns, module_ns, method);
  Py_RETURN_NONE;
}

PyMethodDef g_methods[] = {
    {"attach", attach, METH_O, "Opens the collector at PATH and resolves its PyTorch observer interface."},
    {"install_ops", install_ops, METH_O, "Adds the global RecordFunction callback (shapes: record input shapes)."},
    {"uninstall_ops", uninstall_ops, METH_NOARGS, "Removes the callback."},
    {"install_floor", install_floor, METH_NOARGS, "Adds a global callback that does nothing (cost floor)."},
    {"uninstall_floor", uninstall_floor, METH_NOARGS, "Removes it."},
    {"intern", intern, METH_O, "The id of a text (a module range's)."},
    {"module_begin", module_begin, METH_O, "A module range starts (its text's id)."},
    {"end", end, METH_NOARGS, "The innermost range of this thread ends."},
    {"scratch_begin", scratch_begin, METH_O, "module_begin's work, into a scratch sink (calibration)."},
    {"scratch_end", scratch_end, METH_NOARGS, "end's work, into a scratch sink (calibration)."},
    {"scratch_mode", scratch_mode, METH_O, "This thread's callbacks into the scratch sink (True) or the collector."},
    {"scratch_count", scratch_count, METH_NOARGS, "Edges written into this thread's scratch sink so far."},
    {"cost", cost, METH_VARARGS, "Stores the measured costs (op_ns, module_ns, method) in the trace."},
    {"module_caller", module_caller, METH_VARARGS,
     "module_caller(call, slow, scratch) -> caller(module, *args, **kwargs): a module call's range in C."},
    {"remember", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(remember)), METH_FASTCALL,
     "remember(module, id): callers record this module's range with this id."},
    {"known_modules", known_modules, METH_NOARGS, "How many modules callers know."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "gpuscope_torch_ops", "gpuscope's PyTorch operator observer", -1,
                        g_methods};

}  // namespace

PyMODINIT_FUNC PyInit_gpuscope_torch_ops() { return PyModule_Create(&g_module); }
