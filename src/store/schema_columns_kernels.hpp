// The columns of the kernel tables (store/schema_columns.hpp explains the X-macro form): every
// kernel launch CUPTI records (kernels), and what `gpuscope kernels` measures per profiled launch
// (kernel_profiles, kernel_metrics). Included by store/schema_columns.hpp; nothing includes it
// directly.
#pragma once

// clang-format off
#define GPUSCOPE_COLUMNS_KERNELS(X) \
  X(id, OptInt, "INTEGER PRIMARY KEY", "", \
    "Row id.") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(device_id, Int, "INTEGER", "", \
    "CUDA device ordinal.") \
  X(context_id, Int, "INTEGER", "", \
    "CUDA context id.") \
  X(stream_id, Int, "INTEGER", "", \
    "CUDA stream id (CUPTI's).") \
  X(correlation_id, Int, "INTEGER", "", \
    "Matches api_calls.correlation_id of the launch (per process).") \
  X(start_ns, Int, "INTEGER", "ns", \
    "Kernel start on the GPU.") \
  X(end_ns, Int, "INTEGER", "ns", \
    "Kernel end on the GPU.") \
  X(name_id, OptInt, "INTEGER", "", \
    "strings.id of the demangled name.") \
  X(short_name_id, OptInt, "INTEGER", "", \
    "strings.id of the base name (no namespace, template or parameters), as nsys --base.") \
  X(mangled_name_id, OptInt, "INTEGER", "", \
    "strings.id of the mangled name as CUPTI reports it.") \
  X(grid_x, Int, "INTEGER", "", \
    "Grid size in blocks, x.") \
  X(grid_y, Int, "INTEGER", "", \
    "Grid size in blocks, y.") \
  X(grid_z, Int, "INTEGER", "", \
    "Grid size in blocks, z.") \
  X(block_x, Int, "INTEGER", "", \
    "Block size in threads, x.") \
  X(block_y, Int, "INTEGER", "", \
    "Block size in threads, y.") \
  X(block_z, Int, "INTEGER", "", \
    "Block size in threads, z.") \
  X(cluster_x, Int, "INTEGER", "", \
    "Thread-block cluster size, x (0 = no cluster).") \
  X(cluster_y, Int, "INTEGER", "", \
    "Cluster size, y.") \
  X(cluster_z, Int, "INTEGER", "", \
    "Cluster size, z.") \
  X(registers_per_thread, Int, "INTEGER", "", \
    "Registers per thread.") \
  X(static_shared_memory, Int, "INTEGER", "bytes", \
    "Static shared memory per block.") \
  X(dynamic_shared_memory, Int, "INTEGER", "bytes", \
    "Dynamic shared memory per block.") \
  X(local_memory_per_thread, Int, "INTEGER", "bytes", \
    "Local memory (spills, stack) per thread.") \
  X(graph_id, OptInt, "INTEGER", "", \
    "CUDA graph id when launched from a graph, else NULL.") \
  X(graph_node_id, OptInt, "INTEGER", "", \
    "CUDA graph node id when launched from a graph, else NULL.") \
  X(launch_type, Int, "INTEGER", "", \
    "CUpti_ActivityLaunchType (0 regular, 1 cooperative single-device, 2 multi-device).")

#define GPUSCOPE_COLUMNS_KERNEL_PROFILES(X) \
  X(id, OptInt, "INTEGER PRIMARY KEY", "", \
    "Row id; kernel_metrics.profile_id refers to it.") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(device_id, Int, "INTEGER", "", \
    "CUDA device ordinal.") \
  X(context_id, Int, "INTEGER", "", \
    "CUDA context id (CUPTI's).") \
  X(stream_id, OptInt, "INTEGER", "", \
    "CUDA stream id (CUPTI's), NULL if unknown.") \
  X(correlation_id, Int, "INTEGER", "", \
    "Correlation id of the launch API call: the same key as kernels.(pid, correlation_id) and api_calls.(pid, correlation_id).") \
  X(launch_index, Int, "INTEGER", "", \
    "0-based index of this launch among all kernel launches of the process (profiled or not), as ncu's --launch-skip counts.") \
  X(launch_ns, Int, "INTEGER", "ns", \
    "CPU time of the launch call's entry (CLOCK_REALTIME, the trace clock).") \
  X(name_id, OptInt, "INTEGER", "", \
    "strings.id of the demangled name.") \
  X(short_name_id, OptInt, "INTEGER", "", \
    "strings.id of the base name (no namespace, template or parameters).") \
  X(mangled_name_id, OptInt, "INTEGER", "", \
    "strings.id of the mangled (symbol) name.") \
  X(grid_x, OptInt, "INTEGER", "", \
    "Grid size in blocks, x.") \
  X(grid_y, OptInt, "INTEGER", "", \
    "Grid size in blocks, y.") \
  X(grid_z, OptInt, "INTEGER", "", \
    "Grid size in blocks, z.") \
  X(block_x, OptInt, "INTEGER", "", \
    "Block size in threads, x.") \
  X(block_y, OptInt, "INTEGER", "", \
    "Block size in threads, y.") \
  X(block_z, OptInt, "INTEGER", "", \
    "Block size in threads, z.") \
  X(registers_per_thread, OptInt, "INTEGER", "", \
    "Registers per thread (cuFuncGetAttribute CU_FUNC_ATTRIBUTE_NUM_REGS).") \
  X(static_shared_memory, OptInt, "INTEGER", "bytes", \
    "Static shared memory per block (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES).") \
  X(dynamic_shared_memory, OptInt, "INTEGER", "bytes", \
    "Dynamic shared memory per block (the launch's sharedMemBytes).") \
  X(local_memory_per_thread, OptInt, "INTEGER", "bytes", \
    "Local memory per thread (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES).") \
  X(metric_set, OptText, "TEXT", "", \
    "--set the metrics came from ('quick', 'roofline', 'sol', 'memory', 'occupancy', 'custom').") \
  X(passes, Int, "INTEGER", "", \
    "Replay passes the Range Profiler needed for this launch's metrics (kernel replay).")

#define GPUSCOPE_COLUMNS_KERNEL_METRICS(X) \
  X(profile_id, Int, "INTEGER", "", \
    "kernel_profiles.id of the launch.") \
  X(metric_id, Int, "INTEGER", "", \
    "strings.id of the metric's Nsight Compute name, e.g. dram__bytes_read.sum.") \
  X(value, Real, "REAL", "", \
    "The metric's value for that launch as cuptiProfilerHostEvaluateToGpuValues returns it, in the metric's own unit (bytes, ns, %, instructions, ...: docs/metrics.md).")

// clang-format on
