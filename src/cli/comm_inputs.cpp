#include "cli/comm_inputs.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "analyze/comm/comm_summary.hpp"
#include "store/trace.hpp"

namespace gpuscope::cli {

analyze::detail::CommSummary map_trace(const std::string& path) {
  store::Database db = store::open_trace(path);
  analyze::detail::CommSummary s = analyze::detail::comm_map(db);
  s.source = path;
  return s;
}

int default_map_jobs() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

std::vector<analyze::detail::CommSummary> map_comm_inputs(const std::vector<std::string>& inputs, int jobs) {
  std::vector<analyze::detail::CommSummary> out(inputs.size());
  std::vector<std::exception_ptr> errors(inputs.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < inputs.size(); i = next++) {
      try {
        out[i] =
            analyze::is_comm_summary_file(inputs[i]) ? analyze::read_comm_summary(inputs[i]) : map_trace(inputs[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(std::max(1, jobs), inputs.size());
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  pool.clear();  // joins
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace gpuscope::cli
