// Chakra -> trainsim: the traces of a directory into the workload IR. Compute nodes become fixed-duration kernels,
// collectives and sends/receives rendezvous on the groups their pg_name (or their peers) name, every other node
// (CPU ops, metadata, memory) passes its dependencies on. docs/chakra.md describes the mapping.
#include <algorithm>
#include <filesystem>
#include <map>
#include <queue>
#include <regex>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/time.hpp"
#include "workload/chakra/chakra_attrs.hpp"
#include "workload/chakra/chakra_groups.hpp"
#include "workload/chakra/chakra_stream.hpp"
#include "workload/chakra/chakra_traces.hpp"
#include "workload/parallel_plan.hpp"

namespace trainsim::chakra {

namespace {

namespace fs = std::filesystem;
using ChakraProtoMsg::Node;

struct TraceFile {
  int rank = 0;
  std::string path;
};

// DIR/<prefix>.<rank>.et, one prefix, ranks in order.
std::vector<TraceFile> trace_files(const std::string& dir, int world_size) {
  if (!fs::is_directory(dir)) throw Error(fmt::format("{}: not a directory of Chakra traces", dir));
  static const std::regex kName(R"((.*)\.(\d+)\.et)");
  std::map<std::string, std::vector<TraceFile>> by_prefix;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || !std::regex_match(name, m, kName)) continue;
    const std::string digits = m[2].str();
    const long long rank = digits.size() > 9 ? -1 : std::stoll(digits);
    if (rank < 0 || rank >= world_size)
      throw Error(fmt::format("{}: rank {} is outside the cluster's {} GPUs", e.path().string(), digits, world_size));
    by_prefix[m[1].str()].push_back({static_cast<int>(rank), e.path().string()});
  }
  if (by_prefix.empty()) throw Error(fmt::format("{}: no Chakra trace files (<prefix>.<rank>.et)", dir));
  if (by_prefix.size() > 1) {
    std::vector<std::string> names;
    for (const auto& [p, f] : by_prefix) names.push_back(p);
    throw Error(
        fmt::format("{}: traces with several prefixes ({}): keep one set per directory", dir, fmt::join(names, ", ")));
  }
  auto files = std::move(by_prefix.begin()->second);
  std::sort(files.begin(), files.end(), [](const TraceFile& a, const TraceFile& b) { return a.rank < b.rank; });
  return files;
}

template <class Enum, class Names>
std::optional<Enum> enum_named(const std::string& s, int count, Names to_name) {
  for (int i = 0; i < count; ++i)
    if (s == to_name(static_cast<Enum>(i))) return static_cast<Enum>(i);
  return std::nullopt;
}

std::optional<CollKind> coll_kind_of(std::int64_t t) {
  switch (t) {
    case ChakraProtoMsg::ALL_REDUCE: return CollKind::AllReduce;
    case ChakraProtoMsg::REDUCE: return CollKind::Reduce;
    case ChakraProtoMsg::ALL_GATHER: return CollKind::AllGather;
    case ChakraProtoMsg::BROADCAST: return CollKind::Broadcast;
    case ChakraProtoMsg::ALL_TO_ALL: return CollKind::AllToAll;
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK: return CollKind::ReduceScatter;
    case ChakraProtoMsg::BARRIER: return CollKind::AllReduce;  // NCCL has none: PyTorch all-reduces one element
    default: return std::nullopt;                              // GATHER, SCATTER: no NCCL collective
  }
}

// What a node becomes.
enum class Role { Compute, Collective, Send, Recv, ExchangeHalf, PassThrough };

// The state shared by every rank's reader: the tables of the Workload being built.
struct Tables {
  Tables(int world_size, GroupTable g) : groups(std::move(g)) { wl.world_size = world_size; }
  Workload wl;
  GroupTable groups;
  std::map<std::tuple<std::int64_t, double, double, Precision>, std::uint32_t> kernel_ids;
  std::map<std::tuple<CollKind, std::uint32_t, std::int64_t, std::int8_t, std::int16_t>, std::uint32_t> coll_ids;
  std::unordered_map<std::string, std::uint16_t> name_ids;
  std::map<std::string, Stream> pg_streams;  // traces without trainsim_stream: a stream per process group

  std::uint16_t name(const std::string& n, const std::string& where) {
    if (const auto it = name_ids.find(n); it != name_ids.end()) return it->second;
    if (wl.names.size() >= 65535) throw Error(fmt::format("{}: more than 65535 distinct node names", where));
    wl.names.push_back(n);
    return name_ids[n] = static_cast<std::uint16_t>(wl.names.size() - 1);
  }
  std::uint32_t kernel(std::int64_t ps, double flops, double bytes) {
    const auto key = std::tuple{ps, flops, bytes, Precision::BF16};
    if (const auto it = kernel_ids.find(key); it != kernel_ids.end()) return it->second;
    KernelDesc k;
    k.kind = KernelKind::FixedDuration;
    k.seconds = static_cast<double>(ps) / static_cast<double>(kPicosPerSecond);
    k.flops = flops;
    k.bytes = bytes;
    wl.kernels.push_back(k);
    return kernel_ids[key] = static_cast<std::uint32_t>(wl.kernels.size() - 1);
  }
  std::uint32_t collective(const CollectiveDesc& c) {
    const auto key = std::tuple{c.kind, c.group, c.bytes, c.sender, c.sms};
    if (const auto it = coll_ids.find(key); it != coll_ids.end()) return it->second;
    wl.collectives.push_back(c);
    return coll_ids[key] = static_cast<std::uint32_t>(wl.collectives.size() - 1);
  }
};

class RankReader {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  RankReader(Tables& t, TraceFileReader& in, int rank) : t_(t), in_(in), rank_(rank) {}

  RankProgram read() {
    load();
    classify();
    order_and_emit();
    return std::move(prog_);
  }

 private:
  std::string where(std::size_t i) const { return fmt::format("{}: node {}", in_.label(), i); }

  void load() {
    while (auto n = in_.next()) {
      const std::size_t i = nodes_.size();
      if (const auto [it, fresh] = index_.emplace(n->id(), i); !fresh)
        throw Error(fmt::format("{}: id {} is also node {}'s", where(i), n->id(), it->second));
      nodes_.push_back(std::move(*n));
    }
  }

  void classify() {
    roles_.resize(nodes_.size(), Role::PassThrough);
    unit_.resize(nodes_.size());
    half_.assign(nodes_.size(), kNone);
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const Node& n = nodes_[i];
      unit_[i] = i;
      const bool cpu = bool_attr(find_attr(n, kIsCpuOp), where(i)).value_or(false);
      switch (n.type()) {
        case ChakraProtoMsg::COMP_NODE: roles_[i] = cpu ? Role::PassThrough : Role::Compute; break;
        case ChakraProtoMsg::COMM_COLL_NODE: roles_[i] = Role::Collective; break;
        case ChakraProtoMsg::COMM_SEND_NODE:
        case ChakraProtoMsg::COMM_RECV_NODE: {
          const auto of = int_attr(find_attr(n, kExchangeOf), where(i));
          if (!of) {
            roles_[i] = n.type() == ChakraProtoMsg::COMM_SEND_NODE ? Role::Send : Role::Recv;
            break;
          }
          const auto it = index_.find(static_cast<std::uint64_t>(*of));
          if (n.type() != ChakraProtoMsg::COMM_RECV_NODE || it == index_.end() ||
              nodes_[it->second].type() != ChakraProtoMsg::COMM_SEND_NODE || it->second >= i)
            throw Error(
                fmt::format("{}: {} must be a receive naming an earlier send node of the file", where(i), kExchangeOf));
          if (half_[it->second] != kNone)
            throw Error(fmt::format("{}: node {} already has a receive half", where(i), it->second));
          roles_[i] = Role::ExchangeHalf;
          unit_[i] = it->second;  // read with its send as one op
          half_[it->second] = i;
          break;
        }
        case ChakraProtoMsg::INVALID_NODE:
        case ChakraProtoMsg::METADATA_NODE:
        case ChakraProtoMsg::MEM_LOAD_NODE:
        case ChakraProtoMsg::MEM_STORE_NODE:
        case ChakraProtoMsg::STORAGE_NODE:
        case ChakraProtoMsg::BATCH_NODE:
        case ChakraProtoMsg::CHECKPOINT_NODE: break;
        default: throw Error(fmt::format("{}: unknown node type {}", where(i), static_cast<int>(n.type())));
      }
    }
  }

  std::size_t node_of(std::uint64_t id, std::size_t i) const {
    const auto it = index_.find(id);
    if (it == index_.end())
      throw Error(fmt::format("{}: depends on node id {}, which the file does not have", where(i), id));
    return it->second;
  }

  // Units (a node, or a send with the receive half read with it) in a topological order that keeps the file's
  // order where the dependencies allow; then each unit that is an op is emitted with its dependencies on ops.
  void order_and_emit() {
    const std::size_t n = nodes_.size();
    std::vector<std::vector<std::size_t>> children(n);
    std::vector<std::size_t> waiting(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      std::set<std::size_t> parents;
      for (std::uint64_t d : nodes_[i].data_deps()) parents.insert(unit_[node_of(d, i)]);
      for (std::uint64_t d : nodes_[i].ctrl_deps()) parents.insert(unit_[node_of(d, i)]);
      parents.erase(unit_[i]);
      for (std::size_t p : parents) {
        children[p].push_back(unit_[i]);
        ++waiting[unit_[i]];
      }
    }
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < n; ++i)
      if (unit_[i] == i && waiting[i] == 0) ready.push(i);
    op_of_.assign(n, -1);
    through_.resize(n);
    last_on_stream_.assign(kNumStreams, -1);
    std::size_t done = 0, units = 0;
    for (std::size_t i = 0; i < n; ++i) units += unit_[i] == i;
    while (!ready.empty()) {
      const std::size_t u = ready.top();
      ready.pop();
      ++done;
      emit(u);
      for (std::size_t c : children[u])
        if (--waiting[c] == 0) ready.push(c);
    }
    if (done != units) {
      std::size_t stuck = 0;
      while (unit_[stuck] != stuck || waiting[stuck] == 0) ++stuck;
      throw Error(fmt::format("{}: the dependencies form a cycle through this node", where(stuck)));
    }
  }

  // The ops that unit u's dependencies come down to (pass-through nodes hand theirs on), and which of them only a
  // control dependency names.
  void gather(std::size_t u, std::vector<std::uint32_t>& deps, std::set<std::uint32_t>& control) {
    auto add_node = [&](std::uint64_t id, std::size_t i, bool ctrl) {
      const std::size_t p = unit_[node_of(id, i)];
      if (p == u) return;
      if (op_of_[p] >= 0) {
        deps.push_back(static_cast<std::uint32_t>(op_of_[p]));
        if (ctrl) control.insert(static_cast<std::uint32_t>(op_of_[p]));
      } else {
        deps.insert(deps.end(), through_[p].begin(), through_[p].end());
      }
    };
    for (std::size_t i : {u, half_of(u)}) {
      if (i == kNone) continue;
      for (std::uint64_t d : nodes_[i].data_deps()) add_node(d, i, false);
      for (std::uint64_t d : nodes_[i].ctrl_deps()) add_node(d, i, true);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  }

  std::size_t half_of(std::size_t u) const { return half_[u]; }

  void emit(std::size_t u) {
    std::vector<std::uint32_t> deps;
    std::set<std::uint32_t> control;
    gather(u, deps, control);
    if (roles_[u] == Role::PassThrough) {
      through_[u] = std::move(deps);
      return;
    }
    const Node& n = nodes_[u];
    Op op;
    op.name = t_.name(n.name(), where(u));
    fill_context(op, u);
    if (roles_[u] == Role::Compute)
      fill_compute(op, u);
    else
      fill_comm(op, u);
    // The stream's previous op is implied by stream order: dropped when only a control dependency names it.
    const std::int64_t pred = last_on_stream_[static_cast<int>(op.stream)];
    if (pred >= 0 && control.count(static_cast<std::uint32_t>(pred))) {
      const auto data_names_it = [&]() {
        for (std::size_t i : {u, half_of(u)}) {
          if (i == kNone) continue;
          for (std::uint64_t d : nodes_[i].data_deps())
            if (op_of_[unit_[node_of(d, i)]] == pred && !in_ctrl(i, d)) return true;
        }
        return false;
      }();
      if (!data_names_it) deps.erase(std::find(deps.begin(), deps.end(), static_cast<std::uint32_t>(pred)));
    }
    host_waits_first(u, op, deps);
    const auto index = static_cast<std::uint32_t>(prog_.ops.size());
    op.first_dep = static_cast<std::uint32_t>(prog_.deps.size());
    if (deps.size() > 65535) throw Error(fmt::format("{}: more than 65535 dependencies", where(u)));
    op.num_deps = static_cast<std::uint16_t>(deps.size());
    prog_.deps.insert(prog_.deps.end(), deps.begin(), deps.end());
    prog_.ops.push_back(op);
    op_of_[u] = index;
    last_on_stream_[static_cast<int>(op.stream)] = index;
  }

  // trainsim_host_waits: the ops the host waits for before it issues this one lead its deps (Op::host_waits).
  void host_waits_first(std::size_t u, Op& op, std::vector<std::uint32_t>& deps) const {
    const auto ids = uint64_list_attr(find_attr(nodes_[u], kHostWaits), where(u));
    if (ids.empty()) return;
    std::vector<std::uint32_t> waited;
    for (const std::uint64_t id : ids) {
      const std::int64_t o = op_of_[unit_[node_of(id, u)]];
      if (o < 0 || std::find(deps.begin(), deps.end(), static_cast<std::uint32_t>(o)) == deps.end())
        throw Error(fmt::format("{}: {}: node id {} is not an op this node depends on", where(u), kHostWaits, id));
      if (std::find(waited.begin(), waited.end(), static_cast<std::uint32_t>(o)) == waited.end())
        waited.push_back(static_cast<std::uint32_t>(o));
    }
    if (waited.size() > 255) throw Error(fmt::format("{}: {}: more than 255 ops", where(u), kHostWaits));
    std::vector<std::uint32_t> rest;
    for (const std::uint32_t d : deps)
      if (std::find(waited.begin(), waited.end(), d) == waited.end()) rest.push_back(d);
    deps = std::move(waited);
    deps.insert(deps.end(), rest.begin(), rest.end());
    op.host_waits = static_cast<std::uint8_t>(deps.size() - rest.size());
  }

  bool in_ctrl(std::size_t i, std::uint64_t id) const {
    const auto& c = nodes_[i].ctrl_deps();
    return std::find(c.begin(), c.end(), id) != c.end();
  }

  void fill_context(Op& op, std::size_t u) {
    const Node& n = nodes_[u];
    const std::string w = where(u);
    if (const auto s = string_attr(find_attr(n, kPhase), w)) {
      const auto p = enum_named<Phase>(*s, 6, [](Phase x) { return to_string(x); });
      if (!p) throw Error(fmt::format("{}: {}: unknown phase '{}'", w, kPhase, *s));
      op.phase = *p;
    }
    const auto ranged = [&](const char* name, std::int64_t lo, std::int64_t hi, std::int64_t dflt) {
      const auto v = int_attr(find_attr(n, name), w).value_or(dflt);
      if (v < lo || v > hi) throw Error(fmt::format("{}: {}: {} is outside [{}, {}]", w, name, v, lo, hi));
      return v;
    };
    op.layer = static_cast<std::int16_t>(ranged(kLayer, -1, 32767, -1));
    op.micro_batch = static_cast<std::int32_t>(ranged(kMicroBatch, -1, 2147483647, -1));
    op.launches = static_cast<std::uint8_t>(ranged(kLaunches, 0, 255, 1));
    if (const auto s = string_attr(find_attr(n, kStream), w)) {
      const auto st = enum_named<Stream>(*s, kNumStreams, [](Stream x) { return to_string(x); });
      if (!st) throw Error(fmt::format("{}: {}: unknown stream '{}'", w, kStream, *s));
      op.stream = *st;
    } else {
      op.stream = default_stream(u);
    }
  }

  // Traces without trainsim_stream: kernels on the compute stream; a collective on its process group's stream
  // (NCCL runs each communicator on a stream of its own; with more groups than trainsim's five collective streams
  // they share them in turn); a send or receive on the pipeline stream towards its peer.
  Stream default_stream(std::size_t u) {
    const Node& n = nodes_[u];
    switch (roles_[u]) {
      case Role::Compute: return Stream::Compute;
      case Role::Send:
      case Role::Recv: {
        const int peer = static_cast<int>(
            int_attr(find_attr(n, roles_[u] == Role::Send ? kCommDst : kCommSrc), where(u)).value_or(rank_));
        return peer < rank_ ? Stream::PpComm : Stream::PpCommNext;
      }
      default: break;
    }
    static constexpr Stream kCollectiveStreams[] = {Stream::TpComm, Stream::DpComm, Stream::CpComm, Stream::EpComm,
                                                    Stream::ExpertDpComm};
    const std::string pg = string_attr(find_attr(n, kPgName), where(u)).value_or("");
    const auto it = t_.pg_streams.find(pg);
    if (it != t_.pg_streams.end()) return it->second;
    const Stream s = kCollectiveStreams[t_.pg_streams.size() % std::size(kCollectiveStreams)];
    t_.pg_streams.emplace(pg, s);
    return s;
  }

  void fill_compute(Op& op, std::size_t u) {
    const Node& n = nodes_[u];
    const std::string w = where(u);
    op.type = Op::Type::Compute;
    std::int64_t ps = 0;
    if (const auto given = int_attr(find_attr(n, kDurationPs), w)) {
      ps = *given;
    } else {
      // 9.2e18 ps is the clock's range (about 106 days).
      if (n.duration_micros() > 9'000'000'000'000ULL)
        throw Error(fmt::format("{}: duration_micros {} is out of range", w, n.duration_micros()));
      ps = static_cast<std::int64_t>(n.duration_micros()) * 1'000'000;
    }
    if (ps < 0 || ps > 9'000'000'000'000'000'000LL)
      throw Error(fmt::format("{}: {} {} is out of range", w, kDurationPs, ps));
    const auto flops = int_attr(find_attr(n, kNumOps), w).value_or(0);
    const auto bytes = int_attr(find_attr(n, kTensorSize), w).value_or(0);
    if (flops < 0 || bytes < 0) throw Error(fmt::format("{}: {} and {} must not be negative", w, kNumOps, kTensorSize));
    op.desc = t_.kernel(ps, static_cast<double>(flops), static_cast<double>(bytes));
  }

  std::optional<GroupKind> group_kind(const Node& n, const std::string& w) {
    const auto s = string_attr(find_attr(n, kGroupKind), w);
    if (!s) return std::nullopt;
    const auto k = enum_named<GroupKind>(*s, 11, [](GroupKind x) { return to_string(x); });
    if (!k) throw Error(fmt::format("{}: {}: unknown group kind '{}'", w, kGroupKind, *s));
    return k;
  }

  int rank_attr(const Node& n, const char* name, const std::string& w, std::optional<int> dflt) {
    const auto v = int_attr(find_attr(n, name), w);
    if (!v && !dflt)
      throw Error(fmt::format("{}: a {} node needs {}", w, ChakraProtoMsg::NodeType_Name(n.type()), name));
    const std::int64_t r = v.value_or(*dflt);
    if (r < 0 || r >= t_.wl.world_size)
      throw Error(fmt::format("{}: {} {} is outside the cluster's {} GPUs", w, name, r, t_.wl.world_size));
    return static_cast<int>(r);
  }

  void fill_comm(Op& op, std::size_t u) {
    const Node& n = nodes_[u];
    const std::string w = where(u);
    op.type = Op::Type::Collective;
    CollectiveDesc c;
    const auto size = int_attr(find_attr(n, kCommSize), w);
    if (!size) throw Error(fmt::format("{}: a communication node needs {}", w, kCommSize));
    if (*size < 0) throw Error(fmt::format("{}: {} {} is negative", w, kCommSize, *size));
    c.bytes = *size;
    const auto sms = int_attr(find_attr(n, kSms), w).value_or(-1);
    if (sms < -1 || sms > 32767) throw Error(fmt::format("{}: {} {} is out of range", w, kSms, sms));
    c.sms = static_cast<std::int16_t>(sms);
    const auto pg = string_attr(find_attr(n, kPgName), w);
    const auto kind = group_kind(n, w);
    if (roles_[u] == Role::Collective) {
      const auto t = int_attr(find_attr(n, kCommType), w);
      if (!t) throw Error(fmt::format("{}: a collective node needs {}", w, kCommType));
      const auto k = coll_kind_of(*t);
      if (!k) throw Error(fmt::format("{}: {} {} has no NCCL collective trainsim models", w, kCommType, *t));
      c.kind = *k;
      const auto g = t_.groups.named(pg.value_or(""), kind);
      if (!g)
        throw Error(fmt::format("{}: pg_name '{}' is not in {} (ASTRA-sim's comm-group file)", w, *pg, kCommGroupFile));
      c.group = *g;
      member_check(c.group, rank_, w);
    } else {
      // A send: comm_src defaults to this rank, as ASTRA-sim reads it; a receive: comm_dst.
      const bool send = n.type() == ChakraProtoMsg::COMM_SEND_NODE;
      const int src = rank_attr(n, kCommSrc, w, send ? std::optional<int>(rank_) : std::nullopt);
      const int dst = rank_attr(n, kCommDst, w, send ? std::nullopt : std::optional<int>(rank_));
      if ((send ? src : dst) != rank_)
        throw Error(fmt::format("{}: a {} of rank {} must have {} {}", w, send ? "send" : "receive", rank_,
                                send ? kCommSrc : kCommDst, rank_));
      if (src == dst) throw Error(fmt::format("{}: {} and {} are both {}", w, kCommSrc, kCommDst, src));
      c.kind = CollKind::SendRecv;
      const int peer = send ? dst : src;
      std::optional<std::uint32_t> g;
      if (pg && !pg->empty() && *pg != "0") g = t_.groups.named(*pg, kind);
      const bool exchange = half_of(u) != kNone;
      if (g && contains(*g, rank_) && contains(*g, peer)) {
        c.group = *g;
        const auto& r = t_.groups.ranks(*g);
        c.sender =
            exchange ? std::int8_t{-1} : static_cast<std::int8_t>(std::find(r.begin(), r.end(), src) - r.begin());
        if (!exchange && r.size() != 2)
          throw Error(fmt::format("{}: a one-way transfer on pg_name '{}' of {} ranks (trainsim pairs them)", w, *pg,
                                  r.size()));
      } else {
        c.group = t_.groups.pair(src, dst);
        c.sender = static_cast<std::int8_t>(src < dst ? 0 : 1);
      }
    }
    op.desc = t_.collective(c);
    op.coll_seq = seq_[c.group]++;
  }

  bool contains(std::uint32_t g, int r) const {
    const auto& ranks = t_.groups.ranks(g);
    return std::binary_search(ranks.begin(), ranks.end(), r);
  }
  void member_check(std::uint32_t g, int r, const std::string& w) const {
    if (!contains(g, r)) throw Error(fmt::format("{}: rank {} is not a member of its process group", w, r));
  }

  Tables& t_;
  TraceFileReader& in_;
  int rank_;
  RankProgram prog_;
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, std::size_t> index_;
  std::vector<Role> roles_;
  std::vector<std::size_t> unit_;
  std::vector<std::int64_t> op_of_;
  std::vector<std::vector<std::uint32_t>> through_;
  std::vector<std::int64_t> last_on_stream_;
  std::map<std::uint32_t, std::uint32_t> seq_;
  std::vector<std::size_t> half_;  // a send's receive half, or kNone
};

}  // namespace

Workload read_traces(const std::string& dir, int world_size) {
  const auto files = trace_files(dir, world_size);
  const std::string groups_path = (fs::path(dir) / kCommGroupFile).string();
  Tables t(world_size, GroupTable(read_comm_group_file(groups_path, world_size), world_size, groups_path));
  for (const TraceFile& f : files) {
    TraceFileReader in(read_file_bytes(f.path), f.path);
    const auto& meta = in.metadata();
    const std::string w = f.path + ": metadata";
    if (const auto n = int_attr(find_attr(meta, kWorldSize), w); n && *n != world_size)
      throw Error(fmt::format("{}: written for {} ranks, the scenario's cluster has {} GPUs", f.path, *n, world_size));
    if (const auto r = int_attr(find_attr(meta, kRank), w); r && *r != f.rank)
      throw Error(fmt::format("{}: the trace of rank {} in the file of rank {}", f.path, *r, f.rank));
    const auto represents = int_attr(find_attr(meta, kRepresents), w).value_or(1);
    if (represents < 1 || represents > world_size)
      throw Error(fmt::format("{}: {} {} is outside [1, {}]", w, kRepresents, represents, world_size));
    RankProgram p = RankReader(t, in, f.rank).read();
    p.rank = f.rank;
    p.represents = represents;
    t.wl.ranks.push_back(std::move(p));
  }
  t.wl.groups = t.groups.take();
  std::vector<char> traced(static_cast<std::size_t>(world_size), 0);
  for (const RankProgram& p : t.wl.ranks) traced[static_cast<std::size_t>(p.rank)] = 1;
  for (CommGroup& g : t.wl.groups)
    for (int r : g.ranks) g.simulated_members += traced[static_cast<std::size_t>(r)];
  return std::move(t.wl);
}

}  // namespace trainsim::chakra
