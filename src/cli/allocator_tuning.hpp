#pragma once

namespace trainsim::cli {

// Keep the heap's freed memory in the process for the next allocation instead of handing it back to the
// kernel. A sweep or a search builds and frees a workload of hundreds of MB per point; with glibc's defaults
// each point maps fresh pages and the kernel zero-fills them on first touch, which was half of a point's
// time (sweep of GPT-3 175B x 1,024: 205 -> 80 ms a point on one thread). Peak memory is unchanged: only
// what was already allocated once is kept.
//
// Then, where the kernel gives transparent huge pages only to memory that asks for them (THP "madvise", the default
// of Debian and many distributions), the first 512 MiB of the main heap, where a run's op lists, engine plan and
// timelines live, are advised for them: one fault and one 2 MiB clear instead of 512 faults. A run of 1.8 M ops
// (GPT-3 175B, TP 32 x PP 4 on GB200 NVL72) first-touches ~175 MB, and its page faults were a third of its time.
// Nothing is touched: the address space is reserved, advised and freed back to the heap, which keeps it. A heap
// that is not one contiguous range is left as it is, and so is a sanitizer's.
//
// Does nothing where the C library is not glibc.
void keep_freed_memory_for_reuse();

}  // namespace trainsim::cli
