#pragma once

namespace trainsim::cli {

// Keep the heap's freed memory in the process for the next allocation instead of handing it back to the
// kernel. A sweep or a search builds and frees a workload of hundreds of MB per point; with glibc's defaults
// each point maps fresh pages and the kernel zero-fills them on first touch, which was half of a point's
// time (sweep of GPT-3 175B x 1,024: 205 -> 80 ms a point on one thread). Peak memory is unchanged: only
// what was already allocated once is kept. Does nothing where the C library is not glibc.
void keep_freed_memory_for_reuse();

}  // namespace trainsim::cli
