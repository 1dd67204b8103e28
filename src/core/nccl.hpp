// nccl: what an NCCL kernel's name and PyTorch's communication operators say about a
// collective, and the bandwidth arithmetic nccl-tests uses. Pure functions, no I/O.
//
// Kernel names (the demangled name CUPTI reports; the mangled one "_Z39ncclDevKernel_..."
// is read too). NCCL's device code is generated per collective, reduction, type, algorithm
// and protocol (NCCL's src/device/generate.py: DEFINE_ncclDevKernel(AllReduce_Sum_f32_RING_LL,
// ncclFuncAllReduce, FuncSum, float, NCCL_ALGO_RING, NCCL_PROTO_LL, ...)):
//   NCCL >= 2.19  ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)
//                 ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL, ncclDevKernel_AllGather_RING_LL,
//                 ncclDevKernel_Broadcast_RING_LL, ncclDevKernel_SendRecv(...),
//                 ncclDevKernel_Generic(...), ncclDevKernel_Generic_1 (runs any work it is
//                 given: no collective in the name)
//   NCCL < 2.19   ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)
//                 ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(...)
//   older         ncclAllReduceRingLLKernel_sum_f32(CollectiveArgs) (collective only)
// Data-moving collectives (AllGather, Broadcast, SendRecv) are compiled for bytes: old names
// carry a placeholder "Sum_int8_t" that is not the tensor's type, so their datatype is
// reported unknown. HTA's straggler analysis matched only "ncclKernel_*" and found nothing
// once NCCL renamed them "ncclDevKernel_*" (issue 20): both are recognised here.
//
// Bandwidths, as nccl-tests defines them (NVIDIA/nccl-tests doc/PERFORMANCE.md):
//   algbw = S / t                  S: the operation's size in bytes, t: its time
//   busbw = algbw × factor(n)      n: ranks taking part
//     AllReduce                    2 (n − 1) / n
//     ReduceScatter, AllGather     (n − 1) / n     (S: the whole gathered / reduced buffer,
//     AllToAll                     (n − 1) / n      count × n of one rank's part)
//     Broadcast, Reduce, Send/Recv 1
// busbw is comparable with the links' hardware bandwidth whatever n is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::core {

enum class NcclCollective {
  kUnknown,  // ncclDevKernel_Generic*, or a name that says "nccl...Kernel" and nothing more
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kSendRecv,
  kSend,
  kRecv,
  kAllToAll,
};

/// What an NCCL kernel's name says. Empty strings and 0 mean "not in the name".
struct NcclKernelInfo {
  NcclCollective collective = NcclCollective::kUnknown;
  std::string redop;      // "Sum", "Prod", "MinMax", "Min", "Max", "PreMulSum", "SumPostDiv"
  std::string datatype;   // NCCL's spelling: "i8", "u8", "i32", "u32", "i64", "u64", "f16",
                          // "f32", "f64", "bf16", "f8e4m3", "f8e5m2" (old names mapped to it)
  int element_bytes = 0;  // size of one element of `datatype`, bytes; 0 when unknown
  std::string algorithm;  // "RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS",
                          // "NVLS_TREE", "PAT"
  std::string protocol;   // "LL", "LL128", "SIMPLE"
  bool generic = false;   // ncclDevKernel_Generic*: the collective is not in the name
};

/// Parses a kernel name (demangled with or without parameters, or mangled). nullopt when it
/// is not an NCCL kernel: the name (after an optional "void ") must start with "nccl" and
/// contain "Kernel".
[[nodiscard]] std::optional<NcclKernelInfo> parse_nccl_kernel(std::string_view name);

/// "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "SendRecv", "Send",
/// "Recv", "AllToAll"; "NCCL (generic)" for kUnknown.
[[nodiscard]] std::string_view collective_name(NcclCollective c);

/// The collective of a PyTorch communication operator's name, as ProcessGroupNCCL and c10d
/// record it: "nccl:all_reduce", "nccl:all_reduce_coalesced", "nccl:_allgather_base",
/// "nccl:all_gather_into_tensor_coalesced", "nccl:_reduce_scatter_base", "nccl:all_to_all",
/// "nccl:broadcast", "nccl:reduce", "nccl:send", "nccl:recv", "c10d::allreduce_",
/// "c10d::alltoall_", ... (case and '_' ignored after the "nccl:" / "c10d::" prefix).
/// nullopt for any other name, and for nccl:barrier, gather, scatter (no busbw definition).
[[nodiscard]] std::optional<NcclCollective> collective_from_op(std::string_view op_name);

/// The element count of the tensors in a PyTorch shapes string ("[[1024, 1024]]" →
/// 1048576; "[[2, 3], [4]]" → 10: summed over the tensors; "[[]]" → 1: a scalar).
/// nullopt for "" or a string that is not a list of lists of non-negative integers, or on
/// overflow past 2^62.
[[nodiscard]] std::optional<std::int64_t> shape_elements(std::string_view sizes);

/// S, the operation's size in bytes as nccl-tests counts it, from the element count of one
/// rank's input tensors: AllGather gathers n parts (S = elements × element_bytes × n); every
/// other collective's input is the whole buffer (S = elements × element_bytes). nullopt
/// when element_bytes ≤ 0, elements < 0, ranks < 1 or the kind is kUnknown.
[[nodiscard]] std::optional<std::int64_t> collective_bytes(NcclCollective c, std::int64_t elements, int element_bytes,
                                                           int ranks);

/// busbw / algbw for n ranks (table above). NaN for kUnknown or ranks < 1; AllReduce,
/// AllGather, ReduceScatter and AllToAll give 0 for one rank (nothing crosses a link).
[[nodiscard]] double bus_bandwidth_factor(NcclCollective c, int ranks);

/// algbw in GB/s (= bytes per ns): bytes / ns. NaN when ns ≤ 0 or bytes < 0.
[[nodiscard]] double algorithm_bandwidth_gbps(double bytes, double ns);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
