// libFuzzer target for the SimAI/AICB workload-file reader (src/workload/aicb/aicb_table.hpp): any byte string is a
// possible layer table. The reader may reject it, but only with trainsim::Error naming FILE:LINE (design.md: "Bad
// input never crashes"); anything else escaping, or a sanitizer report, is a bug. A table that parses is written
// back and read again: the writer's output must parse to the same text. Built with -DTRAINSIM_FUZZ=ON (clang).
//   ./aicb_workload_fuzz -max_len=4096 corpus/   (seed the corpus with examples/aicb-gpt-1.3b-tp2-8gpu.txt)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "workload/aicb/aicb_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trainsim::AicbFile f;
  try {
    f = trainsim::parse_aicb(text, "fuzz.txt");
  } catch (const trainsim::Error& e) {
    if (std::string_view(e.what()).rfind("fuzz.txt:", 0) != 0) std::abort();  // every error names FILE:LINE
    return 0;
  }
  const std::string once = trainsim::format_aicb(f);
  try {
    if (trainsim::format_aicb(trainsim::parse_aicb(once, "again.txt")) != once) std::abort();
  } catch (const trainsim::Error&) {
    std::abort();  // what the writer writes, the reader reads
  }
  return 0;
}
