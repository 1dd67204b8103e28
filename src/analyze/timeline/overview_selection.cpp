#include "analyze/timeline/overview_selection.hpp"

namespace gpuscope::analyze::detail::overview {

std::vector<Held> Selector::take(std::int64_t budget) {
  budget = std::max<std::int64_t>(budget, 0);
  std::vector<Held> out;
  out.reserve(std::min(static_cast<std::size_t>(budget), m_pool.size()));
  std::vector<bool> taken(m_pool.size(), false);
  auto keep = [&](std::int32_t at) {
    if (at < 0 || taken[static_cast<std::size_t>(at)] || static_cast<std::int64_t>(out.size()) >= budget) return;
    taken[static_cast<std::size_t>(at)] = true;
    out.push_back(m_pool[static_cast<std::size_t>(at)]);
  };
  if (m_all) {
    std::vector<std::int32_t> order(m_pool.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int32_t>(i);
    // More events than counted (should not be): the longest.
    if (static_cast<std::int64_t>(order.size()) > budget)
      std::stable_sort(order.begin(), order.end(), [this](std::int32_t a, std::int32_t b) {
        const Held& x = m_pool[static_cast<std::size_t>(a)];
        const Held& y = m_pool[static_cast<std::size_t>(b)];
        return Better{}(Key{x.item.duration_ns, x.serial, a}, Key{y.item.duration_ns, y.serial, b});
      });
    for (std::int32_t at : order) keep(at);
  } else {
    std::vector<std::int32_t> cells;
    for (std::int32_t c : m_cells)
      if (c >= 0) cells.push_back(c);
    const std::int64_t spread_budget = budget / 2;
    std::vector<bool> used(cells.size(), false);
    if (!cells.empty() && spread_budget > 0) {
      const double step = std::max(1.0, static_cast<double>(cells.size()) / static_cast<double>(spread_budget));
      for (double i = 0; i < static_cast<double>(cells.size()); i += step) {
        const auto k = static_cast<std::size_t>(i);
        used[k] = true;
        keep(cells[k]);
      }
    }
    std::sort(m_long.begin(), m_long.end(), Better{});
    for (const Key& k : m_long) keep(k.pool);
    for (std::size_t k = 0; k < cells.size(); ++k)
      if (!used[k]) keep(cells[k]);
  }
  for (std::size_t i = 0; i < m_pool.size(); ++i)
    if (!taken[i] && (m_all || m_refs[i] > 0)) m_names.release(m_pool[i].item.name);
  m_pool.clear();
  m_refs.clear();
  m_free.clear();
  m_long.clear();
  m_cut.reset();
  m_cells.clear();
  return out;
}

// Keeps the best m_long_cap of the longest-event candidates; the worst kept is the cut.
void Selector::compact() {
  const auto nth = m_long.begin() + (m_long_cap - 1);
  std::nth_element(m_long.begin(), nth, m_long.end(), Better{});
  m_cut = *nth;
  for (auto it = nth + 1; it != m_long.end(); ++it) unref(it->pool);
  m_long.erase(nth + 1, m_long.end());
}

}  // namespace gpuscope::analyze::detail::overview
