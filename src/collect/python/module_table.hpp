// module_table.hpp -- the table of known modules behind gpuscope's PyTorch module caller
// (gpuscope_torch_ops.cpp, `gpuscope trace --pytorch=modules`): a module object's address ->
// its range's interned id (torch_ops_abi.hpp's gpuscope_torch_intern), so that a module call
// finds its range text with one hash look-up instead of naming the module in Python.
//
// Each entry holds a weak reference to its module (CPython's PyWeakref_NewRef); the reference's
// callback (forget(), wired by the caller's module) drops the entry when the module dies, and a
// look-up checks that the reference still points at the very object asked for, so an address
// that comes back with another object is never taken for the dead module's.
//
// Plain CPython API, no torch: shipped beside gpuscope_torch_ops.cpp and compiled with it
// (sitecustomize.py's _OBSERVER_HEADERS, part of the built observer's cache key). Every call
// holds the GIL: on a free-threaded Python running without it, sitecustomize.py's _fast_caller
// leaves the table unused (module calls take the Python path).
#pragma once

#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <unordered_map>

namespace gpuscope::torch_observer {

class ModuleTable {
 public:
  /// The range id remembered for `module`, or 0 when the table holds none for this object
  /// (never remembered, or remembered for a dead object whose address came back).
  [[nodiscard]] std::uint32_t find(PyObject* module) const {
    const auto it = by_module_.find(module);
    return it != by_module_.end() && alive(it->second, module) ? it->second.label : 0;
  }

  /// Remembers range id `label` (1..UINT32_MAX) for `module`; `on_death` is the weak reference's
  /// callback, which must call forget(reference). Returns false with a Python error set when
  /// memory ran out; true also when nothing was kept: a label of 0 (no id was interned) or an
  /// object without weak references (both stay on the caller's slow path).
  bool remember(PyObject* module, std::uint32_t label, PyObject* on_death) {
    if (label == 0) return true;
    PyObject* ref = PyWeakref_NewRef(module, on_death);
    if (ref == nullptr) {
      PyErr_Clear();
      return true;
    }
    try {
      Entry& e = by_module_[module];
      if (e.ref != nullptr) {  // a dead module's entry at the same address
        by_ref_.erase(e.ref);
        Py_DECREF(e.ref);
      }
      e = Entry{ref, label};
      by_ref_[ref] = module;
    } catch (const std::bad_alloc&) {
      by_module_.erase(module);
      Py_DECREF(ref);
      PyErr_NoMemory();
      return false;
    }
    return true;
  }

  /// The weak reference `ref`'s module died: its entry goes (unless a newer entry replaced it).
  void forget(PyObject* ref) {
    const auto it = by_ref_.find(ref);
    if (it == by_ref_.end()) return;
    const auto known = by_module_.find(it->second);
    if (known != by_module_.end() && known->second.ref == ref) {
      Py_DECREF(known->second.ref);
      by_module_.erase(known);
    }
    by_ref_.erase(it);
  }

  /// How many modules the table holds.
  [[nodiscard]] std::size_t size() const { return by_module_.size(); }

 private:
  struct Entry {
    PyObject* ref = nullptr;  // a weak reference to the module
    std::uint32_t label = 0;
  };

  // The entry's module is alive and is the object asked for.
  static bool alive(const Entry& e, PyObject* module) {
#if PY_VERSION_HEX >= 0x030D0000
    PyObject* target = nullptr;
    if (PyWeakref_GetRef(e.ref, &target) < 0) {
      PyErr_Clear();
      return false;
    }
    Py_XDECREF(target);  // compared by address only; the caller holds `module`
    return target == module;
#else
    return PyWeakref_GetObject(e.ref) == module;
#endif
  }

  std::unordered_map<PyObject*, Entry> by_module_;   // module address -> entry
  std::unordered_map<PyObject*, PyObject*> by_ref_;  // weak reference -> module address
};

}  // namespace gpuscope::torch_observer
