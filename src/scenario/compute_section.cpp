// The `compute:` block: a measured op database and the GPU it was measured on (docs/op-database.md).
// The file itself is read by the compute layer when a run starts; here the keys are checked.
#include <filesystem>

#include "scenario/physical_bounds.hpp"
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

ComputeSpec read_compute(const Section& compute) {
  ComputeSpec c;
  compute.read("interference", c.interference);
  compute.read("host_launch_us", c.host_launch_us, Bound::NonNegative);
  // The engine sums launch costs per rank on its picosecond clock; a millisecond per launch is already far beyond
  // any host (5-20 us), and keeps the sum of a rank's launches inside it.
  require_at_most(compute, "host_launch_us", c.host_launch_us, 1000, "us",
                  "a kernel launch costs the host 5-20 us; a millisecond would be a stalled host, not a launch");
  compute.read("database", c.database);
  if (c.database) {
    if (c.database->empty()) compute.fail("database", "expected the path of an op database CSV, got an empty string");
    // A relative path names a file next to the scenario, so a scenario and its database travel together.
    std::filesystem::path db(*c.database);
    if (db.is_relative() && !compute.file().empty() && compute.file() != "<string>")
      c.database = (std::filesystem::path(compute.file()).parent_path() / db).lexically_normal().string();
  }
  std::optional<std::string> from;
  compute.read("scale_from", from);
  if (from) {
    if (!c.database)
      compute.fail("scale_from",
                   "scale_from '" + *from +
                       "' names the GPU compute.database was measured on, but no compute.database is given");
    c.scale_from = catalog_gpu(compute, "scale_from", *from, "");
  }
  return c;
}

}  // namespace trainsim::scenario_detail
