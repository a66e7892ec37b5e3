// libFuzzer target for the SimAI topology reader (src/topology/simai_topology.hpp, simai_fabric.hpp): any byte string
// is a possible topology file. The reader may reject it, but only with trainsim::Error naming FILE:LINE (design.md:
// "Bad input never crashes"); anything else escaping, or a sanitizer report, is a bug. A file that parses is given
// meaning (which may reject it the same way) and written back: the writer's output must parse to the same text.
// Built with -DTRAINSIM_FUZZ=ON (clang).
//   ./simai_topology_fuzz -max_len=4096 corpus/   (seed the corpus with examples/simai-rail-16gpu-h100.topo)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "topology/simai_fabric.hpp"
#include "topology/simai_topology.hpp"

namespace {

bool names_a_line(const trainsim::Error& e) { return std::string_view(e.what()).rfind("fuzz.topo:", 0) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  trainsim::SimaiTopology t;
  try {
    t = trainsim::parse_simai_topology(text, "fuzz.topo");
  } catch (const trainsim::Error& e) {
    if (!names_a_line(e)) std::abort();
    return 0;
  }
  try {
    (void)trainsim::interpret_simai_topology(t);
  } catch (const trainsim::Error& e) {
    if (!names_a_line(e)) std::abort();
  }
  const std::string once = trainsim::format_simai_topology(t);
  try {
    if (trainsim::format_simai_topology(trainsim::parse_simai_topology(once, "again.topo")) != once) std::abort();
  } catch (const trainsim::Error&) {
    std::abort();  // what the writer writes, the reader reads
  }
  return 0;
}
