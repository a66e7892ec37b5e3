// libFuzzer target for the Chakra trace reader (src/workload/chakra/): any byte string is a possible trace file
// <prefix>.<rank>.et. The reader may reject it, but only with trainsim::Error naming the file and the node
// (design.md: "Bad input never crashes"); anything else escaping, or a sanitizer report, is a bug. A trace that
// reads is checked for the IR's invariants the engine relies on: every dependency names an earlier op, every
// descriptor index is in its table. Built with -DTRAINSIM_FUZZ=ON (clang).
//   ./chakra_trace_fuzz -max_len=65536 corpus/   (seed the corpus with examples/chakra/tiny-8-h100/trainsim.0.et)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "core/error.hpp"
#include "workload/chakra/chakra_traces.hpp"

namespace {

void check_invariants(const trainsim::Workload& wl) {
  for (const trainsim::RankProgram& p : wl.ranks) {
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      const trainsim::Op& op = p.ops[i];
      if (static_cast<std::size_t>(op.first_dep) + op.num_deps > p.deps.size()) std::abort();
      for (std::size_t d = op.first_dep; d < op.first_dep + op.num_deps; ++d)
        if (p.deps[d] >= i) std::abort();
      const std::size_t table = op.type == trainsim::Op::Type::Compute ? wl.kernels.size() : wl.collectives.size();
      if (op.desc >= table || op.name >= wl.names.size()) std::abort();
    }
  }
  for (const trainsim::CollectiveDesc& c : wl.collectives)
    if (c.group >= wl.groups.size()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("trainsim-chakra-fuzz-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir / "fuzz.3.et", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    check_invariants(trainsim::chakra::read_traces(dir.string(), 8));
  } catch (const trainsim::Error&) {
    // A clear message is the expected outcome for most inputs.
  }
  return 0;
}
