#pragma once
// The table `trainsim nccl-test` prints: one row per message size, as nccl-tests prints them, plus
// the algorithm, protocol and channels NCCL would pick.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trainsim {

struct NcclTestRow {
  std::int64_t size_bytes = 0;  // nccl-tests' size column (the larger of send and receive buffers)
  std::int64_t count = 0;       // elements per rank's call argument
  std::string dtype, redop;
  int root = -1;  // -1 for collectives without a root
  double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;
  std::string algorithm, protocol;
  int channels = 0;
};
struct NcclTestTable {
  std::string op;  // "all_reduce", ...
  int gpus = 0, nodes = 0, gpus_per_node = 0;
  std::string gpu;                           // GPU name
  std::string network_model = "analytical";  // simulation.network_model: analytical (NCCL's cost model) or flow
  // With nccl.NCCL_DEBUG=INFO: the lines NCCL logs for the test's communicator (message only, NCCL's order and
  // format); the CLI prints them on stderr with NCCL's prefix, before the table.
  std::vector<std::string> nccl_log;
  // With nccl.NCCL_GRAPH_DUMP_FILE: that path and rank 0's search graphs in NCCL's graph XML (the CLI writes it).
  std::string nccl_graph_dump_file, nccl_graph_xml;
  std::vector<NcclTestRow> rows;
};

// nccl-tests' text layout (out-of-place columns only), with a header naming the cluster.
void write_nccl_test_table(std::ostream& out, const NcclTestTable& table);
// The same in pieces, for printing each row as it is computed (as nccl-tests does): the header
// (from the table's fields, rows not needed), one row, and the average line over `table.rows`.
void write_nccl_test_header(std::ostream& out, const NcclTestTable& table);
void write_nccl_test_row(std::ostream& out, const NcclTestRow& row);
void write_nccl_test_footer(std::ostream& out, const NcclTestTable& table);
// {"op", "gpus", "nodes", "gpus_per_node", "gpu", "network_model", "rows": [{size_bytes, count, dtype, redop, root,
// time_us, algbw_GBps, busbw_GBps, algorithm, protocol, channels}]}
nlohmann::json to_json(const NcclTestTable& table);

}  // namespace trainsim
