// Reading a trace's rows for analyze/timeline (timeline.cpp, timeline_tracks.cpp): a nullable
// column with a fallback, and visit_rows, which visits a statement's rows as events, with an
// optional read-ahead thread (TraceTimeline::set_read_ahead says what it guarantees).
// Errors: store::DatabaseError from a step, thrown on the caller's thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "store/database.hpp"

namespace gpuscope::analyze::detail {

inline std::int64_t int_or(const store::Statement& st, int col, std::int64_t fallback = 0) {
  return st.is_null(col) ? fallback : st.column_int(col);
}

inline std::optional<std::int64_t> opt_int(const store::Statement& st, int col) {
  if (st.is_null(col)) return std::nullopt;
  return st.column_int(col);
}

// Visits the rows of `st` as events filled by `read(st, event)`, in the statement's order.
// With read-ahead a second thread steps the statement and fills batches of kBatch events
// while the caller's thread visits the batch before (at most kInFlight batches wait:
// memory stays bounded). The caller's thread calls `visit`, one event at a time, in order,
// as without; a read error is thrown there, and a visitor's exception stops the reading.
template <class Event, class Read>
void visit_rows(store::Statement& st, Read read, const std::function<void(const Event&)>& visit, bool read_ahead) {
  if (!read_ahead) {
    while (st.step()) {
      Event e;
      read(st, e);
      visit(e);
    }
    return;
  }
  constexpr std::size_t kBatch = 2048, kInFlight = 2;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::vector<Event>> ready;
  bool done = false, stop = false;
  std::exception_ptr error;
  std::thread reader([&] {
    try {
      for (bool more = true; more;) {
        std::vector<Event> batch;
        batch.reserve(kBatch);
        // A statement is never stepped again once done (SQLite would start it over).
        while (batch.size() < kBatch && (more = st.step())) read(st, batch.emplace_back());
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return ready.size() < kInFlight || stop; });
        if (stop) break;
        if (!batch.empty()) ready.push_back(std::move(batch));
        changed.notify_all();
      }
    } catch (...) {
      const std::lock_guard lock(mutex);
      error = std::current_exception();
    }
    const std::lock_guard lock(mutex);
    done = true;
    changed.notify_all();
  });
  try {
    for (;;) {
      std::vector<Event> batch;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return !ready.empty() || done; });
        if (ready.empty()) break;
        batch = std::move(ready.front());
        ready.pop_front();
        changed.notify_all();
      }
      for (const Event& e : batch) visit(e);
    }
  } catch (...) {
    {
      const std::lock_guard lock(mutex);
      stop = true;
      changed.notify_all();
    }
    reader.join();
    throw;
  }
  reader.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace gpuscope::analyze::detail
