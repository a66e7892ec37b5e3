#pragma once
// A hand-built RunResult shared by the report tests. The numbers are chosen so that every derived
// figure the tests check can be worked out on paper (see the comments).
#include "report/result.hpp"

namespace trainsim::test {

inline RunResult sample_result() {
  RunResult r;
  r.scenario = "gpt3-175b-1024-h100";
  r.model_name = "gpt3-175b";
  r.gpu_name = "H100-SXM";
  r.precision = "bf16";
  r.num_gpus = 1024;
  r.tensor = 8;
  r.pipeline = 8;
  r.data = 16;
  r.context = 1;
  r.micro_batches = 96;
  // 1536 sequences x 2048 tokens = 3,145,728 tokens per iteration; / 12.5 s = 251,658.24 tokens/s;
  // / 1024 GPUs = 245.76 tokens/s/GPU.
  r.iteration_time_s = 12.5;
  r.tokens_per_s = 251658.24;
  r.tokens_per_s_per_gpu = 245.76;
  r.tflops_per_gpu = 400.0;
  r.peak_tflops = 989.0;
  r.mfu = 0.40445;  // 400 / 989
  r.hfu = 0.5;
  // Five parts: 9 + 1.5 + 1.5 + 0.3 + 0.2 = 12.5 s = the iteration; exposed comm 0.8+0+0.4+0.2+0.1 = 1.5.
  r.breakdown.compute = 9.0;
  r.breakdown.exposed_comm = 1.5;
  r.breakdown.bubble = 1.5;
  r.breakdown.optimizer = 0.3;
  r.breakdown.other = 0.2;
  r.breakdown.exposed_tp = 0.8;
  r.breakdown.exposed_cp = 0.0;
  r.breakdown.exposed_dp = 0.4;
  r.breakdown.exposed_pp = 0.2;
  r.breakdown.exposed_other = 0.1;
  MemoryUsage m;
  m.weights = 5.5;
  m.grads = 5.5;
  m.optimizer = 16.25;
  m.activations = 40.0;
  m.other = 3.0;
  m.peak = 70.25;
  m.capacity = 80.0;
  m.fits = true;
  m.worst_stage = 0;
  r.memory = m;
  CommStat tp{"all_reduce", "tp", 8, 9216, 3.0 * 1024 * 1024 * 1024, 2.25, 0.8, "Ring", "Simple"};
  CommStat dp{"reduce_scatter", "dp", 16, 2, 1536.0, 0.5, 0.4, "Ring", "LL128"};
  r.comm = {tp, dp};
  r.simulation = SimulationStats{0.75, 1234567, 4200, "analytical", 64, 98765, "roofline model for H100-SXM", 0.125};
  r.critical_rank = 7;
  return r;
}

}  // namespace trainsim::test
