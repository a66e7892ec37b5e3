// `trainsim nccl-test` output: nccl-tests' column layout (size, count, type, redop, root, time,
// algbw, busbw) so a predicted table reads like a measured one, plus what NCCL would choose.
#include <fmt/format.h>

#include "report/nccl_test_result.hpp"

namespace trainsim {

void write_nccl_test_header(std::ostream& out, const NcclTestTable& t) {
  fmt::memory_buffer b;
  fmt::format_to(std::back_inserter(b),
                 "# trainsim nccl-test: {} on {} x {} ({} node{} x {} GPUs), NCCL 2.30 model{}\n", t.op, t.gpus, t.gpu,
                 t.nodes, t.nodes == 1 ? "" : "s", t.gpus_per_node,
                 t.network_model == "flow" ? ", flows on the fabric (simulation.network_model: flow)" : "");
  fmt::format_to(std::back_inserter(b), "#\n");
  fmt::format_to(std::back_inserter(b),
                 "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>9}  {:>7}  {:>7}  {:<15} {:<8} {:>8}\n", "size", "count",
                 "type", "redop", "root", "time", "algbw", "busbw", "algorithm", "protocol", "channels");
  fmt::format_to(std::back_inserter(b), "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>9}  {:>7}  {:>7}\n", "(B)",
                 "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)");
  out << fmt::to_string(b);
}

void write_nccl_test_row(std::ostream& out, const NcclTestRow& r) {
  out << fmt::format("  {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>9.2f}  {:>7.2f}  {:>7.2f}  {:<15} {:<8} {:>8}\n",
                     r.size_bytes, r.count, r.dtype, r.redop, r.root, r.time_us, r.algbw_GBps, r.busbw_GBps,
                     r.algorithm, r.protocol, r.channels);
}

void write_nccl_test_footer(std::ostream& out, const NcclTestTable& t) {
  double busbw_sum = 0;
  for (const auto& r : t.rows) busbw_sum += r.busbw_GBps;
  out << fmt::format("# Avg bus bandwidth    : {:.4f}\n",
                     t.rows.empty() ? 0.0 : busbw_sum / static_cast<double>(t.rows.size()));
}

void write_nccl_test_table(std::ostream& out, const NcclTestTable& t) {
  write_nccl_test_header(out, t);
  for (const auto& r : t.rows) write_nccl_test_row(out, r);
  write_nccl_test_footer(out, t);
}

nlohmann::json to_json(const NcclTestTable& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : t.rows)
    rows.push_back({{"size_bytes", r.size_bytes},
                    {"count", r.count},
                    {"dtype", r.dtype},
                    {"redop", r.redop},
                    {"root", r.root},
                    {"time_us", r.time_us},
                    {"algbw_GBps", r.algbw_GBps},
                    {"busbw_GBps", r.busbw_GBps},
                    {"algorithm", r.algorithm},
                    {"protocol", r.protocol},
                    {"channels", r.channels}});
  return {{"op", t.op},       {"gpus", t.gpus},
          {"nodes", t.nodes}, {"gpus_per_node", t.gpus_per_node},
          {"gpu", t.gpu},     {"network_model", t.network_model},
          {"rows", rows}};
}

}  // namespace trainsim
