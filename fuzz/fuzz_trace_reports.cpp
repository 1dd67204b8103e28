// Fuzzes the trace opener (store/trace.hpp) and every report on a damaged trace: the
// input is a whole trace file (SQLite; the seeds are small valid traces, so mutations land
// in its pages: b-tree headers, cell pointers, records, the schema). It is written to
// tmpfs, opened read-only with open_trace(), and, when it opens, checked by
// trace_checks.hpp (every report, summary, kernel results, Perfetto export, all formats).
// Documented: store::DatabaseError (and its SchemaVersionError) from open_trace and from
// the analyses.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "fuzz_support.hpp"
#include "store/trace.hpp"
#include "trace_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const std::filesystem::path trace = fuzz::scratch_dir() / "damaged.sqlite";
  fuzz::write_bytes(trace, data, size);
  try {
    store::Database db = store::open_trace(trace.string());
    fuzz::check_trace(db, {static_cast<std::uint32_t>(size), /*utf8_outputs=*/false});
  } catch (const store::DatabaseError& e) {
    fuzz::documented(e);
  } catch (const std::exception& e) {
    fuzz::undocumented(e);
  }
  return 0;
}
