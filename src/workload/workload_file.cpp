#include "workload/workload_file.hpp"

#include <filesystem>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/error.hpp"
#include "core/text_file.hpp"
#include "workload/aicb/aicb_export.hpp"
#include "workload/aicb/aicb_import.hpp"
#include "workload/chakra/chakra_traces.hpp"

namespace trainsim {

namespace {

// The workload with every compute op on a fixed-duration kernel of the time it ran: a Chakra trace states durations.
Workload priced_workload(const Workload& wl, const WorkloadOpDurations& durations) {
  TRAINSIM_CHECK(durations.size() == wl.ranks.size(), "op durations for a different set of ranks");
  Workload out = wl;
  out.kernels.clear();
  std::map<std::pair<std::uint32_t, SimTime>, std::uint32_t> ids;
  for (std::size_t r = 0; r < out.ranks.size(); ++r) {
    TRAINSIM_CHECK(durations[r].size() == out.ranks[r].ops.size(), "op durations for a different program");
    for (std::size_t i = 0; i < out.ranks[r].ops.size(); ++i) {
      Op& op = out.ranks[r].ops[i];
      if (op.type != Op::Type::Compute) continue;
      const SimTime dur = durations[r][i];
      const auto [it, fresh] = ids.emplace(std::pair{op.desc, dur}, static_cast<std::uint32_t>(out.kernels.size()));
      if (fresh) {
        KernelDesc k = wl.kernels[op.desc];
        k.kind = KernelKind::FixedDuration;
        k.seconds = to_seconds(dur);
        out.kernels.push_back(k);
      }
      op.desc = it->second;
    }
  }
  return out;
}

void write_aicb(const Scenario& s, const Workload& wl, const std::string& path, const WorkloadOpDurations& durations) {
  write_text_file(path, format_aicb(export_aicb(s, wl, durations)));
}

}  // namespace

std::optional<WorkloadFileFormat> workload_file_format_named(std::string_view name) {
  if (name == "aicb") return WorkloadFileFormat::Aicb;
  if (name == "chakra") return WorkloadFileFormat::Chakra;
  return std::nullopt;
}

std::vector<std::string> workload_file_format_names() { return {"aicb", "chakra"}; }

void write_workload_file(WorkloadFileFormat f, const Scenario& s, const Workload& wl, const std::string& path,
                         const WorkloadOpDurations& durations) {
  switch (f) {
    case WorkloadFileFormat::Aicb: write_aicb(s, wl, path, durations); return;
    case WorkloadFileFormat::Chakra: chakra::write_traces(priced_workload(wl, durations), path); return;
  }
  TRAINSIM_CHECK(false, "unhandled workload file format");
}

Workload read_workload_file(const std::string& path, const Scenario& s, const WorkloadOptions& o) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return chakra::read_traces(path, s.cluster.num_gpus);
  if (!std::filesystem::exists(path, ec)) throw Error(fmt::format("{}: no such file or directory", path));
  return import_aicb(read_aicb_file(path), s, o);
}

}  // namespace trainsim
