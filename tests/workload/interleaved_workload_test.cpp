// The generator's interleaved 1F1B programs (virtual_pipeline > 1): per-rank order of forward and
// backward steps (with their chunk) and pipeline isend/irecv ops as Megatron issues them
// (schedules.py::forward_backward_pipelining_with_interleaving), each chunk's layers
// (get_transformer_layer_offset), embedding and LM head placement, one gradient reduction and one parameter
// all-gather per chunk (param_and_grad_buffer.py bucket groups),
// transfers that pair up across ranks, the compute dependencies on received tensors, and what
// Megatron rejects.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"
#include "workload/interleaved_schedule.hpp"
#include "workload/stage_layout.hpp"

namespace trainsim {
namespace {

// A small GPT (8 layers, hidden 512: every chunk's gradients fit in one DDP bucket).
Scenario interleaved_scenario(int pipeline, int virtual_pipeline, int micro_batches, int data = 1,
                              const std::string& extra = "", int tensor = 1) {
  const int per_node = std::min(8, tensor * pipeline * data);
  const std::string yaml = R"(
model:
  family: gpt
  num_layers: 8
  hidden_size: 512
  num_attention_heads: 8
  vocab_size: 51200
  seq_length: 1024
training:
  global_batch_size: )" + std::to_string(micro_batches * data) +
                           R"(
  micro_batch_size: 1
  precision: bf16
parallelism:
  tensor: )" + std::to_string(tensor) +
                           R"(
  pipeline: )" + std::to_string(pipeline) +
                           R"(
  data: )" + std::to_string(data) +
                           R"(
  virtual_pipeline: )" + std::to_string(virtual_pipeline) +
                           R"(
)" + extra + R"(
cluster:
  gpu: H100-SXM
  num_gpus: )" + std::to_string(tensor * pipeline * data) +
                           R"(
  gpus_per_node: )" + std::to_string(per_node) +
                           R"(
  nics_per_node: )" + std::to_string(per_node) +
                           R"(
  nic_gbps: 400
)";
  return parse_scenario(yaml, "interleaved.yaml");
}

struct Token {
  std::string text;  // "F:c0m1", ">n:m1", "G", "P"
  std::uint32_t first_op = 0;
  std::set<int> layers;         // F/B: the transformer layers it ran
  std::set<std::string> names;  // F/B: op names
};

// Collapses one rank's ops into steps: consecutive forward (backward) compute ops of one micro-batch
// and chunk form one step; pipeline p2p ops, gradient reduce-scatters ("G") and parameter
// all-gathers ("P") are tokens of their own.
std::vector<Token> tokens(const Workload& wl, const RankProgram& prog, const StageLayout& layout, int stage) {
  std::map<int, int> chunk_of;
  for (int c = 0; c < layout.chunks(); ++c)
    for (int l : layout.layers(stage, c)) chunk_of[l] = c;
  std::vector<Token> out;
  char phase = 0;
  int mb = -1, chunk = -1;
  bool open = false;
  auto close = [&] {
    if (open) out.back().text = std::string(1, phase) + ":c" + std::to_string(chunk) + "m" + std::to_string(mb);
    open = false;
  };
  for (std::uint32_t i = 0; i < prog.ops.size(); ++i) {
    const Op& op = prog.ops[i];
    const std::string& name = wl.names[op.name];
    if (op.type == Op::Type::Collective) {
      std::string t;
      if (op.stream == Stream::PpComm || op.stream == Stream::PpCommNext) {
        const std::map<std::string, std::string> dir{
            {"pp.isend_next", ">n"}, {"pp.irecv_prev", "<p"}, {"pp.isend_prev", ">p"}, {"pp.irecv_next", "<n"}};
        t = dir.at(name) + ":m" + std::to_string(op.micro_batch);
      } else if (name == "dp.grad_reduce_scatter") {
        t = "G";
      } else if (name == "dp.param_allgather") {
        t = "P";
      }
      if (!t.empty()) {
        close();
        out.push_back({t, i, {}, {}});
      }
      continue;
    }
    if (op.phase != Phase::Forward && op.phase != Phase::Backward && op.phase != Phase::Recompute) continue;
    const char ph = op.phase == Phase::Forward ? 'F' : 'B';
    const int c = op.layer >= 0 ? chunk_of.at(op.layer) : -1;
    if (!open || ph != phase || op.micro_batch != mb || (c >= 0 && chunk >= 0 && c != chunk)) {
      close();
      out.push_back({"", i, {}, {}});
      open = true;
      phase = ph;
      mb = op.micro_batch;
      chunk = -1;
    }
    if (c >= 0) chunk = c;
    if (op.layer >= 0) out.back().layers.insert(op.layer);
    out.back().names.insert(name);
  }
  close();
  return out;
}

std::string joined(const std::vector<Token>& ts) {
  std::string s;
  for (const auto& t : ts) s += (s.empty() ? "" : " ") + t.text;
  return s;
}

// The token sequence interleaved_program implies for the generator: waits are dependencies, not ops;
// grad/param syncs are one collective per bucket (one bucket per chunk here).
std::string expected_from_schedule(int p, int r, int m, int v) {
  std::string s;
  auto add = [&](const std::string& t) { s += (s.empty() ? "" : " ") + t; };
  for (const auto& e : interleaved_program(p, r, m, v)) {
    switch (e.kind) {
      case InterleavedEvent::Kind::Forward:
      case InterleavedEvent::Kind::Backward:
        add(std::string(e.kind == InterleavedEvent::Kind::Forward ? "F" : "B") + ":c" + std::to_string(e.chunk) + "m" +
            std::to_string(e.micro_batch));
        break;
      case InterleavedEvent::Kind::Post: {
        static const char* kDir[] = {">n", "<p", ">p", "<n"};
        add(std::string(kDir[static_cast<int>(e.direction)]) + ":m" + std::to_string(e.micro_batch));
        break;
      }
      case InterleavedEvent::Kind::GradSync: add("G"); break;
      case InterleavedEvent::Kind::ParamSync: add("P"); break;
      case InterleavedEvent::Kind::Wait: break;
    }
  }
  return s;
}

// p=2, v=2, m=4 (docs/workload.md's example), written out: the forward order c0m0 c0m1 c1m0 c1m1 c0m2 c0m3 c1m2 c1m3
// and backward order c1m0 c1m1 c0m0 c0m1 c1m2 c1m3 c0m2 c0m3 on both ranks, rank 0 four warm-up forwards and
// rank 1 two; activations to the next rank (">n"), gradients to the previous ("<p" / ">p"), with the
// last rank's chunk-0 output going back to rank 0 for chunk 1. "P P" = the parameter all-gathers of
// chunks 0 and 1 dispatched before the first step, "G" = a chunk's gradient reduce-scatter.
TEST(InterleavedWorkload, TwoStagesTwoChunksFourMicroBatchesInMegatronsOrder) {
  const Scenario s = interleaved_scenario(2, 2, 4);
  const Workload wl = generate_workload(s);
  const StageLayout layout(s);
  ASSERT_EQ(wl.ranks.size(), 2u);
  EXPECT_EQ(joined(tokens(wl, wl.ranks[0], layout, 0)),
            "P P F:c0m0 >n:m0 F:c0m1 >n:m1 <p:m0 F:c1m0 >n:m0 <p:m1 F:c1m1 >n:m1 <n:m0 F:c0m2 >n:m2 B:c1m0 >p:m0 "
            "<n:m1 F:c0m3 >n:m3 <p:m2 B:c1m1 >p:m1 <n:m0 F:c1m2 >n:m2 <p:m3 B:c0m0 <n:m1 F:c1m3 >n:m3 B:c0m1 "
            "<n:m2 B:c1m2 >p:m2 <n:m3 B:c1m3 G >p:m3 <n:m2 B:c0m2 <n:m3 B:c0m3 G");
  EXPECT_EQ(joined(tokens(wl, wl.ranks[1], layout, 1)),
            "P P <p:m0 F:c0m0 <p:m1 >n:m0 F:c0m1 <p:m0 >n:m1 F:c1m0 <p:m1 B:c1m0 >p:m0 F:c1m1 <p:m2 B:c1m1 "
            "<n:m0 >p:m1 F:c0m2 <p:m3 >n:m2 B:c0m0 <n:m1 >p:m0 F:c0m3 <p:m2 >n:m3 B:c0m1 >p:m1 F:c1m2 <p:m3 "
            "B:c1m2 >p:m2 F:c1m3 B:c1m3 <n:m2 >p:m3 B:c0m2 G <n:m3 >p:m2 B:c0m3 >p:m3 G");
}

// p=4, v=2, m=8 and p=2, v=4, m=4: the same correspondence with the schedule, whose exact order
// interleaved_schedule_test lists.
TEST(InterleavedWorkload, ProgramsFollowTheScheduleForMoreStagesAndChunks) {
  for (auto [p, v, m] : {std::tuple{4, 2, 8}, std::tuple{2, 4, 4}, std::tuple{2, 2, 8}}) {
    const Scenario s = interleaved_scenario(p, v, m);
    const Workload wl = generate_workload(s);
    const StageLayout layout(s);
    ASSERT_EQ(wl.ranks.size(), static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
      EXPECT_EQ(joined(tokens(wl, wl.ranks[static_cast<std::size_t>(r)], layout, r)),
                expected_from_schedule(p, r, m, v))
          << "p=" << p << " v=" << v << " m=" << m << " rank " << r;
  }
}

// get_transformer_layer_offset: chunk j on pipeline rank r holds layers j*L/v + r*L/(p*v) ...; L=8, p=2, v=2:
// rank 0 runs [0,1] and [4,5], rank 1 [2,3] and [6,7]. The embedding runs only in rank 0's chunk 0, the LM head
// and loss only in the last rank's last chunk (GPTModel._preprocess/_postprocess).
TEST(InterleavedWorkload, EachChunkRunsItsLayersAndOnlyTheEndsRunEmbeddingAndHead) {
  const Scenario s = interleaved_scenario(2, 2, 4);
  const Workload wl = generate_workload(s);
  const StageLayout layout(s);
  const std::map<std::pair<int, int>, std::set<int>> expected{
      {{0, 0}, {0, 1}}, {{0, 1}, {4, 5}}, {{1, 0}, {2, 3}}, {{1, 1}, {6, 7}}};
  for (int r = 0; r < 2; ++r) {
    int steps = 0;
    for (const auto& t : tokens(wl, wl.ranks[static_cast<std::size_t>(r)], layout, r)) {
      if (t.text[0] != 'F' && t.text[0] != 'B') continue;
      ++steps;
      const int chunk = t.text[3] - '0';
      EXPECT_EQ(t.layers, expected.at({r, chunk})) << "rank " << r << " " << t.text;
      const bool embedding = t.names.count("embedding") + t.names.count("embedding.bwd") > 0;
      const bool head = t.names.count("lm_head") + t.names.count("cross_entropy.bwd") > 0;
      EXPECT_EQ(embedding, r == 0 && chunk == 0) << "rank " << r << " " << t.text;
      EXPECT_EQ(head, r == 1 && chunk == 1) << "rank " << r << " " << t.text;
    }
    EXPECT_EQ(steps, 2 * 4 * 2);  // m*v forwards and m*v backwards
  }
}

// Every isend meets an irecv on the peer: on each pipeline pair communicator both members issue the
// same number of calls, the n-th of one side being the complement of the n-th of the other for the
// same micro-batch, so the engine's (group, call number) rendezvous pairs the right tensors. Also
// with every rank simulated (TP 2 x DP 2: each pipeline of the four has its own pairs).
TEST(InterleavedWorkload, SendsAndReceivesPairUpOnEveryPipelinePair) {
  for (bool per_rank : {false, true}) {
    const Scenario s = interleaved_scenario(4, 2, 8, per_rank ? 2 : 1, "", per_rank ? 2 : 1);
    WorkloadOptions o;
    o.per_rank = per_rank;
    const Workload wl = generate_workload(s, o);
    std::map<int, std::size_t> index;
    for (std::size_t i = 0; i < wl.ranks.size(); ++i) index[wl.ranks[i].rank] = i;
    const std::map<std::string, std::string> complement{{"pp.isend_next", "pp.irecv_prev"},
                                                        {"pp.irecv_prev", "pp.isend_next"},
                                                        {"pp.isend_prev", "pp.irecv_next"},
                                                        {"pp.irecv_next", "pp.isend_prev"}};
    int pairs = 0;
    for (std::uint32_t g = 0; g < wl.groups.size(); ++g) {
      const auto& group = wl.groups[g];
      if (group.kind != GroupKind::PP) continue;
      ASSERT_EQ(group.ranks.size(), 2u);
      ASSERT_EQ(group.simulated_members, 2);
      ++pairs;
      std::vector<const Op*> side[2];
      for (int k = 0; k < 2; ++k)
        for (const auto& op : wl.ranks[index.at(group.ranks[static_cast<std::size_t>(k)])].ops)
          if (op.type == Op::Type::Collective && wl.collectives[op.desc].group == g) side[k].push_back(&op);
      ASSERT_EQ(side[0].size(), side[1].size()) << "group " << g;
      ASSERT_FALSE(side[0].empty());
      for (std::size_t n = 0; n < side[0].size(); ++n) {
        EXPECT_EQ(side[0][n]->coll_seq, n);
        EXPECT_EQ(side[1][n]->coll_seq, n);
        EXPECT_EQ(wl.names[side[1][n]->name], complement.at(wl.names[side[0][n]->name]))
            << "group " << g << " call " << n;
        EXPECT_EQ(side[0][n]->micro_batch, side[1][n]->micro_batch) << "group " << g << " call " << n;
      }
    }
    // Ring neighbours (0,1), (1,2), (2,3) and the wrap-around (3,0), per pipeline.
    EXPECT_EQ(pairs, per_rank ? 4 * 4 : 4);
  }
}

// A step's first kernel waits for the receive carrying its input (handle.wait() just before the
// consuming step, schedules.py): forwards on the irecv_prev of their micro-batch (except rank 0's chunk 0),
// backwards on the irecv_next of theirs (except the last rank's last chunk).
TEST(InterleavedWorkload, StepsDependOnTheReceiveOfTheirInput) {
  const int p = 4, v = 2, m = 8;
  const Scenario s = interleaved_scenario(p, v, m);
  const Workload wl = generate_workload(s);
  const StageLayout layout(s);
  for (int r = 0; r < p; ++r) {
    const auto& prog = wl.ranks[static_cast<std::size_t>(r)];
    for (const auto& t : tokens(wl, prog, layout, r)) {
      if (t.text[0] != 'F' && t.text[0] != 'B') continue;
      const bool forward = t.text[0] == 'F';
      const int chunk = t.text[3] - '0';
      const int mb = std::stoi(t.text.substr(5));
      if (forward ? (r == 0 && chunk == 0) : (r == p - 1 && chunk == v - 1)) continue;
      const Op& first = prog.ops[t.first_op];
      bool waits = false;
      for (std::uint32_t k = 0; k < first.num_deps; ++k) {
        const Op& dep = prog.ops[prog.deps[first.first_dep + k]];
        // Transfers with the previous stage run on PpComm, with the next one on PpCommNext.
        waits |= dep.stream == (forward ? Stream::PpComm : Stream::PpCommNext) && dep.micro_batch == mb &&
                 wl.names[dep.name] == (forward ? "pp.irecv_prev" : "pp.irecv_next");
      }
      EXPECT_TRUE(waits) << "rank " << r << " " << t.text;
    }
  }
}

// With overlap_grad_reduce / overlap_param_gather off, nothing is reduced or gathered during the
// schedule: finalize_model_grads reduces every chunk after it and the optimizer step all-gathers
// every chunk (param_and_grad_buffer.py bucket groups) — still once per chunk.
TEST(InterleavedWorkload, WithoutOverlapChunksSyncOnceAfterTheSchedule) {
  const Scenario s = interleaved_scenario(2, 2, 4, 1, "  overlap_grad_reduce: false\n  overlap_param_gather: false\n");
  const Workload wl = generate_workload(s);
  const StageLayout layout(s);
  for (int r = 0; r < 2; ++r) {
    const auto ts = tokens(wl, wl.ranks[static_cast<std::size_t>(r)], layout, r);
    std::size_t last_step = 0;
    for (std::size_t i = 0; i < ts.size(); ++i)
      if (ts[i].text[0] == 'F' || ts[i].text[0] == 'B') last_step = i;
    int grads = 0, params = 0;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      if (ts[i].text == "G" || ts[i].text == "P") { EXPECT_GT(i, last_step) << "rank " << r; }
      grads += ts[i].text == "G";
      params += ts[i].text == "P";
    }
    EXPECT_EQ(grads, 2);
    EXPECT_EQ(params, 2);
  }
}

// Full recompute with recompute_num_layers N (scenario.md: per stage) recomputes N/v layers at the
// start of every chunk, as Megatron's block method does per model chunk (recompute.py checkpointed_forward):
// L=8, p=2, v=2 gives chunks of 2 layers; N=2 re-runs the first layer of each chunk, N=1 only chunk 0's first
// layer, and the default (all) every layer.
TEST(InterleavedWorkload, FullRecomputeSpreadsTheStagesLayersOverItsChunks) {
  // recompute_num_layers -> recomputed layers on rank 0 and rank 1.
  const std::vector<std::pair<std::vector<int>, std::vector<std::set<int>>>> cases{
      {{2}, {{0, 4}, {2, 6}}}, {{1}, {{0}, {2}}}, {{}, {{0, 1, 4, 5}, {2, 3, 6, 7}}}};
  for (const auto& [num_layers, expected] : cases) {
    Scenario s = interleaved_scenario(2, 2, 4);
    s.training.recompute = RecomputeGranularity::Full;
    s.training.recompute_num_layers = num_layers;
    const Workload wl = generate_workload(s);
    for (int r = 0; r < 2; ++r) {
      std::set<int> recomputed;
      for (const auto& op : wl.ranks[static_cast<std::size_t>(r)].ops)
        if (op.type == Op::Type::Compute && op.phase == Phase::Recompute && op.layer >= 0) recomputed.insert(op.layer);
      EXPECT_EQ(recomputed, expected[static_cast<std::size_t>(r)]) << "rank " << r;
    }
  }
}

// Megatron's rules for the interleaved schedule, as ScenarioErrors naming the key.
TEST(InterleavedWorkload, RejectsWhatMegatronRejects) {
  auto key_of = [](const Scenario& s) -> std::string {
    try {
      generate_workload(s);
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find("virtual_pipeline 2"), std::string::npos) << e.what();
      return e.key();
    }
    return "(accepted)";
  };
  // m = 6 micro-batches on 4 stages: not a multiple of the pipeline size.
  const Scenario six = interleaved_scenario(4, 2, 6);
  EXPECT_EQ(key_of(six), "parallelism.virtual_pipeline");
  try {
    generate_workload(six);
  } catch (const ScenarioError& e) {
    EXPECT_NE(e.detail().find("training.global_batch_size 6"), std::string::npos) << e.what();
    EXPECT_NE(e.detail().find("= 6 with pipeline 4"), std::string::npos) << e.what();
  }
  // m = 2 < p = 4.
  EXPECT_EQ(key_of(interleaved_scenario(4, 2, 2)), "parallelism.virtual_pipeline");
  // FSDP has no interleaved schedule.
  EXPECT_EQ(key_of(interleaved_scenario(2, 2, 4, 1, "  framework: fsdp\n  zero_stage: 2\n")),
            "parallelism.virtual_pipeline");
  // The same shapes without interleaving are fine, and m a multiple of p is fine with it.
  EXPECT_NO_THROW(generate_workload(interleaved_scenario(4, 1, 6)));
  EXPECT_NO_THROW(generate_workload(interleaved_scenario(4, 2, 12)));
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// One-way pipeline transfers name their sender (the flow-level network moves their bytes one way);
// batched send-and-receive exchanges do not. Both members of a pair build the same descriptor.
TEST(PipelineSenders, OneWaySendsNameTheirSender) {
  for (int v : {1, 2}) {
    SCOPED_TRACE("virtual_pipeline " + std::to_string(v));
    const Workload wl = generate_workload(interleaved_scenario(2, v, 4));
    int one_way = 0, both = 0;
    for (const auto& prog : wl.ranks)
      for (const Op& op : prog.ops) {
        if (op.type != Op::Type::Collective) continue;
        const std::string& name = wl.names[op.name];
        if (name.rfind("pp.", 0) != 0) continue;
        const CollectiveDesc& d = wl.collectives[op.desc];
        const auto& ranks = wl.groups[d.group].ranks;
        const bool sends = name.find("send") != std::string::npos, receives = name.find("recv") != std::string::npos;
        if (sends && receives) {
          EXPECT_EQ(d.sender, -1) << name;
          ++both;
          continue;
        }
        ASSERT_GE(d.sender, 0) << name;
        ASSERT_LT(d.sender, static_cast<int>(ranks.size()));
        const int sender = ranks[static_cast<std::size_t>(d.sender)];
        if (sends) {
          EXPECT_EQ(sender, prog.rank) << name;
        } else {
          EXPECT_NE(sender, prog.rank) << name;
        }
        ++one_way;
      }
    EXPECT_GT(one_way, 0);
    if (v == 1) {
      EXPECT_GT(both, 0);  // 1F1B's steady state batches a send with a receive
    }
  }
}

}  // namespace
}  // namespace trainsim
