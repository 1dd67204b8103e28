// l2_flush: empties the L2 of the timed call's data before a cold-mode sample of the
// timing engine (include/gpuscope/bench.hpp), without leaving dirty lines behind.
//
// A kernel reads `bytes` of a scratch buffer (2 × the L2 size, written once when it was
// allocated) with 16-byte loads over a grid-stride loop: every line the timed call used
// is evicted — the dirty ones (outputs of the previous sample) are written back now,
// outside the timed window — and the L2 is left holding clean lines of the scratch
// buffer, which cost nothing to evict. A cudaMemsetAsync flush (NVBench's, triton's
// do_bench) instead leaves one L2 of dirty lines whose write-back lands inside the next
// timed call: ~50 MB on an H100, about 5 % of the time of a 1 GB copy.
// The loads' XOR is stored to *sink only when it equals a value no buffer of zeros gives,
// so the compiler cannot drop them.
//
// Errors: throws bench::CudaError (gpuscope/bench.hpp) when the launch fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpuscope::bench {

/// Enqueues the flush read of data[0, bytes) (16-byte aligned; a multiple of 16 bytes is
/// read, the tail ignored) on `stream` with `blocks` blocks of 256 threads.
void enqueue_l2_flush_read(const void* data, std::size_t bytes, unsigned int* sink, int blocks, cudaStream_t stream);

}  // namespace gpuscope::bench
