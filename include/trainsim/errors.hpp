#pragma once
// The errors trainsim raises, for a front end to catch and report: Error (a user error, naming the file and key:
// exit 1), ScenarioError and its kinds, InternalError (a broken invariant, "please report": exit 2) and the
// TRAINSIM_CHECK macro that raises it. Part of the public API (docs/architecture.md).
#include "core/check.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"  // closest_match: the "did you mean" of an error message
