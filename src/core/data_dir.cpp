#include "core/data_dir.hpp"

#include <cstdlib>

namespace trainsim {
std::string data_dir() {
  if (const char* env = std::getenv("TRAINSIM_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return TRAINSIM_DEFAULT_DATA_DIR;
}
}  // namespace trainsim
