// The columns of the tables of hardware counters (store/schema_columns.hpp explains the X-macro
// form): per-launch counters from CUPTI's Range Profiler (gpuscope kernels: kernel_profiles,
// kernel_metrics) and the PM sampler's GPU-wide counters over time (--gpu-metrics: gpu_metric_names,
// gpu_metrics, gpu_metrics_sessions). Included by store/schema_columns.hpp; nothing includes it
// directly.
#pragma once

// clang-format off
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

#define GPUSCOPE_COLUMNS_GPU_METRIC_NAMES(X) \
  X(id, Int, "INTEGER PRIMARY KEY", "", \
    "Metric id referenced by gpu_metrics.metric_id.") \
  X(name, Text, "TEXT NOT NULL UNIQUE", "", \
    "Nsight Compute / CUPTI metric name, e.g. dram__bytes_read.sum.") \
  X(label, Text, "TEXT", "", \
    "Short name for columns and counter tracks, e.g. 'DRAM read' (core/gpu_metrics.hpp); the name itself for a metric outside gpuscope's list.") \
  X(unit, Text, "TEXT", "", \
    "Unit of gpu_metrics.value: '%' (of the peak sustained rate over the sample), 'bytes' (moved in the sample), 'Hz', '1/s' (a rate), or '' (a count in the sample).")

#define GPUSCOPE_COLUMNS_GPU_METRICS(X) \
  X(device_id, Int, "INTEGER NOT NULL", "", \
    "CUDA device ordinal of the GPU in the traced processes (devices.device_id of the device with the session's UUID), or the sampler's own ordinal when no traced process saw that GPU.") \
  X(start_ns, Int, "INTEGER NOT NULL", "ns", \
    "Sample start, on the trace clock.") \
  X(end_ns, Int, "INTEGER NOT NULL", "ns", \
    "Sample end (the values cover [start_ns, end_ns)).") \
  X(metric_id, Int, "INTEGER NOT NULL", "", \
    "gpu_metric_names.id of the metric.") \
  X(value, OptReal, "REAL", "", \
    "The metric over the sample, in gpu_metric_names.unit; NULL where CUPTI could not evaluate it.")

#define GPUSCOPE_COLUMNS_GPU_METRICS_SESSIONS(X) \
  X(device_id, Int, "INTEGER", "", \
    "gpu_metrics.device_id of the GPU sampled (see there).") \
  X(chip, OptText, "TEXT", "", \
    "Chip name, e.g. 'GH100' (cuptiDeviceGetChipName).") \
  X(device_name, OptText, "TEXT", "", \
    "Device name, e.g. 'NVIDIA H100 80GB HBM3'.") \
  X(uuid, OptText, "TEXT", "", \
    "GPU UUID, 'GPU-xxxxxxxx-xxxx-...' (as devices.uuid).") \
  X(start_ns, Int, "INTEGER", "ns", \
    "When sampling started.") \
  X(interval_ns, Int, "INTEGER", "ns", \
    "Sampling interval asked of CUPTI (GPU time trigger).") \
  X(samples, Int, "INTEGER", "", \
    "Samples imported into gpu_metrics (inside the capture windows).") \
  X(first_ns, OptInt, "INTEGER", "ns", \
    "Start of the first sample imported, NULL if none.") \
  X(last_ns, OptInt, "INTEGER", "ns", \
    "End of the last sample imported, NULL if none.") \
  X(clock_offset_ns, Int, "INTEGER", "ns", \
    "What the sampler added to CUPTI's sample timestamps to reach the trace clock.") \
  X(hardware_buffer_bytes, Int, "INTEGER", "bytes", \
    "Size of the PM-sampling hardware buffer (too small for the rate: data_loss 'gpu_metrics_overflow').") \
  X(metrics, Int, "INTEGER", "", \
    "Number of metrics sampled.")

// clang-format on
