#include "cli/bench_serve.hpp"

#include <curl/curl.h>
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <semaphore>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/option_checks.hpp"
#include "cli/output_files.hpp"
#include "cli/serve_progress.hpp"
#include "cli/session_command.hpp"
#include "collect/session_control.hpp"
#include "core/serve_stats.hpp"
#include "core/version.hpp"
#include "core/units.hpp"
#include "render/report_render.hpp"
#include "store/bench_result_json.hpp"
#include "store/private_dir.hpp"
#include "store/input_file.hpp"

namespace gpuscope::cli {
namespace {

namespace serve = core::serve;
using Clock = std::chrono::steady_clock;

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int kExitFailure = 1, kExitInput = 2;

// One request to send: its prompt, how many tokens to ask for, the prompt's token count
// where known (synthetic: the word count).
struct Prompt {
  std::string text;
  int max_tokens = 0;
  std::int64_t prompt_tokens = 0;
};

// Words that are one token each (with their leading space) in the GPT-2, Llama and
// Mistral tokenizers, so a synthetic prompt of N words is about N tokens.
constexpr const char* kWords[] = {"the", "of",   "and", "to",    "in",  "is",   "that", "for",  "it",   "as",
                                  "was", "with", "be",  "by",    "on",  "not",  "he",   "this", "are",  "or",
                                  "his", "from", "at",  "which", "but", "have", "an",   "had",  "they", "you"};

std::vector<Prompt> synthetic_prompts(const ServeOptions& o, int n) {
  std::mt19937_64 gen(o.seed);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kWords) - 1);
  std::vector<Prompt> out;
  for (int i = 0; i < n; ++i) {
    Prompt p;
    for (int w = 0; w < o.input_len; ++w) p.text += (w ? " " : "") + std::string(kWords[pick(gen)]);
    p.max_tokens = o.output_len;
    p.prompt_tokens = o.input_len;
    out.push_back(std::move(p));
  }
  return out;
}

// A JSONL file: one object per line with "prompt" (or "text"), and optionally "max_tokens"
// (or "output_len") and "prompt_tokens" (or "input_len"). Blank lines are skipped.
std::vector<Prompt> read_prompts(const ServeOptions& o) {
  std::string error;  // a FIFO is refused, never waited on (store/input_file.hpp)
  const std::optional<std::string> text = store::read_input_file(o.prompts, "prompts file", error);
  if (!text) throw InputError(error);
  std::istringstream in(*text);
  std::vector<Prompt> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = o.prompts + ":" + std::to_string(number);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(where + ": not JSON: " + e.what());
    }
    if (!j.is_object()) throw InputError(where + ": expected a JSON object with \"prompt\"");
    Prompt p;
    const char* key = j.contains("prompt") ? "prompt" : "text";
    if (!j.contains(key) || !j[key].is_string())
      throw InputError(where + ": \"prompt\" (or \"text\") is missing or not a string");
    p.text = j[key].get<std::string>();
    p.max_tokens = o.output_len;
    for (const char* k : {"max_tokens", "output_len"})
      if (j.contains(k) && j[k].is_number_integer()) p.max_tokens = j[k].get<int>();
    for (const char* k : {"prompt_tokens", "input_len"})
      if (j.contains(k) && j[k].is_number_integer()) p.prompt_tokens = j[k].get<std::int64_t>();
    out.push_back(std::move(p));
  }
  if (out.empty()) throw InputError(o.prompts + ": no prompts in the file");
  return out;
}

std::string endpoint_url(const ServeOptions& o) {
  if (o.url.find("/v1/") != std::string::npos) return o.url;
  std::string base = o.url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + (o.endpoint == "chat" ? "/v1/chat/completions" : "/v1/completions");
}

std::string request_body(const ServeOptions& o, const Prompt& p) {
  nlohmann::json j;
  if (!o.model.empty()) j["model"] = o.model;
  if (o.endpoint == "chat")
    j["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", p.text}}});
  else
    j["prompt"] = p.text;
  j["max_tokens"] = p.max_tokens;
  j["stream"] = true;
  j["stream_options"] = {{"include_usage", true}};
  if (o.ignore_eos) j["ignore_eos"] = true;
  return j.dump();
}

// libcurl, opened at run time (dlopen) rather than linked: the gpuscope binary is built to
// run on machines that have only libc and the CUDA driver, and only `bench serve` needs
// libcurl. The types and constants come from Debian's libcurl4-openssl-dev headers; the
// easy API is the same in every libcurl.so.4 (OpenSSL or GnuTLS flavour).
struct Curl {
  CURLcode (*global_init)(long) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_reset)(CURL*) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

template <class F>
void bind(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) throw std::runtime_error(std::string("libcurl has no ") + name);
}

// Opens libcurl once and initializes it (before any request thread starts).
const Curl& curl() {
  static const Curl c = [] {
    void* lib = nullptr;
    for (const char* name : {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib)
      throw std::runtime_error(
          "bench serve needs libcurl (libcurl.so.4), which is not installed here: apt-get install libcurl4");
    Curl k;
    bind(lib, "curl_global_init", k.global_init);
    bind(lib, "curl_easy_init", k.easy_init);
    bind(lib, "curl_easy_setopt", k.easy_setopt);
    bind(lib, "curl_easy_perform", k.easy_perform);
    bind(lib, "curl_easy_getinfo", k.easy_getinfo);
    bind(lib, "curl_easy_reset", k.easy_reset);
    bind(lib, "curl_easy_cleanup", k.easy_cleanup);
    bind(lib, "curl_easy_strerror", k.easy_strerror);
    bind(lib, "curl_slist_append", k.slist_append);
    bind(lib, "curl_slist_free_all", k.slist_free_all);
    if (const CURLcode rc = k.global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK)
      throw std::runtime_error(std::string("curl_global_init: ") + k.easy_strerror(rc));
    return k;
  }();
  return c;
}

double seconds_since(Clock::time_point origin) { return std::chrono::duration<double>(Clock::now() - origin).count(); }

// Easy handles kept between requests, so that a request reuses the connection a previous
// one left open (libcurl keeps it in the handle; curl_easy_reset keeps it too), as
// aiohttp's session in vLLM's benchmark does: a new TCP connection per request would add
// its handshake and the server's accept() to every TTFT. A request takes an idle handle
// or, when none is idle, makes one (so at most `concurrency` handles exist).
class HandlePool {
 public:
  ~HandlePool() {
    for (CURL* h : m_idle) curl().easy_cleanup(h);
  }
  CURL* take() {
    {
      const std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_idle.empty()) {
        CURL* h = m_idle.back();
        m_idle.pop_back();
        curl().easy_reset(h);
        return h;
      }
    }
    return curl().easy_init();
  }
  void give_back(CURL* h) {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_idle.push_back(h);
  }

 private:
  std::mutex m_mutex;
  std::vector<CURL*> m_idle;
};

struct Transfer {
  serve::RequestTracker tracker;
  Clock::time_point origin;
  // The watchdog (on_progress): when the request was sent, when the last byte of the
  // response (header or body) came, whether any came, and why the transfer was stopped.
  std::chrono::nanoseconds first_byte_timeout{0}, stall_timeout{0};
  Clock::time_point sent, last_byte;
  bool any_byte = false;
  std::string stopped_because;
};

void on_byte(Transfer& t) {
  t.last_byte = Clock::now();
  t.any_byte = true;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  on_byte(*t);
  t->tracker.on_bytes(seconds_since(t->origin), std::string_view(data, size * count));
  return size * count;
}

size_t on_header(char* /*data*/, size_t size, size_t count, void* user) {
  on_byte(*static_cast<Transfer*>(user));
  return size * count;
}

std::string duration_text(std::chrono::nanoseconds d) { return units::duration_ns(static_cast<double>(d.count())); }

// libcurl calls this about once a second while a transfer waits (more often while bytes
// flow); a non-zero return stops the transfer (CURLE_ABORTED_BY_CALLBACK).
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  const Clock::time_point now = Clock::now();
  if (!t->any_byte && now - t->sent > t->first_byte_timeout) {
    t->stopped_because = "timed out: no response within " + duration_text(t->first_byte_timeout) +
                         " of sending the request (--first-byte-timeout)";
    return 1;
  }
  if (t->any_byte && now - t->last_byte > t->stall_timeout) {
    t->stopped_because =
        "timed out: the response stalled, nothing for " + duration_text(t->stall_timeout) + " (--stall-timeout)";
    return 1;
  }
  return 0;
}

// Sends one request and follows its stream to the end. Never throws: a failure is the
// record's error.
serve::RequestRecord send(const ServeOptions& o, const std::string& url, const Prompt& p, int index, bool warmup,
                          Clock::time_point origin, HandlePool& pool) {
  const Curl& c = curl();
  const std::string body = request_body(o, p);
  const std::string id = "gpuscope-" + std::to_string(::getpid()) + (warmup ? "-warmup-" : "-") + std::to_string(index);
  // Back to the pool only after a transfer that ended cleanly; a failed one may have left
  // its connection in any state, so its handle (and connection) is dropped.
  bool reusable = false;
  auto give_back = [&pool, &reusable, &c](CURL* handle) {
    if (handle == nullptr) return;
    if (reusable)
      pool.give_back(handle);
    else
      c.easy_cleanup(handle);
  };
  std::unique_ptr<CURL, decltype(give_back)> h(pool.take(), give_back);
  curl_slist* headers = nullptr;
  headers = c.slist_append(headers, "Content-Type: application/json");
  headers = c.slist_append(headers, "Accept: text/event-stream");
  // libcurl 7.x asks "Expect: 100-continue" before a POST body over 1 KiB (a long prompt)
  // and waits for the server's "100 Continue" (up to 1 s): a round trip inside TTFT.
  headers = c.slist_append(headers, "Expect:");
  headers = c.slist_append(headers, ("X-Request-Id: " + id).c_str());
  std::string key = o.api_key;
  if (key.empty())
    if (const char* env = std::getenv("OPENAI_API_KEY")) key = env;
  if (!key.empty()) headers = c.slist_append(headers, ("Authorization: Bearer " + key).c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> header_guard(headers, c.slist_free_all);

  Transfer t{serve::RequestTracker(index, warmup, 0, p.prompt_tokens), origin};
  if (!h) return t.tracker.finish(seconds_since(origin), 0, "curl_easy_init failed");
  // The connection from the pool's handle is used as it is: no DNS lookup, no connect.
  char errbuf[CURL_ERROR_SIZE] = {};
  c.easy_setopt(h.get(), CURLOPT_URL, url.c_str());
  c.easy_setopt(h.get(), CURLOPT_POSTFIELDS, body.c_str());
  c.easy_setopt(h.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  c.easy_setopt(h.get(), CURLOPT_HTTPHEADER, headers);
  c.easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, on_body);
  c.easy_setopt(h.get(), CURLOPT_WRITEDATA, &t);
  c.easy_setopt(h.get(), CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for timeouts
  c.easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(o.timeout_ns / 1'000'000));
  c.easy_setopt(h.get(), CURLOPT_HEADERFUNCTION, on_header);
  c.easy_setopt(h.get(), CURLOPT_HEADERDATA, &t);
  c.easy_setopt(h.get(), CURLOPT_XFERINFOFUNCTION, on_progress);
  c.easy_setopt(h.get(), CURLOPT_XFERINFODATA, &t);
  c.easy_setopt(h.get(), CURLOPT_NOPROGRESS, 0L);
  t.first_byte_timeout = std::chrono::nanoseconds(o.first_byte_timeout_ns);
  t.stall_timeout = std::chrono::nanoseconds(o.stall_timeout_ns);
  c.easy_setopt(h.get(), CURLOPT_ERRORBUFFER, errbuf);
  c.easy_setopt(h.get(), CURLOPT_TCP_NODELAY, 1L);
  c.easy_setopt(h.get(), CURLOPT_TCP_KEEPALIVE, 1L);

  t.tracker = serve::RequestTracker(index, warmup, seconds_since(origin), p.prompt_tokens);
  t.sent = Clock::now();
  const CURLcode rc = c.easy_perform(h.get());
  const double end = seconds_since(origin);
  long status = 0, connects = 0;
  c.easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &status);
  c.easy_getinfo(h.get(), CURLINFO_NUM_CONNECTS, &connects);
  std::string transport;
  if (rc == CURLE_ABORTED_BY_CALLBACK && !t.stopped_because.empty())
    transport = t.stopped_because;
  else if (rc != CURLE_OK)
    transport = std::string(c.easy_strerror(rc)) + (errbuf[0] ? std::string(": ") + errbuf : "");
  serve::RequestRecord record = t.tracker.finish(end, status, transport);
  record.id = id;
  record.new_connection = connects > 0;
  reusable = rc == CURLE_OK;
  return record;
}

// Runs the requests `first .. first + count` (prompts cycled), starting request i at
// arrivals[i] (s after `phase_start`) or as soon as a slot is free; at most `concurrency` in
// flight. Returns their records in request order, times in s after `origin`.
std::vector<serve::RequestRecord> run_phase(const ServeOptions& o, const std::string& url,
                                            const std::vector<Prompt>& prompts, int count, bool warmup,
                                            const std::vector<double>& arrivals, int concurrency,
                                            Clock::time_point phase_start, Clock::time_point origin, HandlePool& pool) {
  std::vector<serve::RequestRecord> records(static_cast<std::size_t>(count));
  ServeProgress progress(std::cerr, std::chrono::nanoseconds(o.progress_ns), count,
                         warmup ? "warm-up requests" : "requests");
  std::counting_semaphore<> slots(concurrency);
  std::vector<std::thread> threads;
  threads.reserve(records.size());
  for (int i = 0; i < count; ++i) {
    if (!arrivals.empty())
      std::this_thread::sleep_until(
          phase_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(arrivals[i])));
    slots.acquire();
    const Prompt& p = prompts[static_cast<std::size_t>(i) % prompts.size()];
    threads.emplace_back([&, i, &p = p] {
      serve::RequestRecord& record = records[static_cast<std::size_t>(i)];
      progress.started();
      try {
        record = send(o, url, p, i, warmup, origin, pool);
      } catch (const std::exception& e) {  // e.g. out of memory: this request fails, the run goes on
        record.index = i;
        record.warmup = warmup;
        record.error = std::string("gpuscope: ") + e.what();
      }
      progress.finished((warmup ? "warm-up request " : "request ") + std::to_string(i), record.error);
      slots.release();
    });
  }
  for (std::thread& t : threads) t.join();
  return records;
}

// Where the records' origin lies on the two system clocks, in ns.
struct ClockAnchor {
  std::int64_t origin_realtime_ns = 0;  // CLOCK_REALTIME at the origin: the trace clock
  std::int64_t realtime_minus_monotonic_ns = 0;
};

std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

ClockAnchor clock_anchor(Clock::time_point origin) {
  // The realtime reading between two monotonic ones; the tightest of a few tries.
  std::int64_t best_width = INT64_MAX, offset = 0;
  for (int i = 0; i < 5; ++i) {
    const std::int64_t m0 = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME), m1 = clock_ns(CLOCK_MONOTONIC);
    if (m1 - m0 < best_width) {
      best_width = m1 - m0;
      offset = r - (m0 + (m1 - m0) / 2);
    }
  }
  const std::int64_t origin_monotonic_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(origin.time_since_epoch()).count();
  return ClockAnchor{origin_monotonic_ns + offset, offset};
}

// --requests-log: one JSON object per request (warm-up ones too), times in ns on
// CLOCK_REALTIME, the trace's clock (docs/bench.md, "The requests log").
// In a session's log folder (`session`) the file is new, created 0600 with
// O_CREAT|O_EXCL|O_NOFOLLOW and renamed in (store/private_dir.hpp): a link planted under its
// name is replaced, never followed.
void write_requests_log(const std::vector<serve::RequestRecord>& records, const ClockAnchor& anchor,
                        const std::string& path, bool session) {
  std::ostringstream out;
  auto ns = [&anchor](double s) { return anchor.origin_realtime_ns + std::llround(s * 1e9); };
  for (const serve::RequestRecord& r : records) {
    nlohmann::json j;
    j["id"] = r.id;
    j["index"] = r.index;
    j["warmup"] = r.warmup;
    j["start_ns"] = ns(r.start_s);
    j["first_token_ns"] = r.token_times_s.empty() ? nlohmann::json() : nlohmann::json(ns(r.token_times_s.front()));
    j["end_ns"] = ns(r.end_s);
    j["prompt_tokens"] = r.prompt_tokens;
    j["output_tokens"] = r.output_tokens();
    j["new_connection"] = r.new_connection;
    j["error"] = r.error;
    nlohmann::json tokens = nlohmann::json::array();
    for (double t : r.token_times_s) tokens.push_back(ns(t));
    j["token_ns"] = std::move(tokens);
    j["realtime_minus_monotonic_ns"] = anchor.realtime_minus_monotonic_ns;
    out << j.dump() << "\n";
  }
  if (session) {
    const std::filesystem::path p(path);
    if (const store::PrivateStatus st = store::write_new_file(p.parent_path(), p.filename().string(), out.str());
        !st.ok())
      throw std::runtime_error("cannot write the requests log: " + st.message);
    return;
  }
  std::ofstream file(path);
  if (!file || !(file << out.str()) || !file.flush()) throw std::runtime_error("cannot write the requests log " + path);
}

int run(const ServeOptions& o, const std::string& format_text, const std::string& json, bool force) {
  if (o.endpoint != "completions" && o.endpoint != "chat")
    throw InputError("--endpoint is '" + o.endpoint + "', expected completions or chat");
  const render::Format format = render::parse_format(format_text);
  check_outputs({json, o.requests_log}, force);
  // --session: the requests go into the session's log folder, beside the collectors' event
  // logs, where the importer reads them into the trace's requests table.
  std::string session_log;
  if (!o.session.empty()) {
    if (const std::string problem = collect::session_name_problem(o.session); !problem.empty())
      throw InputError("--session: " + problem + ": '" + o.session + "'");
    const auto info = read_session_info(collect::session_dir(o.session));
    if (!info || info->log_dir.empty())
      throw InputError("no session '" + o.session + "' (looked in " + collect::sessions_root().string() +
                       "): start the server with gpuscope launch --session " + o.session + " -- CMD");
    session_log =
        (std::filesystem::path(info->log_dir) / ("requests-" + std::to_string(::getpid()) + ".jsonl")).string();
  }
  const std::vector<Prompt> prompts = o.prompts.empty() ? synthetic_prompts(o, o.num_requests) : read_prompts(o);
  const std::string url = endpoint_url(o);
  const bool paced = o.request_rate > 0;
  const int concurrency = o.concurrency > 0 ? o.concurrency : paced ? o.num_requests : 1;

  (void)curl();  // opened and initialized before any request thread starts

  // One origin for every record; its place on CLOCK_MONOTONIC (steady_clock's clock on
  // Linux) and CLOCK_REALTIME (the trace clock) for the requests log.
  const Clock::time_point origin = Clock::now();
  const ClockAnchor anchor = clock_anchor(origin);
  HandlePool pool;
  std::vector<serve::RequestRecord> records;
  if (o.warmup > 0) {
    std::cerr << "gpuscope bench serve: " << o.warmup << " warm-up requests to " << url << "\n";
    records =
        run_phase(o, url, prompts, o.warmup, true, {}, std::min(concurrency, o.warmup), Clock::now(), origin, pool);
  }
  std::cerr << "gpuscope bench serve: " << o.num_requests << " requests to " << url << ", "
            << (o.concurrency > 0 || !paced ? std::to_string(concurrency) + " at a time"
                                            : std::string("no limit in flight"))
            << (paced ? ", Poisson arrivals at " + std::to_string(o.request_rate) + " requests/s" : std::string())
            << "\n";
  const std::vector<double> arrivals =
      paced ? serve::poisson_arrivals(o.num_requests, o.request_rate, o.seed) : std::vector<double>{};
  std::vector<serve::RequestRecord> measured =
      run_phase(o, url, prompts, o.num_requests, false, arrivals, concurrency, Clock::now(), origin, pool);
  records.insert(records.end(), measured.begin(), measured.end());
  for (const std::string& path : {o.requests_log, session_log}) {
    if (path.empty()) continue;
    write_requests_log(records, anchor, path, path == session_log);
    std::cerr << "gpuscope bench serve: wrote " << path
              << (path == session_log ? " (the session's trace reads it when the server exits or at gpuscope stop)"
                                      : "")
              << "\n";
  }

  serve::LoadConfig config;
  config.url = url;
  config.endpoint = o.endpoint;
  config.model = o.model;
  config.concurrency = o.concurrency > 0 || !paced ? concurrency : 0;
  config.request_rate = o.request_rate;
  config.num_requests = o.num_requests;
  config.warmup = o.warmup;
  config.prompts = o.prompts.empty() ? "synthetic" : o.prompts;
  config.input_len = o.prompts.empty() ? o.input_len : 0;
  config.output_len = o.output_len;
  const serve::ServeSummary summary = serve::summarize(records);
  for (const std::string& e : summary.warmup_errors) std::cerr << "gpuscope bench serve: warning: " << e << "\n";
  for (const std::string& e : summary.errors) std::cerr << "gpuscope bench serve: warning: " << e << "\n";

  render::render(serve::serve_reports(summary, config), format, std::cout, render::DocumentOptions{"bench", false});
  std::cout.flush();
  if (!json.empty()) {
    core::BenchRun run = serve::to_bench_run(summary, config);
    run.gpuscope_version = core::kVersion;
    run.measured_at = units::utc_now_iso8601();
    store::write_bench_run(run, json, store::overwrite_if(force));
    std::cerr << "gpuscope bench serve: wrote " << json << "\n";
  }
  if (summary.completed == 0) {
    std::cerr << "gpuscope bench serve: error: no request completed (" << summary.failed << " failed; see above)\n";
    return kExitFailure;
  }
  return 0;
}

}  // namespace

void add_serve_options(CLI::App& sub, ServeOptions& o) {
  sub.add_option("--url", o.url, "serve: the server, http://HOST:PORT (or the full endpoint URL)")
      ->capture_default_str();
  sub.add_option("--endpoint", o.endpoint, "serve: completions (/v1/completions) or chat (/v1/chat/completions)")
      ->capture_default_str();
  sub.add_option("--model", o.model, "serve: the \"model\" of each request (default: not sent)");
  sub.add_option("--prompts", o.prompts,
                 "serve: JSONL file, one {\"prompt\": ..., \"max_tokens\": N} per line, cycled (default: synthetic)");
  count_option(sub.add_option("--input-len", o.input_len, "serve: words per synthetic prompt (~1 token each)")
                   ->capture_default_str(),
               core::CountLimits{1, 1'000'000, "128"});
  count_option(sub.add_option("--output-len", o.output_len, "serve: max_tokens of each request")->capture_default_str(),
               core::CountLimits{1, 1'000'000, "128"});
  count_option(sub.add_option("--num-requests", o.num_requests, "serve: requests measured")->capture_default_str(),
               core::CountLimits{1, 100'000, "100"});
  count_option(sub.add_option("--concurrency", o.concurrency,
                              "serve: requests in flight at most (default 1; unbounded with --request-rate)"),
               core::CountLimits{0, 10'000, "8"});
  real_option(sub.add_option("--request-rate", o.request_rate,
                             "serve: start requests as a Poisson process of R requests/s (default: no pacing)"),
              core::RealLimits{0.0, 1e6, true, true, "10"});
  count_option(
      sub.add_option("--warmup", o.warmup, "serve: requests sent first and not counted")->capture_default_str(),
      core::CountLimits{0, 10'000, "2"});
  sub.add_option("--seed", o.seed, "serve: seed of the synthetic prompts and the arrival times")->capture_default_str();
  // Durations (core/option_values.hpp): "90s", "2min", "500ms"; a bare number is seconds; at most a day.
  struct TimeOption {
    const char* name;
    std::int64_t ServeOptions::*value;
    const char* help;
    std::int64_t min_ns;
    const char* example;
  };
  const TimeOption times[] = {
      {"--timeout", &ServeOptions::timeout_ns, "serve: the longest one request may take in all (default 600s)",
       1'000'000, "600s or 10min"},
      {"--first-byte-timeout", &ServeOptions::first_byte_timeout_ns,
       "serve: a request with no byte of response this long after it was sent fails (a server that accepts and "
       "never answers; default 60s)",
       1'000'000, "60s or 2min"},
      {"--stall-timeout", &ServeOptions::stall_timeout_ns,
       "serve: a request whose response stops for this long between two events fails (default 30s)", 1'000'000,
       "30s or 2min"},
      {"--progress", &ServeOptions::progress_ns,
       "serve: print done, failed and in flight to stderr this often (default 5s; 0 = never); failed requests are "
       "printed as they happen either way",
       0, "5s or 500ms"},
  };
  for (const TimeOption& t : times)
    duration_ns_option(sub.add_option(t.name, o.*t.value, t.help),
                       core::DurationLimits{t.min_ns, 86'400'000'000'000, 1'000'000'000, t.example});
  sub.add_option("--api-key", o.api_key, "serve: bearer token (default: $OPENAI_API_KEY when set)");
  sub.add_option("--requests-log", o.requests_log,
                 "serve: write each request's span (start, each token, end; ns on CLOCK_REALTIME, the trace clock) "
                 "as JSON lines to FILE");
  sub.add_option("--session", o.session,
                 "serve: the server runs under gpuscope launch --session NAME: write the requests into that "
                 "session's log folder, so its trace gets them (the requests table)");
  sub.add_flag("--ignore-eos", o.ignore_eos,
               "serve: send \"ignore_eos\": true (vLLM, SGLang): always --output-len tokens");
}

int run_bench_serve(const ServeOptions& o, const std::string& format, const std::string& json, bool force) {
  try {
    return run(o, format, json, force);
  } catch (const std::exception& e) {
    std::cerr << "gpuscope bench serve: error: " << e.what() << "\n";
    const bool input = dynamic_cast<const InputError*>(&e) || dynamic_cast<const std::invalid_argument*>(&e) ||
                       dynamic_cast<const store::OutputExistsError*>(&e);
    return input ? kExitInput : kExitFailure;
  }
}

}  // namespace gpuscope::cli
