#include "workload/workload_file.hpp"

#include <filesystem>
#include <fstream>

#include "core/check.hpp"
#include "core/error.hpp"
#include "workload/aicb/aicb_export.hpp"
#include "workload/aicb/aicb_import.hpp"

namespace trainsim {

std::optional<WorkloadFileFormat> workload_file_format_named(std::string_view name) {
  if (name == "aicb") return WorkloadFileFormat::Aicb;
  if (name == "chakra") return WorkloadFileFormat::Chakra;
  return std::nullopt;
}

std::vector<std::string> workload_file_format_names() { return {"aicb", "chakra"}; }

void write_workload_file(WorkloadFileFormat f, const Scenario& s, const Workload& wl, const std::string& path,
                         const WorkloadOpDurations* durations) {
  switch (f) {
    case WorkloadFileFormat::Aicb: {
      TRAINSIM_CHECK(durations != nullptr, "AICB export without the simulated op durations");
      const std::string text = format_aicb(export_aicb(s, wl, *durations));
      std::ofstream out(path, std::ios::binary);
      if (!out) throw Error(path + ": cannot create the workload file");
      out << text;
      out.flush();
      if (!out) throw Error(path + ": cannot write the workload file (disk full?)");
      return;
    }
    case WorkloadFileFormat::Chakra: throw Error("chakra: this build of trainsim cannot write Chakra traces yet");
  }
}

Workload read_workload_file(const std::string& path, const Scenario& s, const WorkloadOptions& o) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(path + ": a directory (a Chakra trace): this build of trainsim cannot read Chakra traces yet");
  return import_aicb(read_aicb_file(path), s, o);
}

}  // namespace trainsim
