#pragma once
// A scenario's workload without simulating it (docs/workload.md, docs/workload-files.md): the ops each rank runs
// (`trainsim ops`), the run's size estimate, and workload files read from or written for other simulators (AICB,
// Chakra). The memory table is memory.hpp's. Part of the public API (docs/architecture.md).
#include "api/work_estimate.hpp"
#include "trainsim/memory.hpp"
#include "workload/generator.hpp"
#include "workload/workload_file.hpp"
