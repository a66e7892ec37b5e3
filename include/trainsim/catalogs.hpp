#pragma once
// What a scenario can name (`trainsim presets`): the GPU catalog, the model catalog and the collective algorithms
// with their descriptions. Part of the public API (docs/architecture.md).
#include "collective/algorithm_registry.hpp"
#include "hardware/gpu_catalog.hpp"
#include "model/model_catalog.hpp"
