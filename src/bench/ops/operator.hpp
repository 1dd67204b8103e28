// The operator suite of `gpuscope bench` (`gpuscope bench list`): the exercises of the
// tutorial material, each with variants that teach one lesson, a declared amount of work
// per call, and a reference check of its output.
//
// An Operator is a row of the registry (registry()): its name, what it teaches, its
// variants and dtypes, how a --sizes token becomes its shape, its declared work per call
// (BenchWork: bytes read, bytes written, FLOP, the compute ceiling its arithmetic runs
// on — compulsory traffic: each input read once, each output written once), and setup(),
// which allocates device buffers, fills the inputs deterministically (fill.hpp) and
// returns an Instance. Instance::enqueue(stream) is what the timing engine
// (gpuscope/bench.hpp) times; Instance::verify() compares the outputs of the last call
// with a reference (a CPU computation in f64 from the same deterministic inputs) within
// the tolerance the Operator's `reference` text documents.
//
// Shapes: CaseSpec::dims is the operator's canonical shape (Operator::shape turns the 1 to
// 3 numbers of a --sizes token into it); BenchCase::size is Operator::sweep_x of it.
//
// Errors: setup/enqueue/verify throw gpuscope::bench::CudaError for CUDA failures,
// std::runtime_error when a library is missing (cuBLASLt), std::invalid_argument for a
// shape or variant the operator does not take (the message names what is valid).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/ops/dtype.hpp"
#include "core/bench_result.hpp"
#include "gpuscope/bench.hpp"

namespace gpuscope::bench::ops {

/// One case to set up.
struct CaseSpec {
  std::string variant;
  DType dtype = DType::kF32;
  std::vector<std::int64_t> dims;  // canonical shape, see Operator::shape_help
};

/// The outcome of a reference check.
struct Verification {
  bool passed = false;
  double max_abs_error = kUnknown;  // max |GPU − reference| over the checked elements
  std::int64_t checked = 0;         // output elements compared
  std::string note;                 // what was checked when not everything ("1,024 sampled entries")
  std::string first_failure;        // "y[1234] = nan, reference 1.25, tolerance 3e-07"; "" if passed
};

/// Device state of one case: inputs filled, outputs allocated (and poisoned with NaN).
class Instance {
 public:
  virtual ~Instance() = default;
  /// Enqueues one call on `stream`; capturable into a CUDA graph, never synchronizes.
  virtual void enqueue(cudaStream_t stream) = 0;
  /// Synchronizes the device and compares the outputs of the last call with the reference.
  [[nodiscard]] virtual Verification verify() = 0;
};

struct SetupContext {
  int device = 0;
  int sm_count = 1;
};

struct Variant {
  std::string name;
  std::string description;    // one line: how this variant is written
  std::int64_t max_size = 0;  // sweep_x above this is skipped (too slow by design); 0 = no limit
};

struct Operator {
  std::string name;
  std::string summary;        // one line
  std::string teaches;        // what comparing the variants shows, and why
  std::string shape_help;     // how a --sizes token maps to the shape, e.g. "N: an N x N matrix"
  std::string default_sizes;  // the --sizes default, e.g. "2^12:2^28:4"
  Mode default_mode = Mode::kCold;
  std::vector<Variant> variants;
  std::vector<DType> dtypes;  // the first is the default
  std::string reference;      // how outputs are checked, with the tolerance

  /// Canonical dims from the numbers of one --sizes token ("1024" → {1024},
  /// "64x4096x4096" → {64, 4096, 4096}); throws std::invalid_argument when the operator
  /// takes no such shape.
  std::function<std::vector<std::int64_t>(std::span<const std::int64_t> token)> shape;
  std::function<double(const CaseSpec&)> sweep_x;       // BenchCase::size
  std::function<std::string(const CaseSpec&)> params;   // BenchCase::params, "n=1024"
  std::function<BenchWork(const CaseSpec&)> work;       // declared work per call
  std::function<double(const CaseSpec&)> device_bytes;  // bytes setup() allocates
  std::function<std::unique_ptr<Instance>(const CaseSpec&, const SetupContext&)> setup;

  /// The variant called `name`, or nullptr.
  [[nodiscard]] const Variant* find_variant(std::string_view variant) const;
  [[nodiscard]] bool supports(DType dtype) const;
};

/// Every operator, in the order `gpuscope bench list` prints them.
[[nodiscard]] const std::vector<Operator>& registry();
/// The operator called `name`, or nullptr.
[[nodiscard]] const Operator* find_operator(std::string_view name);

}  // namespace gpuscope::bench::ops
