#pragma once
// The GPU catalog, read from data/gpus.yaml (every number with its public source in a comment).
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"

namespace trainsim {

class GpuCatalog {
 public:
  static GpuCatalog load(const std::string& file);  // throws Error on malformed entries
  static const GpuCatalog& builtin();               // data_dir()/gpus.yaml, loaded once

  // Exact id or one of the entry's aliases (e.g. "A100-SXM4-80GB" for "A100-SXM-80GB"); nullptr if unknown.
  const GpuSpec* find(const std::string& name) const;
  std::vector<std::string> names() const;  // catalog ids, in file order
  const std::vector<GpuSpec>& gpus() const { return gpus_; }

 private:
  std::vector<GpuSpec> gpus_;
  std::vector<std::pair<std::string, std::size_t>> aliases_;
};

}  // namespace trainsim
