// vector_add, square, relu, copy: memory-bound elementwise operators (operator.hpp).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bench/ops/check.hpp"
#include "bench/ops/device_buffer.hpp"
#include "bench/ops/fill.hpp"
#include "bench/ops/kernels.hpp"
#include "bench/ops/suite.hpp"

namespace gpuscope::bench::ops::detail {
namespace {

enum class Family { kAdd, kSquare, kRelu, kCopy };

// 4 units in the last place of the dtype: the elementwise results are exact on the
// fill::value_exact inputs except powf, which CUDA documents as within 4 ulp (f32).
double elementwise_tolerance(DType dtype, double ref) { return 8.0 * dtype_unit_roundoff(dtype) * std::fabs(ref); }

constexpr std::string_view kElementwiseReference =
    "CPU: the same f32 arithmetic on the same inputs (fill::value_exact, odd multiples of 1/32, exact in every dtype), "
    "rounded to the dtype; tolerance 4 ulp of the dtype relative (|err| <= 8 u |ref|; the results are exact except "
    "powf, documented within 4 ulp); every element up to 2^26, else 64 chunks of 4096";

class ElementwiseInstance final : public Instance {
 public:
  ElementwiseInstance(Family family, int kind, DType dtype, std::int64_t n, int sm_count)
      : m_family(family), m_kind(kind), m_dtype(dtype), m_n(n), m_sm_count(sm_count) {
    const auto bytes = static_cast<std::size_t>(n) * dtype_bytes(dtype);
    m_x = DeviceBuffer(bytes);
    if (family == Family::kAdd) m_y = DeviceBuffer(bytes);
    m_out = DeviceBuffer(bytes);
    kernels::fill(kernels::Fill::kExact, dtype, m_x.get(), n, fill::kSeedX, 1.0f, nullptr);
    if (family == Family::kAdd) kernels::fill(kernels::Fill::kExact, dtype, m_y.get(), n, fill::kSeedY, 1.0f, nullptr);
    m_out.poison();
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
  }

  void enqueue(cudaStream_t stream) override {
    switch (m_family) {
      case Family::kAdd:
        kernels::vector_add(static_cast<kernels::AddKind>(m_kind), m_dtype, m_x.get(), m_y.get(), m_out.get(), m_n,
                            m_sm_count, stream);
        break;
      case Family::kSquare:
        kernels::square(static_cast<kernels::SquareKind>(m_kind), m_dtype, m_x.get(), m_out.get(), m_n, m_sm_count,
                        stream);
        break;
      case Family::kRelu:
        kernels::relu(m_dtype, m_x.get(), m_out.get(), m_n, m_sm_count, stream);
        break;
      case Family::kCopy:
        if (m_kind == 0)
          kernels::copy(m_x.get(), m_out.get(), m_n * dtype_bytes(m_dtype), m_sm_count, stream);
        else
          GPUSCOPE_CUDA_CALL(cudaMemcpyAsync(m_out.get(), m_x.get(), m_x.bytes(), cudaMemcpyDeviceToDevice, stream));
        break;
    }
  }

  Verification verify() override {
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());
    check::ErrorTracker errors("y");
    for (const check::Range& r : check::ranges_to_check(m_n)) {
      const std::vector<double> got = check::download(m_out.get(), m_dtype, r.first, r.count);
      for (std::int64_t j = 0; j < r.count; ++j) {
        const auto i = static_cast<std::uint64_t>(r.first + j);
        const float x = fill::value_exact(i, fill::kSeedX);
        float ref = x;
        switch (m_family) {
          case Family::kAdd:
            ref = x + fill::value_exact(i, fill::kSeedY);
            break;
          case Family::kSquare:
            ref = x * x;
            break;
          case Family::kRelu:
            ref = std::max(x, 0.0f);
            break;
          case Family::kCopy:
            break;
        }
        ref = check::round_to(m_dtype, ref);
        errors.add(r.first + j, got[static_cast<std::size_t>(j)], ref, elementwise_tolerance(m_dtype, ref));
      }
    }
    return errors.result(check::ranges_note(m_n));
  }

 private:
  Family m_family;
  int m_kind;
  DType m_dtype;
  std::int64_t m_n;
  int m_sm_count;
  DeviceBuffer m_x, m_y, m_out;
};

// The parts every elementwise operator shares: one size n, BenchWork from bytes per
// element, setup through ElementwiseInstance.
Operator elementwise(std::string name, double inputs, double flops_per_element) {
  Operator op;
  op.name = std::move(name);
  op.shape_help = "n: elements";
  op.default_sizes = "2^12:2^28:4";
  op.default_mode = Mode::kCold;
  op.dtypes = {DType::kF32, DType::kF16, DType::kBF16};
  op.reference = std::string(kElementwiseReference);
  op.shape = [name = op.name](std::span<const std::int64_t> t) {
    check_token(name, t, {1}, "n (elements)");
    return std::vector<std::int64_t>{t[0]};
  };
  op.sweep_x = [](const CaseSpec& c) { return d(c, 0); };
  op.params = [](const CaseSpec& c) { return "n=" + std::to_string(c.dims.at(0)); };
  op.work = [inputs, flops_per_element](const CaseSpec& c) {
    const double bytes = d(c, 0) * dtype_bytes(c.dtype);
    BenchWork w;
    w.bytes_read = inputs * bytes;
    w.bytes_written = bytes;
    w.flops = flops_per_element * d(c, 0);
    w.compute_ceiling = "fp32_fma";  // f16/bf16 are converted and computed in f32
    return w;
  };
  op.device_bytes = [inputs](const CaseSpec& c) { return (inputs + 1) * d(c, 0) * dtype_bytes(c.dtype); };
  return op;
}

template <class KindFor>
void set_setup(Operator& op, Family family, KindFor kind_for) {
  op.setup = [family, kind_for, names = op.variants](const CaseSpec& c, const SetupContext& ctx) {
    std::size_t index = names.size();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i].name == c.variant) index = i;
    if (index == names.size()) throw std::invalid_argument("unknown variant '" + c.variant + "'");
    return std::unique_ptr<Instance>(
        std::make_unique<ElementwiseInstance>(family, kind_for(index), c.dtype, c.dims.at(0), ctx.sm_count));
  };
}

}  // namespace

Operator make_vector_add() {
  Operator op = elementwise("vector_add", 2, 1);
  op.summary = "out = x + y: the tutorial's first kernel, from one thread to a vectorized grid-stride loop";
  op.teaches =
      "serial launches <<<1, 1>>>: one thread walks all n elements, every load waits for memory, and the other "
      "thousands of cores idle, so it is latency-bound and orders of magnitude slower. per_element gives each element "
      "its own thread (ceil(n / 256) blocks): enough loads in flight to hide latency, memory-bound for large n. "
      "grid_stride_vec4 launches one wave of threads (8 blocks of 256 per SM) that loop over 16-byte vectors (float4, "
      "or 8 halves): fewer instructions and memory requests per byte, the last few percent to the DRAM ceiling. Every "
      "variant is launch- and latency-bound at small n: the sweep shows where each reaches 90 % of its final "
      "bandwidth.";
  op.variants = {
      {"serial", "<<<1, 1>>>: a single thread loops over all elements (sizes above 2^18 are skipped)", 1 << 18},
      {"per_element", "one thread per element, ceil(n / 256) blocks of 256, scalar loads", 0},
      {"grid_stride_vec4", "grid-stride loop over 16-byte vectors (float4 / 8 halves), one wave of blocks", 0},
  };
  set_setup(op, Family::kAdd, [](std::size_t i) { return static_cast<int>(i); });  // AddKind order
  return op;
}

Operator make_square() {
  Operator op = elementwise("square", 1, 1);
  op.summary = "y = x^2 three ways (a * a, a ** 2, torch.square): they cost the same";
  op.teaches =
      "mul calls a generic binary multiply kernel with x as both operands (what a * a does), pow a generic power "
      "kernel "
      "with the exponent 2 passed at run time (a ** 2: powf, about 20 instructions instead of 1), fused a dedicated "
      "x * x kernel (torch.square). All three read n elements and write n, 1 FLOP per 8 bytes in f32 (0.125 FLOP/B), "
      "far left of the ridge point (FP32 FMA rate / DRAM bandwidth, about 20 FLOP/B on an H100): the SMs spend their "
      "time waiting for DRAM, so the extra instructions of powf and the second, cached read of x in mul are hidden and "
      "the times agree within noise. Arithmetic only costs time for operators right of the ridge point.";
  op.variants = {
      {"mul", "generic binary multiply kernel, out = a * b called with a = b = x", 0},
      {"pow", "generic power kernel, out = powf(x, p) with p = 2 passed at run time", 0},
      {"fused", "dedicated square kernel, out = x * x", 0},
  };
  set_setup(op, Family::kSquare, [](std::size_t i) { return static_cast<int>(i); });  // SquareKind order
  return op;
}

Operator make_relu() {
  Operator op = elementwise("relu", 1, 1);
  op.summary = "y = max(x, 0): a memory-bound activation";
  op.teaches =
      "One comparison per element (counted as 1 FLOP) on 2 × dtype bytes moved: relu should run at the speed of copy. "
      "Any gap to copy is what the conversions and the kernel's loop cost; on the roofline it sits on the DRAM slope.";
  op.variants = {{"grid_stride_vec4", "grid-stride loop over 16-byte vectors, fmaxf(x, 0) in f32", 0}};
  set_setup(op, Family::kRelu, [](std::size_t) { return 0; });
  return op;
}

Operator make_copy() {
  Operator op = elementwise("copy", 1, 0);
  op.summary = "y = x: the memory ceiling every memory-bound operator is measured against";
  op.default_sizes = "2^12:2^30:4";
  op.teaches =
      "A copy moves 2 × n × dtype bytes and computes nothing: the fastest a memory-bound operator can be. "
      "grid_stride_vec4 is a kernel with 16-byte accesses and 4 loads in flight per thread; memcpy is "
      "cudaMemcpyAsync device-to-device. Large copies should reach >= 90 % of gpuscope peak's DRAM copy ceiling. "
      "Copies that fit in L2 run faster than DRAM in hot and graph mode (back-to-back calls find the data in L2); "
      "cold mode flushes L2 first. Small copies are launch-bound.";
  op.variants = {
      {"grid_stride_vec4", "kernel: 16-byte loads/stores, 4 loads in flight per thread, one wave of blocks", 0},
      {"memcpy", "cudaMemcpyAsync(device to device)", 0},
  };
  set_setup(op, Family::kCopy, [](std::size_t i) { return static_cast<int>(i); });
  return op;
}

}  // namespace gpuscope::bench::ops::detail
