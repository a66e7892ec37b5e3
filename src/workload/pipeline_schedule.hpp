#pragma once
// The order of forward/backward steps and pipeline p2p calls on one pipeline rank, as
// Megatron-Core's schedules.py issues them (forward_backward_no_pipelining,
// forward_backward_pipelining_without_interleaving, forward_backward_pipelining_with_interleaving). P2P calls
// with no peer (recv on the first stage, send on the last) are omitted.
#include <string>
#include <vector>

namespace trainsim {

enum class PipelineAction {
  Forward,
  Backward,
  RecvForward,              // recv_forward: activation from the previous stage
  SendForward,              // send_forward
  RecvBackward,             // recv_backward: gradient from the next stage
  SendBackward,             // send_backward
  SendForwardRecvBackward,  // one batched exchange with the next stage
  SendBackwardRecvForward,  // one batched exchange with the previous stage
};

struct PipelineStep {
  PipelineAction action;
  int micro_batch = 0;  // the F/B micro-batch, or the micro-batch whose tensor is sent/received
  int chunk = 0;        // model chunk (virtual pipeline stage); 0 without interleaving
};

enum class ScheduleKind { NoPipelining, OneFOneB, GPipe, Interleaved };

// Steps of pipeline rank `rank` of `pipeline` for `micro_batches` micro-batches and
// `chunks` model chunks per rank (chunks > 1 only with Interleaved).
std::vector<PipelineStep> pipeline_schedule(ScheduleKind kind, int pipeline, int rank, int micro_batches,
                                            int chunks = 1);

// Megatron's interleaved order: forward step k runs (micro_batch, chunk) = table[k]; backward step k
// runs table[k].micro_batch on chunk (chunks - 1 - table[k].chunk). Group size N = pipeline.
std::vector<PipelineStep> interleaved_table(int pipeline, int micro_batches, int chunks);

std::string to_string(const PipelineStep& s);  // "F3", "B0", "sfrb2", "c1F3" ...

}  // namespace trainsim
