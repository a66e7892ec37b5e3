#pragma once
// The tensor-core clock a GPU holds under a power limit set below its rating (`nvidia-smi -pl`,
// cluster.gpu_power_limit_w): 500 W H100s (Meta's Grand Teton), 700-750 W B200s and 960 W GB200s are
// documented deployments (../shared/reference/kernels-in-training.md §1.2). docs/compute-model.md §1.4.
#include "hardware/gpu_spec.hpp"

namespace trainsim {

// Under long dense load a GPU runs at its power limit (the H200 measured at 700 W held 689-697 W with the
// "SW power cap" active the whole time: data/measured/H200-2026-11-27). Its power is a part that does not
// follow the SM clock (leakage, HBM, fabric, board) and a dynamic part that goes as f * V^2 with the voltage
// rising with the clock, so as f^3 (dynamic-voltage-frequency scaling). At a limit P below the rating P_r the
// clock falls from the sustained clock f_s to
//   f = f_s * ((P - s P_r) / ((1 - s) P_r))^(1/3),
// s the share of the rated power that does not scale. s = 1/3 [derived]: a GB300 capped at 500 W of its
// 1400 W ran cuBLAS GEMMs at 617 TF against 1600-2174 TF at 1400 W, 0.29-0.39 of the throughput
// (facebookexperimental/triton PR #2023, 2026-07 [measured]); a compute-bound GEMM that deep in the cap runs at
// the clock's pace, and with the cubic law 0.29-0.39 gives s = 0.32-0.34. Checked against NVIDIA's Blackwell power
// profiles (up to 15 % less energy at >= 97 % of the performance [claimed]): at 85 % of the rating this
// model gives 0.918 of the clock, 0.944 of the tensor throughput (clock^0.67), 2-3 points below the claim.
inline constexpr double kPowerLimitStaticShare = 1.0 / 3.0;

// The lowest limit the model is used at, as a share of the rated power: the measurement behind it was at 0.36.
inline constexpr double kMinPowerLimitShare = 0.35;

// The tensor-core clock held at `limit_w`; the sustained clock at or above the rated power. Needs the GPU's
// rated power (power_w) and sustained clock (both in data/gpus.yaml for the catalog's GPUs).
double power_limited_clock_mhz(const GpuSpec& gpu, double limit_w);

}  // namespace trainsim
