// trainsim -> Chakra: one node per op (two for a send-and-receive), the op's dependencies as data_deps and its
// stream order as ctrl_deps (also in data_deps, since ASTRA-sim's feeder resolves data_deps only).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/error.hpp"
#include "core/text_file.hpp"
#include "core/time.hpp"
#include "workload/chakra/chakra_attrs.hpp"
#include "workload/chakra/chakra_stream.hpp"
#include "workload/chakra/chakra_traces.hpp"
#include "workload/parallel_plan.hpp"

namespace trainsim::chakra {

namespace {

using ChakraProtoMsg::Node;

ChakraProtoMsg::CollectiveCommType comm_type_of(CollKind k) {
  switch (k) {
    case CollKind::AllReduce: return ChakraProtoMsg::ALL_REDUCE;
    case CollKind::AllGather: return ChakraProtoMsg::ALL_GATHER;
    case CollKind::ReduceScatter: return ChakraProtoMsg::REDUCE_SCATTER;
    case CollKind::Broadcast: return ChakraProtoMsg::BROADCAST;
    case CollKind::Reduce: return ChakraProtoMsg::REDUCE;
    case CollKind::AllToAll: return ChakraProtoMsg::ALL_TO_ALL;
    case CollKind::SendRecv: break;
  }
  TRAINSIM_CHECK(false, "chakra export: a send/receive has no collective comm type");
  return ChakraProtoMsg::ALL_REDUCE;
}

// ASTRA-sim names a process group by a positive integer ("" and "0" mean every rank).
std::string pg_name_of(std::uint32_t group) { return std::to_string(group + 1); }

// Matches a send with its receive in ASTRA-sim, which pairs them by (source, destination, tag): the group and the
// n-th call on it, the same on both sides.
std::int32_t tag_of(std::uint32_t group, std::uint32_t seq) {
  return static_cast<std::int32_t>(((group & 0x7ffu) << 20) | (seq & 0xfffffu));
}

bool is_exchange(const Workload& wl, const Op& op) {
  return op.type == Op::Type::Collective && wl.collectives[op.desc].kind == CollKind::SendRecv &&
         wl.collectives[op.desc].sender < 0;
}

class RankWriter {
 public:
  RankWriter(const Workload& wl, const RankProgram& p) : wl_(wl), p_(p), n_(p.ops.size()) {}

  void write(TraceFileWriter& out) {
    std::vector<std::int64_t> last_on_stream(kNumStreams, -1);
    for (std::size_t i = 0; i < n_; ++i) {
      const Op& op = p_.ops[i];
      Node node;
      node.set_id(i);
      node.set_name(wl_.names[op.name]);
      const auto deps = std::span(p_.deps).subspan(op.first_dep, op.num_deps);
      for (std::uint32_t d : deps) add_ids(node, d, false);
      const std::int64_t pred = last_on_stream[static_cast<int>(op.stream)];
      if (pred >= 0) {
        const auto p = static_cast<std::uint32_t>(pred);
        // Stream order is a control dependency; a dependency the op states itself stays a data dependency only.
        if (std::find(deps.begin(), deps.end(), p) == deps.end()) add_ids(node, p, true);
      }
      last_on_stream[static_cast<int>(op.stream)] = static_cast<std::int64_t>(i);
      add_common(node, op);
      if (op.type == Op::Type::Compute)
        fill_compute(node, op);
      else
        fill_comm(node, op);
      out.write(node);
      if (recv_half_) {
        out.write(*recv_half_);
        recv_half_.reset();
      }
    }
  }

 private:
  // The node ids of op `d` (both halves of a send-and-receive), as data (and control) dependencies.
  void add_ids(Node& node, std::uint32_t d, bool control) {
    node.add_data_deps(d);
    if (control) node.add_ctrl_deps(d);
    if (is_exchange(wl_, p_.ops[d])) {
      node.add_data_deps(n_ + d);
      if (control) node.add_ctrl_deps(n_ + d);
    }
  }

  void add_common(Node& node, const Op& op) {
    add_bool(node, kIsCpuOp, false);
    add_string(node, kStream, to_string(op.stream));
    add_string(node, kPhase, to_string(op.phase));
    if (op.layer >= 0) add_int64(node, kLayer, op.layer);
    if (op.micro_batch >= 0) add_int64(node, kMicroBatch, op.micro_batch);
    if (op.launches != 1) add_int64(node, kLaunches, op.launches);
    if (op.host_waits > 0) {
      const auto first = p_.deps.begin() + op.first_dep;
      add_uint64_list(node, kHostWaits, std::vector<std::uint64_t>(first, first + op.host_waits));
    }
  }

  void fill_compute(Node& node, const Op& op) {
    const KernelDesc& k = wl_.kernels[op.desc];
    TRAINSIM_CHECK(k.kind == KernelKind::FixedDuration, "chakra export: kernels must be priced first");
    node.set_type(ChakraProtoMsg::COMP_NODE);
    const SimTime ps = from_seconds(k.seconds);
    node.set_duration_micros(static_cast<std::uint64_t>(std::llround(static_cast<double>(ps) / 1e6)));
    add_int64(node, kDurationPs, ps);
    // ASTRA-sim's roofline mode prices a node from these (FLOPs and the bytes it moves).
    add_int64(node, kNumOps, static_cast<std::int64_t>(std::llround(k.flops)));
    add_uint64(node, kTensorSize, static_cast<std::uint64_t>(std::llround(k.bytes)));
  }

  void fill_comm(Node& node, const Op& op) {
    const CollectiveDesc& c = wl_.collectives[op.desc];
    const CommGroup& g = wl_.groups[c.group];
    add_int64(node, kCommSize, c.bytes);
    add_string(node, kPgName, pg_name_of(c.group));
    add_string(node, kGroupKind, to_string(g.kind));
    if (c.sms >= 0) add_int64(node, kSms, c.sms);
    if (c.kind != CollKind::SendRecv) {
      node.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      add_int64(node, kCommType, comm_type_of(c.kind));
      return;
    }
    const auto me = std::find(g.ranks.begin(), g.ranks.end(), p_.rank);
    TRAINSIM_CHECK(me != g.ranks.end(), "chakra export: a rank sends on a group it is not in");
    const auto k = static_cast<std::size_t>(me - g.ranks.begin());
    const std::size_t n = g.ranks.size();
    const std::int32_t tag = tag_of(c.group, op.coll_seq);
    if (c.sender >= 0) {  // one way on a pair
      TRAINSIM_CHECK(n == 2, "chakra export: a one-way send on a group of more than two ranks");
      const int peer = g.ranks[1 - k];
      const bool sends = static_cast<std::size_t>(c.sender) == k;
      node.set_type(sends ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
      add_int32(node, kCommSrc, sends ? p_.rank : peer);
      add_int32(node, kCommDst, sends ? peer : p_.rank);
      add_int32(node, kCommTag, tag);
      return;
    }
    // Both ways: a send to the next member of the ring (the other one of a pair) and a receive from the previous
    // one, written as two nodes; the receive names its send, so that trainsim reads them back as one op.
    node.set_type(ChakraProtoMsg::COMM_SEND_NODE);
    add_int32(node, kCommSrc, p_.rank);
    add_int32(node, kCommDst, g.ranks[(k + 1) % n]);
    add_int32(node, kCommTag, tag);
    Node recv = node;
    recv.set_id(n_ + node.id());
    recv.set_type(ChakraProtoMsg::COMM_RECV_NODE);
    recv.mutable_attr()->erase(std::remove_if(recv.mutable_attr()->begin(), recv.mutable_attr()->end(),
                                              [](const ChakraProtoMsg::AttributeProto& a) {
                                                return a.name() == kCommSrc || a.name() == kCommDst ||
                                                       a.name() == kCommTag;
                                              }),
                               recv.mutable_attr()->end());
    add_int32(recv, kCommSrc, g.ranks[(k + n - 1) % n]);
    add_int32(recv, kCommDst, p_.rank);
    add_int32(recv, kCommTag, tag);
    add_uint64(recv, kExchangeOf, node.id());
    recv_half_ = std::move(recv);
  }

  const Workload& wl_;
  const RankProgram& p_;
  const std::size_t n_;
  std::optional<Node> recv_half_;
};

void write_comm_groups(const Workload& wl, const std::string& path) {
  std::string text = "{\n";
  for (std::size_t g = 0; g < wl.groups.size(); ++g) {
    text += fmt::format("  \"{}\": [{}]{}\n", pg_name_of(static_cast<std::uint32_t>(g)),
                        fmt::join(wl.groups[g].ranks, ", "), g + 1 < wl.groups.size() ? "," : "");
  }
  text += "}\n";
  write_text_file(path, text);
}

}  // namespace

void write_traces(const Workload& wl, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw Error(fmt::format("{}: cannot create the directory ({})", dir, ec.message()));
  // A trace left from an earlier export of another job would be read back with these: remove them first.
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(std::string(kTracePrefix) + ".") && name.ends_with(".et")) fs::remove(e.path(), ec);
  }
  for (const RankProgram& p : wl.ranks) {
    ChakraProtoMsg::GlobalMetadata meta;
    meta.set_version("0.0.4");
    add_int64(meta, kWorldSize, wl.world_size);
    add_int64(meta, kRank, p.rank);
    add_int64(meta, kRepresents, p.represents);
    const std::string path = (fs::path(dir) / fmt::format("{}.{}.et", kTracePrefix, p.rank)).string();
    TraceFileWriter out(path, meta);
    RankWriter(wl, p).write(out);
    out.close();
  }
  write_comm_groups(wl, (fs::path(dir) / kCommGroupFile).string());
}

}  // namespace trainsim::chakra
