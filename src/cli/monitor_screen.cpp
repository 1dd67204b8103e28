#include "cli/monitor_screen.hpp"

#include <ncurses.h>

namespace gpuscope::cli {

MonitorScreen::MonitorScreen() {
  initscr();
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
}

MonitorScreen::~MonitorScreen() { endwin(); }

int MonitorScreen::width() const { return COLS; }
int MonitorScreen::height() const { return LINES; }

void MonitorScreen::draw(const std::vector<std::string>& lines) {
  erase();
  for (std::size_t i = 0; i < lines.size() && static_cast<int>(i) < LINES; ++i) {
    mvaddstr(static_cast<int>(i), 0, lines[i].c_str());
  }
  refresh();
}

int MonitorScreen::key(int timeout_ms) {
  timeout(timeout_ms);
  const int k = getch();
  return k == ERR ? -1 : k;
}

}  // namespace gpuscope::cli
