// The columns of the tables a Python program's trace adds (store/schema_columns.hpp explains
// the X-macro form): PyTorch's operators, modules, steps and allocator (gpuscope trace --pytorch,
// --cuda-memory-usage), and the Python stacks of call sites and samples (--python-callsites,
// --python-sampling). Included by store/schema_columns.hpp; nothing includes it directly.
#pragma once

// clang-format off
#define GPUSCOPE_COLUMNS_PY_FRAMES(X) \
  X(id, Int, "INTEGER PRIMARY KEY", "", \
    "Frame id (trace-wide).") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(file_id, OptInt, "INTEGER", "", \
    "strings.id of the code's file (co_filename).") \
  X(function_id, OptInt, "INTEGER", "", \
    "strings.id of the function's qualified name (co_qualname, e.g. Loader.__next__; <module> for a module's body).") \
  X(line, OptInt, "INTEGER", "", \
    "Line of the instruction the frame was at (PyCode_Addr2Line), NULL when the code has none.") \
  X(first_line, OptInt, "INTEGER", "", \
    "First line of the function (co_firstlineno), NULL if unknown.")

#define GPUSCOPE_COLUMNS_PY_STACKS(X) \
  X(id, Int, "INTEGER PRIMARY KEY", "", \
    "Stack id (trace-wide): names the innermost call site; its callers are parent_id's chain.") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(parent_id, OptInt, "INTEGER", "", \
    "py_stacks.id of the caller's stack, NULL for an outermost frame.") \
  X(frame_id, Int, "INTEGER", "", \
    "py_frames.id of this call site's frame.") \
  X(depth, Int, "INTEGER", "", \
    "Frames above this one (0 for an outermost frame).")

#define GPUSCOPE_COLUMNS_PY_SAMPLES(X) \
  X(id, OptInt, "INTEGER PRIMARY KEY", "", \
    "Row id.") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(tid, Int, "INTEGER", "", \
    "OS thread id of the sampled Python thread (PyThreadState.native_thread_id).") \
  X(ts_ns, Int, "INTEGER", "ns", \
    "When the thread's stack was read (trace clock).") \
  X(py_stack_id, OptInt, "INTEGER", "", \
    "py_stacks.id of the thread's innermost frame, NULL when the thread had no Python frame (idle in C, or between calls).") \
  X(holds_gil, Int, "INTEGER", "", \
    "1 when the thread held the GIL at the sample (it was the GIL's holder while the GIL was taken), else 0.") \
  X(on_cpu, Int, "INTEGER", "", \
    "1 when the thread was running on a CPU (state R in /proc/self/task/TID/stat), 0 when it slept or waited.")

#define GPUSCOPE_COLUMNS_TORCH_OPS(X) \
  X(nvtx_id, Int, "INTEGER PRIMARY KEY", "", \
    "nvtx_events.id of the operator's range (its pid, tid, start_ns, end_ns, depth and parent there).") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(tid, Int, "INTEGER", "", \
    "Thread that ran it (the autograd engine's thread for backward calls).") \
  X(name_id, Int, "INTEGER", "", \
    "strings.id of the operator name as PyTorch records it ('aten::conv2d', 'autograd::engine::evaluate_function: ConvolutionBackward0').") \
  X(seq, OptInt, "INTEGER", "", \
    "Autograd sequence number: a backward call carries the one of the forward operator that created its node; NULL when PyTorch gave none.") \
  X(op_id, OptInt, "INTEGER", "", \
    "The call's id, unique in the process: gpuscope's observer counts each thread's calls; through PyTorch's NVTX observer it is PyTorch's RecordFunction handle.") \
  X(sizes, OptText, "TEXT", "", \
    "Input shapes ('[[32, 3, 112, 112], [64, 3, 7, 7]]') with --pytorch=ops,shapes; NULL otherwise.") \
  X(is_backward, Int, "INTEGER", "", \
    "1 for a call the autograd engine ran (a backward node, or an operator inside one), else 0.") \
  X(parent_op, OptInt, "INTEGER", "", \
    "torch_ops.nvtx_id of the enclosing operator call on the same thread; NULL at top level.") \
  X(forward_op, OptInt, "INTEGER", "", \
    "For backward calls: torch_ops.nvtx_id of the top-level forward call with the same seq in this process (the operator the backward work belongs to); NULL for forward calls or when none was recorded.") \
  X(module_id, OptInt, "INTEGER", "", \
    "torch_modules.nvtx_id of the innermost module forward around the call (for backward calls: around its forward operator); NULL if none.")

#define GPUSCOPE_COLUMNS_TORCH_MODULES(X) \
  X(nvtx_id, Int, "INTEGER PRIMARY KEY", "", \
    "nvtx_events.id of the module forward's range.") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(path_id, Int, "INTEGER", "", \
    "strings.id of the module's path in its model ('layer1.0.conv1'; the outermost module called is its class name).") \
  X(class_id, OptInt, "INTEGER", "", \
    "strings.id of the module's class ('Conv2d').") \
  X(parent_module, OptInt, "INTEGER", "", \
    "torch_modules.nvtx_id of the enclosing module forward; NULL for the outermost.")

#define GPUSCOPE_COLUMNS_TORCH_STEPS(X) \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(step, Int, "INTEGER", "", \
    "The step's number: how many optimizer.step() calls the process made before the one that ends it (the program's own step count from 0). Without --pytorch=ops or modules step 0 has no start and is left out, so steps begin at 1.") \
  X(start_ns, Int, "INTEGER", "ns", \
    "Step start: the end of the previous optimizer.step() (step 0: the start of the first operator or module forward before its end).") \
  X(end_ns, Int, "INTEGER", "ns", \
    "Step end: the end of its optimizer.step() (the gpuscope.step mark).")

#define GPUSCOPE_COLUMNS_TORCH_OP_ACTIVITIES(X) \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(correlation_id, Int, "INTEGER", "", \
    "correlation_id (with pid) of the kernel(s), memcpy or memset: kernels, memcpys or memsets.correlation_id.") \
  X(op_nvtx_id, Int, "INTEGER", "", \
    "torch_ops.nvtx_id of the innermost operator call whose range holds the launching API call (same thread).")

#define GPUSCOPE_COLUMNS_TORCH_MEMORY_STATS(X) \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(device_id, Int, "INTEGER", "", \
    "CUDA device ordinal inside that process.") \
  X(ts_ns, Int, "INTEGER", "ns", \
    "When the counters were read (at the process's exit, after torch.cuda.synchronize()).") \
  X(max_reserved_bytes, Int, "INTEGER", "bytes", \
    "torch.cuda.max_memory_reserved(device): the most memory PyTorch's caching allocator held in segments (since the start or the program's last reset_peak_memory_stats()).") \
  X(reserved_bytes, Int, "INTEGER", "bytes", \
    "torch.cuda.memory_reserved(device) at exit.") \
  X(max_allocated_bytes, Int, "INTEGER", "bytes", \
    "torch.cuda.max_memory_allocated(device): the most memory held by tensors (blocks handed out).") \
  X(allocated_bytes, Int, "INTEGER", "bytes", \
    "torch.cuda.memory_allocated(device) at exit.") \
  X(max_requested_bytes, Int, "INTEGER", "bytes", \
    "torch.cuda.memory_stats(device)['requested_bytes.all.peak']: the most bytes tensors asked for at once (max_memory_allocated() counts whole blocks: sizes rounded up to 512 bytes, or more when a cached block is not split).") \
  X(requested_bytes, Int, "INTEGER", "bytes", \
    "torch.cuda.memory_stats(device)['requested_bytes.all.current'] at exit.") \
  X(segments, Int, "INTEGER", "", \
    "Segments the allocator held at exit (rows in torch_memory_segments).") \
  X(history_events, OptInt, "INTEGER", "", \
    "Allocator events recorded (rows in torch_memory_events) with --pytorch=memory; NULL without.") \
  X(history_max_events, OptInt, "INTEGER", "", \
    "The most events the allocator keeps (GPUSCOPE_TORCH_MEMORY_ENTRIES): when history_events reaches it, the earliest were dropped (data_loss 'torch_memory_history_full').") \
  X(torch_version, OptText, "TEXT", "", \
    "torch.__version__.")

#define GPUSCOPE_COLUMNS_TORCH_MEMORY_SEGMENTS(X) \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(device_id, Int, "INTEGER", "", \
    "CUDA device ordinal inside that process.") \
  X(address, Int, "INTEGER", "", \
    "Segment base address (as memory_events.address of the cudaMalloc that made it), signed 64-bit.") \
  X(bytes, Int, "INTEGER", "bytes", \
    "Segment size (total_size).") \
  X(stream, OptInt, "INTEGER", "", \
    "The CUDA stream (cudaStream_t value) the segment was allocated for; 0 = the default stream.") \
  X(pool, OptText, "TEXT", "", \
    "'large' or 'small' (PyTorch's segment_type), as PyTorch named it.")

#define GPUSCOPE_COLUMNS_TORCH_MEMORY_EVENTS(X) \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(device_id, Int, "INTEGER", "", \
    "CUDA device ordinal inside that process.") \
  X(ts_ns, Int, "INTEGER", "ns", \
    "When the allocator recorded the event (its time_us, CLOCK_REALTIME in microseconds, times 1000: 1 us resolution).") \
  X(action, Text, "TEXT", "", \
    "PyTorch's name: 'alloc' (a tensor's block handed out), 'free_requested' (the tensor released it), 'free_completed' (the block is reusable: the streams that used it are done), 'segment_alloc' / 'segment_free' (cudaMalloc / cudaFree of a segment), 'segment_map' / 'segment_unmap' (expandable segments), 'oom', 'snapshot'.") \
  X(address, Int, "INTEGER", "", \
    "Block or segment address, signed 64-bit.") \
  X(bytes, Int, "INTEGER", "bytes", \
    "Segment size; for a tensor's block (alloc, free_requested, free_completed) the bytes the tensor asked for (PyTorch records the requested size, not the block's); for 'oom' the bytes asked for.") \
  X(stream, OptInt, "INTEGER", "", \
    "The CUDA stream (cudaStream_t value) of the block; 0 = the default stream.")

// clang-format on
