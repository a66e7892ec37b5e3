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
#include <vector>

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

// The front ends (the CLI, the Python module and the service) stand on the public API only: include/trainsim/ says what
// they may use, and a layer's own header they reach for must first be made public there (issue 16, item 2).
TEST(Layering, FrontEndsIncludeOnlyThePublicApi) {
  const fs::path root(TRAINSIM_SOURCE_DIR);
  const std::regex include(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<fs::path> files;
  for (const char* front : {"cli", "service"})
    for (const auto& entry : fs::directory_iterator(root / "src" / front))
      if (entry.path().extension() == ".cpp" || entry.path().extension() == ".hpp") files.push_back(entry.path());
  files.push_back(root / "python" / "module.cpp");
  int includes = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    ASSERT_TRUE(in) << file;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      ++includes;
      const std::string target = m[1];
      const std::string front = file.parent_path().filename().string();
      const bool own = (front == "cli" || front == "service") && target.starts_with(front + "/");
      EXPECT_TRUE(own || target.starts_with("trainsim/"))
          << fs::relative(file, root).string() << ":" << n << " includes " << target
          << " (front ends use include/trainsim/ only: make it public there first)";
    }
  }
  EXPECT_GT(files.size(), 20u);
  EXPECT_GT(includes, 50);
}

}  // namespace
