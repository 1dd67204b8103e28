#include "store/kernel_names.hpp"
#include "core/utf8.hpp"

#include <gtest/gtest.h>

namespace gpuscope::store {
namespace {

// Found by fuzz_event_log_import: a source name length (21) that cuts the third byte off a
// U+FFFD; the demangler wrote "\xef\xbf)\xbd", which is not UTF-8.
TEST(Demangle, ALengthThatCutsACharacterStillGivesUtf8) {
  const std::string mangled =
      "_ZN5cudnn19engines_precompiled16nhwcToNchwKernelIfffLb1ELb0EL21cudnnKerne"
      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
      "aType_t0EEEvNS0_18nhwc2nchw_params_tIT1_EEPKT_PT0_";
  const std::string out = demangle(mangled);
  EXPECT_NE(out, mangled);  // it does demangle
  EXPECT_TRUE(core::valid_utf8(out)) << out;
  EXPECT_NE(out.find("nhwcToNchwKernel"), std::string::npos) << out;
}

TEST(Demangle, PlainFunction) { EXPECT_EQ(demangle("_Z6kernelPfi"), "kernel(float*, int)"); }

TEST(Demangle, TemplateWithReturnType) {
  EXPECT_EQ(demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arr"
                     "ayIPcLm1EEEEviT0_T1_"),
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
            "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)");
}

TEST(Demangle, NotMangledIsReturnedAsIs) {
  EXPECT_EQ(demangle("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
  EXPECT_EQ(demangle("my_extern_c_kernel"), "my_extern_c_kernel");
  // A plain type code such as "i" would demangle to "int": only _Z names are names.
  EXPECT_EQ(demangle("i"), "i");
  EXPECT_EQ(demangle(""), "");
}

TEST(Demangle, FailureReturnsInput) { EXPECT_EQ(demangle("_Z_not_valid!"), "_Z_not_valid!"); }

TEST(BaseName, PlainFunction) { EXPECT_EQ(base_name("kernel(float*, int)"), "kernel"); }

TEST(BaseName, NestedTemplatesAndReturnType) {
  EXPECT_EQ(base_name("void at::native::vectorized_elementwise_kernel<4, "
                      "at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, "
                      "at::native::FillFunctor<float>, std::array<char*, 1ul>)"),
            "vectorized_elementwise_kernel");
}

TEST(BaseName, LambdasAndOperatorCallInsideTemplateArguments) {
  const std::string name = demangle(
      "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_"
      "copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE5_clEvEUlfE_EEvS4_RKT_EUliE_"
      "EEviT1_");
  ASSERT_NE(name.find("{lambda(int)#1}"), std::string::npos) << name;
  EXPECT_EQ(base_name(name), "elementwise_kernel");
}

TEST(BaseName, AnonymousNamespace) {
  EXPECT_EQ(base_name(demangle("_ZN12_GLOBAL__N_16kernelIfEEvPT_")), "kernel");
  EXPECT_EQ(base_name("(anonymous namespace)::helper(int)"), "helper");
}

TEST(BaseName, OperatorCall) {
  EXPECT_EQ(base_name(demangle("_ZNK3FooclEi")), "operator()");
  EXPECT_EQ(base_name("ns::Functor<int>::operator()(float) const"), "operator()");
  EXPECT_EQ(base_name("bool operator< <int>(A<int> const&, A<int> const&)"), "operator<");
  EXPECT_EQ(base_name("Stream& operator<<(Stream&, int)"), "operator<<");
}

TEST(BaseName, LambdaAsLastComponent) {
  EXPECT_EQ(base_name("main::{lambda(int)#1}::operator()(int) const"), "operator()");
  EXPECT_EQ(base_name("void f<main::{lambda(int)#1}>(main::{lambda(int)#1})"), "f");
}

TEST(BaseName, ClassTemplateQualifier) {
  EXPECT_EQ(base_name("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6>("
                      "cutlass_80_tensorop_s1688gemm_64x64_32x6::Params)"),
            "Kernel2");
  EXPECT_EQ(base_name("void flash::Outer<128, true>::inner_kernel<float>(float*)"), "inner_kernel");
}

TEST(BaseName, FunctionPointerAndExpressionTemplateArguments) {
  EXPECT_EQ(base_name("void apply<void (*)(int, float), (char)1>(void (*)(int, float))"), "apply");
  EXPECT_EQ(base_name("void k<decltype(a->b)>(int)"), "k");
}

TEST(BaseName, CloneSuffixAndQualifiers) {
  EXPECT_EQ(base_name("foo(int) [clone .constprop.0]"), "foo");
  EXPECT_EQ(base_name("A::bar() const &&"), "bar");
}

TEST(BaseName, UnmangledNamesAsIs) {
  EXPECT_EQ(base_name("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
  EXPECT_EQ(base_name("ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
  EXPECT_EQ(base_name(""), "");
}

TEST(BaseName, OperatorPrefixedIdentifierIsNotAnOperator) {
  EXPECT_EQ(base_name("void ops::operator_fused_kernel<float>(float*)"), "operator_fused_kernel");
}

}  // namespace
}  // namespace gpuscope::store

TEST(ApiFunctionName, DropsCuptiVersionSuffix) {
  using gpuscope::store::api_function_name;
  EXPECT_EQ(api_function_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(api_function_name("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync_ptsz");
  EXPECT_EQ(api_function_name("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(api_function_name("cuMemAlloc_v2"), "cuMemAlloc_v2");
  EXPECT_EQ(api_function_name("cudaGraphLaunch_v10000"), "cudaGraphLaunch");
  EXPECT_EQ(api_function_name("my_v"), "my_v");
  EXPECT_EQ(api_function_name("_v12"), "_v12");
}
