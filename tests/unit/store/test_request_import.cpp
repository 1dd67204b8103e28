// Importing bench serve's requests (requests-PID.jsonl, store/request_tables.hpp): the rows
// it makes with their exact values, the file names it takes, and bad lines (data_loss, the
// good lines kept).
#include "store/request_tables.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "log_builder.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

using test::TempDir;

// A process log with one kernel (2500-2600 ns), and `jsonl` as bench serve 4242's requests.
Database import_with(const TempDir& dir, const std::string& jsonl, const std::string& name = "requests-4242.jsonl") {
  (void)test::write_one_kernel_log(dir);  // found by list_trace_inputs below
  const std::string file = dir.file(name);
  std::ofstream(file) << jsonl;
  std::error_code ec;
  const std::vector<std::string> inputs =
      list_trace_inputs(std::filesystem::path(dir.file("x")).parent_path().string(), ec);
  EXPECT_FALSE(ec);
  const std::string db = dir.file("t.sqlite");
  (void)import_logs(inputs, db, ImportOptions{});
  return open_trace(db);
}

// As `gpuscope bench serve --requests-log` writes them: a warm-up, a success, a failure.
const char* kRequests =
    R"({"id":"gpuscope-4242-warmup-0","index":0,"warmup":true,"start_ns":1100,"first_token_ns":1300,"end_ns":1500,"token_ns":[1300,1400],"prompt_tokens":3,"output_tokens":2,"new_connection":true,"error":"","realtime_minus_monotonic_ns":900})"
    "\n"
    R"({"id":"gpuscope-4242-0","index":0,"warmup":false,"start_ns":2400,"first_token_ns":2700,"end_ns":2900,"token_ns":[2700,2800,2900],"prompt_tokens":3,"output_tokens":3,"new_connection":false,"error":"","realtime_minus_monotonic_ns":900})"
    "\n\n"
    R"({"id":"gpuscope-4242-1","index":1,"warmup":false,"start_ns":3000,"first_token_ns":null,"end_ns":3050,"token_ns":[],"prompt_tokens":0,"output_tokens":0,"new_connection":false,"error":"HTTP 500: {\"error\": \"mock\"}","realtime_minus_monotonic_ns":900})"
    "\n";

TEST(RequestImport, OneRowPerRequestWithItsValues) {
  TempDir dir;
  Database db = import_with(dir, kRequests);
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM requests"), 3);
  EXPECT_EQ(db.query_text("SELECT group_concat(client_pid || ' ' || request || ' ' || request_index || ' ' || warmup "
                          "|| ' ' || start_ns || ' ' || COALESCE(first_token_ns, 'null') || ' ' || end_ns || ' ' || "
                          "prompt_tokens || ' ' || output_tokens || ' ' || new_connection || ' ' || "
                          "COALESCE(error, 'null'), '; ') FROM (SELECT * FROM requests ORDER BY id)"),
            "4242 gpuscope-4242-warmup-0 0 1 1100 1300 1500 3 2 1 null; "
            "4242 gpuscope-4242-0 0 0 2400 2700 2900 3 3 0 null; "
            "4242 gpuscope-4242-1 1 0 3000 null 3050 0 0 0 HTTP 500: {\"error\": \"mock\"}");
  // On the trace clock: the kernel that ran during request 0 is found by time.
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM requests r JOIN kernels k ON k.start_ns < r.end_ns AND "
                         "k.end_ns > r.start_ns WHERE r.request = 'gpuscope-4242-0'"),
            1);
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM data_loss WHERE what = 'unreadable_requests'"), 0);
}

TEST(RequestImport, FileNames) {
  using detail::is_requests_file;
  EXPECT_TRUE(is_requests_file("requests-1.jsonl"));
  EXPECT_TRUE(is_requests_file("requests-4242.jsonl"));
  EXPECT_FALSE(is_requests_file("requests-.jsonl"));
  EXPECT_FALSE(is_requests_file("requests-12a.jsonl"));
  EXPECT_FALSE(is_requests_file("requests-12.json"));
  EXPECT_FALSE(is_requests_file("my-requests-12.jsonl"));
}

TEST(RequestImport, BadLinesAreDataLossTheRestKept) {
  TempDir dir;
  const std::string bad =
      std::string(kRequests) + "{not json\n" + R"({"id":"x","index":2})" + "\n" +
      R"({"id":"y","index":3,"warmup":false,"start_ns":9,"first_token_ns":null,"end_ns":5,"prompt_tokens":0,"output_tokens":0,"new_connection":false,"error":""})" +
      "\n";
  Database db = import_with(dir, bad);
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM requests"), 3);
  EXPECT_EQ(db.query_int("SELECT count FROM data_loss WHERE what = 'unreadable_requests'"), 3);
  const std::string detail =
      db.query_text("SELECT detail FROM data_loss WHERE what = 'unreadable_requests'").value_or("");
  EXPECT_NE(detail.find("requests-4242.jsonl"), std::string::npos) << detail;
  EXPECT_NE(detail.find("line 5"), std::string::npos) << detail;
  // The kernels are there as without the file.
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM kernels"), 1);
}

}  // namespace
}  // namespace gpuscope::store
