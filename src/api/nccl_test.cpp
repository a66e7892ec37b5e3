// `trainsim nccl-test`: the rows nccl-tests prints, predicted by the collective model for the
// scenario's cluster. Sizes, counts and bus bandwidth follow nccl-tests (src/common.cu and the
// per-collective *GetCollByteCount / *GetBw functions) so the table can be compared line by line.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "api/fabric_check.hpp"
#include "api/flow_setup.hpp"
#include "core/check.hpp"
#include "collective/collective_model.hpp"
#include "collective/nccl/nccl_analytical_model.hpp"
#include "collective/nccl/nccl_debug_log.hpp"
#include "core/error.hpp"
#include "report/format_utils.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {

namespace {

bool rooted(CollectiveOp op) { return op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce; }
bool reduces(CollectiveOp op) {
  return op == CollectiveOp::AllReduce || op == CollectiveOp::ReduceScatter || op == CollectiveOp::Reduce;
}
// Collectives whose call argument is a per-rank count of a buffer split nranks ways.
bool per_rank_count(CollectiveOp op) {
  return op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter || op == CollectiveOp::AllToAll;
}

// Flow level (docs/network-model.md): the call's flows on the cluster's fabric, from t = 0, with the scenario's
// network faults; `agg` calls of one group at once (nccl-tests' -m), the time of the last to finish. Calls inside
// one scale-up domain are priced by the collective model, as in a run.
SimTime flow_level_time(const Scenario& scenario, const ClusterSpec& cluster, const CollectiveModel& model,
                        const std::vector<int>& ranks, CollectiveOp op, std::int64_t bytes, int agg) {
  FlowSetup setup = make_flow_setup(scenario, cluster, model, {{ranks}}, true);
  for (int i = 0; i < agg; ++i)
    setup.backend->start(0, static_cast<std::uint64_t>(i), CollectiveCall{op, bytes, 0, -1});
  std::vector<std::uint64_t> done;
  SimTime end = 0;
  for (int finished = 0; finished < agg;) {
    const SimTime t = setup.backend->next_event();
    TRAINSIM_CHECK(t != kNever, "the flow backend stopped with a collective call unfinished");
    setup.backend->advance(t, done);
    finished += static_cast<int>(done.size());
    end = t;
  }
  return end;
}

[[noreturn]] void reject(const std::string& flag, const std::string& message) {
  throw ScenarioError("", flag, message);
}

// nccl-tests' count for a size: size / eltSize, and for the split collectives the per-rank count
// rounded down to 16 bytes' worth of elements (`(count/nranks) & -(16/eltSize)`).
std::int64_t call_count(CollectiveOp op, std::int64_t size, int elt, int nranks) {
  const std::int64_t count = size / elt;
  if (!per_rank_count(op)) return count;
  const std::int64_t align = std::max<std::int64_t>(1, 16 / elt);
  return (count / nranks) / align * align;
}

// The size after `size`: nccl-tests adds -i when given, else multiplies by -f. As a double first, so
// that a huge -e cannot overflow; floored to whole bytes like nccl-tests' integer sizes.
double next_size(std::int64_t size, const NcclTestOptions& o) {
  return o.increment > 0 ? static_cast<double>(size) + static_cast<double>(o.increment)
                         : std::floor(static_cast<double>(std::max<std::int64_t>(size, 1)) * o.factor);
}

using report_format::group_digits;  // 1234567 -> "1,234,567"

// Checks the size steps before anything is computed: every step must grow the size (a factor that
// rounds back to the same byte count would repeat one row forever), and the table is at most
// kMaxNcclTestRows rows (-i 1 from 8 B to 1 GiB would be a billion rows, printed over hours).
void check_steps(const NcclTestOptions& o) {
  const std::string range = "from -b " + std::to_string(o.min_bytes) + " to -e " + std::to_string(o.max_bytes);
  if (o.increment > 0) {
    const std::int64_t rows = (o.max_bytes - o.min_bytes) / o.increment + 1;
    if (rows > kMaxNcclTestRows) {
      const std::int64_t least = (o.max_bytes - o.min_bytes + kMaxNcclTestRows - 2) / (kMaxNcclTestRows - 1);
      reject("-i", "-i " + std::to_string(o.increment) + " " + range + " gives " + group_digits(rows) +
                       " rows, more than " + group_digits(kMaxNcclTestRows) + "; use -i " + std::to_string(least) +
                       " or more, a narrower -b/-e, or -f to multiply the size instead");
    }
    return;
  }
  std::int64_t rows = 1;
  for (std::int64_t size = o.min_bytes; size < o.max_bytes; ++rows) {
    const double grown = next_size(size, o);
    if (grown > static_cast<double>(o.max_bytes)) break;
    const auto next = static_cast<std::int64_t>(grown);
    if (next <= size)
      reject("-f", fmt::format("-f {} does not grow {} bytes ({} x {} rounds down to {}), so the table would never "
                               "reach -e {}; use a larger -f, a larger -b, or -i to add bytes instead",
                               o.factor, size, std::max<std::int64_t>(size, 1), o.factor, next, o.max_bytes));
    if (rows >= kMaxNcclTestRows)
      reject("-f", "-f " + fmt::format("{}", o.factor) + " " + range + " gives more than " +
                       group_digits(kMaxNcclTestRows) + " rows; use a larger -f or a narrower -b/-e");
    size = next;
  }
}

}  // namespace

std::optional<int> nccl_dtype_size(const std::string& dtype) {
  // nccl-tests' -d names (ncclDataType_t): int8 uint8 int32 uint32 int64 uint64 half float double
  // bfloat16 f8e4m3 f8e5m2.
  static const std::pair<const char*, int> kTypes[] = {{"int8", 1},   {"uint8", 1},    {"int32", 4},  {"uint32", 4},
                                                       {"int64", 8},  {"uint64", 8},   {"half", 2},   {"float", 4},
                                                       {"double", 8}, {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1}};
  for (const auto& [name, size] : kTypes)
    if (dtype == name) return size;
  return std::nullopt;
}

NcclTestTable run_nccl_test(const Scenario& scenario, const NcclTestOptions& o,
                            const std::function<void(const NcclTestTable&)>& on_row) {
  const auto elt = nccl_dtype_size(o.dtype);
  if (!elt)
    reject("-d",
           "unknown type '" + o.dtype +
               "'; valid: int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16, f8e4m3, f8e5m2");
  static const char* kOps[] = {"sum", "prod", "max", "min", "avg"};
  bool known_op = false;
  for (const char* k : kOps) known_op = known_op || o.redop == k;
  if (!known_op) reject("-o", "unknown reduction '" + o.redop + "'; valid: sum, prod, max, min, avg");
  if (o.min_bytes < 0) reject("-b", "the minimum size must be >= 0");
  if (o.max_bytes < o.min_bytes) reject("-e", "the maximum size must be >= the minimum size (-b)");
  if (o.increment <= 0 && !(o.factor > 1)) reject("-f", "the step factor must be > 1 (or give -i)");
  check_steps(o);

  ClusterSpec cluster = scenario.cluster;
  int n = cluster.num_gpus;
  if (o.gpus) {
    n = *o.gpus;
    if (n < 1) reject("--gpus", "needs at least 1 GPU");
    // Whole nodes, or part of one node: a test spreads over nodes the way mpirun fills them.
    if (n > cluster.gpus_per_node && n % cluster.gpus_per_node != 0)
      reject("--gpus", std::to_string(n) + " GPUs do not fill whole nodes of " + std::to_string(cluster.gpus_per_node) +
                           " (cluster.gpus_per_node); use a multiple of it or at most one node");
    cluster.num_gpus = std::max(n, cluster.gpus_per_node);
    if (cluster.scale_up.job_placement_auto)  // the test's own job is placed as the scheduler would place it
      cluster.scale_up.domain_size =
          segment_gpus_per_domain(cluster.num_gpus, cluster.gpus_per_node, cluster.scale_up.hardware_domain_size);
  }
  if (o.agg_iters < 1)
    reject("-m", "aggregated operations per group must be at least 1, got " + std::to_string(o.agg_iters));
  if (rooted(o.op) && (o.root < 0 || o.root >= n))
    reject("-r", "root " + std::to_string(o.root) + " is not a rank of the " + std::to_string(n) + " GPUs");

  check_fabric_buildable(scenario.file, cluster);
  const auto model = make_collective_model(cluster, scenario.nccl.env, scenario.algorithms);
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
  const GroupPlacement where = GroupPlacement::of(ranks, cluster);

  NcclTestTable table;
  const auto subsystems = nccl_debug_subsystems(scenario.nccl.env);
  const auto dump = scenario.nccl.env.find("NCCL_GRAPH_DUMP_FILE");
  const bool dumping = dump != scenario.nccl.env.end() && !dump->second.empty();
  if ((subsystems || dumping) && (where.nodes > 1 || where.max_per_node > 1)) {
    const NcclAnalyticalModel nccl(cluster, scenario.nccl.env);
    const auto comm = nccl.communicator(where);
    if (subsystems) table.nccl_log = nccl_debug_lines(*comm, *nccl.tuning(where), *subsystems);
    if (dumping) {
      table.nccl_graph_dump_file = dump->second;
      table.nccl_graph_xml = nccl_graph_xml(*comm);
    }
  }
  table.op = to_string(o.op);
  table.gpus = n;
  table.nodes = where.nodes;
  table.gpus_per_node = where.max_per_node;
  table.gpu = cluster.gpu.name;
  const bool flow = scenario.simulation.network_model != NetworkModel::Analytical;
  table.network_model = scenario.simulation.network_model == NetworkModel::Packet ? "packet"
                        : flow                                                    ? "flow"
                                                                                  : "analytical";
  for (std::int64_t size = o.min_bytes; size <= o.max_bytes;) {
    NcclTestRow row;
    row.count = call_count(o.op, size, *elt, n);
    // The size column is the larger buffer: count × elt, × nranks for the split collectives.
    row.size_bytes = row.count * *elt * (per_rank_count(o.op) ? n : 1);
    row.dtype = o.dtype;
    row.redop = reduces(o.op) ? o.redop : "none";
    row.root = rooted(o.op) ? o.root : -1;
    // -m N: N operations in one group (nccl-tests divides the group's time by N).
    const CollectiveEstimate est = o.agg_iters > 1 ? model->estimate_group(o.op, row.size_bytes, o.agg_iters, where)
                                                   : model->estimate(o.op, row.size_bytes, where);
    const SimTime time =
        flow ? flow_level_time(scenario, cluster, *model, ranks, o.op, row.size_bytes, o.agg_iters) : est.time;
    row.time_us = to_microseconds(time) / o.agg_iters;
    row.algbw_GBps = row.time_us > 0 ? static_cast<double>(row.size_bytes) / (1000.0 * row.time_us) : 0;
    row.busbw_GBps = row.algbw_GBps * busbw_factor(o.op, n);
    row.algorithm = to_string(est.algorithm);
    row.protocol = to_string(est.protocol);
    row.channels = est.channels;
    table.rows.push_back(row);
    if (on_row) on_row(table);
    // Stop once the next size would pass -e (check_steps made sure every step grows).
    const double grown = next_size(size, o);
    if (grown > static_cast<double>(o.max_bytes)) break;
    const auto next = static_cast<std::int64_t>(grown);
    if (next <= size) break;
    size = next;
  }
  return table;
}

}  // namespace trainsim
