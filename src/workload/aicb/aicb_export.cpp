#include "workload/aicb/aicb_export.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/error.hpp"
#include "workload/generator.hpp"

namespace trainsim {

namespace {

bool is_p2p(const Op& op) { return op.stream == Stream::PpComm || op.stream == Stream::PpCommNext; }

AicbGroup aicb_group(GroupKind k) {
  switch (k) {
    case GroupKind::TP: return AicbGroup::TP;
    case GroupKind::DP: return AicbGroup::DP;
    case GroupKind::EP: return AicbGroup::EP;
    case GroupKind::ExpertDP: return AicbGroup::DpEp;
    case GroupKind::CP: return AicbGroup::CP;
    case GroupKind::ExpertTP: return AicbGroup::ETP;
    case GroupKind::ExpertTPxEP: return AicbGroup::EtpEp;
    case GroupKind::World: return AicbGroup::World;
    case GroupKind::ModelParallel: return AicbGroup::MP;
    case GroupKind::Embedding: return AicbGroup::Emb;
    case GroupKind::PP: break;
  }
  throw Error("workload export: a pipeline transfer outside the pipeline schedule cannot be written as AICB");
}

bool is_gradient_reduction(AicbGroup g) { return g == AicbGroup::DP || g == AicbGroup::DpEp; }

std::string safe_name(std::string n) {
  for (char& c : n)
    if (c == ' ' || c == '\t' || c == '@') c = '_';
  return n.empty() ? std::string("op") : n;
}

std::int64_t to_ns(SimTime ps) { return static_cast<std::int64_t>(std::llround(static_cast<double>(ps) / 1e3)); }

// One line under construction. Times in picoseconds until written.
struct Piece {
  SimTime time = 0;
  std::optional<std::uint32_t> comm;
  std::optional<std::uint32_t> depen_op;  // forward pieces: the collective this piece waits for (its line)
  std::uint32_t first_op = 0;
  bool used = false;
};
struct BackPiece {
  SimTime ig = 0, wg = 0;
  std::optional<std::uint32_t> ig_comm, wg_comm;
  std::uint32_t first_op = 0;
  bool used = false;
  int state = 0;  // 0: input-gradient compute, 1: after its collective, 2: after the weight-gradient collective
};

class StageExporter {
 public:
  StageExporter(const Workload& wl, const RankProgram& prog, const std::vector<SimTime>& dur)
      : wl_(wl), prog_(prog), dur_(dur) {
    const std::size_t n = prog.ops.size();
    next_kernel_.assign(n, kNone);
    first_waiter_.assign(n, kNone);
    std::uint32_t next = kNone;
    for (std::size_t i = n; i-- > 0;) {
      next_kernel_[i] = next;
      if (prog.ops[i].type == Op::Type::Compute) next = static_cast<std::uint32_t>(i);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Op& op = prog.ops[i];
      if (op.type != Op::Type::Compute) continue;
      for (std::uint32_t d = 0; d < op.num_deps; ++d) {
        const std::uint32_t c = prog.deps[op.first_dep + d];
        if (first_waiter_[c] == kNone) first_waiter_[c] = static_cast<std::uint32_t>(i);
      }
    }
  }

  AicbTable table(const Scenario& s) {
    const auto& steps = prog_.steps;
    TRAINSIM_CHECK(!steps.empty(), "workload export: a rank without schedule steps");
    const bool chunks = s.parallelism.virtual_pipeline > 1;
    // Each step's ops and the framework's ops up to the next step; before the first step the prefix, after the last
    // the suffix. Pipeline transfers are left out: the import issues them from the schedule.
    std::vector<std::uint32_t> prefix, suffix;
    for (std::uint32_t i = 0; i < steps.front().first_op; ++i) prefix.push_back(i);
    for (std::uint32_t i = steps.back().end_op; i < prog_.ops.size(); ++i) suffix.push_back(i);
    struct Unit {
      std::vector<std::uint32_t> fwd, bwd;
    };
    std::vector<std::pair<AicbUnitTag, Unit>> units;
    auto unit = [&](int mb, int chunk) -> Unit& {
      for (auto& [tag, u] : units)
        if (tag.micro_batch == mb && tag.chunk == chunk) return u;
      units.push_back({AicbUnitTag{mb, chunk}, {}});
      return units.back().second;
    };
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const ProgramStep& st = steps[k];
      const std::uint32_t end = k + 1 < steps.size() ? steps[k + 1].first_op : st.end_op;
      Unit& u = unit(st.micro_batch, st.chunk);
      for (std::uint32_t i = st.first_op; i < end; ++i) (st.backward ? u.bwd : u.fwd).push_back(i);
    }
    std::sort(units.begin(), units.end(), [](const auto& a, const auto& b) {
      return std::pair(a.first.micro_batch, a.first.chunk) < std::pair(b.first.micro_batch, b.first.chunk);
    });

    AicbTable t;
    std::vector<std::optional<std::uint32_t>> depen_ops;
    auto add_forward_only = [&](const std::vector<Piece>& pieces, std::optional<AicbUnitTag> tag) {
      for (const Piece& p : pieces) {
        AicbLine l;
        l.name = name_of(p.first_op, tag, chunks);
        l.fwd = part(p.time, p.comm);
        note_comm(p.comm, t.lines.size());
        depen_ops.push_back(p.depen_op);
        t.lines.push_back(std::move(l));
      }
    };
    add_forward_only(forward_pieces(prefix), std::nullopt);
    // A micro-batch's forward lines, then its backward lines in reverse (backward runs the lines last to first), each
    // line one part only: a line's depen and its collectives' asynchrony then concern that part alone.
    for (auto& [tag, u] : units) {
      add_forward_only(forward_pieces(u.fwd), tag);
      const auto b = backward_pieces(u.bwd);
      for (std::size_t k = b.size(); k-- > 0;) {
        const BackPiece& bp = b[k];
        AicbLine l;
        l.name = name_of(bp.first_op, tag, chunks);
        l.ig = part(bp.ig, bp.ig_comm);
        l.wg = part(bp.wg, bp.wg_comm);
        note_comm(bp.wg_comm, t.lines.size());  // the input-gradient collective is waited for within the line
        depen_ops.push_back(std::nullopt);
        t.lines.push_back(std::move(l));
      }
    }
    add_forward_only(forward_pieces(suffix), std::nullopt);
    for (std::size_t i = 0; i < t.lines.size(); ++i) {
      if (!depen_ops[i]) continue;
      const auto it = line_of_comm_.find(*depen_ops[i]);
      if (it != line_of_comm_.end() && it->second < i) t.lines[i].depen = static_cast<int>(it->second);
    }
    return t;
  }

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  void note_comm(const std::optional<std::uint32_t>& c, std::size_t line) {
    if (c) line_of_comm_[*c] = line;
  }

  std::string name_of(std::uint32_t op, const std::optional<AicbUnitTag>& tag, bool chunks) const {
    const std::string base = safe_name(wl_.names[prog_.ops[op].name]);
    return tag ? aicb_tagged_name(base, *tag, chunks) : base;
  }

  AicbPart part(SimTime time, const std::optional<std::uint32_t>& comm) const {
    AicbPart p;
    p.time_ns = to_ns(time);
    if (comm) {
      const CollectiveDesc& c = wl_.collectives[prog_.ops[*comm].desc];
      p.comm.none = false;
      p.comm.kind = c.kind;
      p.comm.group = aicb_group(wl_.groups[c.group].kind);
      p.comm.bytes = c.bytes;
    }
    return p;
  }

  AicbGroup group_of(std::uint32_t op) const {
    return aicb_group(wl_.groups[wl_.collectives[prog_.ops[op].desc].group].kind);
  }

  bool depends_on(std::uint32_t kernel, std::uint32_t coll) const {
    const Op& op = prog_.ops[kernel];
    for (std::uint32_t d = 0; d < op.num_deps; ++d)
      if (prog_.deps[op.first_dep + d] == coll) return true;
    return false;
  }

  // The asynchronous collective `kernel` is the first to wait for, latest first; a collective the very next kernel
  // waits for is the import's blocking kind and needs no depen.
  std::optional<std::uint32_t> async_dependency(std::uint32_t kernel) const {
    std::optional<std::uint32_t> out;
    const Op& op = prog_.ops[kernel];
    for (std::uint32_t d = 0; d < op.num_deps; ++d) {
      const std::uint32_t c = prog_.deps[op.first_dep + d];
      if (is_p2p(prog_.ops[c]) || first_waiter_[c] != kernel) continue;
      // The import runs a forward collective blocking - the next kernel waits for it - unless it is a data-parallel
      // one, which runs on until a line's depen names it.
      const bool data_parallel = is_gradient_reduction(group_of(c));
      if (next_kernel_[c] == kernel && !data_parallel) continue;
      if (!out || c > *out) out = c;
    }
    return out;
  }

  // Forward pieces: compute, then one collective; blocking unless a later piece's depen names it.
  std::vector<Piece> forward_pieces(const std::vector<std::uint32_t>& ops) const {
    std::vector<Piece> out;
    Piece cur;
    auto close = [&] {
      if (cur.used) out.push_back(cur);
      cur = Piece{};
    };
    for (std::uint32_t i : ops) {
      const Op& op = prog_.ops[i];
      if (is_p2p(op)) continue;
      if (op.type == Op::Type::Compute) {
        if (cur.comm) close();
        if (const auto dep = async_dependency(i)) {
          if (cur.used) close();
          cur.depen_op = dep;
        }
        if (!cur.used) cur.first_op = i;
        cur.used = true;
        cur.time += dur_[i];
      } else {
        if (cur.comm) close();
        if (!cur.used) cur.first_op = i;
        cur.used = true;
        cur.comm = i;
      }
    }
    close();
    return out;
  }

  // Backward pieces: input-gradient compute, its collective, the compute that runs beside it, a gradient reduction.
  std::vector<BackPiece> backward_pieces(const std::vector<std::uint32_t>& ops) const {
    std::vector<BackPiece> out;
    BackPiece cur;
    auto close = [&] {
      if (cur.used) out.push_back(cur);
      cur = BackPiece{};
    };
    auto start = [&](std::uint32_t i) {
      if (!cur.used) cur.first_op = i;
      cur.used = true;
    };
    for (std::uint32_t i : ops) {
      const Op& op = prog_.ops[i];
      if (is_p2p(op)) continue;
      if (op.type == Op::Type::Compute) {
        if (cur.state == 2 || (cur.state == 1 && depends_on(i, *cur.ig_comm))) close();
        start(i);
        (cur.state == 0 ? cur.ig : cur.wg) += dur_[i];
        continue;
      }
      if (is_gradient_reduction(group_of(i))) {  // left running until the optimizer: never an input-gradient one
        if (cur.wg_comm) close();
        start(i);
        cur.wg_comm = i;
        cur.state = 2;
        continue;
      }
      if (cur.state != 0) close();
      start(i);
      cur.ig_comm = i;
      cur.state = 1;
    }
    close();
    return out;
  }

  const Workload& wl_;
  const RankProgram& prog_;
  const std::vector<SimTime>& dur_;
  std::vector<std::uint32_t> next_kernel_, first_waiter_;
  std::map<std::uint32_t, std::size_t> line_of_comm_;
};

}  // namespace

AicbFile export_aicb(const Scenario& s, const Workload& wl, const OpDurations& durations) {
  const auto& p = s.parallelism;
  if (p.context > 1)
    throw Error(s.file + ": parallelism.context " + std::to_string(p.context) +
                ": the AICB header has no context-parallel size, so this job cannot be written as AICB");
  const ParallelPlan plan = parallel_plan_of(s);
  if (plan.expert_tensor() != plan.tensor())
    throw Error(s.file + ": parallelism.expert_tensor " + std::to_string(plan.expert_tensor()) +
                " differs from parallelism.tensor: the AICB header has no expert-TP size, so this job cannot be "
                "written as AICB");
  AicbFile f;
  AicbHeader& h = f.header;
  h.tp = p.tensor;
  h.ep = plan.expert();
  h.pp = p.pipeline;
  h.vpp = std::max(1, s.model.num_layers);
  h.ga = s.micro_batches_per_iteration();
  h.all_gpus = s.cluster.num_gpus;
  h.chunks = std::max(1, p.virtual_pipeline);
  for (const Op& op : wl.ranks.front().ops)
    if (is_p2p(op)) {
      h.pp_comm = wl.collectives[op.desc].bytes;
      break;
    }
  if (h.pp > 1 && h.pp_comm == 0) throw Error(s.file + ": workload export: no pipeline transfer found");
  for (int stage = 0; stage < p.pipeline; ++stage) {
    const int rank = plan.rank_of({0, 0, 0, stage});
    std::size_t index = wl.ranks.size();
    for (std::size_t i = 0; i < wl.ranks.size(); ++i)
      if (wl.ranks[i].rank == rank) index = i;
    TRAINSIM_CHECK(index < wl.ranks.size(),
                   "workload export: pipeline stage " + std::to_string(stage) + "'s first rank is not simulated");
    StageExporter e(wl, wl.ranks[index], durations[index]);
    f.tables.push_back(e.table(s));
  }
  return f;
}

}  // namespace trainsim
