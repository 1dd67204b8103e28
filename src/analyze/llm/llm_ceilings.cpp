#include "analyze/llm/llm_ceilings.hpp"

#include <optional>
#include <string_view>
#include <utility>

#include "core/bench_derive.hpp"
#include "core/machine_profile.hpp"
#include "store/database.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::analyze::detail {
namespace {

// The catalog ceiling for matrix products in `dtype` (the model's weights'), and why.
std::pair<std::string, std::string> tensor_ceiling_for(const std::string& dtype) {
  if (dtype == "float16") return {"tensor_fp16", "float16 weights"};
  if (dtype == "bfloat16") return {"tensor_bf16", "bfloat16 weights"};
  if (dtype == "float32")
    return {"fp32_fma",
            "float32 weights: PyTorch runs float32 matrix products on the CUDA cores unless TF32 is allowed "
            "(torch.backends.cuda.matmul.allow_tf32, off by default; with it the tensor_tf32 ceiling applies)"};
  if (dtype.rfind("float8", 0) == 0) return {"tensor_fp8", dtype + " weights"};
  if (dtype.empty())
    return {"tensor_fp16", "assumed: the weights' dtype is not in the trace (recorded by gpuscope's modules hook)"};
  return {"tensor_fp16", "assumed for " + dtype +
                             " weights (gpuscope has no ceiling for that dtype; weight-only "
                             "quantized models multiply in 16-bit)"};
}

}  // namespace

// The GPU the process launched most of its kernels on (its devices row), its cached `gpuscope
// peak` profile, else its theoretical ceilings.
Ceilings ceilings_for(store::Database& db, std::int64_t pid, const std::string& dtype) {
  Ceilings c;
  if (!db.has_table("devices")) return c;
  store::Statement st = db.prepare(
      "SELECT d.uuid, d.name, d.memory_bandwidth_bytes_per_s, d.cc_major, d.cc_minor, d.sm_count, d.l2_cache_bytes, "
      "d.core_clock_khz, d.memory_clock_khz, d.memory_bus_width_bits FROM devices d WHERE d.pid = ?1 ORDER BY "
      "(SELECT COUNT(*) FROM kernels k WHERE k.pid = d.pid AND k.device_id = d.device_id) DESC, d.device_id LIMIT 1");
  st.bind(1, pid);
  if (!st.step()) return c;
  core::DeviceFacts f;
  f.uuid = st.column_text(0);
  f.name = st.column_text(1);
  const double cupti_bw = static_cast<double>(st.column_int(2));
  f.cc_major = static_cast<int>(st.column_int(3));
  f.cc_minor = static_cast<int>(st.column_int(4));
  f.sm_count = static_cast<int>(st.column_int(5));
  f.l2_bytes = st.column_int(6);
  f.max_sm_clock_mhz = static_cast<double>(st.column_int(7)) / 1000.0;
  f.max_mem_clock_mhz = static_cast<double>(st.column_int(8)) / 1000.0;
  f.memory_bus_width_bits = static_cast<int>(st.column_int(9));
  const auto [tensor_name, tensor_why] = tensor_ceiling_for(dtype);
  std::optional<core::MachineProfile> profile;
  if (!f.uuid.empty()) {
    try {
      profile = store::load_cached_profile(f.uuid);
    } catch (const std::exception&) {  // a broken cached file, no cache folder: theoretical instead
    }
  }
  if (profile) {
    for (const char* name : {"dram_read", "dram_copy"}) {
      const core::Ceiling* d = profile->find(name);
      if (d != nullptr && d->measured > 0) {
        c.dram = d->measured;
        c.dram_what = std::string("the measured DRAM ") + (std::string_view(name) == "dram_read" ? "read" : "copy") +
                      " bandwidth of " + f.name + " (gpuscope peak's " + name + ")";
        break;
      }
    }
    if (const core::Ceiling* t = profile->find(tensor_name); t != nullptr && t->measured > 0) {
      c.tensor = t->measured;
      c.tensor_what = "the measured " + tensor_name + " ceiling of " + f.name + " (gpuscope peak; " + tensor_why + ")";
    }
  }
  const std::string no_profile = "; no `gpuscope peak` profile of this GPU is cached: gpuscope peak measures it";
  if (!(c.dram > 0) && cupti_bw > 0) {
    c.dram = cupti_bw;
    c.dram_what = "the theoretical DRAM bandwidth of " + f.name + " (CUPTI's" + (profile ? "" : no_profile) + ")";
  }
  if (!(c.tensor > 0)) {
    const double t = core::theoretical_ceiling(f, tensor_name, f.max_sm_clock_mhz);
    if (t > 0) {
      c.tensor = t;
      c.tensor_what = "the theoretical " + tensor_name + " ceiling of " + f.name + " (" + tensor_why +
                      (profile ? "" : no_profile) + ")";
    } else {
      c.tensor_what = "no " + tensor_name + " ceiling is known for " + f.name + " (" + tensor_why + no_profile + ")";
    }
  }
  return c;
}

}  // namespace gpuscope::analyze::detail
