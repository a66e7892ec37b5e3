#include "cli/allocator_tuning.hpp"

#include <cstdint>
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#endif

namespace trainsim::cli {

namespace {

// The heap advice keep_freed_memory_for_reuse describes.
[[maybe_unused]] void advise_huge_pages_for_the_heap() {  // called only with glibc
  // Not under a sanitizer: its allocator is not glibc's heap, and it would poison 512 MiB of shadow on every run.
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE) && !defined(TRAINSIM_SANITIZED)
  // Blocks under the mmap threshold come from the main heap, one after another; freed in reverse, they merge
  // back into its free top, which the trim threshold keeps mapped. Only each block's header page is touched
  // (before the advice, so it stays a small page).
  constexpr std::size_t kBlock = std::size_t{16} << 20;
  constexpr int kBlocks = 32;
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  void* blocks[kBlocks] = {};
  int taken = 0;
  while (taken < kBlocks && (blocks[taken] = std::malloc(kBlock)) != nullptr) ++taken;
  if (taken == kBlocks) {
    const auto at = [&](int i) { return reinterpret_cast<std::uintptr_t>(blocks[i]); };
    bool contiguous = true;  // each block right after the one before (its header between them)
    for (int i = 1; i < kBlocks && contiguous; ++i) contiguous = at(i) > at(i - 1) && at(i) - at(i - 1) < kBlock + 4096;
    std::uintptr_t lo = at(0), hi = at(kBlocks - 1) + kBlock;
    lo = (lo + kHuge - 1) & ~(kHuge - 1);
    hi &= ~(kHuge - 1);
    // Advice only: a kernel without THP, or with it off, refuses it and nothing changes.
    if (contiguous && hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
  }
  while (taken > 0) std::free(blocks[--taken]);
#endif
}

}  // namespace

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  // Both are set: setting either one switches off glibc's adaptive thresholds for both, and a fixed default
  // for the other (128 KiB) is worse than the adaptive one. 32 MiB is the largest mmap threshold glibc
  // accepts on 64-bit; blocks above it are still mapped and unmapped (they are few).
  constexpr int kMmapThreshold = 32 * 1024 * 1024;
  constexpr int kTrimThreshold = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
  advise_huge_pages_for_the_heap();
#endif
}

}  // namespace trainsim::cli
