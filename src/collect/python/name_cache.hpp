// name_cache.hpp -- one thread's cache of RecordFunction names -> the ids gpuscope's collector
// interned for them (torch_ops_abi.hpp's gpuscope_torch_intern), for gpuscope's PyTorch operator
// observer (gpuscope_torch_ops.cpp): every operator call's begin edge asks it for its name's id.
//
// Three steps, each comparing the text in full, so that no name is ever taken for another:
//  1. by the name's address, in a direct-mapped table of one cache line a slot (the address, the
//     id and the text). An operator's name lives as long as its registration, so its address
//     finds it.
//  2. by a hash of its text, in a second table of two cache lines a slot (the hash, the length,
//     the id and the text). A backward node's name is a std::string made for each call
//     (Node::name()), so its address comes back with other texts and step 1 misses, as does the
//     autograd engine's range around each node ("autograd::engine::evaluate_function: " + the
//     node's name); this finds them with one pass over the text a word at a time, no division
//     and no node chase.
//  3. by its text in a hash map (no lock, no allocation once the name is known), which a name
//     longer than a slot's text always reaches; a name never seen is interned by the collector
//     (the `intern` function given), once per thread.
//
// Plain C++, no torch or Python: shipped beside gpuscope_torch_ops.cpp and compiled with it
// (sitecustomize.py's _OBSERVER_HEADERS, part of the built observer's cache key);
// tests/unit/collect/test_name_cache.cpp checks it by hand. One thread's: no locks. About 48 KiB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gpuscope::torch_observer {

class NameCache {
 public:
  /// The collector's interning of a text of `length` bytes (gpuscope_torch_intern).
  using Intern = std::uint32_t (*)(const char* text, std::size_t length) noexcept;

  /// The id of the NUL-terminated `name` (0 for nullptr), interning it through `intern` the first
  /// time this cache sees its text. May throw std::bad_alloc (step 3's map).
  std::uint32_t id(const char* name, Intern intern) {
    if (name == nullptr) return 0;
    // Fibonacci hashing of the address: its top 8 bits pick the slot (no division).
    NameSlot& slot = names_[(reinterpret_cast<std::uintptr_t>(name) * 0x9E3779B97F4A7C15ull) >> 56];
    if (slot.address == name && std::strcmp(slot.text, name) == 0) return slot.id;
    const std::size_t length = std::strlen(name);
    // A text slot's hit is a text made per call: its address is no key, so the address slot is
    // left as it is (an operator's stays cached). A miss there (a name new to the thread, or one
    // whose slot another text took) fills both.
    TextSlot* text = nullptr;
    std::uint64_t hash = 0;
    if (length <= sizeof(TextSlot::text)) {
      hash = text_hash(name, length);
      text = &texts_[hash >> 56];
      if (text->hash == hash && text->length == length && std::memcmp(text->text, name, length) == 0) return text->id;
    }
    const std::uint32_t id = id_by_text(std::string_view(name, length), intern);
    if (text != nullptr) {
      text->hash = hash;
      text->length = static_cast<std::uint32_t>(length);
      text->id = id;
      std::memcpy(text->text, name, length);
    }
    if (length < sizeof slot.text) {
      slot.address = name;
      slot.id = id;
      std::memcpy(slot.text, name, length + 1);
    }
    return id;
  }

  /// A text's hash for step 2: its 8-byte words, then the rest, each folded in with a multiply
  /// (the constants of MurmurHash3's finalizer); the top 8 bits pick the slot.
  static std::uint64_t text_hash(const char* text, std::size_t length) {
    std::uint64_t h = length * 0x9E3779B97F4A7C15ull;
    std::size_t i = 0;
    for (; i + 8 <= length; i += 8) {
      std::uint64_t word;
      std::memcpy(&word, text + i, 8);
      h = (h ^ word) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
    std::uint64_t rest = 0;
    std::memcpy(&rest, text + i, length - i);
    h = (h ^ rest) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
  }

  static constexpr std::size_t kSlots = 256;  // 16 KiB (addresses) + 32 KiB (texts)

 private:
  struct NameSlot {
    const char* address = nullptr;
    std::uint32_t id = 0;
    char text[52] = {};  // NUL-terminated
  };
  static_assert(sizeof(NameSlot) == 64, "one cache line a slot");
  struct TextSlot {
    std::uint64_t hash = 0;
    std::uint32_t length = ~0u;  // no text yet: no name's length (an empty name hashes to 0 too)
    std::uint32_t id = 0;
    char text[112] = {};  // the name's `length` bytes ("autograd::engine::evaluate_function: " + a node's name fits)
  };
  static_assert(sizeof(TextSlot) == 128, "two cache lines a slot");

  // Step 3.
  std::uint32_t id_by_text(std::string_view text, Intern intern) {
    key_.assign(text.data(), text.size());
    const auto it = by_text_.find(key_);
    if (it != by_text_.end()) return it->second;
    const std::uint32_t id = intern(text.data(), text.size());
    by_text_.emplace(key_, id);
    return id;
  }

  NameSlot names_[kSlots];
  TextSlot texts_[kSlots];
  std::unordered_map<std::string, std::uint32_t> by_text_;
  std::string key_;  // the look-up key (C++17: no look-up by string_view), reused
};

}  // namespace gpuscope::torch_observer
