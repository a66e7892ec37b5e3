#pragma once
// The workload IR: for each simulated rank, the ops Megatron would issue in one iteration, on
// CUDA-like streams, with explicit cross-stream dependencies. Ops on one stream run in issue
// order; a collective starts when every simulated member of its group has reached it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/collective_kind.hpp"
#include "core/kernel_desc.hpp"
#include "scenario/scenario.hpp"
#include "workload/parallel_plan.hpp"

namespace trainsim {

// PpComm carries the transfers with the previous pipeline stage, PpCommNext those with the next
// one: each stage pair is its own NCCL communicator with its own stream, so a send to the next
// stage does not queue behind a receive from the previous one (p2p_communication.py::P2PCommunicator). EpComm
// carries the MoE token dispatcher's collectives (EP, expert-TP), ExpertDpComm the expert-gradient reduction
// and expert parameter all-gather: Megatron's expert groups are communicators of their own
// (parallel_state.py::initialize_model_parallel).
enum class Stream : std::uint8_t { Compute, TpComm, CpComm, DpComm, PpComm, PpCommNext, EpComm, ExpertDpComm, kCount };
inline constexpr int kNumStreams = static_cast<int>(Stream::kCount);
const char* to_string(Stream s);

// A communicator: its members (global ranks) and kind. `simulated_members` is how many of them
// have a simulated timeline (the rendezvous count).
struct CommGroup {
  GroupKind kind = GroupKind::World;
  std::vector<int> ranks;  // global ranks, sorted
  int simulated_members = 0;
};

struct CollectiveDesc {
  CollKind kind = CollKind::AllReduce;
  std::uint32_t group = 0;  // index into Workload::groups
  std::int64_t bytes = 0;   // NCCL's nBytes convention: the full logical buffer (all-gather output,
                            // reduce-scatter input, all-reduce buffer); SendRecv: bytes each way max
  // SendRecv on a pair: the group member (index into its ranks) that is the only one sending, for a
  // one-way pipeline send; -1 = both send (a batched send-and-receive).
  std::int8_t sender = -1;
  // SMs the call's kernels hold while it runs, when they are not one CTA per NCCL channel: Transformer
  // Engine's userbuffers (tp_comm_overlap) take 1 SM plus copy engines for a ring exchange and 16 for
  // bulk and pipelined overlap (TE transformer_engine/pytorch/module/base.py::initialize_ub). -1 = the
  // collective model's channels.
  std::int16_t sms = -1;
  // A DeepEP token exchange (parallelism.moe_dispatcher: flex), priced by CollectiveModel::estimate_exchange; off for
  // every other call.
  TokenExchange exchange{};
  bool operator==(const CollectiveDesc&) const = default;
};

// What an op is, for the trace, the comm table and the breakdown.
enum class Phase : std::uint8_t { Forward, Backward, Recompute, GradSync, Optimizer, Other };
const char* to_string(Phase p);

struct Op {
  enum class Type : std::uint8_t { Compute, Collective };
  Type type = Type::Compute;
  Stream stream = Stream::Compute;
  Phase phase = Phase::Other;
  // Kernel launches the host makes to issue this op (each costs EngineOptions::host_launch of CPU time): 1 for a
  // kernel or a collective, more for one op standing for several eager PyTorch kernels (an RMSNorm written as
  // eight ops), 0 for a kernel replayed inside a CUDA graph whose launch an earlier op paid.
  std::uint8_t launches = 1;
  // The host blocks before it issues this op until the first `host_waits` ops of its deps have finished
  // (torch.cuda.synchronize(), an event's synchronize(), `.item()`), and issues nothing after it before then: the
  // host's clock restarts there (docs/compute-model.md §1.5). 0: the host does not wait here.
  std::uint8_t host_waits = 0;
  std::uint16_t name = 0;       // index into Workload::names ("qkv", "fc1.dgrad", "tp.allgather", ...)
  std::uint32_t desc = 0;       // index into Workload::kernels or Workload::collectives
  std::uint32_t first_dep = 0;  // index into RankProgram::deps
  std::uint16_t num_deps = 0;
  std::int16_t layer = -1;        // global layer index, -1 if none
  std::int32_t micro_batch = -1;  // -1 if none
  std::uint32_t coll_seq = 0;     // collectives: the n-th op of this rank on this group
};

// One forward or backward step of the pipeline schedule: the ops [first_op, end_op) of the rank's program that the
// step issued (its layers and the framework's work around them; not the pipeline transfers). Workload-file exports
// cut a rank's program into micro-batch pieces with these.
struct ProgramStep {
  bool backward = false;
  int micro_batch = 0;
  int chunk = 0;
  std::uint32_t first_op = 0, end_op = 0;
};

// The ops one simulated rank issues, in issue order.
struct RankProgram {
  int rank = 0;  // global rank
  std::vector<Op> ops;
  std::vector<std::uint32_t> deps;  // op indices (into ops) this rank's ops wait for
  // How many real ranks this timeline stands for (1 in --per-rank mode).
  std::int64_t represents = 1;
  std::vector<ProgramStep> steps;  // the schedule's forward and backward steps, in issue order
};

// The parallel sizes a workload file states about its job (an AICB header), for the report of a run whose scenario
// has no model block to state them.
struct StatedParallelism {
  int tensor = 1, pipeline = 1, data = 1, expert = 1;
  int micro_batches = 1;     // per iteration (AICB's ga)
  int virtual_pipeline = 1;  // model chunks per stage (trainsim's vpp_chunks)
};

struct Workload {
  std::vector<RankProgram> ranks;           // simulated ranks
  std::vector<KernelDesc> kernels;          // distinct kernels, deduplicated
  std::vector<CollectiveDesc> collectives;  // distinct collectives, deduplicated
  std::vector<CommGroup> groups;
  std::vector<std::string> names;
  int world_size = 0;
  std::optional<StatedParallelism> stated_parallelism;  // read from a file that says; generated workloads leave it

  std::size_t op_count() const;
};

}  // namespace trainsim
