// Chakra execution traces: trainsim's IR written and read back op for op (streams, dependencies, groups,
// send/receive pairs, durations), files other tools would write (no trainsim attributes, CPU ops, ctrl_deps,
// nodes out of order), and every malformed input refused with the file and the node.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/time.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/chakra/chakra_attrs.hpp"
#include "workload/chakra/chakra_stream.hpp"
#include "workload/chakra/chakra_traces.hpp"
#include "workload/generator.hpp"

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using ChakraProtoMsg::Node;
using ::testing::HasSubstr;

std::string example(const std::string& name) { return std::string(TRAINSIM_SOURCE_DIR) + "/examples/" + name; }

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("trainsim-chakra-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Every compute kernel given a duration (what export_workload does with the simulated times).
Workload priced(Workload wl) {
  for (std::size_t k = 0; k < wl.kernels.size(); ++k) {
    wl.kernels[k].kind = KernelKind::FixedDuration;
    wl.kernels[k].seconds = 1e-6 * static_cast<double>(k + 1) + 1.234e-12;  // not a whole microsecond
  }
  return wl;
}

std::set<std::uint32_t> deps_of(const RankProgram& p, const Op& op) {
  return {p.deps.begin() + op.first_dep, p.deps.begin() + op.first_dep + op.num_deps};
}

// Two workloads run the same: per rank the same ops with the same dependencies, kernels of the same duration,
// collectives of the same kind, size, sender and group members.
void expect_same(const Workload& a, const Workload& b) {
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const RankProgram &pa = a.ranks[r], &pb = b.ranks[r];
    EXPECT_EQ(pa.rank, pb.rank);
    EXPECT_EQ(pa.represents, pb.represents);
    ASSERT_EQ(pa.ops.size(), pb.ops.size()) << "rank " << pa.rank;
    for (std::size_t i = 0; i < pa.ops.size(); ++i) {
      const Op &x = pa.ops[i], &y = pb.ops[i];
      SCOPED_TRACE("rank " + std::to_string(pa.rank) + " op " + std::to_string(i) + " " + a.names[x.name]);
      ASSERT_EQ(x.type, y.type);
      EXPECT_EQ(x.stream, y.stream);
      EXPECT_EQ(x.phase, y.phase);
      EXPECT_EQ(x.layer, y.layer);
      EXPECT_EQ(x.micro_batch, y.micro_batch);
      EXPECT_EQ(x.launches, y.launches);
      ASSERT_EQ(x.host_waits, y.host_waits);
      const auto waited = [](const RankProgram& p, const Op& op) {
        return std::set<std::uint32_t>(p.deps.begin() + op.first_dep, p.deps.begin() + op.first_dep + op.host_waits);
      };
      EXPECT_EQ(waited(pa, x), waited(pb, y));
      EXPECT_EQ(a.names[x.name], b.names[y.name]);
      EXPECT_EQ(deps_of(pa, x), deps_of(pb, y));
      if (x.type == Op::Type::Compute) {
        EXPECT_EQ(from_seconds(a.kernels[x.desc].seconds), from_seconds(b.kernels[y.desc].seconds));
        EXPECT_EQ(b.kernels[y.desc].kind, KernelKind::FixedDuration);
      } else {
        const CollectiveDesc &cx = a.collectives[x.desc], &cy = b.collectives[y.desc];
        EXPECT_EQ(cx.kind, cy.kind);
        EXPECT_EQ(cx.bytes, cy.bytes);
        EXPECT_EQ(cx.sender, cy.sender);
        EXPECT_EQ(cx.sms, cy.sms);
        EXPECT_EQ(a.groups[cx.group].ranks, b.groups[cy.group].ranks);
        EXPECT_EQ(a.groups[cx.group].kind, b.groups[cy.group].kind);
        EXPECT_EQ(a.groups[cx.group].simulated_members, b.groups[cy.group].simulated_members);
        EXPECT_EQ(x.coll_seq, y.coll_seq);
      }
    }
  }
}

void round_trip(const std::string& scenario, const std::vector<std::string>& sets, bool per_rank) {
  const Scenario s = load_scenario(example(scenario), sets);
  WorkloadOptions wo;
  wo.per_rank = per_rank;
  const Workload wl = priced(generate_workload(s, wo));
  const fs::path dir = fresh_dir("rt");
  chakra::write_traces(wl, dir.string());
  EXPECT_TRUE(fs::exists(dir / "comm_group.json"));
  EXPECT_TRUE(fs::exists(dir / ("trainsim." + std::to_string(wl.ranks.front().rank) + ".et")));
  expect_same(wl, chakra::read_traces(dir.string(), s.cluster.num_gpus));
  fs::remove_all(dir);
}

// TP with sequence parallelism, DP, one simulated rank standing for 8.
TEST(ChakraTraces, RoundTripTinyJob) { round_trip("tiny-8-h100.yaml", {}, false); }
// Every rank, pipeline sends and receives (one-way and both ways) and a CP ring exchange; Megatron's host waits
// after each transfer (torch.cuda.synchronize()) and on the gradient norm.
TEST(ChakraTraces, RoundTripPipelineAndContextParallelEveryRank) {
  const std::vector<std::string> sets{"parallelism.tensor=1",         "parallelism.pipeline=2",
                                      "parallelism.context=2",        "model.num_layers=4",
                                      "training.global_batch_size=8", "training.micro_batch_size=1"};
  const Workload wl = generate_workload(load_scenario(example("tiny-8-h100.yaml"), sets), {});
  EXPECT_GT(std::count_if(wl.ranks[0].ops.begin(), wl.ranks[0].ops.end(), [](const Op& op) { return op.host_waits; }),
            2);
  round_trip("tiny-8-h100.yaml", sets, true);
}
// MoE (EP all-to-all, expert groups) and interleaved pipeline sends posted as handles.
TEST(ChakraTraces, RoundTripMoeInterleaved) {
  round_trip("mixtral-8x7b-64-h100.yaml", {"parallelism.virtual_pipeline=2", "training.global_batch_size=64"}, false);
}

// ---- traces as other tools write them ----

struct TraceBuilder {
  ChakraProtoMsg::GlobalMetadata meta;
  std::vector<Node> nodes;
  Node& add(std::uint64_t id, ChakraProtoMsg::NodeType type, std::vector<std::uint64_t> data = {}) {
    Node n;
    n.set_id(id);
    n.set_name("n" + std::to_string(id));
    n.set_type(type);
    for (auto d : data) n.add_data_deps(d);
    nodes.push_back(n);
    return nodes.back();
  }
  void write(const fs::path& path) const {
    chakra::TraceFileWriter w(path.string(), meta);
    for (const Node& n : nodes) w.write(n);
    w.close();
  }
};

Node& coll(TraceBuilder& t, std::uint64_t id, std::vector<std::uint64_t> deps, std::int64_t bytes) {
  Node& n = t.add(id, ChakraProtoMsg::COMM_COLL_NODE, std::move(deps));
  chakra::add_int64(n, chakra::kCommType, ChakraProtoMsg::ALL_REDUCE);
  chakra::add_int64(n, chakra::kCommSize, bytes);
  return n;
}

// Two ranks as a PyTorch trace converted by Chakra would have them: CPU ops around GPU kernels, durations in
// microseconds, an all-reduce on the default group, a send and its receive, nodes listed before their parents.
void write_foreign_pair(const fs::path& dir) {
  for (int r = 0; r < 2; ++r) {
    TraceBuilder t;
    t.meta.set_version("0.0.4");
    Node& cpu = t.add(1, ChakraProtoMsg::COMP_NODE);
    chakra::add_bool(cpu, chakra::kIsCpuOp, true);
    cpu.set_duration_micros(500);
    Node& k = t.add(2, ChakraProtoMsg::COMP_NODE, {1});
    chakra::add_bool(k, chakra::kIsCpuOp, false);
    k.set_duration_micros(100 + 50 * static_cast<std::uint64_t>(r));
    t.add(4, ChakraProtoMsg::COMP_NODE, {3}).set_duration_micros(10);  // before its parent in the file
    coll(t, 3, {2}, 1 << 20);
    Node& p2p = t.add(5, r == 0 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE, {4});
    chakra::add_int32(p2p, r == 0 ? chakra::kCommDst : chakra::kCommSrc, 1 - r);
    chakra::add_int64(p2p, chakra::kCommSize, 4096);
    t.write(dir / ("foreign." + std::to_string(r) + ".et"));
  }
}

TEST(ChakraTraces, ReadsTracesOtherToolsWrite) {
  const fs::path dir = fresh_dir("foreign");
  write_foreign_pair(dir);
  const Workload wl = chakra::read_traces(dir.string(), 8);
  ASSERT_EQ(wl.ranks.size(), 2u);
  const RankProgram& p = wl.ranks[1];
  ASSERT_EQ(p.ops.size(), 4u);  // the CPU op hands its dependencies on and is gone
  EXPECT_EQ(p.ops[0].type, Op::Type::Compute);
  EXPECT_EQ(p.ops[0].stream, Stream::Compute);
  EXPECT_EQ(from_seconds(wl.kernels[p.ops[0].desc].seconds), from_microseconds(150));
  EXPECT_EQ(p.ops[1].type, Op::Type::Collective);  // the all-reduce before the kernel listed ahead of it
  EXPECT_EQ(deps_of(p, p.ops[2]), (std::set<std::uint32_t>{1}));
  const CollectiveDesc& ar = wl.collectives[p.ops[1].desc];
  EXPECT_EQ(ar.kind, CollKind::AllReduce);
  EXPECT_EQ(wl.groups[ar.group].ranks.size(), 8u);  // pg_name absent: every rank, as ASTRA-sim reads it
  EXPECT_EQ(wl.groups[ar.group].simulated_members, 2);
  const CollectiveDesc& recv = wl.collectives[p.ops[3].desc];
  EXPECT_EQ(recv.kind, CollKind::SendRecv);
  EXPECT_EQ(wl.groups[recv.group].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(recv.sender, 0);                                             // rank 0 sends
  EXPECT_EQ(wl.collectives[wl.ranks[0].ops[3].desc].group, recv.group);  // both sides meet on one group
  EXPECT_EQ(p.ops[3].stream, Stream::PpComm);                            // towards a lower rank
  fs::remove_all(dir);
}

TEST(ChakraTraces, ProcessGroupsFromTheCommGroupFile) {
  const fs::path dir = fresh_dir("pg");
  { std::ofstream(dir / "comm_group.json") << "{\"1\": [0, 2], \"2\": [1, 3]}\n"; }
  for (int r : {0, 2}) {
    TraceBuilder t;
    chakra::add_string(coll(t, 0, {}, 1024), chakra::kPgName, "1");
    t.write(dir / ("x." + std::to_string(r) + ".et"));
  }
  const Workload wl = chakra::read_traces(dir.string(), 4);
  const CommGroup& g = wl.groups[wl.collectives[wl.ranks[0].ops[0].desc].group];
  EXPECT_EQ(g.ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(g.simulated_members, 2);
  fs::remove_all(dir);
}

// ---- malformed inputs: an Error naming the file (and the node), never a crash ----

std::string read_error(const fs::path& dir, int world = 8) {
  try {
    chakra::read_traces(dir.string(), world);
  } catch (const Error& e) { return e.what(); }
  return "no error";
}

std::string one_node_error(const std::function<void(TraceBuilder&)>& build, int world = 8) {
  const fs::path dir = fresh_dir("bad");
  TraceBuilder t;
  build(t);
  t.write(dir / "t.0.et");
  std::string e = read_error(dir, world);
  fs::remove_all(dir);
  return e;
}

TEST(ChakraTracesMalformed, DirectoryProblems) {
  const fs::path dir = fresh_dir("empty");
  EXPECT_THAT(read_error(dir), HasSubstr("no Chakra trace files"));
  EXPECT_THAT(read_error(dir / "missing"), HasSubstr("not a directory"));
  TraceBuilder t;
  t.write(dir / "a.0.et");
  t.write(dir / "b.1.et");
  EXPECT_THAT(read_error(dir), HasSubstr("several prefixes (a, b)"));
  fs::remove(dir / "b.1.et");
  t.write(dir / "a.9.et");
  EXPECT_THAT(read_error(dir), HasSubstr("a.9.et: rank 9 is outside the cluster's 8 GPUs"));
  fs::remove(dir / "a.9.et");
  std::ofstream(dir / "comm_group.json") << "{\"1\": [0, 12]}";
  EXPECT_THAT(read_error(dir), HasSubstr("comm_group.json: \"1\": rank 12 is outside"));
  std::ofstream(dir / "comm_group.json") << "[1, 2";
  EXPECT_THAT(read_error(dir), HasSubstr("comm_group.json"));
  fs::remove_all(dir);
}

TEST(ChakraTracesMalformed, BrokenBytes) {
  const fs::path dir = fresh_dir("bytes");
  std::ofstream(dir / "t.0.et", std::ios::binary) << "";
  EXPECT_THAT(read_error(dir), HasSubstr("t.0.et: empty file"));
  std::ofstream(dir / "t.0.et", std::ios::binary) << std::string("\xff\xff\xff", 3);
  EXPECT_THAT(read_error(dir), HasSubstr("cut off or malformed"));
  std::ofstream(dir / "t.0.et", std::ios::binary) << std::string("\x00\x40xyz", 5);  // 64 bytes claimed, 3 left
  EXPECT_THAT(read_error(dir), HasSubstr("t.0.et: node 0: the message at byte 1 claims 64 bytes, only 3 are left"));
  std::ofstream(dir / "t.0.et", std::ios::binary) << std::string("\x00\x02\xff\xff", 4);
  EXPECT_THAT(read_error(dir), HasSubstr("t.0.et: node 0: not a Chakra Node message"));
  fs::remove_all(dir);
}

TEST(ChakraTracesMalformed, BadHostWaits) {
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                t.add(1, ChakraProtoMsg::COMP_NODE).set_duration_micros(1);
                t.add(2, ChakraProtoMsg::COMP_NODE).set_duration_micros(1);
                chakra::add_uint64_list(t.add(3, ChakraProtoMsg::COMP_NODE, {1}), chakra::kHostWaits, {2});
              }),
              HasSubstr("node 2: trainsim_host_waits: node id 2 is not an op this node depends on"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                t.add(1, ChakraProtoMsg::COMP_NODE).set_duration_micros(1);
                chakra::add_int64(t.add(2, ChakraProtoMsg::COMP_NODE, {1}), chakra::kHostWaits, 1);
              }),
              HasSubstr("attribute trainsim_host_waits: expected a list of uint64"));
}

TEST(ChakraTracesMalformed, BadNodes) {
  EXPECT_THAT(one_node_error([](TraceBuilder& t) { t.add(7, ChakraProtoMsg::COMP_NODE, {3}); }),
              HasSubstr("t.0.et: node 0: depends on node id 3, which the file does not have"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                t.add(1, ChakraProtoMsg::COMP_NODE, {2});
                t.add(2, ChakraProtoMsg::COMP_NODE, {1});
              }),
              HasSubstr("the dependencies form a cycle"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                t.add(1, ChakraProtoMsg::COMP_NODE);
                t.add(1, ChakraProtoMsg::COMP_NODE);
              }),
              HasSubstr("t.0.et: node 1: id 1 is also node 0's"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) { t.add(1, ChakraProtoMsg::COMM_COLL_NODE); }),
              HasSubstr("node 0: a communication node needs comm_size"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) { chakra::add_string(coll(t, 1, {}, 8), chakra::kPgName, "5"); }),
              HasSubstr("node 0: pg_name '5' is not in comm_group.json"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                Node& n = coll(t, 1, {}, 8);
                n.mutable_attr(0)->set_int64_val(3);  // GATHER
              }),
              HasSubstr("comm_type 3 has no NCCL collective"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                Node& n = coll(t, 1, {}, 8);
                n.mutable_attr(1)->set_string_val("big");
              }),
              HasSubstr("attribute comm_size: expected an integer"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) { coll(t, 1, {}, -5); }), HasSubstr("comm_size -5 is negative"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                chakra::add_int64(t.add(1, ChakraProtoMsg::COMM_SEND_NODE), chakra::kCommSize, 8);
              }),
              HasSubstr("a COMM_SEND_NODE node needs comm_dst"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                Node& n = t.add(1, ChakraProtoMsg::COMM_SEND_NODE);
                chakra::add_int64(n, chakra::kCommSize, 8);
                chakra::add_int32(n, chakra::kCommDst, 99);
              }),
              HasSubstr("comm_dst 99 is outside the cluster's 8 GPUs"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                Node& n = t.add(1, ChakraProtoMsg::COMM_RECV_NODE);
                chakra::add_int64(n, chakra::kCommSize, 8);
                chakra::add_int32(n, chakra::kCommSrc, 1);
                chakra::add_int32(n, chakra::kCommDst, 2);
              }),
              HasSubstr("a receive of rank 0 must have comm_dst 0"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                chakra::add_string(t.add(1, ChakraProtoMsg::COMP_NODE), chakra::kStream, "gpu9");
              }),
              HasSubstr("trainsim_stream: unknown stream 'gpu9'"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                chakra::add_int64(t.add(1, ChakraProtoMsg::COMP_NODE), chakra::kLaunches, 300);
              }),
              HasSubstr("trainsim_launches: 300 is outside [0, 255]"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                chakra::add_uint64(t.add(1, ChakraProtoMsg::COMM_RECV_NODE), chakra::kExchangeOf, 1);
              }),
              HasSubstr("trainsim_exchange_of must be a receive naming an earlier send"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) { t.add(1, static_cast<ChakraProtoMsg::NodeType>(42)); }),
              HasSubstr("node 0: unknown node type 42"));
  EXPECT_THAT(one_node_error([](TraceBuilder& t) {
                chakra::add_int64(t.meta, chakra::kWorldSize, 16);
                t.add(1, ChakraProtoMsg::COMP_NODE);
              }),
              HasSubstr("written for 16 ranks, the scenario's cluster has 8 GPUs"));
}

}  // namespace
}  // namespace trainsim
