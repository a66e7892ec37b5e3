#pragma once
// The cluster's network as `trainsim topo` shows it (docs/topologies.md): the generated graph with a scenario's
// faults applied, its summary (tiers, oversubscription, bisection) and its Graphviz drawing. Part of the public API
// (docs/architecture.md).
#include "api/network_faults.hpp"
#include "topology/generate.hpp"
#include "topology/graphviz.hpp"
#include "topology/summary.hpp"
