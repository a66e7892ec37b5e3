// `trainsim run SCENARIO`: simulate one iteration and print the report (or JSON).
#include <iostream>
#include <memory>

#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "cli/run_progress.hpp"
#include "trainsim/errors.hpp"
#include "trainsim/report.hpp"
#include "trainsim/scenario.hpp"
#include "trainsim/trainsim.hpp"
#include "trainsim/memory.hpp"

namespace trainsim::cli {

namespace {
struct RunArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  bool json = false;
  std::string trace;
  std::vector<int> trace_ranks;
  std::string csv;
  std::string links_csv;
  std::string queues_csv;
  std::string pauses_csv;
  std::string rates_csv;
  std::string html;
  bool allow_oom = false;
  bool explain = false;
  bool per_rank = false;
  bool no_timing = false;
  bool progress = false;
  std::string workload;
};
}  // namespace

Command add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "simulate one training iteration of a scenario");
  cmd->add_option("scenario", args->scenario, "scenario YAML file")->required();
  cmd->add_option("--set", args->overrides, "override a key: --set parallelism.tensor=4 (repeatable)");
  cmd->add_flag("--json", args->json, "print one JSON object (field names as in the scenario spec)");
  cmd->add_option("--trace", args->trace, "write a Chrome/Perfetto trace of every simulated rank's streams");
  auto* trace_ranks = cmd->add_option("--trace-ranks", args->trace_ranks,
                                      "global ranks to include in the trace (default: all simulated); needs --trace")
                          ->delimiter(',');
  cmd->add_option("--csv", args->csv, "write the per-collective table as CSV");
  cmd->add_option("--links-csv", args->links_csv,
                  "write per-link traffic and utilisation as CSV (needs simulation.network_model: flow or packet)");
  cmd->add_option("--queues-csv", args->queues_csv,
                  "write every fabric port's egress queue over time as CSV (needs simulation.network_model: packet)");
  cmd->add_option("--pauses-csv", args->pauses_csv,
                  "write every interval PFC paused a fabric port as CSV (needs simulation.network_model: packet)");
  cmd->add_option("--rates-csv", args->rates_csv,
                  "write every change of every flow's sending rate (its congestion control's) as CSV (needs "
                  "simulation.network_model: packet)");
  cmd->add_option("--html", args->html,
                  "write a self-contained HTML report: headline numbers, breakdown and memory charts, collectives, "
                  "busiest links, the critical rank's timeline with --trace");
  cmd->add_flag("--allow-oom", args->allow_oom, "simulate even if the configuration does not fit in GPU memory");
  cmd->add_flag(
      "--explain", args->explain,
      "list the critical rank's longest ops and collectives, their share and whether measured, scaled or modelled");
  cmd->add_flag("--per-rank", args->per_rank, "simulate every rank instead of one per symmetric class");
  cmd->add_flag("--no-timing", args->no_timing, "report simulation.wall_s as 0 (byte-identical output across runs)");
  cmd->add_flag("--progress", args->progress,
                "show progress (simulated time, events, ETA) on stderr even when it is not a terminal");
  cmd->add_option("--workload", args->workload,
                  "run this workload on the scenario's cluster instead of the workload of its model: a SimAI/AICB "
                  "layer table (docs/workload-files.md) or a directory of Chakra execution traces (docs/chakra.md), "
                  "as `trainsim export` writes them; the scenario's model block may then be left out");
  return {
      cmd, [args, trace_ranks]() {
        const Scenario s = load_scenario(args->scenario, args->overrides,
                                         args->workload.empty() ? ScenarioNeeds::Job : ScenarioNeeds::JobIfModel);
        if (!args->links_csv.empty() && s.simulation.network_model == NetworkModel::Analytical)
          throw ScenarioError(s.file, "--links-csv",
                              "per-link statistics need simulation.network_model: flow or packet");
        if (!args->queues_csv.empty() && s.simulation.network_model != NetworkModel::Packet)
          throw ScenarioError(s.file, "--queues-csv", "queues over time need simulation.network_model: packet");
        if (!args->pauses_csv.empty() && s.simulation.network_model != NetworkModel::Packet)
          throw ScenarioError(s.file, "--pauses-csv", "PFC pauses need simulation.network_model: packet");
        if (!args->rates_csv.empty() && s.simulation.network_model != NetworkModel::Packet)
          throw ScenarioError(s.file, "--rates-csv", "sending rates over time need simulation.network_model: packet");
        const bool trace_from_file = args->trace.empty() && s.output.trace;
        const std::string trace = !args->trace.empty() ? args->trace : s.output.trace.value_or("");
        // Ranks of a trace that is not written would be accepted and never used.
        if (trace_ranks->count() > 0 && trace.empty())
          throw Error("--trace-ranks chooses the ranks of the trace, and no trace is written: add --trace FILE");
        RunOptions o;
        o.allow_oom = args->allow_oom;
        o.explain = args->explain;
        o.per_rank = args->per_rank;
        o.want_trace = !trace.empty();
        o.want_queues = !args->queues_csv.empty();
        o.want_pauses = !args->pauses_csv.empty();
        o.want_rates = !args->rates_csv.empty();
        o.trace_ranks = args->trace_ranks;
        o.workload_file = args->workload;
        // Progress goes to stderr only, so stdout is the same with or without it.
        const bool terminal = isatty(STDERR_FILENO) != 0;
        RunProgressPrinter progress(std::cerr, args->progress || terminal, terminal);
        o.progress = [&progress](const RunProgress& p) { progress.report(p); };
        RunOutput out = run_scenario(s, o);
        if (args->no_timing) out.result.simulation.wall_s = 0;
        // nccl.NCCL_DEBUG=INFO: NCCL's log of each communicator, on stderr as a real job's is.
        for (const std::string& line : out.nccl_log)
          std::cerr << (line.starts_with("#") ? line : "trainsim:0:0 [0] " + line) << "\n";
        if (!trace.empty())
          write_output_file(trace_from_file ? "output.trace" : "--trace", trace,
                            [&](std::ostream& f) { write_chrome_trace(f, out.trace, out.stream_names, out.counters); });
        const std::string csv = !args->csv.empty() ? args->csv : s.output.csv.value_or("");
        if (!csv.empty())
          write_output_file(args->csv.empty() ? "output.csv" : "--csv", csv,
                            [&](std::ostream& f) { write_comm_csv(f, out.result); });
        if (!args->links_csv.empty())
          write_output_file("--links-csv", args->links_csv, [&](std::ostream& f) { write_links_csv(f, out.links); });
        if (!args->queues_csv.empty())
          write_output_file("--queues-csv", args->queues_csv,
                            [&](std::ostream& f) { write_queues_csv(f, out.queues); });
        if (!args->pauses_csv.empty())
          write_output_file("--pauses-csv", args->pauses_csv,
                            [&](std::ostream& f) { write_pauses_csv(f, out.pauses); });
        if (!args->rates_csv.empty())
          write_output_file("--rates-csv", args->rates_csv, [&](std::ostream& f) { write_rates_csv(f, out.rates); });
        if (!args->html.empty())
          write_output_file("--html", args->html,
                            [&](std::ostream& f) { f << run_html_page(s, out, o.want_trace, args->scenario); });
        if (args->json)
          std::cout << to_json(out.result).dump(2) << "\n";
        else
          write_text_report(std::cout, out.result);
        return 0;
      }};
}

}  // namespace trainsim::cli
