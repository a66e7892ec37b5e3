#pragma once
// Location of the data catalogs (data/gpus.yaml, data/models/*.yaml). The environment variable
// TRAINSIM_DATA_DIR overrides the directory compiled in from the source tree.
#include <string>

namespace trainsim {
std::string data_dir();
}
