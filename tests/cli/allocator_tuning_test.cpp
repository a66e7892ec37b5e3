// The CLI's heap set-up (cli/allocator_tuning.hpp), in this process: after it, the main heap's memory is advised
// for transparent huge pages where the kernel gives them on request, and nothing of it has been touched yet.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/allocator_tuning.hpp"

namespace trainsim {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The VmFlags line of the mapping that holds `p` in /proc/self/smaps, or "" if none does. (Both helpers go unused
// where the test skips at compile time.)
[[maybe_unused]] std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = at >= lo && at < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

[[maybe_unused]] long resident_kib() {
  const std::string status = read_file("/proc/self/status");
  const auto at = status.find("VmRSS:");
  return at == std::string::npos ? -1 : std::stol(status.substr(at + 6));
}

TEST(AllocatorTuning, TheHeapAsksForHugePagesWithoutTouchingIt) {
#if defined(TRAINSIM_SANITIZED) || !defined(__GLIBC__)
  GTEST_SKIP() << "a sanitizer's allocator or a C library other than glibc: the heap is left as it is";
#else
  if (read_file("/sys/kernel/mm/transparent_hugepage/enabled").find("[madvise]") == std::string::npos)
    GTEST_SKIP() << "this kernel does not give huge pages on request (THP mode is not madvise)";
  const long before = resident_kib();
  cli::keep_freed_memory_for_reuse();
  EXPECT_LT(resident_kib() - before, 4 * 1024) << "reserving and advising the heap touched its memory";
  void* block = std::malloc(std::size_t{8} << 20);  // a rank's op list: under the mmap threshold, from the heap
  ASSERT_NE(block, nullptr);
  // Its middle: the heap's first, partial 2 MiB is not advised (advice covers whole huge pages).
  const std::string flags = vm_flags_of(static_cast<const char*>(block) + (std::size_t{4} << 20));
  std::free(block);
  ASSERT_FALSE(flags.empty()) << "no mapping holds a heap block";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << "the heap is not advised for huge pages: " << flags;
#endif
}

}  // namespace
}  // namespace trainsim
