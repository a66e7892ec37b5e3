// The layers' dependencies point one way (docs/architecture.md, layer table): a file of a layer includes headers of the
// layers below it only. Shared vocabulary (collective kinds, kernel descriptions, precisions) lives in core/ so
// that compute/, collective/ and network/ need neither the workload's nor the scenario's headers; this test fails
// when an include crosses a line, naming the file and the include.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;

// What each layer may include besides itself (CMakeLists.txt links the same).
const std::map<std::string, std::set<std::string>> kAllowed = {
    {"core", {}},
    {"model", {"core"}},
    {"hardware", {"core"}},
    {"topology", {"core", "hardware"}},
    {"compute", {"core", "hardware"}},
    {"collective", {"core", "hardware"}},
    {"network", {"core", "hardware", "topology", "collective"}},
};

TEST(Layering, LowerLayersIncludeOnlyTheLayersBelowThem) {
  const fs::path src = fs::path(TRAINSIM_SOURCE_DIR) / "src";
  const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+)/)re");
  int files = 0;
  for (const auto& [layer, allowed] : kAllowed) {
    ASSERT_TRUE(fs::is_directory(src / layer)) << layer;
    for (const auto& entry : fs::recursive_directory_iterator(src / layer)) {
      if (!entry.is_regular_file()) continue;
      const std::string ext = entry.path().extension().string();
      if (ext != ".hpp" && ext != ".cpp") continue;
      ++files;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        const std::string target = m[1];
        EXPECT_TRUE(target == layer || allowed.count(target))
            << fs::relative(entry.path(), src).string() << ":" << n << " includes " << target << "/ (" << layer
            << " may include only itself and lower layers)";
      }
    }
  }
  EXPECT_GT(files, 100);
}

}  // namespace
