#pragma once
// Design-space exploration (docs/sweep.md, docs/tune.md): `sweep` (the --vary/--zip specification, the points'
// table and its text, CSV, JSON, HTML and plot outputs), `tune` (the search, its JSON and HTML), and how points are
// spread over threads and MPI ranks. Part of the public API (docs/architecture.md).
#include "explore/mpi_split.hpp"
#include "explore/parallel_eval.hpp"
#include "explore/sweep_csv_stream.hpp"
#include "explore/sweep_html.hpp"
#include "explore/sweep_json.hpp"
#include "explore/sweep_objective.hpp"
#include "explore/sweep_plot.hpp"
#include "explore/sweep_spec.hpp"
#include "explore/sweep_table.hpp"
#include "explore/sweep_text.hpp"
#include "explore/tune_html.hpp"
#include "explore/tune_json.hpp"
#include "explore/tune_search.hpp"
