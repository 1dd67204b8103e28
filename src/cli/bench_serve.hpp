// `gpuscope bench serve`: a load generator for OpenAI-compatible streaming endpoints
// (/v1/completions, /v1/chat/completions with server-sent events), as vLLM's
// benchmark_serving and genai-perf are (docs/bench.md, "bench serve").
//
//   gpuscope bench serve --url http://127.0.0.1:8000 [--endpoint completions|chat]
//       [--prompts FILE.jsonl | --input-len WORDS] [--output-len TOKENS]
//       [--num-requests N] [--concurrency N | --request-rate R] [--warmup N] [--json OUT.json]
//
// Each request runs on its own std::thread with a libcurl easy handle taken from a pool, so
// it reuses the kept-alive connection of an earlier request (no TCP handshake in its TTFT);
// a counting semaphore keeps at most --concurrency in flight, and with --request-rate the requests start at the
// arrival times of a Poisson process (core/serve_stats.hpp poisson_arrivals). Times are
// std::chrono::steady_clock, taken just before the request is sent and in libcurl's write
// callback as each piece of the body arrives (core/serve_stream.hpp RequestTracker turns
// them into token times). Warm-up requests run first, with the same concurrency, and are
// not counted. The numbers, the printed reports and the bench JSON: core/serve_stats.hpp.
// A request with no byte of response --first-byte-timeout after it was sent, or whose response
// stops for --stall-timeout, fails (libcurl's progress callback checks about once a second);
// while requests run, cli/serve_progress.hpp prints done / failed / in flight every --progress
// and each failure as it happens.
//
// Exit codes: 0 at least one request completed (failed ones are listed as warnings and in
// the JSON's warnings); 1 none completed, or an I/O or libcurl failure; 2 bad input (an
// option out of range, a missing or malformed prompts file, an output file that exists
// without -f).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace gpuscope::cli {

struct ServeOptions {
  std::string url = "http://127.0.0.1:8000";  // base (…:8000) or the full endpoint URL (…/v1/completions)
  std::string endpoint = "completions";       // "completions" or "chat"
  std::string model;                          // "" = not sent
  std::string prompts;                        // JSONL file; "" = synthetic prompts
  int input_len = 128;                        // synthetic prompt words
  int output_len = 128;                       // max_tokens (a JSONL line's max_tokens wins)
  int num_requests = 100;
  int concurrency = 0;      // 0: 1 without --request-rate, unbounded with it
  double request_rate = 0;  // requests/s (Poisson); 0 = no pacing
  int warmup = 2;
  std::uint64_t seed = 0;
  std::int64_t timeout_ns = 600'000'000'000;            // per request, in all
  std::int64_t first_byte_timeout_ns = 60'000'000'000;  // sent -> first byte of the response
  std::int64_t stall_timeout_ns = 30'000'000'000;       // between two bytes of the response
  std::int64_t progress_ns = 5'000'000'000;             // stderr progress line period; 0 = none
  std::string api_key;                                  // "" = $OPENAI_API_KEY, if set
  bool ignore_eos = false;   // send "ignore_eos": true (vLLM, SGLang): always output_len tokens
  std::string requests_log;  // --requests-log FILE: each request's span as JSON lines ("" = none)
  std::string session;       // --session NAME: also write them into that launch session's log folder
};

/// Declares the serve options on the `bench` subcommand (each says "serve:" in its help).
void add_serve_options(CLI::App& bench, ServeOptions& options);

/// Runs `bench serve`; prints the reports to stdout in `format` and writes `json` (the bench
/// result format) when not "". Returns the exit code (see above); prints its errors itself.
[[nodiscard]] int run_bench_serve(const ServeOptions& options, const std::string& format, const std::string& json,
                                  bool force_overwrite);

}  // namespace gpuscope::cli
