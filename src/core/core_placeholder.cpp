// core is mostly header-only; this keeps the library non-empty.
namespace gpuscope::detail { int core_placeholder() { return 0; } }
