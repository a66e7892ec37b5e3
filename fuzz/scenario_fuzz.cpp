// libFuzzer target for the scenario reader: any byte string is a possible scenario file. The
// reader may reject it, but only with trainsim::Error (design.md: "Bad input never crashes");
// anything else escaping, or a sanitizer report, is a bug. Built with -DTRAINSIM_FUZZ=ON (clang).
//   ./scenario_fuzz -max_len=4096 corpus/   (seed the corpus with examples/ and the validation cases)
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    trainsim::parse_scenario(text, "fuzz.yaml");
  } catch (const trainsim::Error&) {
    // Rejected with a message: the expected outcome for most inputs.
  }
  return 0;
}
