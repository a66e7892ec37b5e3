// `trainsim sweep SCENARIO --vary key=v1,v2,... --zip key=v1,v2,...`: simulate every point of a grid
// of overrides, on every core and, under mpirun, on every rank; print a table (or CSV, or JSON) and optionally
// plot it or write it as an HTML page (rank 0 writes every output).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "cli/progress.hpp"
#include "cli/thread_count.hpp"
#include "trainsim/errors.hpp"
#include "trainsim/explore.hpp"
#include "trainsim/scenario.hpp"

namespace trainsim::cli {

namespace {

namespace fs = std::filesystem;
using namespace trainsim::explore;

struct SweepArgs {
  std::string scenario;
  std::vector<std::string> vary;
  std::vector<std::string> zip;
  std::size_t zip_position = 0;  // the zipped axis follows this many --vary axes
  std::vector<std::string> overrides;
  std::string csv;
  std::string plot;
  std::string html;
  bool json = false;
  std::string y = "iteration_time_s";
  int threads = 0;
  bool allow_oom = false;
  bool y_without_plot = false;
  // The whole run (docs/sweep.md, "The whole run"): --tokens plans each point's run; --objective names the best.
  std::string objective;
  std::optional<double> gpu_hour_price;
  std::optional<std::string> tokens;
};

// Checks of files and programs, made on rank 0 only (another node may see a different file system)
// and shared with every rank so that all stop together. "" when everything is in place.
std::string preflight(const SweepArgs& a) {
  if (!std::ifstream(a.scenario)) return "cannot read the scenario file " + a.scenario;
  if (!a.csv.empty() && a.csv != "-")
    if (auto problem = check_output_dir(a.csv, "--csv"); !problem.empty()) return problem;
  if (!a.html.empty())
    if (auto problem = check_output_dir(a.html, "--html"); !problem.empty()) return problem;
  if (!a.plot.empty()) {
    if (auto problem = check_output_dir(a.plot, "--plot"); !problem.empty()) return problem;
    try {
      require_gnuplot();
    } catch (const Error& e) { return e.what(); }
  }
  return "";
}

// Evaluates this rank's share of the points and brings every outcome to rank 0 (in point order).
// One process with --csv FILE writes the CSV as points finish (`csv`); under MPI rank 0 learns the
// other ranks' outcomes only at the gather, so the file is written at the end.
std::vector<PointOutcome> evaluate_sweep(const SweepArgs& a, const SweepObjective& objective, const Sweep& sweep,
                                         const MpiWorld& world, std::optional<SweepCsvStream>& csv) {
  const std::vector<Overrides> points = sweep.overrides(a.overrides);
  const std::vector<std::size_t> mine = rank_share(points.size(), world.rank(), world.size());
  const int threads = a.threads > 0 ? a.threads : threads_per_rank(world.ranks_on_this_node());
  PointOptions options;
  options.allow_oom = a.allow_oom;
  apply_sweep_objective(objective, options);
  if (world.size() == 1 && !a.csv.empty() && a.csv != "-") csv.emplace(a.csv, sweep, points.size());

  Progress progress(world.size() > 1 ? "points of rank 0" : "points");
  ProgressFn report;
  if (world.is_root()) report = [&progress](std::size_t done, std::size_t total) { progress.update(done, total); };
  OutcomeFn stream;
  if (csv) stream = [&csv](std::size_t point, const PointOutcome& outcome) { csv->add(point, outcome); };
  std::vector<PointOutcome> outcomes = evaluate_points(a.scenario, points, mine, threads, options, report, stream);
  progress.finish();
  if (csv) csv->finish();
  return world.gather(points.size(), mine, std::move(outcomes));
}

int write_outputs(const SweepArgs& a, const std::optional<Objective>& objective, const Sweep& sweep,
                  const std::vector<PointOutcome>& outcomes, bool csv_written) {
  const SweepTable table = make_sweep_table(sweep, outcomes);
  std::size_t simulated = 0;
  for (bool ok : table.ok) simulated += ok ? 1 : 0;
  // The plot's data first: a bad --y is reported before anything is written.
  PlotData plot;
  if (!a.plot.empty() && simulated > 0) plot = make_plot_data(sweep, table, a.y);

  // The --json object: printed, and embedded in the page.
  const std::size_t best = objective ? best_point(outcomes, *objective) : outcomes.size();
  const bool has_best = best < outcomes.size();
  nlohmann::ordered_json json;
  if (a.json || !a.html.empty()) {
    json = sweep_json(sweep, outcomes, fs::path(a.scenario).stem().string(), a.overrides);
    if (objective) json["objective"] = sweep_objective_json(*objective, best, outcomes.size());
  }

  if (a.csv == "-") {
    write_sweep_csv(std::cout, table);
  } else {
    if (!a.csv.empty() && !csv_written) {
      std::ofstream f(a.csv);
      if (!f) throw Error("--csv: cannot write " + a.csv);
      write_sweep_csv(f, table);
      if (!f.flush()) throw Error("--csv: error while writing " + a.csv);
    }
  }
  if (!a.html.empty())
    write_output_file("--html", a.html, [&](std::ostream& f) { f << render_sweep_html(sweep, json, a.scenario); });
  if (a.json)
    std::cout << json.dump(2) << "\n";
  else if (a.csv != "-") {
    write_sweep_text(std::cout, sweep, table);
    if (objective) {
      if (has_best) {
        std::string where;
        for (std::size_t c = 0; c < table.key_columns; ++c)
          where += (c ? ", " : "") + table.columns[c] + "=" + csv_cell(table.rows[best][c]);
        std::cout << "best by " << objective_name(objective->kind) << ": " << where << " ("
                  << fmt::format("{:.6g} {}", outcomes[best].result["objective"].get<double>(),
                                 objective_unit(objective->kind))
                  << ")\n";
      } else {
        std::cout << "best by " << objective_name(objective->kind) << ": no point has a value\n";
      }
    }
  }
  std::cout << std::flush;

  if (simulated == 0) {
    std::cerr << "error: none of the " << table.rows.size() << " points simulated (see the status column)"
              << (a.plot.empty() ? "" : "; no plot written") << "\n";
    return 1;
  }
  if (!a.plot.empty()) write_sweep_plot(plot, fs::path(a.scenario).filename().string(), a.plot);
  return 0;
}

int run_sweep(const SweepArgs& a, const MpiWorld& world) {
  // Checks that give the same answer on every rank: each rank throws the same error by itself.
  const SweepObjective objective = read_sweep_objective(a.objective, a.gpu_hour_price, a.tokens);
  if (a.y_without_plot) throw Error("--y chooses what --plot draws; give --plot out.svg too");
  if (a.json && a.csv == "-") throw Error("--json and --csv - both write to standard output; give --csv a file");
  const Sweep sweep = make_sweep(a.vary, a.zip, a.zip_position);
  check_no_set_conflict(sweep, a.overrides);
  scenario_detail::apply_overrides(YAML::Node(), a.overrides);  // --set syntax and keys
  if (!a.plot.empty()) plot_terminal(a.plot);

  if (const std::string problem = world.broadcast_from_root(world.is_root() ? preflight(a) : ""); !problem.empty())
    throw Error(problem);

  std::optional<SweepCsvStream> csv;
  const std::vector<PointOutcome> outcomes = evaluate_sweep(a, objective, sweep, world, csv);
  if (!world.is_root()) return 0;  // rank 0 writes everything
  return write_outputs(a, objective.objective, sweep, outcomes, csv.has_value());
}

// How many --vary values the command line gives before its first --zip: the zipped axis takes that
// place among the axes (--zip first: the first axis, the plot's x).
std::size_t zip_position(const std::vector<CLI::Option*>& parse_order, const CLI::Option* vary,
                         const CLI::Option* zip) {
  std::size_t varies = 0;
  for (const CLI::Option* option : parse_order) {
    if (option == zip) break;
    if (option == vary) ++varies;
  }
  return varies;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "simulate every combination of a few keys' values (a grid of overrides)");
  cmd->add_option("scenario", args->scenario, "scenario YAML file")->required();
  auto* vary = cmd->add_option("--vary", args->vary,
                               "a key and its values: --vary cluster.nic_gbps=100,200,400 or =100:400:100 "
                               "(repeatable; the first varies slowest)");
  auto* zip = cmd->add_option("--zip", args->zip,
                              "keys that change together: --zip parallelism.pipeline=1,2,4 --zip "
                              "training.global_batch_size=16,32,64 is one axis of 3 points (repeatable; same "
                              "number of values each; the axis sits where the first --zip is among the --vary)");
  cmd->add_option("--set", args->overrides, "override a key at every point: --set parallelism.tensor=4 (repeatable)");
  cmd->add_option("--csv", args->csv, "write one CSV row per point to PATH ('-': to stdout instead of the table)");
  cmd->add_flag("--json", args->json,
                "print one JSON object instead of the table: the keys and values swept, counts, every point's "
                "status and `trainsim run --json` result");
  cmd->add_option("--html", args->html,
                  "write a self-contained HTML page: what was swept, iteration time and throughput charts, a "
                  "sortable table of every point");
  auto* plot = cmd->add_option("--plot", args->plot, "draw the sweep with gnuplot into out.svg or out.png");
  auto* y = cmd->add_option("--y", args->y, "the CSV column to plot (default iteration_time_s)");
  cmd->add_option("--threads", args->threads,
                  "worker threads (default 0: all cores, shared by the MPI ranks of a node)")
      ->check(thread_count_check());
  cmd->add_flag("--allow-oom", args->allow_oom,
                "simulate points that do not fit in GPU memory instead of skipping them");
  cmd->add_option("--tokens", args->tokens,
                  "plan each point's whole run on this many tokens (15T, 1e12): run_plan.days, goodput, failures, "
                  "energy_mwh, cost_usd columns, as `trainsim plan` gives them");
  cmd->add_option("--objective", args->objective,
                  "add an `objective` column and name the best point: tokens_per_s | cost | time_to_train | days | "
                  "energy (days, energy and cost with --tokens: of the whole run)");
  cmd->add_option("--gpu-hour-price", args->gpu_hour_price,
                  "USD per GPU-hour for --objective cost (with --tokens it replaces the scenario's "
                  "cost.usd_per_gpu_hour)");
  return {cmd, [args, cmd, vary, zip, plot, y]() {
            args->y_without_plot = y->count() > 0 && plot->count() == 0;
            args->zip_position = zip_position(cmd->parse_order(), vary, zip);
            // MPI (only when launched by mpirun/srun) is finalised when `world` goes, on every exit path.
            const MpiWorld world(detect_launcher());
            try {
              return run_sweep(*args, world);
            } catch (const Error&) {
              // Every rank meets the same error; rank 0 reports it and its exit status is mpirun's. Exiting
              // non-zero here could make mpirun kill rank 0 before it has said why.
              if (!world.is_root()) return 0;
              throw;
            }
          }};
}

}  // namespace trainsim::cli
