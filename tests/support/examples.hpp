#pragma once
// Paths into the source tree's examples/, for tests that load the shipped scenarios.
#include <string>

namespace trainsim::test {

// examples/<name> in the source tree (TRAINSIM_SOURCE_DIR, which every test target defines).
inline std::string example(const std::string& name) { return std::string(TRAINSIM_SOURCE_DIR) + "/examples/" + name; }

}  // namespace trainsim::test
