#pragma once
// Megatron-Core's interleaved 1F1B schedule on one pipeline rank, as the host issues it
// (schedules.py::forward_backward_pipelining_with_interleaving with the training defaults
// overlap_p2p_comm=True, batch_p2p_comm=False, deallocate_pipeline_outputs=True,
// microbatch_group_size_per_vp_stage = p; p2p_communication.py::_p2p_ops, param_and_grad_buffer.py bucket groups).
//
// Every rank holds v model chunks; virtual stage s = chunk * p + rank. Activations flow
// s -> s + 1, i.e. to rank (r + 1) mod p, and from the last rank's chunk c to rank 0's chunk c + 1
// (the wrap-around of p2p_communication.py); gradients flow back the same ring. Each tensor is one isend on one
// side and one irecv on the other; the events below say when each is posted and when the compute
// stream waits for it (handle.wait()).
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim {

enum class P2PDirection : std::uint8_t {
  SendNext,  // activation to rank (r + 1) mod p
  RecvPrev,  // activation from rank (r - 1) mod p
  SendPrev,  // activation gradient to rank (r - 1) mod p
  RecvNext,  // activation gradient from rank (r + 1) mod p
};

struct InterleavedEvent {
  enum class Kind : std::uint8_t {
    Forward,    // forward step of (micro_batch, chunk)
    Backward,   // backward step of (micro_batch, chunk)
    Post,       // isend / irecv of one tensor, returning handle `handle`
    Wait,       // handle.wait() on `handle`: the next compute kernel waits for that transfer
    GradSync,   // start_grad_sync of `chunk` (all its buckets; align_grad_reduce)
    ParamSync,  // start_param_sync of `chunk` (all its buckets; align_param_gather)
  };
  Kind kind = Kind::Forward;
  int micro_batch = -1;  // Forward/Backward; Post: the micro-batch the tensor belongs to
  // Forward/Backward/GradSync/ParamSync: the model chunk. Post: the chunk on this rank that
  // produced the tensor (sends) or will consume it (receives).
  int chunk = -1;
  P2PDirection direction = P2PDirection::SendNext;  // Post
  int peer = -1;                                    // Post: pipeline rank on the other side
  int handle = -1;                                  // Post: the handle it returns; Wait: the handle waited for
};

// Empty when Megatron runs the interleaved schedule with `micro_batches` per iteration on
// `pipeline` ranks; otherwise why not. With the default group size N = p, Megatron requires
// p <= N <= m and m mod N == 0 or >= p, i.e. m a multiple of p (older releases said so directly).
std::string interleaved_micro_batch_problem(int pipeline, int micro_batches);

// The host-side events of pipeline rank `rank`. Throws Error when the parameters are invalid
// (pipeline < 2, chunks < 2, rank out of range, or interleaved_micro_batch_problem is non-empty).
std::vector<InterleavedEvent> interleaved_program(int pipeline, int rank, int micro_batches, int chunks);

// Compact text for tests and debugging: "F:c1m0", "B:c0m3", ">n:c0m2" (send next), "<p:c1m2"
// (receive from previous), ">p:..." (send previous), "<n:..." (receive from next), "w<p:c1m2" (wait
// for that transfer), "G:c1" (grad sync), "P:c2" (param sync).
std::string to_string(const InterleavedEvent& e, const std::vector<InterleavedEvent>& program);

}  // namespace trainsim
