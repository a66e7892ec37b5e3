#include "workload/cuda_graphs.hpp"

namespace trainsim {

namespace {

bool graph_phase(Phase p) { return p == Phase::Forward || p == Phase::Backward || p == Phase::Recompute; }

// Streams whose calls belong to the layer's own computation (captured with it); data-parallel and pipeline
// transfers are issued by hooks and schedules outside the graphed callable.
bool layer_stream(Stream s) {
  return s == Stream::Compute || s == Stream::TpComm || s == Stream::CpComm || s == Stream::EpComm;
}

}  // namespace

void capture_layers_in_cuda_graphs(Workload& wl, bool dropless_moe) {
  for (RankProgram& prog : wl.ranks) {
    // The run being replayed: its layer, micro-batch and phase, and whether it went eager at a token dispatch.
    bool in_run = false, eager_rest = false;
    std::int16_t layer = -1;
    std::int32_t mb = -1;
    Phase phase = Phase::Other;
    for (Op& op : prog.ops) {
      if (op.layer < 0 || !graph_phase(op.phase) || !layer_stream(op.stream)) continue;
      const bool same = in_run && op.layer == layer && op.micro_batch == mb && op.phase == phase;
      if (!same) {
        in_run = true;
        eager_rest = false;
        layer = op.layer;
        mb = op.micro_batch;
        phase = op.phase;
        op.launches = 1;  // the graph's launch
        continue;
      }
      if (dropless_moe && op.stream == Stream::EpComm) eager_rest = true;
      if (!eager_rest) op.launches = 0;
    }
  }
}

}  // namespace trainsim
