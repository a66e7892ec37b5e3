// The interleaved 1F1B schedule event by event: Megatron-Core's order of forward/backward steps,
// isend/irecv posts and handle waits (schedules.py::forward_backward_pipelining_with_interleaving,
// p2p_communication.py::_p2p_ops), the aligned per-chunk grad/param syncs (param_and_grad_buffer.py), pairing
// of transfers across ranks, and the bubble.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "workload/interleaved_schedule.hpp"
#include "workload/pipeline_schedule.hpp"

using namespace trainsim;

namespace {

using Kind = InterleavedEvent::Kind;

std::string event_order(const std::vector<InterleavedEvent>& program) {
  std::string s;
  for (const auto& e : program) s += (s.empty() ? "" : " ") + to_string(e, program);
  return s;
}

bool is_send(P2PDirection d) { return d == P2PDirection::SendNext || d == P2PDirection::SendPrev; }

// The chunk on the receiving rank of a tensor `chunk` on `rank` sends (the pipeline ring): forward
// from the last rank goes to rank 0's next chunk, backward from rank 0 to the last rank's previous chunk.
int receiving_chunk(int p, int rank, const InterleavedEvent& send) {
  if (send.direction == P2PDirection::SendNext) return rank == p - 1 ? send.chunk + 1 : send.chunk;
  return rank == 0 ? send.chunk - 1 : send.chunk;
}

}  // namespace

// Worked example (docs/workload.md), p=2, v=2, m=4, N=2. Forward order on both ranks c0m0 c0m1 c1m0 c1m1 c0m2 c0m3
// c1m2 c1m3; rank 0 has 4 warm-up steps, rank 1 has 2. Warm-up transfers are blocking (every post is
// waited for at once), the steady state posts asynchronously and waits each receive right before the
// step that consumes it; activation sends are waited for at once (deallocate_pipeline_outputs),
// gradient sends one step later. Even ranks post send-next before recv-prev, odd ranks the reverse.
// P:cX = param all-gather of chunk X (chunks 0 and 1 at the start); G:cX = grad reduction of chunk X
// (rank 0 right after the chunk's last backward, rank 1 one step later, chunk 0 after the cool-down).
TEST(InterleavedSchedule, TwoStagesTwoChunksFourMicroBatchesMatchesMegatron) {
  EXPECT_EQ(event_order(interleaved_program(2, 0, 4, 2)),
            "P:c0 P:c1 F:c0m0 >n:c0m0 w>n:c0m0 F:c0m1 >n:c0m1 <p:c1m0 w>n:c0m1 w<p:c1m0 F:c1m0 >n:c1m0 <p:c1m1 "
            "w>n:c1m0 w<p:c1m1 F:c1m1 >n:c1m1 w>n:c1m1 <n:c1m0 F:c0m2 >n:c0m2 w>n:c0m2 w<n:c1m0 B:c1m0 >p:c1m0 "
            "<n:c1m1 F:c0m3 >n:c0m3 <p:c1m2 w>n:c0m3 w<n:c1m1 B:c1m1 >p:c1m1 <n:c0m0 w>p:c1m0 w<p:c1m2 F:c1m2 "
            ">n:c1m2 <p:c1m3 w>n:c1m2 w<n:c0m0 B:c0m0 <n:c0m1 w>p:c1m1 w<p:c1m3 F:c1m3 >n:c1m3 w>n:c1m3 w<n:c0m1 "
            "B:c0m1 <n:c1m2 w<n:c1m2 B:c1m2 >p:c1m2 <n:c1m3 w>p:c1m2 w<n:c1m3 B:c1m3 G:c1 >p:c1m3 <n:c0m2 w>p:c1m3 "
            "w<n:c0m2 B:c0m2 <n:c0m3 w<n:c0m3 B:c0m3 G:c0");
  EXPECT_EQ(event_order(interleaved_program(2, 1, 4, 2)),
            "P:c0 P:c1 <p:c0m0 w<p:c0m0 F:c0m0 <p:c0m1 >n:c0m0 w<p:c0m1 w>n:c0m0 F:c0m1 <p:c1m0 >n:c0m1 w<p:c1m0 "
            "w>n:c0m1 F:c1m0 <p:c1m1 B:c1m0 >p:c1m0 w<p:c1m1 F:c1m1 <p:c0m2 B:c1m1 <n:c0m0 >p:c1m1 w>p:c1m0 w<p:c0m2 "
            "F:c0m2 <p:c0m3 >n:c0m2 w>n:c0m2 w<n:c0m0 B:c0m0 <n:c0m1 >p:c0m0 w>p:c1m1 w<p:c0m3 F:c0m3 <p:c1m2 "
            ">n:c0m3 w>n:c0m3 w<n:c0m1 B:c0m1 >p:c0m1 w>p:c0m0 w<p:c1m2 F:c1m2 <p:c1m3 B:c1m2 >p:c1m2 w>p:c0m1 "
            "w<p:c1m3 F:c1m3 B:c1m3 <n:c0m2 >p:c1m3 w>p:c1m2 w<n:c0m2 B:c0m2 G:c1 <n:c0m3 >p:c0m2 w<n:c0m3 w>p:c0m2 "
            "B:c0m3 >p:c0m3 w>p:c0m3 w>p:c1m3 G:c0");
}

// p=4, v=2, m=8 (N=4): warm-up 10, 8, 6, 4 steps. The last rank's chunk-0 outputs go to rank 0's
// chunk 1 (">n:c0m*" on rank 3 pairs with "<p:c1m*" on rank 0), and rank 0's chunk-1 gradients go back
// to rank 3's chunk 0.
TEST(InterleavedSchedule, FourStagesTwoChunksEightMicroBatchesMatchesMegatron) {
  EXPECT_EQ(event_order(interleaved_program(4, 0, 8, 2)),
            "P:c0 P:c1 F:c0m0 >n:c0m0 w>n:c0m0 F:c0m1 >n:c0m1 w>n:c0m1 F:c0m2 >n:c0m2 w>n:c0m2 F:c0m3 >n:c0m3 "
            "<p:c1m0 w>n:c0m3 w<p:c1m0 F:c1m0 >n:c1m0 <p:c1m1 w>n:c1m0 w<p:c1m1 F:c1m1 >n:c1m1 <p:c1m2 w>n:c1m1 "
            "w<p:c1m2 F:c1m2 >n:c1m2 <p:c1m3 w>n:c1m2 w<p:c1m3 F:c1m3 >n:c1m3 w>n:c1m3 F:c0m4 >n:c0m4 w>n:c0m4 "
            "F:c0m5 >n:c0m5 w>n:c0m5 <n:c1m0 F:c0m6 >n:c0m6 w>n:c0m6 w<n:c1m0 B:c1m0 >p:c1m0 <n:c1m1 F:c0m7 >n:c0m7 "
            "<p:c1m4 w>n:c0m7 w<n:c1m1 B:c1m1 >p:c1m1 <n:c1m2 w>p:c1m0 w<p:c1m4 F:c1m4 >n:c1m4 <p:c1m5 w>n:c1m4 "
            "w<n:c1m2 B:c1m2 >p:c1m2 <n:c1m3 w>p:c1m1 w<p:c1m5 F:c1m5 >n:c1m5 <p:c1m6 w>n:c1m5 w<n:c1m3 B:c1m3 "
            ">p:c1m3 <n:c0m0 w>p:c1m2 w<p:c1m6 F:c1m6 >n:c1m6 <p:c1m7 w>n:c1m6 w<n:c0m0 B:c0m0 <n:c0m1 w>p:c1m3 "
            "w<p:c1m7 F:c1m7 >n:c1m7 w>n:c1m7 w<n:c0m1 B:c0m1 <n:c0m2 w<n:c0m2 B:c0m2 <n:c0m3 w<n:c0m3 B:c0m3 "
            "<n:c1m4 w<n:c1m4 B:c1m4 >p:c1m4 <n:c1m5 w>p:c1m4 w<n:c1m5 B:c1m5 >p:c1m5 <n:c1m6 w>p:c1m5 w<n:c1m6 "
            "B:c1m6 >p:c1m6 <n:c1m7 w>p:c1m6 w<n:c1m7 B:c1m7 G:c1 >p:c1m7 <n:c0m4 w>p:c1m7 w<n:c0m4 B:c0m4 <n:c0m5 "
            "w<n:c0m5 B:c0m5 <n:c0m6 w<n:c0m6 B:c0m6 <n:c0m7 w<n:c0m7 B:c0m7 G:c0");
  EXPECT_EQ(event_order(interleaved_program(4, 1, 8, 2)),
            "P:c0 P:c1 <p:c0m0 w<p:c0m0 F:c0m0 <p:c0m1 >n:c0m0 w<p:c0m1 w>n:c0m0 F:c0m1 <p:c0m2 >n:c0m1 w<p:c0m2 "
            "w>n:c0m1 F:c0m2 <p:c0m3 >n:c0m2 w<p:c0m3 w>n:c0m2 F:c0m3 <p:c1m0 >n:c0m3 w<p:c1m0 w>n:c0m3 F:c1m0 "
            "<p:c1m1 >n:c1m0 w<p:c1m1 w>n:c1m0 F:c1m1 <p:c1m2 >n:c1m1 w<p:c1m2 w>n:c1m1 F:c1m2 <p:c1m3 >n:c1m2 "
            "w<p:c1m3 w>n:c1m2 F:c1m3 <p:c0m4 >n:c1m3 w<p:c0m4 w>n:c1m3 <n:c1m0 F:c0m4 <p:c0m5 >n:c0m4 w>n:c0m4 "
            "w<n:c1m0 B:c1m0 <n:c1m1 >p:c1m0 w<p:c0m5 F:c0m5 <p:c0m6 >n:c0m5 w>n:c0m5 w<n:c1m1 B:c1m1 <n:c1m2 "
            ">p:c1m1 w>p:c1m0 w<p:c0m6 F:c0m6 <p:c0m7 >n:c0m6 w>n:c0m6 w<n:c1m2 B:c1m2 <n:c1m3 >p:c1m2 w>p:c1m1 "
            "w<p:c0m7 F:c0m7 <p:c1m4 >n:c0m7 w>n:c0m7 w<n:c1m3 B:c1m3 <n:c0m0 >p:c1m3 w>p:c1m2 w<p:c1m4 F:c1m4 "
            "<p:c1m5 >n:c1m4 w>n:c1m4 w<n:c0m0 B:c0m0 <n:c0m1 >p:c0m0 w>p:c1m3 w<p:c1m5 F:c1m5 <p:c1m6 >n:c1m5 "
            "w>n:c1m5 w<n:c0m1 B:c0m1 <n:c0m2 >p:c0m1 w>p:c0m0 w<p:c1m6 F:c1m6 <p:c1m7 >n:c1m6 w>n:c1m6 w<n:c0m2 "
            "B:c0m2 <n:c0m3 >p:c0m2 w>p:c0m1 w<p:c1m7 F:c1m7 >n:c1m7 w>n:c1m7 w<n:c0m3 B:c0m3 <n:c1m4 >p:c0m3 "
            "w>p:c0m2 w<n:c1m4 B:c1m4 <n:c1m5 >p:c1m4 w<n:c1m5 w>p:c1m4 B:c1m5 <n:c1m6 >p:c1m5 w<n:c1m6 w>p:c1m5 "
            "B:c1m6 <n:c1m7 >p:c1m6 w<n:c1m7 w>p:c1m6 B:c1m7 <n:c0m4 >p:c1m7 w<n:c0m4 w>p:c1m7 B:c0m4 G:c1 <n:c0m5 "
            ">p:c0m4 w<n:c0m5 w>p:c0m4 B:c0m5 <n:c0m6 >p:c0m5 w<n:c0m6 w>p:c0m5 B:c0m6 <n:c0m7 >p:c0m6 w<n:c0m7 "
            "w>p:c0m6 B:c0m7 >p:c0m7 w>p:c0m7 w>p:c0m3 G:c0");
  EXPECT_EQ(event_order(interleaved_program(4, 2, 8, 2)),
            "P:c0 P:c1 <p:c0m0 w<p:c0m0 F:c0m0 >n:c0m0 <p:c0m1 w>n:c0m0 w<p:c0m1 F:c0m1 >n:c0m1 <p:c0m2 w>n:c0m1 "
            "w<p:c0m2 F:c0m2 >n:c0m2 <p:c0m3 w>n:c0m2 w<p:c0m3 F:c0m3 >n:c0m3 <p:c1m0 w>n:c0m3 w<p:c1m0 F:c1m0 "
            ">n:c1m0 <p:c1m1 w>n:c1m0 w<p:c1m1 F:c1m1 >n:c1m1 <p:c1m2 w>n:c1m1 w<p:c1m2 <n:c1m0 F:c1m2 >n:c1m2 "
            "<p:c1m3 w>n:c1m2 w<n:c1m0 B:c1m0 >p:c1m0 <n:c1m1 w<p:c1m3 F:c1m3 >n:c1m3 <p:c0m4 w>n:c1m3 w<n:c1m1 "
            "B:c1m1 >p:c1m1 <n:c1m2 w>p:c1m0 w<p:c0m4 F:c0m4 >n:c0m4 <p:c0m5 w>n:c0m4 w<n:c1m2 B:c1m2 >p:c1m2 "
            "<n:c1m3 w>p:c1m1 w<p:c0m5 F:c0m5 >n:c0m5 <p:c0m6 w>n:c0m5 w<n:c1m3 B:c1m3 >p:c1m3 <n:c0m0 w>p:c1m2 "
            "w<p:c0m6 F:c0m6 >n:c0m6 <p:c0m7 w>n:c0m6 w<n:c0m0 B:c0m0 >p:c0m0 <n:c0m1 w>p:c1m3 w<p:c0m7 F:c0m7 "
            ">n:c0m7 <p:c1m4 w>n:c0m7 w<n:c0m1 B:c0m1 >p:c0m1 <n:c0m2 w>p:c0m0 w<p:c1m4 F:c1m4 >n:c1m4 <p:c1m5 "
            "w>n:c1m4 w<n:c0m2 B:c0m2 >p:c0m2 <n:c0m3 w>p:c0m1 w<p:c1m5 F:c1m5 >n:c1m5 <p:c1m6 w>n:c1m5 w<n:c0m3 "
            "B:c0m3 >p:c0m3 <n:c1m4 w>p:c0m2 w<p:c1m6 F:c1m6 >n:c1m6 <p:c1m7 w>n:c1m6 w<n:c1m4 B:c1m4 >p:c1m4 "
            "<n:c1m5 w>p:c0m3 w<p:c1m7 F:c1m7 >n:c1m7 w>n:c1m7 w<n:c1m5 B:c1m5 >p:c1m5 <n:c1m6 w>p:c1m4 w<n:c1m6 "
            "B:c1m6 >p:c1m6 <n:c1m7 w>p:c1m6 w<n:c1m7 B:c1m7 >p:c1m7 <n:c0m4 w>p:c1m7 w<n:c0m4 B:c0m4 >p:c0m4 "
            "<n:c0m5 w>p:c0m4 w<n:c0m5 B:c0m5 G:c1 >p:c0m5 <n:c0m6 w>p:c0m5 w<n:c0m6 B:c0m6 >p:c0m6 <n:c0m7 w>p:c0m6 "
            "w<n:c0m7 B:c0m7 >p:c0m7 w>p:c0m7 w>p:c1m5 G:c0");
  EXPECT_EQ(event_order(interleaved_program(4, 3, 8, 2)),
            "P:c0 P:c1 <p:c0m0 w<p:c0m0 F:c0m0 <p:c0m1 >n:c0m0 w<p:c0m1 w>n:c0m0 F:c0m1 <p:c0m2 >n:c0m1 w<p:c0m2 "
            "w>n:c0m1 F:c0m2 <p:c0m3 >n:c0m2 w<p:c0m3 w>n:c0m2 F:c0m3 <p:c1m0 >n:c0m3 w<p:c1m0 w>n:c0m3 F:c1m0 "
            "<p:c1m1 B:c1m0 >p:c1m0 w<p:c1m1 F:c1m1 <p:c1m2 B:c1m1 >p:c1m1 w>p:c1m0 w<p:c1m2 F:c1m2 <p:c1m3 B:c1m2 "
            ">p:c1m2 w>p:c1m1 w<p:c1m3 F:c1m3 <p:c0m4 B:c1m3 <n:c0m0 >p:c1m3 w>p:c1m2 w<p:c0m4 F:c0m4 <p:c0m5 "
            ">n:c0m4 w>n:c0m4 w<n:c0m0 B:c0m0 <n:c0m1 >p:c0m0 w>p:c1m3 w<p:c0m5 F:c0m5 <p:c0m6 >n:c0m5 w>n:c0m5 "
            "w<n:c0m1 B:c0m1 <n:c0m2 >p:c0m1 w>p:c0m0 w<p:c0m6 F:c0m6 <p:c0m7 >n:c0m6 w>n:c0m6 w<n:c0m2 B:c0m2 "
            "<n:c0m3 >p:c0m2 w>p:c0m1 w<p:c0m7 F:c0m7 <p:c1m4 >n:c0m7 w>n:c0m7 w<n:c0m3 B:c0m3 >p:c0m3 w>p:c0m2 "
            "w<p:c1m4 F:c1m4 <p:c1m5 B:c1m4 >p:c1m4 w>p:c0m3 w<p:c1m5 F:c1m5 <p:c1m6 B:c1m5 >p:c1m5 w>p:c1m4 "
            "w<p:c1m6 F:c1m6 <p:c1m7 B:c1m6 >p:c1m6 w>p:c1m5 w<p:c1m7 F:c1m7 B:c1m7 <n:c0m4 >p:c1m7 w>p:c1m6 "
            "w<n:c0m4 B:c0m4 <n:c0m5 >p:c0m4 w<n:c0m5 w>p:c0m4 B:c0m5 <n:c0m6 >p:c0m5 w<n:c0m6 w>p:c0m5 B:c0m6 G:c1 "
            "<n:c0m7 >p:c0m6 w<n:c0m7 w>p:c0m6 B:c0m7 >p:c0m7 w>p:c0m7 w>p:c1m7 G:c0");
}

// The forward/backward order is the schedule table of pipeline_schedule (one source of truth for
// get_schedule_table and the warm-up count (p - r - 1) * 2 + (v - 1) * p, capped at m * v).
TEST(InterleavedSchedule, StepOrderAndWarmupMatchThePipelineSchedule) {
  for (int p : {2, 3, 4, 8})
    for (int v : {2, 3, 4})
      for (int m : {p, 2 * p, 3 * p})
        for (int r = 0; r < p; ++r) {
          const auto program = interleaved_program(p, r, m, v);
          std::vector<PipelineStep> steps;
          int forwards_before_first_backward = -1;
          for (const auto& e : program) {
            if (e.kind == Kind::Backward && forwards_before_first_backward < 0)
              forwards_before_first_backward = static_cast<int>(steps.size());
            if (e.kind == Kind::Forward) steps.push_back({PipelineAction::Forward, e.micro_batch, e.chunk});
            if (e.kind == Kind::Backward) steps.push_back({PipelineAction::Backward, e.micro_batch, e.chunk});
          }
          const auto expected = pipeline_schedule(ScheduleKind::Interleaved, p, r, m, v);
          ASSERT_EQ(steps.size(), expected.size());
          for (std::size_t i = 0; i < steps.size(); ++i)
            EXPECT_EQ(to_string(steps[i]), to_string(expected[i]))
                << "p=" << p << " v=" << v << " m=" << m << " r=" << r;
          // In warm-up the forwards run back to back; 1F1B starts after min(warm-up, m*v) of them
          // (the first backward comes after warm-up + 1 forwards unless everything is warm-up).
          const int warmup = std::min((p - r - 1) * 2 + (v - 1) * p, m * v);
          EXPECT_EQ(forwards_before_first_backward, warmup == m * v ? m * v : warmup + 1)
              << "p=" << p << " v=" << v << " m=" << m << " r=" << r;
        }
}

// Every isend has exactly one irecv on the peer, for the same tensor (chunk on the pipeline ring and
// micro-batch), and each pair of ranks issues its transfers in the same order on both sides: the
// engine matches the n-th call of a pair's communicator, as NCCL matches a pair's sends and receives.
TEST(InterleavedSchedule, SendsAndReceivesPairUpAcrossRanksInTheSameOrder) {
  for (int p : {2, 3, 4, 5, 8})
    for (int v : {2, 3, 4})
      for (int m : {p, 2 * p, 4 * p}) {
        std::vector<std::vector<InterleavedEvent>> programs;
        for (int r = 0; r < p; ++r) programs.push_back(interleaved_program(p, r, m, v));
        for (int a = 0; a < p; ++a)
          for (int b = a + 1; b < p; ++b) {
            // The pair's transfers as (sender, receiver chunk, micro-batch), in each side's order.
            auto transfers = [&](int self, int other) {
              std::vector<std::string> out;
              for (const auto& e : programs[static_cast<std::size_t>(self)]) {
                if (e.kind != Kind::Post || e.peer != other) continue;
                const int sender = is_send(e.direction) ? self : other;
                const int chunk = is_send(e.direction) ? receiving_chunk(p, self, e) : e.chunk;
                const bool forward = e.direction == P2PDirection::SendNext || e.direction == P2PDirection::RecvPrev;
                out.push_back(std::to_string(sender) + (forward ? "F" : "B") + "c" + std::to_string(chunk) + "m" +
                              std::to_string(e.micro_batch));
              }
              return out;
            };
            const auto from_a = transfers(a, b);
            EXPECT_EQ(from_a, transfers(b, a)) << "p=" << p << " v=" << v << " m=" << m << " pair " << a << "," << b;
            const bool neighbours = b == a + 1 || (a == 0 && b == p - 1);
            // Between ring neighbours: every micro-batch of every chunk boundary crosses once per
            // direction; others never talk.
            if (!neighbours) { EXPECT_TRUE(from_a.empty()); }
          }
        std::size_t sends = 0;
        for (const auto& prog : programs)
          for (const auto& e : prog) sends += e.kind == Kind::Post && is_send(e.direction) ? 1 : 0;
        // p*v virtual stages -> p*v - 1 boundaries, each crossed by m activations and m gradients.
        EXPECT_EQ(sends, static_cast<std::size_t>(2 * (p * v - 1) * m)) << "p=" << p << " v=" << v << " m=" << m;
      }
}

// What makes the overlap safe: a step waits for the receive that carries its own input (activation
// for a forward, gradient for a backward) before it runs, and every posted transfer is waited for.
TEST(InterleavedSchedule, EveryStepWaitsForItsOwnInputAndEveryHandleIsWaited) {
  for (int p : {2, 3, 4, 8})
    for (int v : {2, 3, 5})
      for (int m : {p, 2 * p, 3 * p})
        for (int r = 0; r < p; ++r) {
          const auto program = interleaved_program(p, r, m, v);
          std::map<int, const InterleavedEvent*> posts;
          std::map<int, int> waits;
          std::map<std::string, bool> received;  // "F c m" / "B c m" inputs waited for so far
          for (const auto& e : program) {
            const std::string cm = "c" + std::to_string(e.chunk) + "m" + std::to_string(e.micro_batch);
            if (e.kind == Kind::Post) posts[e.handle] = &e;
            if (e.kind == Kind::Wait) {
              ++waits[e.handle];
              const auto& post = *posts.at(e.handle);
              const std::string pcm = "c" + std::to_string(post.chunk) + "m" + std::to_string(post.micro_batch);
              if (post.direction == P2PDirection::RecvPrev) received["F" + pcm] = true;
              if (post.direction == P2PDirection::RecvNext) received["B" + pcm] = true;
            }
            if (e.kind == Kind::Forward && !(r == 0 && e.chunk == 0)) {
              EXPECT_TRUE(received["F" + cm]) << "p=" << p << " v=" << v << " m=" << m << " r=" << r << " F " << cm;
            }
            if (e.kind == Kind::Backward && !(r == p - 1 && e.chunk == v - 1)) {
              EXPECT_TRUE(received["B" + cm]) << "p=" << p << " v=" << v << " m=" << m << " r=" << r << " B " << cm;
            }
          }
          for (const auto& [h, post] : posts) EXPECT_EQ(waits[h], 1) << "handle " << h << " r=" << r;
        }
}

// Gradient reduction: once per chunk on every rank. On rank 0 it starts right after the chunk's last
// backward; rank r starts it r steps later, so all ranks start the same chunk at the same step
// (schedules.py); chunks the rule does not reach start after the cool-down. Parameter all-gather: once per
// chunk, chunks 0 and 1 before the first step, chunk j >= 2 before its first forward.
TEST(InterleavedSchedule, GradAndParamSyncOncePerChunkAtMegatronsSteps) {
  for (int p : {2, 4})
    for (int v : {2, 3, 4})
      for (int m : {p, 2 * p})
        for (int r = 0; r < p; ++r) {
          const auto program = interleaved_program(p, r, m, v);
          std::map<int, int> grad_syncs, param_syncs;
          std::vector<int> backward_steps_before_grad_sync(static_cast<std::size_t>(v), -1);
          std::map<int, bool> forwarded;
          int backwards = 0;
          for (std::size_t i = 0; i < program.size(); ++i) {
            const auto& e = program[i];
            if (e.kind == Kind::Backward) ++backwards;
            if (e.kind == Kind::Forward) {
              EXPECT_EQ(param_syncs[e.chunk], 1) << "chunk " << e.chunk << " forwarded before its all-gather";
              forwarded[e.chunk] = true;
            }
            if (e.kind == Kind::ParamSync) {
              ++param_syncs[e.chunk];
              EXPECT_FALSE(forwarded[e.chunk]);
              if (e.chunk < 2) { EXPECT_LT(i, 2u); }
            }
            if (e.kind == Kind::GradSync) {
              ++grad_syncs[e.chunk];
              backward_steps_before_grad_sync[static_cast<std::size_t>(e.chunk)] = backwards;
            }
          }
          const auto table = interleaved_table(p, m, v);
          for (int c = 0; c < v; ++c) {
            EXPECT_EQ(grad_syncs[c], 1);
            EXPECT_EQ(param_syncs[c], 1);
            // Backward step k runs chunk v-1-table[k].chunk; the chunk's last micro-batch is its last
            // backward step k_last; the sync follows backward step k_last + r, or the cool-down.
            int k_last = -1;
            for (int k = 0; k < m * v; ++k)
              if (v - 1 - table[static_cast<std::size_t>(k)].chunk == c) k_last = k;
            const int expected = std::min(k_last + r + 1, m * v);
            EXPECT_EQ(backward_steps_before_grad_sync[static_cast<std::size_t>(c)], expected)
                << "p=" << p << " v=" << v << " m=" << m << " r=" << r << " chunk " << c;
          }
        }
}

// Megatron rejects micro-batch counts that are not a multiple of the pipeline size with the default
// microbatch_group_size_per_vp_stage = p (schedules.py: p <= N <= m, m mod N == 0 or >= p).
TEST(InterleavedSchedule, RejectsMicroBatchCountsMegatronRejects) {
  EXPECT_EQ(interleaved_micro_batch_problem(4, 8), "");
  EXPECT_EQ(interleaved_micro_batch_problem(4, 4), "");
  EXPECT_NE(interleaved_micro_batch_problem(4, 6).find("multiple of the pipeline size"), std::string::npos);
  EXPECT_NE(interleaved_micro_batch_problem(4, 2).find("at least as many micro-batches"), std::string::npos);
  EXPECT_THROW(interleaved_program(4, 0, 6, 2), Error);
  EXPECT_THROW(interleaved_program(4, 0, 8, 1), Error);
  EXPECT_THROW(interleaved_program(1, 0, 8, 2), Error);
  EXPECT_THROW(interleaved_program(4, 4, 8, 2), Error);
}

namespace {

// Replays every rank's events with forward = tf and backward = tb time units and instantaneous
// transfers: a post is ready when the compute stream reaches it (the last step and the waits before
// it), a transfer completes when both sides are ready (the n-th send of a direction meets the n-th
// receive), and a step starts after the previous one and every handle waited for since. Returns the
// makespan, or -1 if the ranks deadlock.
double makespan(const std::vector<std::vector<InterleavedEvent>>& programs, double tf, double tb) {
  const int p = static_cast<int>(programs.size());
  constexpr double kUnknown = -1;
  struct Rank {
    std::size_t next = 0;                             // next event to replay
    double compute_end = 0;                           // when the last issued step finishes
    double frontier = 0;                              // latest handle waited for since that step
    std::map<int, double> ready, done;                // by handle
    std::map<std::pair<int, int>, int> sends, recvs;  // (peer, forward?) -> posts so far
  };
  std::vector<Rank> ranks(static_cast<std::size_t>(p));
  // (sender, receiver, forward?, n) -> ready time of each side.
  std::map<std::tuple<int, int, bool, int>, std::pair<double, double>> transfers;
  std::map<std::tuple<int, int, bool, int>, std::pair<int, int>> handles;  // -> (send handle, recv handle)
  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      auto& st = ranks[static_cast<std::size_t>(r)];
      const auto& prog = programs[static_cast<std::size_t>(r)];
      while (st.next < prog.size()) {
        const auto& e = prog[st.next];
        if (e.kind == Kind::Wait) {
          const auto it = st.done.find(e.handle);
          if (it == st.done.end()) break;  // transfer not complete yet
          st.frontier = std::max(st.frontier, it->second);
        } else if (e.kind == Kind::Forward || e.kind == Kind::Backward) {
          const double start = std::max(st.compute_end, st.frontier);
          st.compute_end = start + (e.kind == Kind::Forward ? tf : tb);
          st.frontier = 0;
        } else if (e.kind == Kind::Post) {
          const bool send = is_send(e.direction);
          const bool forward = e.direction == P2PDirection::SendNext || e.direction == P2PDirection::RecvPrev;
          auto& counter = send ? st.sends : st.recvs;
          const int n = counter[{e.peer, forward ? 1 : 0}]++;
          const auto key = std::make_tuple(send ? r : e.peer, send ? e.peer : r, forward, n);
          auto& [send_ready, recv_ready] = transfers.try_emplace(key, kUnknown, kUnknown).first->second;
          auto& [send_handle, recv_handle] = handles[key];
          const double ready = std::max(st.compute_end, st.frontier);
          (send ? send_ready : recv_ready) = ready;
          (send ? send_handle : recv_handle) = e.handle;
          if (send_ready >= 0 && recv_ready >= 0) {
            const double end = std::max(send_ready, recv_ready);
            ranks[static_cast<std::size_t>(std::get<0>(key))].done[send_handle] = end;
            ranks[static_cast<std::size_t>(std::get<1>(key))].done[recv_handle] = end;
          }
        }
        ++st.next;
        progress = true;
      }
    }
  }
  double end = 0;
  for (int r = 0; r < p; ++r) {
    if (ranks[static_cast<std::size_t>(r)].next != programs[static_cast<std::size_t>(r)].size()) return -1;
    end = std::max(end, ranks[static_cast<std::size_t>(r)].compute_end);
  }
  return end;
}

}  // namespace

// The bubble shrinks by v (Narayanan et al. 2021): with per-chunk forward 1 and backward 2,
// one rank computes m*v*3; the pipeline adds (p-1)*3, i.e. a bubble fraction (p-1)/(v*m) instead
// of 1F1B's (p-1)/m (same model: per-stage forward v, backward 2v, bubble (p-1)*3v).
TEST(InterleavedSchedule, BubbleIsPipelineMinusOneOverVTimesMicroBatches) {
  for (int p : {2, 4, 8})
    for (int v : {2, 3, 4})
      for (int m : {p, 2 * p, 4 * p}) {
        std::vector<std::vector<InterleavedEvent>> programs;
        for (int r = 0; r < p; ++r) programs.push_back(interleaved_program(p, r, m, v));
        const double t = makespan(programs, 1, 2);
        const double compute = 3.0 * m * v;
        EXPECT_DOUBLE_EQ(t, compute + 3.0 * (p - 1)) << "p=" << p << " v=" << v << " m=" << m;
        EXPECT_NEAR((t - compute) / compute, static_cast<double>(p - 1) / (v * m), 1e-12);
      }
}

// The same replay on the non-interleaved schedule's blocking calls
// (forward_backward_pipelining_without_interleaving) gives 1F1B's bubble, (p-1)/m: the interleaved bubble above
// is v times smaller.
TEST(InterleavedSchedule, OneFOneBBubbleInTheSameReplayIsVTimesLarger) {
  for (int p : {2, 4, 8})
    for (int m : {p, 2 * p, 4 * p}) {
      const int v = 2;
      std::vector<std::vector<InterleavedEvent>> programs;
      for (int r = 0; r < p; ++r) {
        std::vector<InterleavedEvent> prog;
        int handle = 0;
        auto post = [&](P2PDirection d, int mb) {
          InterleavedEvent e;
          e.kind = Kind::Post;
          e.direction = d;
          e.micro_batch = mb;
          e.chunk = 0;
          e.peer = d == P2PDirection::SendNext || d == P2PDirection::RecvNext ? r + 1 : r - 1;
          e.handle = handle++;
          prog.push_back(e);
        };
        for (const auto& st : pipeline_schedule(ScheduleKind::OneFOneB, p, r, m)) {
          const int first = handle;
          switch (st.action) {
            case PipelineAction::Forward: prog.push_back({Kind::Forward, st.micro_batch, 0}); break;
            case PipelineAction::Backward: prog.push_back({Kind::Backward, st.micro_batch, 0}); break;
            case PipelineAction::RecvForward: post(P2PDirection::RecvPrev, st.micro_batch); break;
            case PipelineAction::SendForward: post(P2PDirection::SendNext, st.micro_batch); break;
            case PipelineAction::RecvBackward: post(P2PDirection::RecvNext, st.micro_batch); break;
            case PipelineAction::SendBackward: post(P2PDirection::SendPrev, st.micro_batch); break;
            case PipelineAction::SendForwardRecvBackward:
              post(P2PDirection::SendNext, st.micro_batch);
              post(P2PDirection::RecvNext, st.micro_batch);
              break;
            case PipelineAction::SendBackwardRecvForward:
              post(P2PDirection::SendPrev, st.micro_batch);
              post(P2PDirection::RecvPrev, st.micro_batch);
              break;
          }
          for (int h = first; h < handle; ++h) {  // blocking: batch_isend_irecv + synchronize
            InterleavedEvent w;
            w.kind = Kind::Wait;
            w.handle = h;
            prog.push_back(w);
          }
        }
        programs.push_back(std::move(prog));
      }
      // A whole stage's forward and backward: v chunks of 1 and 2.
      const double t = makespan(programs, v * 1.0, v * 2.0);
      const double compute = 3.0 * m * v;
      EXPECT_DOUBLE_EQ(t, compute + 3.0 * v * (p - 1)) << "p=" << p << " m=" << m;
      EXPECT_NEAR((t - compute) / compute, static_cast<double>(p - 1) / m, 1e-12);
    }
}
