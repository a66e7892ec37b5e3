#pragma once
// Scenarios for a front end: read a YAML scenario with `--set` overrides (load_scenario), the Scenario struct the
// rest of the API takes, and the table of every scenario key (`trainsim keys`, docs/scenario-keys.md). Part of the
// public API (docs/architecture.md).
#include "scenario/key_table.hpp"
#include "scenario/overrides.hpp"
#include "scenario/scenario.hpp"
#include "scenario/scenario_loader.hpp"
