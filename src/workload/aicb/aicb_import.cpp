#include "workload/aicb/aicb_import.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "workload/interleaved_schedule.hpp"
#include "workload/pipeline_schedule.hpp"
#include "workload/program_builder.hpp"

namespace trainsim {

namespace {

[[noreturn]] void fail_at(const std::string& path, int line, const std::string& what) {
  throw Error(fmt::format("{}:{}: {}", path, line, what));
}

// A stage's table cut into pieces: lines [0, prefix_end) run before the first micro-batch, each unit's lines are one
// micro-batch through one model chunk, lines [suffix_begin, n) run after the last backward.
struct TablePlan {
  const AicbTable* table = nullptr;
  std::size_t prefix_end = 0, suffix_begin = 0;
  std::map<std::pair<int, int>, std::pair<std::size_t, std::size_t>> units;  // (micro-batch, chunk) -> [first, end)
  std::vector<char> waited_for;  // per line: a later line's depen names it (its collectives run asynchronously)
};

// Untagged (AICB's own files): `ga` repetitions of one micro-batch's layer names, between a prefix and a suffix.
void cut_untagged(const std::string& path, const AicbTable& t, const AicbHeader& h, TablePlan& plan) {
  const std::size_t n = t.lines.size();
  const auto ga = static_cast<std::size_t>(h.ga);
  if (h.chunks > 1)
    fail_at(path, t.count_line,
            fmt::format("vpp_chunks: {} needs every layer line tagged with its micro-batch and chunk (name@mbM.cC)",
                        h.chunks));
  std::unordered_map<std::string, int> ids;
  std::vector<int> name(n);
  for (std::size_t i = 0; i < n; ++i)
    name[i] = ids.emplace(t.lines[i].name, static_cast<int>(ids.size())).first->second;
  for (std::size_t len = n / ga; len >= 1; --len) {
    for (std::size_t p = 0; p + ga * len <= n; ++p) {
      bool ok = true;
      for (std::size_t i = 0; ok && i + len < ga * len; ++i) ok = name[p + i] == name[p + i + len];
      if (!ok) continue;
      plan.prefix_end = p;
      plan.suffix_begin = p + ga * len;
      for (std::size_t m = 0; m < ga; ++m) plan.units[{static_cast<int>(m), 0}] = {p + m * len, p + (m + 1) * len};
      return;
    }
  }
  fail_at(path, t.count_line,
          fmt::format("cannot find ga: {} repetitions of one micro-batch's layer lines in this table of {} lines (tag "
                      "each micro-batch's lines name@mbM to say which they are)",
                      h.ga, n));
}

// Tagged (trainsim's files): each line between the first and the last tagged one names its micro-batch (and chunk).
void cut_tagged(const std::string& path, const AicbTable& t, const AicbHeader& h, TablePlan& plan) {
  const std::size_t n = t.lines.size();
  std::size_t first = n, last = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (aicb_unit_tag(t.lines[i].name)) {
      first = std::min(first, i);
      last = i;
    }
  plan.prefix_end = first;
  plan.suffix_begin = last + 1;
  std::optional<AicbUnitTag> current;
  for (std::size_t i = first; i <= last; ++i) {
    const AicbLine& l = t.lines[i];
    const auto tag = aicb_unit_tag(l.name);
    if (!tag)
      fail_at(path, l.file_line,
              fmt::format("line '{}' between micro-batch lines has no @mbM tag (untagged lines belong before the "
                          "first micro-batch or after the last)",
                          l.name));
    if (tag->micro_batch >= h.ga)
      fail_at(path, l.file_line,
              fmt::format("micro-batch {} of '{}' is not below ga: {}", tag->micro_batch, l.name, h.ga));
    if (tag->chunk >= h.chunks)
      fail_at(path, l.file_line,
              fmt::format("chunk {} of '{}' is not below vpp_chunks: {}", tag->chunk, l.name, h.chunks));
    const std::pair<int, int> key{tag->micro_batch, tag->chunk};
    if (!current || !(*current == *tag)) {
      if (plan.units.count(key))
        fail_at(path, l.file_line,
                fmt::format("the lines of micro-batch {} chunk {} are not together (they started before)",
                            tag->micro_batch, tag->chunk));
      plan.units[key] = {i, i + 1};
      current = tag;
    } else {
      plan.units[key].second = i + 1;
    }
  }
  for (int m = 0; m < h.ga; ++m)
    for (int c = 0; c < h.chunks; ++c)
      if (!plan.units.count({m, c}))
        fail_at(path, t.count_line,
                h.chunks > 1
                    ? fmt::format("no lines for micro-batch {} chunk {} (ga: {}, vpp_chunks: {})", m, c, h.ga, h.chunks)
                    : fmt::format("no lines for micro-batch {} (ga: {})", m, h.ga));
}

TablePlan plan_table(const std::string& path, const AicbTable& t, const AicbHeader& h) {
  TablePlan plan;
  plan.table = &t;
  const bool tagged =
      std::any_of(t.lines.begin(), t.lines.end(), [](const AicbLine& l) { return aicb_unit_tag(l.name).has_value(); });
  if (tagged)
    cut_tagged(path, t, h, plan);
  else
    cut_untagged(path, t, h, plan);
  plan.waited_for.assign(t.lines.size(), 0);
  for (std::size_t i = 0; i < t.lines.size(); ++i) {
    const AicbLine& l = t.lines[i];
    if (l.depen < 0) continue;
    if (static_cast<std::size_t>(l.depen) >= i)
      fail_at(path, l.file_line,
              fmt::format("depen {} does not name an earlier line of this table (lines count from 0)", l.depen));
    plan.waited_for[static_cast<std::size_t>(l.depen)] = 1;
  }
  return plan;
}

GroupKind group_kind(AicbGroup g) {
  switch (g) {
    case AicbGroup::TP: return GroupKind::TP;
    case AicbGroup::DP: return GroupKind::DP;
    case AicbGroup::EP: return GroupKind::EP;
    case AicbGroup::DpEp: return GroupKind::ExpertDP;
    case AicbGroup::CP: return GroupKind::CP;
    case AicbGroup::ETP: return GroupKind::ExpertTP;
    case AicbGroup::EtpEp: return GroupKind::ExpertTPxEP;
    case AicbGroup::World: return GroupKind::World;
    case AicbGroup::MP: return GroupKind::ModelParallel;
    case AicbGroup::Emb: return GroupKind::Embedding;
  }
  return GroupKind::TP;
}

// The stream trainsim's generator issues each communicator's collectives on.
Stream stream_of(AicbGroup g) {
  switch (g) {
    case AicbGroup::TP:
    case AicbGroup::MP: return Stream::TpComm;
    case AicbGroup::CP: return Stream::CpComm;
    case AicbGroup::EP:
    case AicbGroup::ETP:
    case AicbGroup::EtpEp: return Stream::EpComm;
    case AicbGroup::DpEp: return Stream::ExpertDpComm;
    case AicbGroup::DP:
    case AicbGroup::World:
    case AicbGroup::Emb: return Stream::DpComm;
  }
  return Stream::TpComm;
}

class ImportedRank {
 public:
  ImportedRank(const AicbFile& f, const TablePlan& plan, const ParallelPlan& pp, const Scenario& s, WorkloadBuilder& wb,
               std::size_t index, int rank)
      : file_(f),
        plan_(plan),
        lines_(plan.table->lines),
        parallel_(pp),
        scenario_(s),
        wb_(wb),
        rb_(wb.rank_builder(index)),
        rank_(rank),
        stage_(pp.coord_of(rank).pp),
        issued_(lines_.size()) {}

  void generate() {
    for (std::size_t i = 0; i < plan_.prefix_end; ++i) forward_line(i, -1, Phase::Other);
    run_schedule();
    for (std::size_t i = plan_.prefix_end; i-- > 0;) backward_line(i, -1, Phase::GradSync);
    for (std::size_t i = plan_.suffix_begin; i < lines_.size(); ++i) {
      forward_line(i, -1, Phase::Optimizer);
      backward_line(i, -1, Phase::Optimizer);
    }
  }

 private:
  std::optional<std::uint32_t> group_of(AicbGroup g, int line) {
    const GroupKind kind = group_kind(g);
    if (kind == GroupKind::Embedding && parallel_.pipeline() < 2)
      fail_at(file_.path, line, "an _EMB collective needs pp: 2 or more (it joins the first and the last stage)");
    const auto members = parallel_.group_members(kind, rank_);
    if (members.size() < 2) return std::nullopt;  // a one-rank group: nothing to communicate
    return wb_.group(kind, members);
  }

  std::uint32_t kernel(std::size_t line, const char* part, std::int64_t ns, int mb, Phase phase) {
    KernelDesc k;
    k.kind = KernelKind::FixedDuration;
    k.seconds = static_cast<double>(ns) * 1e-9;
    return rb_.compute({phase, -1, mb}, base_name(line) + part, k);
  }

  std::optional<std::uint32_t> collective(std::size_t line, const char* part, const AicbComm& c, int mb, Phase phase) {
    if (c.none || c.bytes == 0) return std::nullopt;
    const auto group = group_of(c.group, lines_[line].file_line);
    if (!group) return std::nullopt;
    return rb_.collective({phase, -1, mb}, stream_of(c.group), base_name(line) + part, c.kind, *group, c.bytes);
  }

  std::string base_name(std::size_t line) const {
    const std::string& n = lines_[line].name;
    const auto at = n.rfind("@mb");
    return at == std::string::npos ? n : n.substr(0, at);
  }

  // Forward part: wait for the collectives of the line `depen` names, the compute, then the collective - blocking,
  // unless a later line's depen names this one or it is a data-parallel one (Megatron's parameter all-gathers and
  // gradient reductions run beside the layers): then it runs beside what follows until a line waits for it.
  void forward_line(std::size_t i, int mb, Phase phase) {
    const AicbLine& l = lines_[i];
    if (l.depen >= 0) {
      const auto& ids = issued_[static_cast<std::size_t>(l.depen)];
      if (ids.empty())
        fail_at(file_.path, l.file_line,
                fmt::format("depen {} names a line whose collectives have not run yet on pipeline stage {}", l.depen,
                            stage_));
      for (auto id : ids) rb_.wait(id);
    }
    if (l.fwd.time_ns > 0) kernel(i, ".fwd", l.fwd.time_ns, mb, phase);
    if (const auto id = collective(i, ".fwd_comm", l.fwd.comm, mb, phase)) {
      if (plan_.waited_for[i] || l.fwd.comm.group == AicbGroup::DP || l.fwd.comm.group == AicbGroup::DpEp)
        issued_[i].push_back(*id);
      else
        rb_.wait(*id);
    }
  }

  // Backward part: the input-gradient compute, its collective running beside the weight-gradient compute (Megatron's
  // asynchronous grad-input reduction), the weight-gradient collective left running (gradient reduction), and the
  // next compute waiting for the input-gradient collective.
  void backward_line(std::size_t i, int mb, Phase phase) {
    const AicbLine& l = lines_[i];
    if (l.ig.time_ns > 0) kernel(i, ".ig", l.ig.time_ns, mb, phase);
    const auto ig = collective(i, ".ig_comm", l.ig.comm, mb, phase);
    if (l.wg.time_ns > 0) kernel(i, ".wg", l.wg.time_ns, mb, phase);
    if (const auto wg = collective(i, ".wg_comm", l.wg.comm, mb, phase)) issued_[i].push_back(*wg);
    if (ig) rb_.wait(*ig);
  }

  void forward(int mb, int chunk) {
    const auto [first, end] = plan_.units.at({mb, chunk});
    for (std::size_t i = first; i < end; ++i) forward_line(i, mb, Phase::Forward);
  }
  void backward(int mb, int chunk) {
    const auto [first, end] = plan_.units.at({mb, chunk});
    for (std::size_t i = end; i-- > first;) backward_line(i, mb, Phase::Backward);
  }

  std::uint32_t pair_group(int peer_stage) {
    const auto pp = parallel_.group_members(GroupKind::PP, rank_);
    std::vector<int> members{rank_, pp[static_cast<std::size_t>(peer_stage)]};
    std::sort(members.begin(), members.end());
    return wb_.group(GroupKind::PP, members);
  }
  int stage_rank(int stage) const {
    return parallel_.group_members(GroupKind::PP, rank_)[static_cast<std::size_t>(stage)];
  }

  // The pipeline schedule and its transfers, as trainsim's generator issues them (generator.cpp).
  void run_schedule() {
    const int stages = parallel_.pipeline(), chunks = file_.header.chunks, m = file_.header.ga;
    const std::int64_t bytes = file_.header.pp_comm;
    if (chunks > 1) {
      std::vector<std::uint32_t> handles;
      static constexpr const char* kNames[] = {"pp.isend_next", "pp.irecv_prev", "pp.isend_prev", "pp.irecv_next"};
      for (const auto& e : interleaved_program(stages, stage_, m, chunks)) {
        switch (e.kind) {
          case InterleavedEvent::Kind::Forward: forward(e.micro_batch, e.chunk); break;
          case InterleavedEvent::Kind::Backward: backward(e.micro_batch, e.chunk); break;
          case InterleavedEvent::Kind::Post: {
            const bool to_next = e.direction == P2PDirection::SendNext || e.direction == P2PDirection::RecvNext;
            const bool sends = e.direction == P2PDirection::SendNext || e.direction == P2PDirection::SendPrev;
            handles.push_back(rb_.collective({Phase::Other, -1, e.micro_batch},
                                             to_next ? Stream::PpCommNext : Stream::PpComm,
                                             kNames[static_cast<int>(e.direction)], CollKind::SendRecv,
                                             pair_group(e.peer), bytes, sends ? rank_ : stage_rank(e.peer)));
            break;
          }
          case InterleavedEvent::Kind::Wait: rb_.wait(handles.at(static_cast<std::size_t>(e.handle))); break;
          case InterleavedEvent::Kind::GradSync:
          case InterleavedEvent::Kind::ParamSync: break;  // the file's lines carry the gradient reductions
        }
      }
      return;
    }
    ScheduleKind kind = ScheduleKind::NoPipelining;
    if (stages > 1)
      kind = scenario_.parallelism.schedule == PipelineSchedule::GPipe ? ScheduleKind::GPipe : ScheduleKind::OneFOneB;
    for (const auto& st : pipeline_schedule(kind, stages, stage_, m, 1)) {
      const OpContext ctx{Phase::Other, -1, st.micro_batch};
      switch (st.action) {
        case PipelineAction::Forward: forward(st.micro_batch, st.chunk); break;
        case PipelineAction::Backward: backward(st.micro_batch, st.chunk); break;
        case PipelineAction::RecvForward:
          rb_.sync_collective(ctx, Stream::PpComm, "pp.recv_forward", CollKind::SendRecv, pair_group(stage_ - 1), bytes,
                              stage_rank(stage_ - 1));
          break;
        case PipelineAction::SendBackwardRecvForward:
          rb_.sync_collective(ctx, Stream::PpComm, "pp.send_backward_recv_forward", CollKind::SendRecv,
                              pair_group(stage_ - 1), bytes);
          break;
        case PipelineAction::SendBackward:
          rb_.sync_collective(ctx, Stream::PpComm, "pp.send_backward", CollKind::SendRecv, pair_group(stage_ - 1),
                              bytes, rank_);
          break;
        case PipelineAction::SendForward:
          rb_.sync_collective(ctx, Stream::PpCommNext, "pp.send_forward", CollKind::SendRecv, pair_group(stage_ + 1),
                              bytes, rank_);
          break;
        case PipelineAction::SendForwardRecvBackward:
          rb_.sync_collective(ctx, Stream::PpCommNext, "pp.send_forward_recv_backward", CollKind::SendRecv,
                              pair_group(stage_ + 1), bytes);
          break;
        case PipelineAction::RecvBackward:
          rb_.sync_collective(ctx, Stream::PpCommNext, "pp.recv_backward", CollKind::SendRecv, pair_group(stage_ + 1),
                              bytes, stage_rank(stage_ + 1));
          break;
      }
    }
  }

  const AicbFile& file_;
  const TablePlan& plan_;
  const std::vector<AicbLine>& lines_;
  const ParallelPlan& parallel_;
  const Scenario& scenario_;
  WorkloadBuilder& wb_;
  RankBuilder rb_;
  int rank_;
  int stage_;
  std::vector<std::vector<std::uint32_t>> issued_;  // per line: its asynchronous collectives, once run
};

}  // namespace

Workload import_aicb(const AicbFile& f, const Scenario& s, const WorkloadOptions& o) {
  const AicbHeader& h = f.header;
  const int world = h.all_gpus.value_or(s.cluster.num_gpus);
  if (world != s.cluster.num_gpus)
    fail_at(f.path, 1,
            fmt::format("all_gpus: {} but the scenario's cluster has {} GPUs (cluster.num_gpus)", world,
                        s.cluster.num_gpus));
  if (world % (h.tp * h.pp) != 0)
    fail_at(f.path, 1,
            fmt::format("model_parallel_NPU_group: {} x pp: {} does not divide all_gpus: {}", h.tp, h.pp, world));
  if (h.chunks > 1 && h.pp < 2) fail_at(f.path, 1, "vpp_chunks: needs pp: 2 or more");
  if (h.chunks > 1)
    if (const auto why = interleaved_micro_batch_problem(h.pp, h.ga); !why.empty())
      fail_at(f.path, 1, fmt::format("vpp_chunks: {} (interleaved 1F1B) {}", h.chunks, why));
  const std::size_t tables = f.tables.size();
  if (tables != 1 && tables != static_cast<std::size_t>(h.pp))
    fail_at(f.path,
            (tables > static_cast<std::size_t>(h.pp) ? f.tables[static_cast<std::size_t>(h.pp)] : f.tables.back())
                .count_line,
            fmt::format("{} tables for pp: {} (one table for every stage, or one per stage)", tables, h.pp));
  const int dp = world / (h.tp * h.pp);
  // With a model the scenario also describes the job (its report, the flow level's group copies): the same sizes.
  if (s.has_training_job) {
    const auto& p = s.parallelism;
    const int ep = s.model.moe.enabled() ? p.expert : 1;
    auto same = [&](const char* header_key, int file, const char* key, int scenario) {
      if (file != scenario)
        fail_at(f.path, 1,
                fmt::format("{} {} but the scenario's {} is {} (leave the model block out to run the file's job "
                            "on the scenario's cluster alone)",
                            header_key, file, key, scenario));
    };
    same("model_parallel_NPU_group:", h.tp, "parallelism.tensor", p.tensor);
    same("pp:", h.pp, "parallelism.pipeline", p.pipeline);
    same("ep:", h.ep, "parallelism.expert", ep);
    same("ga:", h.ga, "micro-batch count (training.global_batch_size / (micro_batch_size x data))",
         s.micro_batches_per_iteration());
    if (p.context > 1) fail_at(f.path, 1, "the scenario has parallelism.context > 1, which an AICB file cannot state");
  } else if (s.simulation.network_model != NetworkModel::Analytical) {
    fail_at(f.path, 1,
            "a workload file runs at flow or packet level only on a scenario with the same job (a model block "
            "whose parallel sizes match the header)");
  }
  std::optional<ParallelPlan> plan;
  try {
    plan.emplace(h.tp, 1, dp, h.pp, h.ep, 0);
  } catch (const Error& e) {
    fail_at(f.path, 1, fmt::format("ep: {} does not fit {} GPUs per stage: {}", h.ep, h.tp * dp, e.what()));
  }
  std::vector<TablePlan> plans;
  for (const AicbTable& t : f.tables) plans.push_back(plan_table(f.path, t, h));

  std::vector<int> ranks;
  if (o.per_rank) {
    for (int r = 0; r < world; ++r) ranks.push_back(r);
  } else {
    for (int st = 0; st < h.pp; ++st) ranks.push_back(plan->rank_of({0, 0, 0, st}));
  }
  WorkloadBuilder wb(world, ranks);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int stage = plan->coord_of(ranks[i]).pp;
    const TablePlan& tp = plans[plans.size() == 1 ? 0 : static_cast<std::size_t>(stage)];
    ImportedRank r(f, tp, *plan, s, wb, i, ranks[i]);
    r.generate();
  }
  Workload wl = wb.finish();
  wl.stated_parallelism = StatedParallelism{h.tp, h.pp, dp, h.ep, h.ga, h.chunks};
  const std::int64_t per_timeline = o.per_rank ? 1 : static_cast<std::int64_t>(h.tp) * dp;
  for (auto& r : wl.ranks) r.represents = per_timeline;
  return wl;
}

}  // namespace trainsim
