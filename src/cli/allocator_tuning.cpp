#include "cli/allocator_tuning.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace trainsim::cli {

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  // Both are set: setting either one switches off glibc's adaptive thresholds for both, and a fixed default
  // for the other (128 KiB) is worse than the adaptive one. 32 MiB is the largest mmap threshold glibc
  // accepts on 64-bit; blocks above it are still mapped and unmapped (they are few).
  constexpr int kMmapThreshold = 32 * 1024 * 1024;
  constexpr int kTrimThreshold = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
#endif
}

}  // namespace trainsim::cli
