// DeepSpeed ZeRO planning by hand (stage_1_and_2.py, partitioned_param_coordinator.py, stage3.py): the ipg
// bucket rule, the ZeRO-3 coordinator's on-demand gathers, prefetch batches, max_live cap and release /
// reuse-distance rules over small traces, and the module trace of a real layer.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "model/layer_shapes.hpp"
#include "workload/deepspeed_plan.hpp"

namespace trainsim {
namespace {

// ---- greedy_buckets ----

// cap 7 over 3 4 2 6 1: [3 4] = 7 (equal to the cap is allowed), 2 would make 9 -> flush; [2], 6 would make 8 ->
// flush; [6 1] = 7.
TEST(GreedyBuckets, FlushesWhenTheNextTensorWouldOverflow) {
  const auto b = greedy_buckets({3, 4, 2, 6, 1}, 7);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].last, 1);
  EXPECT_DOUBLE_EQ(b[0].elements, 7);
  EXPECT_EQ(b[1].last, 2);
  EXPECT_DOUBLE_EQ(b[1].elements, 2);
  EXPECT_EQ(b[2].last, 4);
  EXPECT_DOUBLE_EQ(b[2].elements, 7);
}

// cap 5 over 2 10 3: 10 > 5 flushes [2] and then sits alone (the bucket is non-empty when 3 arrives: 13 > 5).
// A leading oversize tensor goes into the empty bucket without a flush.
TEST(GreedyBuckets, OversizeTensorEndsUpAlone) {
  const auto b = greedy_buckets({2, 10, 3}, 5);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[1].last, 1);
  EXPECT_DOUBLE_EQ(b[1].elements, 10);
  const auto first = greedy_buckets({10, 1}, 5);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].last, 0);
  EXPECT_DOUBLE_EQ(first[0].elements, 10);
  EXPECT_TRUE(greedy_buckets({}, 5).empty());
  // Everything fits: one bucket.
  const auto one = greedy_buckets({1, 1, 1}, 5e8);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_DOUBLE_EQ(one[0].elements, 3);
}

// ---- plan_zero3 ----

std::vector<TraceVisit> trace_of(const std::vector<int>& modules, double numel) {
  std::vector<TraceVisit> t;
  for (int m : modules) t.push_back({m, numel});
  return t;
}

// Four 10-element modules, forward 0 1 2 3 then backward 3 2 1 0; prefetch bucket 25, reuse distance 1000.
//   visit 0: module 0 on demand (batch 0, 10), wait batch 0; prefetch pops 1 (10), 2 (20), 3 (30 >= 25) -> batch 1
//            = {1,2,3}, 30 elements; module 0 recurs at entry 7 within 1000 elements -> kept.
//   visit 1: waits batch 1 (all three become available); the cursor pops 3,2,1,0 at no cost -> no prefetch;
//            kept (its backward entry 6 was consumed by the cursor).
//   visits 2, 3: no wait, kept. Visits 4..7 (backward): nothing recurs later -> released, no gathers.
// Each module is gathered exactly once: 40 elements in 2 batches.
TEST(PlanZero3, SmallModulesShareOnePrefetchAndStayForBackward) {
  const Zero3Plan p = plan_zero3(trace_of({0, 1, 2, 3, 3, 2, 1, 0}, 10), {25, 1000, 1000});
  ASSERT_EQ(p.batches.size(), 2u);
  EXPECT_EQ(p.batches[0].modules, std::vector<int>({0}));
  EXPECT_FALSE(p.batches[0].prefetch);
  EXPECT_EQ(p.batches[1].modules, std::vector<int>({1, 2, 3}));
  EXPECT_TRUE(p.batches[1].prefetch);
  EXPECT_DOUBLE_EQ(p.batches[1].elements, 30);
  EXPECT_DOUBLE_EQ(p.visits[0].on_demand, 10);
  EXPECT_EQ(p.visits[0].wait_batch, 0);
  EXPECT_EQ(p.visits[0].prefetch_batch, 1);
  EXPECT_DOUBLE_EQ(p.visits[0].prefetch, 30);
  EXPECT_EQ(p.visits[1].wait_batch, 1);
  EXPECT_EQ(p.visits[1].prefetch_batch, -1);
  for (int i : {2, 3, 4, 5, 6, 7}) EXPECT_EQ(p.visits[static_cast<std::size_t>(i)].wait_batch, -1) << i;
  for (int i : {0, 1, 2, 3}) EXPECT_FALSE(p.visits[static_cast<std::size_t>(i)].released) << i;
  for (int i : {4, 5, 6, 7}) EXPECT_TRUE(p.visits[static_cast<std::size_t>(i)].released) << i;
  EXPECT_DOUBLE_EQ(p.gathered(), 40);
}

// Four 100-element modules, forward only, prefetch bucket 25, reuse distance 0: each prefetch pops one module
// (100 >= 25 at once), so module k+1 is prefetched at visit k; everything is released after use.
TEST(PlanZero3, BigModulesPrefetchOneAhead) {
  const Zero3Plan p = plan_zero3(trace_of({0, 1, 2, 3}, 100), {25, 1000, 0});
  ASSERT_EQ(p.batches.size(), 4u);
  for (int k = 0; k < 4; ++k) {
    const auto i = static_cast<std::size_t>(k);
    EXPECT_EQ(p.batches[i].modules, std::vector<int>({k}));
    EXPECT_EQ(p.batches[i].prefetch, k > 0);
    EXPECT_EQ(p.visits[i].wait_batch, k);
    EXPECT_EQ(p.visits[i].prefetch_batch, k < 3 ? k + 1 : -1);
    EXPECT_DOUBLE_EQ(p.visits[i].on_demand, k == 0 ? 100 : 0);
    EXPECT_TRUE(p.visits[i].released);
  }
}

// max_live caps the look-ahead (not the on-demand fetch). Four 100-element modules, prefetch bucket 1000, reuse 0.
// max_live 100: at visit k only module k is live (100), budget min(100 - 100, 1000) = 0 -> never a prefetch, every
// module on demand.
// max_live 250: visit 0: on demand {0} (live 100); budget min(150, 1000): pops 1 (100 < 150), 2 (200) -> batch {1,2}
//   (live 300); release 0 (200). Visit 1: waits batch 1 (2 completes too); budget min(50, 1000): pops 3 -> batch {3}
//   (300); release 1 (200). Visit 2: already available -> no wait; release (100). Visit 3: waits batch 2.
TEST(PlanZero3, MaxLiveParametersStopsThePrefetch) {
  const Zero3Plan none = plan_zero3(trace_of({0, 1, 2, 3}, 100), {1000, 100, 0});
  ASSERT_EQ(none.batches.size(), 4u);
  for (const Zero3Visit& v : none.visits) {
    EXPECT_DOUBLE_EQ(v.on_demand, 100);
    EXPECT_EQ(v.prefetch_batch, -1);
  }
  const Zero3Plan some = plan_zero3(trace_of({0, 1, 2, 3}, 100), {1000, 250, 0});
  ASSERT_EQ(some.batches.size(), 3u);
  EXPECT_EQ(some.batches[1].modules, std::vector<int>({1, 2}));
  EXPECT_EQ(some.batches[2].modules, std::vector<int>({3}));
  EXPECT_EQ(some.visits[1].wait_batch, 1);
  EXPECT_EQ(some.visits[1].prefetch_batch, 2);
  EXPECT_EQ(some.visits[2].wait_batch, -1);  // its batch completed when module 1 waited for it
  EXPECT_EQ(some.visits[3].wait_batch, 2);
  EXPECT_DOUBLE_EQ(some.gathered(), 400);
}

// Three 100-element modules, forward 0 1 2, backward 2 1 0, prefetch bucket 50 (one module per visit).
// Reuse distance 250: after visit 0 the scan sees 1 (100), 2 (200), 2 (300 >= 250 stops) -> 0 released; module 1
// recurs at entry 4 after 200 elements -> kept; module 2's backward entry was consumed by visit 2's prefetch
// cursor -> kept. Visit 2 prefetches module 0 for the end of backward. Backward regathers only module 0:
// 300 forward + 100 backward.
// Reuse distance 0: module 1 is released too and regathered (prefetched at visit 2); module 2 is still kept by
// the cursor rule: 300 + 200.
TEST(PlanZero3, ReuseDistanceKeepsTheLastForwardModulesForBackward) {
  const auto trace = trace_of({0, 1, 2, 2, 1, 0}, 100);
  const Zero3Plan kept = plan_zero3(trace, {50, 1000, 250});
  EXPECT_TRUE(kept.visits[0].released);
  EXPECT_FALSE(kept.visits[1].released);
  EXPECT_FALSE(kept.visits[2].released);
  EXPECT_EQ(kept.visits[2].prefetch_batch, 3);
  EXPECT_EQ(kept.batches[3].modules, std::vector<int>({0}));
  EXPECT_EQ(kept.visits[3].wait_batch, -1);
  EXPECT_EQ(kept.visits[4].wait_batch, -1);
  EXPECT_EQ(kept.visits[5].wait_batch, 3);
  EXPECT_DOUBLE_EQ(kept.gathered(), 400);

  const Zero3Plan textbook = plan_zero3(trace, {50, 1000, 0});
  EXPECT_TRUE(textbook.visits[1].released);
  EXPECT_FALSE(textbook.visits[2].released);
  ASSERT_EQ(textbook.batches.size(), 5u);
  EXPECT_EQ(textbook.batches[3].modules, std::vector<int>({1}));
  EXPECT_EQ(textbook.batches[4].modules, std::vector<int>({0}));
  EXPECT_DOUBLE_EQ(textbook.gathered(), 500);
}

// Two layers of one 100-element module each (A = 0, B = 1), full recompute: forward A B, backward [B recompute,
// B], [A recompute, A]; prefetch bucket 50. Reuse distance 150: after visit 0 the scan sees B (100), B (200 >= 150
// stops) -> A released and regathered for its recompute (prefetched at visit 1). Reuse distance 1000: A is found
// at entry 4 -> kept, nothing regathered.
TEST(PlanZero3, RecomputeRegathersWhenTheReuseDistanceIsExceeded) {
  const auto trace = trace_of({0, 1, 1, 1, 0, 0}, 100);
  const Zero3Plan far = plan_zero3(trace, {50, 1000, 150});
  EXPECT_TRUE(far.visits[0].released);
  ASSERT_EQ(far.batches.size(), 3u);
  EXPECT_EQ(far.batches[2].modules, std::vector<int>({0}));
  EXPECT_EQ(far.batches[2].visit, 1);
  EXPECT_EQ(far.visits[4].wait_batch, 2);
  EXPECT_DOUBLE_EQ(far.gathered(), 300);
  const Zero3Plan near = plan_zero3(trace, {50, 1000, 1000});
  EXPECT_FALSE(near.visits[0].released);
  EXPECT_DOUBLE_EQ(near.gathered(), 200);
}

// A module of only persistent parameters (numel 0) is never fetched, waited for or released, but its entries
// still move the cursor.
TEST(PlanZero3, PersistentOnlyModulesFetchNothing) {
  const Zero3Plan p = plan_zero3({{0, 100}, {1, 0}, {2, 100}}, {50, 1000, 0});
  EXPECT_EQ(p.visits[1].wait_batch, -1);
  EXPECT_DOUBLE_EQ(p.visits[1].on_demand, 0);
  EXPECT_FALSE(p.visits[1].released);
  // Visit 0's prefetch skipped module 1 and took module 2.
  EXPECT_EQ(p.batches[1].modules, std::vector<int>({2}));
  EXPECT_DOUBLE_EQ(p.gathered(), 200);
  EXPECT_THROW(plan_zero3({{0, 10}, {0, 20}}, {}), Error);
}

// ---- the parameters of a rank and their trace ----

ModelSpec gpt2(bool untie) {
  ModelSpec m;
  m.family = "gpt";
  m.num_layers = 2;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_query_groups = 16;
  m.ffn_hidden_size = 4096;
  m.vocab_size = 1024;
  m.seq_length = 1024;
  m.untie_embeddings = untie;
  return m;
}

// GPT layer with biases and LayerNorms: six modules of two tensors; the rank adds embedding, position embedding,
// final norm (and an untied LM head). Per TP rank (t 2): qkv 1024 x 3072 / 2, its bias 3072 / 2; proj bias 1024 stays.
TEST(DeepSpeedParams, ModulesOfAGptRank) {
  const DsParams p = rank_params(gpt2(true), 2, {0, 1}, true, true, true);
  ASSERT_EQ(p.modules.size(), 2u + 12u + 2u);
  EXPECT_EQ(p.modules[0].name, "embedding");
  EXPECT_EQ(p.modules[1].name, "position_embedding");
  EXPECT_EQ(p.modules[3].name, "qkv");
  EXPECT_EQ(p.modules[3].layer, 0);
  ASSERT_EQ(p.modules[3].tensors.size(), 2u);
  EXPECT_DOUBLE_EQ(p.tensors[static_cast<std::size_t>(p.modules[3].tensors[0])].numel, 1024.0 * 3072 / 2);
  EXPECT_DOUBLE_EQ(p.tensors[static_cast<std::size_t>(p.modules[3].tensors[1])].numel, 3072.0 / 2);
  const int proj = p.module_of(0, "proj");
  EXPECT_DOUBLE_EQ(p.tensors[static_cast<std::size_t>(p.modules[static_cast<std::size_t>(proj)].tensors[1])].numel,
                   1024);
  EXPECT_EQ(p.modules.back().name, "lm_head");
  EXPECT_EQ(p.module_of(1, "attention"), -1);
  // Everything on the rank: 2 x (embedding 1024 x 1024 / 2) + position 1024 x 1024 + final norm 2048 + 2 layers of
  // (12h^2 + 7h)/2 sharded-ish: sum of the layer tensors per TP rank = tp_sharded / 2 + replicated.
  const LayerParams lp = layer_params(gpt2(true), 0);
  EXPECT_DOUBLE_EQ(p.total(), 2 * 1024.0 * 1024 / 2 + 1024.0 * 1024 + 2048 + 2 * (lp.tp_sharded / 2 + lp.replicated));
}

// Tied embeddings, layer 1 recomputed: forward emb pos [L0 x6] [L1 x6] norm emb; backward emb norm, L1's six
// forward again then reversed, L0 reversed, pos, emb. 2 + 12 + 2 + 2 + 12 + 6 + 2 = 38 visits.
TEST(DeepSpeedParams, Zero3VisitOrder) {
  const DsParams p = rank_params(gpt2(false), 1, {0, 1}, true, true, false);
  const auto v = zero3_visits(p, {false, true});
  ASSERT_EQ(v.size(), 38u);
  const int emb = p.module_of(-1, "embedding"), norm = p.module_of(-1, "final_norm");
  EXPECT_EQ(v[0].module, emb);
  EXPECT_EQ(v[14].module, norm);
  EXPECT_EQ(v[15].module, emb);  // the tied LM head
  EXPECT_FALSE(v[15].backward);
  EXPECT_EQ(v[16].module, emb);
  EXPECT_TRUE(v[16].backward);
  EXPECT_EQ(v[18].module, p.module_of(1, "input_norm"));  // layer 1 recomputed
  EXPECT_FALSE(v[18].backward);
  EXPECT_EQ(v[24].module, p.module_of(1, "fc2"));
  EXPECT_TRUE(v[24].backward);
  EXPECT_EQ(v[30].module, p.module_of(0, "fc2"));  // layer 0: not recomputed
  EXPECT_TRUE(v[30].backward);
  EXPECT_EQ(v[37].module, emb);
  EXPECT_THROW(zero3_visits(p, {true}), Error);
}

// Persistence threshold 1e5: with h 1024 the norms and biases (<= 4096 elements) are persistent, so the norm
// modules have nothing to fetch and qkv fetches only its weight (1024 x 3072).
TEST(DeepSpeedParams, TraceLeavesOutPersistentTensors) {
  const DsParams p = rank_params(gpt2(false), 1, {0, 1}, true, true, false);
  const auto visits = zero3_visits(p, {false, false});
  const auto trace = zero3_trace(p, visits, 1e5);
  ASSERT_EQ(trace.size(), visits.size());
  EXPECT_DOUBLE_EQ(trace[2].numel, 0);              // layer 0 input_norm
  EXPECT_DOUBLE_EQ(trace[3].numel, 1024.0 * 3072);  // layer 0 qkv weight only
  EXPECT_DOUBLE_EQ(trace[14].numel, 0);             // final norm
  EXPECT_TRUE(persistent({0, 1e5, true}, 1e5));
  EXPECT_FALSE(persistent({0, 1e5 + 1, true}, 1e5));
}

}  // namespace
}  // namespace trainsim
