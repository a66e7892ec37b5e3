// `trainsim nccl-test SCENARIO --op all_reduce -b 8 -e 8G -f 2`: the table nccl-tests would print on
// the scenario's cluster, predicted (flags named as nccl-tests names them).
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "trainsim/errors.hpp"
#include "trainsim/scenario.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim::cli {

namespace {

struct NcclTestArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string op;
  std::string min_bytes = "8", max_bytes = "8";
  double factor = 2;
  std::string increment;
  std::string dtype = "float", redop = "sum";
  int root = 0;
  int gpus = 0;
  int agg_iters = 1;
  bool json = false;
};

std::int64_t size_flag(const std::string& flag, const std::string& text) {
  const auto bytes = parse_byte_size(text);
  if (!bytes)
    throw ScenarioError(
        "", flag, "'" + text + "' is not a size: bytes with an optional K, M or G (powers of 1024), e.g. 8, 64K, 8G");
  return *bytes;
}

}  // namespace

Command add_nccl_test_command(CLI::App& app) {
  auto a = std::make_shared<NcclTestArgs>();
  auto* cmd = app.add_subcommand("nccl-test", "predict the table nccl-tests prints for the scenario's cluster");
  cmd->add_option("scenario", a->scenario, "scenario YAML file (its cluster and nccl blocks are used)")->required();
  cmd->add_option("--op", a->op,
                  "all_reduce | all_gather | reduce_scatter | broadcast | reduce | alltoall | sendrecv "
                  "(default: the scenario's collective.op, else all_reduce)");
  cmd->add_option("-b,--minbytes", a->min_bytes, "smallest size (K, M, G = powers of 1024)");
  cmd->add_option("-e,--maxbytes", a->max_bytes, "largest size");
  cmd->add_option("-f,--stepfactor", a->factor, "multiply the size by this between rows");
  cmd->add_option("-i,--stepbytes", a->increment, "add this many bytes between rows instead of -f");
  cmd->add_option("-d,--datatype", a->dtype, "element type, as nccl-tests names it (float, half, bfloat16, ...)");
  cmd->add_option("-o,--op-reduce", a->redop, "reduction: sum, prod, max, min, avg");
  cmd->add_option("-r,--root", a->root, "root rank for broadcast and reduce");
  cmd->add_option("-m,--agg_iters", a->agg_iters,
                  "operations aggregated in one NCCL group; times are per operation, as nccl-tests reports them");
  auto* gpus = cmd->add_option("--gpus", a->gpus, "GPUs in the test (default: the scenario's cluster.num_gpus)");
  cmd->add_option("--set", a->overrides, "override a key: --set nccl.NCCL_ALGO=Ring (repeatable)");
  cmd->add_flag("--json", a->json, "print the rows as JSON objects");
  return {cmd, [a, gpus]() {
            // The cluster and its NCCL settings; a file with no training job is a valid test bed.
            const Scenario s = load_scenario(a->scenario, a->overrides, ScenarioNeeds::ClusterOnly);
            NcclTestOptions o;
            if (!a->op.empty()) {
              const auto op = parse_collective_op(a->op);
              if (!op)
                throw ScenarioError(
                    "", "--op",
                    "unknown collective '" + a->op +
                        "'; valid: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv");
              o.op = *op;
            } else if (s.collective) {
              o.op = s.collective->op;
            }
            o.min_bytes = size_flag("-b", a->min_bytes);
            o.max_bytes = size_flag("-e", a->max_bytes);
            o.factor = a->factor;
            if (!a->increment.empty()) o.increment = size_flag("-i", a->increment);
            o.dtype = a->dtype;
            o.redop = a->redop;
            o.root = a->root;
            o.agg_iters = a->agg_iters;
            if (gpus->count() > 0) o.gpus = a->gpus;  // --gpus 0 is an error, not "unset"
            // nccl.NCCL_DEBUG=INFO: NCCL's log lines for the communicator on stderr, as a real job's would be, so that
            // `2>&1 | grep 'NCCL INFO'` diffs against one.
            const auto print_log = [](const NcclTestTable& t) {
              for (const std::string& line : t.nccl_log) std::cerr << "trainsim:0:0 [0] NCCL INFO " << line << "\n";
              if (!t.nccl_graph_dump_file.empty()) {  // NCCL writes it relative to the working directory, as here
                std::ofstream out(t.nccl_graph_dump_file);
                out << t.nccl_graph_xml;
                if (!out)
                  throw ScenarioError("", "nccl.NCCL_GRAPH_DUMP_FILE", "cannot write '" + t.nccl_graph_dump_file + "'");
              }
            };
            if (a->json) {
              const NcclTestTable table = run_nccl_test(s, o);
              print_log(table);
              std::cout << to_json(table).dump(2) << "\n";
              return 0;
            }
            // Each row as soon as it is computed, as nccl-tests prints them: a long table shows progress and
            // an interrupted one keeps what it printed.
            const NcclTestTable table = run_nccl_test(s, o, [&print_log](const NcclTestTable& so_far) {
              if (so_far.rows.size() == 1) {
                print_log(so_far);
                std::cerr << std::flush;
                write_nccl_test_header(std::cout, so_far);
              }
              write_nccl_test_row(std::cout, so_far.rows.back());
              std::cout << std::flush;
            });
            write_nccl_test_footer(std::cout, table);
            return 0;
          }};
}

}  // namespace trainsim::cli
