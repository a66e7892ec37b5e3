#include "workload/pipeline_schedule.hpp"

#include <algorithm>

#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {

void add(std::vector<PipelineStep>& out, PipelineAction a, int mb, int chunk = 0) { out.push_back({a, mb, chunk}); }

// forward_backward_pipelining_without_interleaving (schedules.py).
std::vector<PipelineStep> one_f_one_b(int p, int r, int m) {
  std::vector<PipelineStep> s;
  const bool first = r == 0, last = r == p - 1;
  const int warmup = std::min(p - r - 1, m);
  const int remaining = m - warmup;
  for (int i = 0; i < warmup; ++i) {
    if (!first) add(s, PipelineAction::RecvForward, i);
    add(s, PipelineAction::Forward, i);
    if (!last) add(s, PipelineAction::SendForward, i);
  }
  if (remaining > 0 && !first) add(s, PipelineAction::RecvForward, warmup);
  for (int i = 0; i < remaining; ++i) {
    const int fwd = warmup + i;
    add(s, PipelineAction::Forward, fwd);
    if (!last) add(s, PipelineAction::SendForwardRecvBackward, fwd);
    add(s, PipelineAction::Backward, i);
    if (!first) {
      if (i == remaining - 1)
        add(s, PipelineAction::SendBackward, i);
      else
        add(s, PipelineAction::SendBackwardRecvForward, i);
    }
  }
  for (int i = 0; i < warmup; ++i) {
    const int bwd = remaining + i;
    if (!last) add(s, PipelineAction::RecvBackward, bwd);
    add(s, PipelineAction::Backward, bwd);
    if (!first) add(s, PipelineAction::SendBackward, bwd);
  }
  return s;
}

// All forwards, then all backwards (GPipe).
std::vector<PipelineStep> gpipe(int p, int r, int m) {
  std::vector<PipelineStep> s;
  const bool first = r == 0, last = r == p - 1;
  for (int i = 0; i < m; ++i) {
    if (!first) add(s, PipelineAction::RecvForward, i);
    add(s, PipelineAction::Forward, i);
    if (!last) add(s, PipelineAction::SendForward, i);
  }
  for (int i = 0; i < m; ++i) {
    if (!last) add(s, PipelineAction::RecvBackward, i);
    add(s, PipelineAction::Backward, i);
    if (!first) add(s, PipelineAction::SendBackward, i);
  }
  return s;
}

}  // namespace

std::vector<PipelineStep> interleaved_table(int p, int m, int v) {
  // get_schedule_table: groups of N = p consecutive micro-batches; within a group, chunk-major.
  std::vector<PipelineStep> table;
  const int n = p;
  for (int start = 0; start < m; start += n) {
    const int end = std::min(start + n, m);
    for (int c = 0; c < v; ++c)
      for (int mb = start; mb < end; ++mb) table.push_back({PipelineAction::Forward, mb, c});
  }
  return table;
}

std::vector<PipelineStep> pipeline_schedule(ScheduleKind kind, int p, int r, int m, int v) {
  // The scenario layer bounds pipeline, virtual_pipeline and the micro-batch count; r is one of the p stages.
  TRAINSIM_CHECK(p >= 1 && r >= 0 && r < p && m >= 1 && v >= 1, "invalid pipeline schedule parameters");
  switch (kind) {
    case ScheduleKind::NoPipelining: {
      std::vector<PipelineStep> s;
      for (int i = 0; i < m; ++i) {
        add(s, PipelineAction::Forward, i);
        add(s, PipelineAction::Backward, i);
      }
      return s;
    }
    case ScheduleKind::OneFOneB: return one_f_one_b(p, r, m);
    case ScheduleKind::GPipe: return gpipe(p, r, m);
    case ScheduleKind::Interleaved: {
      // Order of F/B steps per get_schedule_table (p2p is handled by the generator as data flow between chunks).
      const auto table = interleaved_table(p, m, v);
      const int total = m * v;
      const int warmup = std::min((p - r - 1) * 2 + (v - 1) * p, total);
      const int remaining = total - warmup;
      std::vector<PipelineStep> s;
      auto fwd = [&](int k) { add(s, PipelineAction::Forward, table[k].micro_batch, table[k].chunk); };
      auto bwd = [&](int k) { add(s, PipelineAction::Backward, table[k].micro_batch, v - 1 - table[k].chunk); };
      for (int k = 0; k < warmup; ++k) fwd(k);
      for (int k = 0; k < remaining; ++k) {
        fwd(warmup + k);
        bwd(k);
      }
      for (int k = remaining; k < total; ++k) bwd(k);
      return s;
    }
  }
  TRAINSIM_UNREACHABLE("unknown schedule");
}

std::string to_string(const PipelineStep& s) {
  std::string prefix;
  switch (s.action) {
    case PipelineAction::Forward: prefix = "F"; break;
    case PipelineAction::Backward: prefix = "B"; break;
    case PipelineAction::RecvForward: prefix = "rf"; break;
    case PipelineAction::SendForward: prefix = "sf"; break;
    case PipelineAction::RecvBackward: prefix = "rb"; break;
    case PipelineAction::SendBackward: prefix = "sb"; break;
    case PipelineAction::SendForwardRecvBackward: prefix = "sfrb"; break;
    case PipelineAction::SendBackwardRecvForward: prefix = "sbrf"; break;
  }
  std::string out = s.chunk > 0 ? "c" + std::to_string(s.chunk) : "";
  return out + prefix + std::to_string(s.micro_batch);
}

}  // namespace trainsim
