#pragma once

namespace trainsim::cli {

// Keep the heap's freed memory in the process for the next allocation instead of handing it back to the
// kernel. A sweep or a search builds and frees a workload of hundreds of MB per point; with glibc's defaults
// each point maps fresh pages and the kernel zero-fills them on first touch, which was half of a point's
// time (sweep of GPT-3 175B x 1,024: 205 -> 80 ms a point on one thread). Peak memory is unchanged: only
// what was already allocated once is kept. Then ask for the heap to be backed by huge pages
// (advise_huge_pages_for_the_heap). Does nothing where the C library is not glibc.
void keep_freed_memory_for_reuse();

// Where the kernel gives transparent huge pages only to memory that asks for them (THP "madvise", the default of
// Debian and many distributions), advise the first 512 MiB of the main heap, where a run's op lists, engine plan
// and timelines live: one fault and one 2 MiB clear instead of 512 faults. A run of 1.8 M ops (GPT-3 175B, TP 32
// x PP 4 on GB200 NVL72) first-touches ~175 MB, and its page faults were a third of its time. Nothing is touched
// here: the address space is reserved, advised and freed back to the heap, which keeps it (the trim threshold
// above). A heap that is not one contiguous range (another allocator, a sanitizer) is left as it is.
void advise_huge_pages_for_the_heap();

}  // namespace trainsim::cli
