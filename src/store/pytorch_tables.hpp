// The PyTorch tables (torch_ops, torch_modules, torch_steps, torch_op_activities) of a trace
// recorded with `gpuscope trace --pytorch`: built at import, after the event tables and
// their indexes, from the NVTX ranges and marks gpuscope's PyTorch hooks left
// (core/pytorch_ranges.hpp says which). A trace without them gets empty tables.
#pragma once

#include <cstdint>

namespace gpuscope::store {

class Database;
namespace detail {
class ImportState;
}

/// Counts of what write_pytorch_tables wrote.
struct PytorchRows {
  std::int64_t ops = 0, modules = 0, steps = 0, op_activities = 0;
};

/// Reads nvtx_events (default domain), kernels and api_calls of `db`; writes the four
/// tables through `state`'s string table. Errors: DatabaseError from SQLite.
PytorchRows write_pytorch_tables(detail::ImportState& state, Database& db);

}  // namespace gpuscope::store
