#include "workload/workload_file.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "core/error.hpp"
#include "workload/chakra/chakra_traces.hpp"

namespace trainsim {

std::optional<WorkloadFileFormat> workload_file_format_named(std::string_view name) {
  if (name == "aicb") return WorkloadFileFormat::Aicb;
  if (name == "chakra") return WorkloadFileFormat::Chakra;
  return std::nullopt;
}

std::vector<std::string> workload_file_format_names() { return {"aicb", "chakra"}; }

void write_workload_file(WorkloadFileFormat f, const Scenario& /*s*/, const Workload& wl, const std::string& path) {
  switch (f) {
    case WorkloadFileFormat::Chakra: chakra::write_traces(wl, path); return;
    case WorkloadFileFormat::Aicb: break;
  }
  throw Error("--format aicb: not available in this build");
}

Workload read_workload_file(const std::string& path, const Scenario& s) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return chakra::read_traces(path, s.cluster.num_gpus);
  if (!std::filesystem::exists(path, ec)) throw Error(fmt::format("{}: no such file or directory", path));
  throw Error(fmt::format("{}: a file: only Chakra trace directories are read in this build", path));
}

}  // namespace trainsim
