// monitor_screen: the terminal of `gpuscope monitor` through ncurses (wide-character build):
// whole lines drawn each refresh, keys read without waiting for Enter.
#pragma once

#include <string>
#include <vector>

namespace gpuscope::cli {

class MonitorScreen {
 public:
  MonitorScreen();   // initscr, cbreak, noecho, no cursor
  ~MonitorScreen();  // endwin: the terminal as it was
  MonitorScreen(const MonitorScreen&) = delete;
  MonitorScreen& operator=(const MonitorScreen&) = delete;

  [[nodiscard]] int width() const;
  [[nodiscard]] int height() const;
  void draw(const std::vector<std::string>& lines);
  /// The next key, waiting up to `timeout_ms`; -1 when none came.
  [[nodiscard]] int key(int timeout_ms);
};

}  // namespace gpuscope::cli
