// The `nccl:` block: NCCL environment variables, kept as the strings NCCL would read from the
// environment. key_schema.cpp has already rejected keys without the NCCL_ prefix.
#include <filesystem>

#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

NcclSpec read_nccl(const Section& nccl) {
  NcclSpec spec;
  if (!nccl.present()) return spec;
  for (auto it = nccl.node().begin(); it != nccl.node().end(); ++it) {
    const std::string key = it->first.Scalar();
    if (is_missing(it->second)) continue;  // null = NCCL's own choice, as if unset
    // Numbers and words alike: the environment only holds strings (NCCL_P2P_PXN_LEVEL: 2 -> "2").
    if (!it->second.IsScalar())
      nccl.fail(key, "expected a value as NCCL reads it from the environment (a number or a word), got " +
                         describe_node(it->second));
    spec.env[key] = it->second.Scalar();
  }
  // A relative NCCL_TOPO_FILE names a file next to the scenario, so a scenario and its topology
  // travel together; the file itself is read (and its errors reported) by the collective layer.
  if (auto it = spec.env.find("NCCL_TOPO_FILE"); it != spec.env.end()) {
    const std::filesystem::path topo(it->second);
    if (topo.is_relative() && !nccl.file().empty() && nccl.file() != "<string>")
      it->second = (std::filesystem::path(nccl.file()).parent_path() / topo).lexically_normal().string();
  }
  return spec;
}

}  // namespace trainsim::scenario_detail
