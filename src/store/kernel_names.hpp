// Kernel name forms stored in the trace (kernels.name_id / short_name_id /
// mangled_name_id). Pure string functions, no state.
//
// CUPTI reports the mangled (Itanium C++ ABI) name of a kernel; extern "C"
// kernels and Triton/JAX kernels come unmangled (e.g. triton_poi_fused_add_0).
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::store {

/// Demangles an Itanium-ABI name ("_Z...") with abi::__cxa_demangle. A name that
/// is not mangled, or that fails to demangle, is returned unchanged. The result is valid
/// UTF-8 whenever `name` is (core::repair_utf8 after the demangler, which may split a
/// multi-byte character at a source name's byte length).
[[nodiscard]] std::string demangle(std::string_view name);

/// The base name of a demangled function name, as `nsys --base` shows it: no
/// return type, namespaces/classes, template arguments, parameters or
/// qualifiers. "void at::native::vectorized_elementwise_kernel<4, F>(int, F)"
/// -> "vectorized_elementwise_kernel"; "(anonymous namespace)::k<float>(float*)"
/// -> "k"; "ns::Functor::operator()(int) const" -> "operator()"; an unmangled
/// name such as "triton_poi_fused_add_0" is returned as is. Never empty for a
/// non-empty input (falls back to the input if it cannot parse it).
[[nodiscard]] std::string base_name(std::string_view demangled);

/// The CUDA API function name as users write it: cuptiGetCallbackName's
/// version suffix is dropped ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel",
/// "cudaMemcpyAsync_ptsz_v7000" -> "cudaMemcpyAsync_ptsz"). Driver suffixes like
/// cuMemAlloc_v2 are real symbol names and are kept.
[[nodiscard]] std::string_view api_function_name(std::string_view cupti_name);

}  // namespace gpuscope::store
