// core/nccl: NCCL kernel names of both generations, PyTorch communication operators,
// shapes, and nccl-tests' bandwidth definitions (doc/PERFORMANCE.md) on hand-computed cases.
#include "core/nccl.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuscope::core {
namespace {

using C = NcclCollective;

TEST(NcclNames, NewGenerationCarriesEverything) {
  const auto k = parse_nccl_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->collective, C::kAllReduce);
  EXPECT_EQ(k->redop, "Sum");
  EXPECT_EQ(k->datatype, "f32");
  EXPECT_EQ(k->element_bytes, 4);
  EXPECT_EQ(k->algorithm, "RING");
  EXPECT_EQ(k->protocol, "LL");
  EXPECT_FALSE(k->generic);
  const auto rs = parse_nccl_kernel("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL");
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->collective, C::kReduceScatter);
  EXPECT_EQ(rs->datatype, "bf16");
  EXPECT_EQ(rs->element_bytes, 2);
  const auto nv = parse_nccl_kernel("ncclDevKernel_AllReduce_MinMax_f8e4m3_NVLS_TREE_SIMPLE");
  ASSERT_TRUE(nv);
  EXPECT_EQ(nv->redop, "MinMax");
  EXPECT_EQ(nv->datatype, "f8e4m3");
  EXPECT_EQ(nv->element_bytes, 1);
  EXPECT_EQ(nv->algorithm, "NVLS_TREE");
  EXPECT_EQ(nv->protocol, "SIMPLE");
  const auto ag = parse_nccl_kernel("ncclDevKernel_AllGather_COLLNET_DIRECT_LL128");
  ASSERT_TRUE(ag);
  EXPECT_EQ(ag->collective, C::kAllGather);
  EXPECT_EQ(ag->datatype, "");
  EXPECT_EQ(ag->element_bytes, 0);
  EXPECT_EQ(ag->algorithm, "COLLNET_DIRECT");
  EXPECT_EQ(ag->protocol, "LL128");
  EXPECT_EQ(parse_nccl_kernel("ncclDevKernel_Broadcast_RING_LL")->collective, C::kBroadcast);
  EXPECT_EQ(parse_nccl_kernel("ncclDevKernel_Reduce_Prod_i64_TREE_LL")->collective, C::kReduce);
  EXPECT_EQ(parse_nccl_kernel("ncclDevKernel_Reduce_Prod_i64_TREE_LL")->element_bytes, 8);
  const auto sr = parse_nccl_kernel("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
  ASSERT_TRUE(sr);
  EXPECT_EQ(sr->collective, C::kSendRecv);
  EXPECT_EQ(sr->algorithm, "");
}

TEST(NcclNames, GenericKernelsHaveNoCollective) {
  for (const char* name : {"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_Generic_1",
                           "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)"}) {
    const auto k = parse_nccl_kernel(name);
    ASSERT_TRUE(k) << name;
    EXPECT_TRUE(k->generic) << name;
    EXPECT_EQ(k->collective, C::kUnknown) << name;
  }
  EXPECT_EQ(collective_name(C::kUnknown), "NCCL (generic)");
}

TEST(NcclNames, OldGenerationAndPlaceholderTypes) {
  const auto k = parse_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->collective, C::kAllReduce);
  EXPECT_EQ(k->redop, "Sum");
  EXPECT_EQ(k->datatype, "f32");
  EXPECT_EQ(k->element_bytes, 4);
  EXPECT_EQ(k->algorithm, "RING");
  EXPECT_EQ(k->protocol, "LL");
  const auto bf = parse_nccl_kernel("ncclKernel_ReduceScatter_RING_SIMPLE_Sum___nv_bfloat16(ncclDevComm*)");
  ASSERT_TRUE(bf);
  EXPECT_EQ(bf->datatype, "bf16");
  EXPECT_EQ(bf->element_bytes, 2);
  const auto u = parse_nccl_kernel("ncclKernel_AllReduce_TREE_LL128_Prod_uint64_t");
  EXPECT_EQ(u->datatype, "u64");
  EXPECT_EQ(u->protocol, "LL128");
  // Data-moving collectives: "Sum_int8_t" is not the tensor's type.
  const auto sr =
      parse_nccl_kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)");
  ASSERT_TRUE(sr);
  EXPECT_EQ(sr->collective, C::kSendRecv);
  EXPECT_EQ(sr->datatype, "");
  EXPECT_EQ(sr->element_bytes, 0);
  EXPECT_EQ(sr->redop, "");
  EXPECT_EQ(parse_nccl_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t")->element_bytes, 0);
  // Oldest: the collective only.
  EXPECT_EQ(parse_nccl_kernel("ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs)")->collective, C::kAllReduce);
  EXPECT_EQ(parse_nccl_kernel("ncclReduceScatterRingLLKernel_sum_f32")->collective, C::kReduceScatter);
}

TEST(NcclNames, MangledAndVoidAndOthers) {
  const auto m = parse_nccl_kernel("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->collective, C::kAllReduce);
  EXPECT_EQ(m->protocol, "LL");
  EXPECT_EQ(parse_nccl_kernel("void ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)")->collective,
            C::kAllGather);
  EXPECT_FALSE(parse_nccl_kernel("ampere_sgemm_128x64_nn"));
  EXPECT_FALSE(parse_nccl_kernel("ncclHelper(int)"));
  EXPECT_FALSE(parse_nccl_kernel(""));
  EXPECT_FALSE(parse_nccl_kernel("void at::native::vectorized_elementwise_kernel<4>(int)"));
}

TEST(NcclOps, PyTorchOperatorNames) {
  EXPECT_EQ(collective_from_op("nccl:all_reduce"), C::kAllReduce);
  EXPECT_EQ(collective_from_op("nccl:all_reduce_coalesced"), C::kAllReduce);
  EXPECT_EQ(collective_from_op("nccl:_allgather_base"), C::kAllGather);
  EXPECT_EQ(collective_from_op("nccl:all_gather_into_tensor_coalesced"), C::kAllGather);
  EXPECT_EQ(collective_from_op("nccl:_reduce_scatter_base"), C::kReduceScatter);
  EXPECT_EQ(collective_from_op("nccl:all_to_all"), C::kAllToAll);
  EXPECT_EQ(collective_from_op("nccl:broadcast"), C::kBroadcast);
  EXPECT_EQ(collective_from_op("nccl:reduce"), C::kReduce);
  EXPECT_EQ(collective_from_op("nccl:send"), C::kSend);
  EXPECT_EQ(collective_from_op("nccl:recv"), C::kRecv);
  EXPECT_EQ(collective_from_op("c10d::allreduce_"), C::kAllReduce);
  EXPECT_EQ(collective_from_op("c10d::alltoall_"), C::kAllToAll);
  EXPECT_FALSE(collective_from_op("nccl:barrier"));
  EXPECT_FALSE(collective_from_op("aten::add"));
  EXPECT_FALSE(collective_from_op("all_reduce"));
}

TEST(NcclOps, ShapeElements) {
  EXPECT_EQ(shape_elements("[[1024, 1024]]"), 1048576);
  EXPECT_EQ(shape_elements("[[2, 3], [4]]"), 10);
  EXPECT_EQ(shape_elements("[[]]"), 1);
  EXPECT_EQ(shape_elements("[]"), 0);
  EXPECT_EQ(shape_elements(" [ [ 5 ] ] "), 5);
  EXPECT_FALSE(shape_elements(""));
  EXPECT_FALSE(shape_elements("[[1024, x]]"));
  EXPECT_FALSE(shape_elements("[[1024]"));
  EXPECT_FALSE(shape_elements("[[-1]]"));
  EXPECT_FALSE(shape_elements("[[4611686018427387904, 4]]"));  // 2^62 × 4
}

TEST(NcclBandwidth, CollectiveBytesAsNcclTests) {
  EXPECT_EQ(collective_bytes(C::kAllReduce, 1024, 4, 8), 4096);
  EXPECT_EQ(collective_bytes(C::kAllGather, 1024, 2, 8), 16384);  // 8 parts of 2 KiB
  EXPECT_EQ(collective_bytes(C::kReduceScatter, 1024, 2, 8), 2048);
  EXPECT_FALSE(collective_bytes(C::kAllReduce, 1024, 0, 8));
  EXPECT_FALSE(collective_bytes(C::kUnknown, 1024, 4, 8));
  EXPECT_FALSE(collective_bytes(C::kAllReduce, 1024, 4, 0));
}

TEST(NcclBandwidth, BusFactorsOfNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(C::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(C::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(C::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(C::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(C::kAllToAll, 64), 63.0 / 64);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(C::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(C::kReduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(C::kSendRecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(C::kAllReduce, 1), 0.0);
  EXPECT_TRUE(std::isnan(bus_bandwidth_factor(C::kUnknown, 8)));
  EXPECT_TRUE(std::isnan(bus_bandwidth_factor(C::kAllReduce, 0)));
  // 1 GiB in 10 ms: 107.37 GB/s.
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbps(1073741824.0, 1e7), 107.3741824);
  EXPECT_TRUE(std::isnan(algorithm_bandwidth_gbps(1, 0)));
}

}  // namespace
}  // namespace gpuscope::core
