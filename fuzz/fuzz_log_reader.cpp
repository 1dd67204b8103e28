// Fuzzes the event-log reader alone (store/event_log_reader.hpp), faster than
// fuzz_event_log_import's whole import: its damage handling (a record header whose size runs
// past the end or whose reserved flags are set, in the middle of a log: resynchronised on the
// next chain of plausible records, the bytes skipped counted as corruption) and its truncated
// tail; and the one way input files are opened (store/input_file.hpp).
//
// Input: one event log, written as a .gslog file and read twice. Checked beside crashes:
// the two passes agree; the bytes accounted for never exceed the file (records are whole,
// corrupt_bytes + truncated_bytes <= file bytes - header); counters are consistent
// (corrupt regions imply corrupt bytes, a first offset inside the file); a refused file has a
// message naming it. Documented: open() refuses with a LogStatus, never throws.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "fuzz_support.hpp"
#include "store/event_log_reader.hpp"
#include "store/input_file.hpp"

namespace {

using namespace gpuscope;

// Counts records by kind; string(id) looked up for every id a record names.
struct Counter final : store::EventLogVisitor {
  explicit Counter(const store::EventLogReader& r) : reader(r) {}
  void on_string(std::uint64_t, std::string_view) override { ++records; }
  void on_kernel(const log::KernelRecord& r) override {
    ++records;
    (void)reader.string(r.name_string);
  }
  void on_api(const log::ApiRecord& r) override {
    ++records;
    (void)reader.string(r.name_string);
  }
  void on_capture(const log::CaptureRecord& r) override {
    ++records;
    (void)reader.string(r.reason_string);
  }
  void on_process_end(const log::ProcessEndRecord&) override { ++records; }
  const store::EventLogReader& reader;
  std::uint64_t records = 0;
};

bool same(const store::LogReadStats& a, const store::LogReadStats& b) {
  return a.file_bytes == b.file_bytes && a.records == b.records && a.truncated_bytes == b.truncated_bytes &&
         a.unknown_records == b.unknown_records && a.malformed_records == b.malformed_records &&
         a.corrupt_bytes == b.corrupt_bytes && a.corrupt_regions == b.corrupt_regions &&
         a.first_corrupt_offset == b.first_corrupt_offset && a.records_after_corruption == b.records_after_corruption;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::filesystem::path path = fuzz::scratch_dir() / "reader.gslog";
  fuzz::write_bytes(path, data, size);
  try {
    // The shared opener first: a regular file always opens, with its size.
    store::InputFile file = store::InputFile::open(path, "event log");
    if (!file.ok() || file.size() != size) fuzz::finding("InputFile::open", "a regular file refused or mis-sized");
    std::string bytes;
    if (!file.read_all(bytes) || bytes.size() != size) fuzz::finding("InputFile::read_all", "short read");

    store::EventLogReader reader;
    const store::LogStatus status = reader.open(path.string());
    if (!status.ok()) {
      if (status.message.find(path.string()) == std::string::npos)
        fuzz::finding("EventLogReader::open", "a refusal that does not name the file");
      return 0;
    }
    Counter first(reader), second(reader);
    const store::LogReadStats a = reader.read(first);
    const store::LogReadStats b = reader.read(second);
    if (!same(a, b) || first.records != second.records) fuzz::finding("EventLogReader::read", "two passes differ");
    const std::uint64_t body = size - sizeof(log::FileHeader);  // header_size >= this
    if (a.corrupt_bytes + a.truncated_bytes > body) fuzz::finding("EventLogReader::read", "more bytes lost than read");
    if ((a.corrupt_regions == 0) != (a.corrupt_bytes == 0))
      fuzz::finding("EventLogReader::read", "corrupt regions without bytes or bytes without regions");
    if (a.corrupt_regions > 0 && (a.first_corrupt_offset < sizeof(log::FileHeader) || a.first_corrupt_offset >= size))
      fuzz::finding("EventLogReader::read", "first corrupt offset outside the log");
    if (a.records_after_corruption > a.records) fuzz::finding("EventLogReader::read", "more records after than in all");
    if (first.records > a.records) fuzz::finding("EventLogReader::read", "more records visited than counted");
  } catch (const std::exception& e) {
    fuzz::undocumented(e);  // documented never to throw
  }
  return 0;
}
