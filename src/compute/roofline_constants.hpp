#pragma once
// Every calibration constant of the roofline compute model, in one place, each with its source.
// Each value names the benchmark, paper or source file it was read from. Values marked [derived] are
// arithmetic on sourced numbers, the arithmetic is shown. docs/compute-model.md tabulates the same.
#include <array>

namespace trainsim::roofline {

// ---------------------------------------------------------------------------------------------
// Fixed per-kernel costs (torchao roofline_utils.py; XLA matmul_interpolator_data.h)
// ---------------------------------------------------------------------------------------------

// GPU-side time of a trivial (1-element) kernel on H100, measured from a trace by torchao
// (pytorch/ao roofline_utils.py KERNEL_LAUNCH_OVERHEAD_SEC = 2 us). Added to memory-bound kernels.
inline constexpr double kMemoryKernelOverheadS = 2e-6;

// Smallest cuBLAS GEMM: XLA's sm_90 table gives 256^3 BF16 at 6.45 TFLOPS = 5.2 us and sm_100
// 6.77 TFLOPS = 5.0 us [derived, XLA matmul_interpolator_data.h]. Added to tensor-core kernels (GEMM, batched
// GEMM, fused attention): prologue/epilogue and launch that no amount of work amortises away.
// Fitting t = t0 + F/(peak * eff) to the sm_90 cube series 256^3..2048^3 also gives t0 ~ 5-6 us.
inline constexpr double kTensorKernelOverheadS = 5e-6;

// ---------------------------------------------------------------------------------------------
// Dense GEMM plateau: asymptotic fraction of the precision's dense peak for large, well-shaped
// GEMMs ("maximum achievable matmul FLOPS", ml-engineering mamf-finder.py and its MAMF table).
// ---------------------------------------------------------------------------------------------

// A100 SXM BF16/FP16: the GEMMs of a transformer layer, not the best shape of a search. EleutherAI's
// A100 layer (EleutherAI cookbook benchmarks/sizing transformer.out; h=4096, b*s=8192 tokens, fp16) measured
// QKV 241.6, attention-out 234.9, h->4h 241.1, 4h->h 252.8 TF: mean 242.6 TF = 0.778 of 312, with shape factors
// >= 0.99 in this model [derived] => 0.78. The maximum over a shape search is higher — 271.2 TF = 86.9%
// (ml-engineering MAMF), 267.9 TF = 85.9% (mag-/gpu_benchmark) — and NVIDIA's square cuBLAS sweep reads 255-275
// TF at 4096-4608, ~290 TF at 8192 (read off a plot). Those are upper bounds a training step's GEMMs do not
// reach on A100; on H100 the two kinds of measurement agree (XLA 4096^3 0.79 vs MAMF 0.80).
inline constexpr double kPlateauAmpere16 = 0.78;
// H100 SXM BF16: 794.5 TF = 80.3% (ml-engineering MAMF; "H200 is the same"), 792.1 = 80.1%.
inline constexpr double kPlateauHopper16 = 0.80;
// H100 SXM FP8 e4m3: 1402.6 TF = 70.9% of 1979 (ml-engineering MAMF). H200 73.4%; we use H100's.
inline constexpr double kPlateauHopperFp8 = 0.71;
// Blackwell BF16: the large GEMMs of a layer, not the best shape of a search (as for A100). cuBLAS on B200
// (PyTorch 2.8 / CUDA 12.8, pyptx.dev, short runs): 4096^3 1532, 4096x8192x8192 1652, 8192x4096x8192 1648,
// 8192^3 1610 TF = 0.68-0.73 of 2250, which plateau 0.74 with the shape curve below reproduces within -2..+1%
// (the best-shape maximum, ml-engineering MAMF 1745.0 TF = 77.6% at 1792x16128x3072, put it 3-7% high). TE's
// layer GEMMs on a B300 (gemm_profiling.rst: 66-77% of 2250) and XLA's sm_100 table (4096^3 63%) agree that a
// step's GEMMs sit below the search maximum. FP8: MAMF 3432.5 TF = 76.3% of 4500, the same 0.983 of BF16's
// MAMF => 0.74 x 0.983 = 0.73 [derived]. These short runs ran at the boost clock (data/gpus.yaml).
inline constexpr double kPlateauBlackwell16 = 0.74;
inline constexpr double kPlateauBlackwellFp8 = 0.73;
// Blackwell NVFP4 (B200): cuBLAS through torch._scaled_mm beside BF16 in one sweep (pytorch/ao PR #2427,
// benchmarks/float8/bench_matmul.py, 2025-06): 6144^3 0.611 of the 9 PF FP4 peak vs BF16 0.646 of 2.25 PF, 8192^3
// 0.597 vs 0.631: FP4 keeps 0.946 of BF16's fraction at large cubes => 0.74 x 0.946 = 0.70 [derived]. Blackwell
// Ultra (B300, GB300) raised the FP4 peak 1.5x over the same memory system and measures a lower share: its own
// plateau is in data/gpus.yaml.
inline constexpr double kPlateauBlackwellFp4 = 0.70;
// An MXFP8 GEMM (E8M0 scale per 32 elements) against a tensor-scaled FP8 one: Transformer Engine's B300 layer
// benchmark, pre-quantized (GEMM kernels only), 6.812 ms per layer tensor-scaled (current) vs 7.161 ms MXFP8 => 0.951
// (TransformerEngine docs/examples/gemm_profiling/gemm_profiling.rst).
inline constexpr double kMxfp8GemmShareOfTensorScaled = 0.951;
// MI300X BF16: 708 TF = 54% (AMD MAF blog part 2, hipBLASLt), 668.4 = 51.4% (ml-engineering),
// 758.3 = 58% (mag-/gpu_benchmark): mid value 0.55. FP8: 1273 TF = 49% of 2615 (AMD MAF blog), measured on
// "trig_float" inputs; a training step's tensors switch like random data, and AMD's randn re-measurement of the MAF
// on MI325X gave FP8 1409 TF against 1519 with trig_float (x0.928; BF16 x0.986, inside the spread of the BF16
// sources, two of which used randn already) (ROCm blog "Completing the GPU Performance Picture: TAF", 2026-10, as
// kernels-in-training.md §1.1 gives it): 0.49 x 0.928 = 0.45 [derived]. NVIDIA's plateaus come from randn runs.
// The gap to the 2100 MHz peak is mostly the sustained clock (1207 MHz median vs 2100 MHz max, AMD MAF part 2).
inline constexpr double kPlateauCdna16 = 0.55;
inline constexpr double kPlateauCdnaFp8 = 0.45;
// Plain FP32 (non-tensor-core SGEMM): NVIDIA's A100 cuBLAS sweep shows ~19 of 19.5 TF
// [derived 0.97, NVIDIA figure "Mixed-precision matrix multiply on A100 with cuBLAS"]. Used for NVIDIA FP32
// GEMMs. Note: PyTorch's default (torch.backends.cuda.matmul.allow_tf32 = False since 1.12) keeps fp32 matmuls
// off the tensor cores, so Precision::FP32 is priced on the fp32 vector peak; Precision::TF32 uses the tf32
// peak.
inline constexpr double kPlateauNvidiaFp32 = 0.97;
// TF32 uses the 16-bit plateau of its architecture: measured TF32 fractions agree within one point
// (A100 ~130-135 of 156 TF = 0.85, NVIDIA sweep; H100 XLA "f32" 4096^3 401.6 of 494.7 = 0.81).

// ---------------------------------------------------------------------------------------------
// GEMM shape curve. eff = plateau * g(k) * g(min(m, n)) * wave * alignment, and
// t = kTensorKernelOverheadS + flops / (peak * eff), with g(x) = 1 / (1 + (x0 / x)^2).
// ---------------------------------------------------------------------------------------------

// x0 = 192 elements, with the quadratic roll-off: chosen once on a coarse grid (x0 in 0..320,
// exponent 1/1.5/2, three tile sets) minimising the log-TFLOPS error against the XLA sm_90 and
// sm_100 shape tables (XLA matmul_interpolator_data.h) and the A100/B200 cuBLAS sweeps (NVIDIA's A100
// figure, pyptx.dev B200 numbers), t0 fixed at 5 us.
// Residual log-RMS: 7% on the sm_90 table (14 shapes, all within +-20%); 14% on the sm_100 table
// (model up to 25% high at 2048-4096) but 7% on B200 cuBLAS (5 shapes, +3..+14%); A100 sweep
// >= 1792^3 within -8%..+18%; the A100 plot's 512^3..1280^3 points are overestimated up to 1.8x
// (not fitted). It reproduces the sm_90 reading that K = 256 at M = N = 4096 halves throughput
// (model 381 vs measured 392 TF) and M or N = 256 with the other dims 4096 reaches ~40% (model 391
// vs 376/412 TF). g(x) is 0.5 at x = 192, 0.8 at 384, 0.97 at 1024, 0.998 at 4096. No table
// has dims below 256; under x0 the model switches to x / (x + x0) (a thin slice of a tile does
// work in proportion to its rows), so a GEMV is memory-bound rather than absurdly compute-slow.
inline constexpr double kGemmHalfEfficiencyDim = 192.0;

// Output tiles the GEMM library chooses between (CTA tile M x N). 128 x 256 is the tile
// ml-engineering uses in its wave-quantisation analysis of an H100/B300 MLP GEMM;
// 128 x 128 is the other standard cuBLAS/CUTLASS Hopper tile. The model takes whichever wastes
// least of the last wave (a heuristic library does the same); grids of at most one wave are not
// penalised (split-K / stream-K fills the SMs; their cost is inside g(min(m, n))).
struct Tile {
  int m, n;
};
inline constexpr std::array<Tile, 3> kGemmTiles = {{{128, 256}, {256, 128}, {128, 128}}};

// Alignment (Anthony et al. 2024, arXiv 2401.14489; ml-engineering swiglu-maf-bench.py). Dims whose largest
// power-of-two divisor is >= 8 elements run at full speed (SwiGLU d_ff 10848 = 2^5 * 339 and 10944 = 2^6 * 171
// both ~396-398 TF on H100). d_ff = 10922 (divisible by 2 only) gives 272.73 vs 398.38 TF on H100 [derived
// 0.685, ml-engineering swiglu-maf-bench]. Odd dims: attention BMM with odd h/a <= ~95 TF vs 200-235 TF aligned
// on A100 [derived 95/235 = 0.40, Anthony et al. 2024 Fig. 7]. Dims below 8 are exempt (padded inside the tile;
// their cost is occupancy, see g(x)).
inline constexpr int kGemmAlignedDivisor = 8;
inline constexpr double kGemmAlignEvenFactor = 0.685;
inline constexpr double kGemmAlignOddFactor = 0.40;

// ---------------------------------------------------------------------------------------------
// Fused (flash / cuDNN) attention. Tables are TFLOPS at the sequence lengths below, measured with
// batch x seqlen = 16k tokens and hidden 2048 (FlashAttention-2/-3 benchmark setup, pytorch/benchmark@ff65cb6);
// fraction = TFLOPS / the table's reference peak. Interpolated linearly in log2(seq) and log2(head_dim).
// ---------------------------------------------------------------------------------------------

inline constexpr std::array<double, 6> kAttnSeqLens = {512, 1024, 2048, 4096, 8192, 16384};

struct AttnRow {
  int head_dim;
  bool causal;
  std::array<double, 6> tflops;
};

// Ampere: FlashAttention-2 fwd+bwd COMBINED on A100 80GB SXM4, BF16/FP16 (read
// off Dao-AILab/flash-attention assets/flash2_a100_fwd_bwd_benchmark.png). Reference peak 312 TF.
// hd128 non-causal at 512 and 1k are hidden behind other labels in the figure; filled as
// [derived] hd64 value x 1.15 (the hd128/hd64 ratio at 2k: 187/162 = 1.154, at 4k 196/171 = 1.146):
// 132 * 1.15 = 152, 153 * 1.15 = 176.
inline constexpr double kAmpereAttnRefPeakTflops = 312.0;
inline constexpr std::array<AttnRow, 4> kAmpereFa2FwdBwd = {{
    {64, false, {132, 153, 162, 171, 175, 176}},
    {128, false, {152, 176, 187, 196, 201, 203}},
    {64, true, {88, 119, 140, 156, 165, 171}},
    {128, true, {99, 133, 155, 173, 182, 189}},
}};

// Hopper: cuDNN fused attention FORWARD on H100 SXM5, FP16 (FA3 paper figure, arXiv 2407.08608;
// Dao-AILab/flash-attention assets/flash3_fp16_fwd.png). Megatron on Hopper runs Transformer Engine's cuDNN
// fused attention. Reference peak 989.4 TF.
inline constexpr double kHopperAttnRefPeakTflops = 989.4;
inline constexpr std::array<AttnRow, 6> kHopperCudnnFwd = {{
    {64, false, {335, 373, 395, 408, 412, 413}},
    {128, false, {497, 574, 617, 609, 600, 595}},
    {256, false, {470, 546, 580, 581, 580, 581}},
    {64, true, {225, 288, 334, 363, 379, 388}},
    {128, true, {315, 410, 484, 518, 529, 539}},
    {256, true, {308, 391, 450, 483, 497, 509}},
}};

// Older and alternative kernels on A100, fwd+bwd COMBINED, same figure (flash2_a100_fwd_bwd_benchmark.png).
// Selected with training.attention_kernel: flash1 (FlashAttention-1, the CUDA kernels of flash-attn 1.x) and
// triton (the Triton FlashAttention kernel that stacks such as llm-foundry's attn_impl: triton ran).
inline constexpr std::array<AttnRow, 4> kAmpereFa1FwdBwd = {{
    {64, false, {91, 92, 104, 108, 110, 110}},
    {128, false, {76, 72, 76, 80, 82, 83}},
    {64, true, {58, 70, 77, 87, 92, 97}},
    {128, true, {55, 62, 69, 76, 80, 83}},
}};
inline constexpr std::array<AttnRow, 4> kAmpereTritonFwdBwd = {{
    {64, false, {90, 102, 98, 98, 100, 100}},
    {128, false, {78, 85, 90, 93, 95, 95}},
    {64, true, {59, 75, 79, 76, 79, 80}},
    {128, true, {50, 61, 68, 74, 78, 80}},
}};

// H100, fwd+bwd COMBINED (Dao-AILab/flash-attention assets/flash2_h100_fwd_bwd_benchmark.png): FA2 and FA1.
inline constexpr std::array<AttnRow, 4> kHopperFa2FwdBwd = {{
    {64, false, {215, 254, 274, 288, 294, 296}},
    {128, false, {248, 294, 320, 326, 335, 338}},
    {64, true, {141, 192, 232, 257, 273, 284}},
    {128, true, {163, 221, 265, 294, 308, 328}},
}};
inline constexpr std::array<AttnRow, 4> kHopperFa1FwdBwd = {{
    {64, false, {157, 159, 161, 161, 166, 168}},
    {128, false, {127, 127, 128, 131, 137, 139}},
    {64, true, {104, 123, 136, 138, 149, 156}},
    {128, true, {98, 109, 108, 126, 135, 137}},
}};

// FlashAttention-2 on Hopper as PyTorch's flash backend runs it, measured on an H200 (132 SMs, the H100's
// GH100 die and dense peak; short runs near the 1980 MHz boost, like the figure above; data/measured/
// H200-2026-11-27, characterise-kernels.json `attention`): forward and backward separately, head dim 128,
// TFLOPS on causal FLOPs counted as half. batch x heads was 256 up to 4K, then 64 and 16; the 32K and 64K
// rows ran with 4 and 1, fewer than any training shape, so the table stops at 16K and is held beyond, like
// the others. Used for flash2 on Hopper in place of the figure, which it undercuts by 4-25% (most at short
// sequences); the figure's rows still give the ratio between head dims.
inline constexpr std::array<AttnRow, 2> kHopperFa2MeasuredFwd = {{
    {128, false, {290.4, 335.2, 355.1, 357.8, 360.4, 361.5}},
    {128, true, {167.2, 248.8, 305.8, 337.5, 335.2, 327.4}},
}};
inline constexpr std::array<AttnRow, 2> kHopperFa2MeasuredBwd = {{
    {128, false, {178.4, 232.8, 272.5, 296.5, 302.1, 307.1}},
    {128, true, {112.3, 172.0, 227.8, 267.5, 290.1, 309.7}},
}};

// H100 FORWARD (FA3 paper figure, arXiv 2407.08608; assets/flash3_fp16_fwd.png): FlashAttention-3 and the
// Triton kernel. The Triton causal hd64 row is marked "labels hard to read" in the source; used as transcribed.
inline constexpr std::array<AttnRow, 6> kHopperFa3Fwd = {{
    {64, false, {333, 392, 460, 476, 496, 497}},
    {128, false, {467, 565, 625, 638, 646, 648}},
    {256, false, {482, 639, 707, 736, 746, 756}},
    {64, true, {197, 265, 371, 420, 460, 473}},
    {128, true, {292, 423, 521, 579, 602, 616}},
    {256, true, {286, 427, 537, 612, 628, 642}},
}};
inline constexpr std::array<AttnRow, 4> kHopperTritonFwd = {{
    {64, false, {340, 382, 396, 400, 401, 403}},
    {128, false, {323, 372, 389, 389, 392, 395}},
    {64, true, {152, 291, 342, 363, 378, 363}},
    {128, true, {146, 273, 323, 353, 369, 378}},
}};

// Backward / forward throughput ratios of FA3 and FA2 on H100, hd128: the FA3 paper's bwd figure (FA3
// 316, 424, 501, 542, 559, 561; FA-2 214, 260, 291, 310, 318, 322 TF; arXiv 2407.08608, a third-party
// transcription) over the non-causal hd128 forward of the same kernels (FA3 467 ... 648, FA2 309 ... 370)
// [derived]. The bwd panels are non-causal per the paper's convention (not verified).
inline constexpr std::array<double, 6> kFa3BwdOverFwd = {316.0 / 467.0, 424.0 / 565.0, 501.0 / 625.0,
                                                         542.0 / 638.0, 559.0 / 646.0, 561.0 / 648.0};
inline constexpr std::array<double, 6> kFa2BwdOverFwd = {214.0 / 309.0, 260.0 / 350.0, 291.0 / 362.0,
                                                         310.0 / 368.0, 318.0 / 370.0, 322.0 / 370.0};

// Backward / forward throughput ratio per sequence length: cuDNN hd128 on H100, bwd 305, 408, 465,
// 499, 518, 516 TF (transcription of the FA3 paper's bwd figure, arXiv 2407.08608) over the fwd
// 497, 574, 617, 609, 600, 595 TF of the same panel [derived]. Applied to every head dim and mask of
// the cuDNN kernel. Each kernel's own ratio (cuDNN, FA3, FA2 above) splits a fwd+bwd table or turns a
// forward table into a backward one; FA1 and Triton have no backward measurement and borrow FA2's:
// 3.5 / R_combined = 1 / R_fwd + 2.5 / R_bwd with R_bwd = r * R_fwd
//   => R_fwd = R_combined * (1 + 2.5 / r) / 3.5   (bwd FLOPs = 2.5 x fwd, the FlashAttention papers' convention).
inline constexpr std::array<double, 6> kAttnBwdOverFwd = {305.0 / 497.0, 408.0 / 574.0, 465.0 / 617.0,
                                                          499.0 / 609.0, 518.0 / 600.0, 516.0 / 595.0};
inline constexpr double kAttnBwdFlopsOverFwd = 2.5;

// Below the shortest measured length (512) the fraction is extrapolated along the 512 -> 1k slope
// in log2(seq), but never below this share of the 512 value (crude; no data below 512).
inline constexpr double kAttnShortSeqFloorShare = 0.25;

// Blackwell: no per-shape table. FA4 on B200 vs FA3 on H200, fwd+bwd speedup 1.88x at 8K and 1.95x
// at 32K against a 2.28x peak ratio (ml-engineering) => fraction of peak is
// 1.88/2.28 = 0.82 and 1.95/2.28 = 0.86 of Hopper's [derived]; mean 0.84. Independent check: the
// attention bucket of Llama-3.1-8B at 8K runs at 45% MFU on H200 vs 37% on B200 (ratio 0.82,
// ml-engineering insights/when-to-upgrade-gpus). Blackwell's kernels are Hopper's tables of the same kernel times
// this; training.attention_kernel flash4 (FlashAttention-4) takes FA3's, the pair the ratio was measured on.
inline constexpr double kBlackwellAttnScaleVsHopper = 0.84;

// FP8 attention (not used by Megatron's default FP8 recipe, which keeps attention in BF16): FA3 FP8
// peaks at ~1008 TF = 0.51 of 1979 vs BF16 hd128 648 TF = 0.655 of 989.4 (FA3 paper, arXiv 2407.08608)
// => fraction of the fp8 peak = bf16 fraction x 0.51/0.655 = x 0.78 [derived, crude].
inline constexpr double kFp8AttnScaleVsBf16 = 0.78;

// ---------------------------------------------------------------------------------------------
// Memory-bound kernels (Dao-AILab/quack media/2025-07-10-membound-sol.md; torchao roofline_utils.py)
// ---------------------------------------------------------------------------------------------

// Well-written norms / softmax / pointwise kernels at >= MB sizes: ~0.85-0.92 of HBM spec on H100.
// QuACK ~3.0 of 3.35 TB/s (~90%), softmax 3.01 TB/s (89.7%); cuDNN RMSNorm 86%; torchao's
// constant 0.92; JAX fp32 add 94%. We use 0.90 for Hopper and, lacking measurements, for Ampere,
// Volta and AMD (crude for those).
inline constexpr double kMemFractionDefault = 0.90;
// B300 measured 0.84 (pytorch/ao torchao/testing/training/roofline_utils.py); used for Blackwell.
inline constexpr double kMemFractionBlackwell = 0.84;

// PyTorch's own layer_norm kernel (F.layer_norm, which an eager model such as llm-foundry's MPT calls; fused
// stacks run Transformer Engine's or apex's norm instead): measured on an H200 at 2.03x the time of
// bytes / (0.90 x HBM) at the median of 23 bf16 shapes of >= 64 MB, width 4096 (1.72-2.25x;
// data/measured/H200-2026-11-27, test MeasuredH200.RooflineMemoryBoundKernelsAgainstMeasuredShortRuns)
// => 0.90 / 2.03 = 0.443 of HBM. Its backward was not measured and is taken to run alike. Applied on
// every GPU (one measurement, on Hopper).
inline constexpr double kMemFractionTorchLayerNorm = 0.443;

// Unfused attention softmax (scale + mask + softmax): EleutherAI cookbook transformer.out, h=4096,
// a=16, b=4, s=2048, fp16: 268 M scores in 7.6 ms; reading and writing them once in fp16 (1.07 GB)
// implies ~0.14 TB/s = 0.091 of the A100-40GB's 1.555 TB/s [derived; the source
// does not name the GPU]. Applied as a fraction of HBM spec on every GPU (crude).
inline constexpr double kMemFractionUnfusedSoftmax = 0.09;

// Size ramp. A kernel that moves B bytes cannot run faster than one DRAM round trip:
// t = B / bw + latency, written as bw_eff = bw * B / (B + B_half) with B_half = bw * latency
// (Little's law). H100 DRAM latency ~400 ns (QuACK blog, media/2025-07-10-membound-sol.md) => B_half ~1.2 MB
// on H100, matching small tensors being latency-bound (jax-ml/scaling-book gpus.md: a 65k-element add takes
// ~1.5 us).
inline constexpr double kDramLatencyS = 400e-9;

// ---------------------------------------------------------------------------------------------
// Sustained clocks (docs/compute-model.md §1.4). A training step keeps the tensor cores busy for minutes,
// so the GPU runs at its sustained clock (data/gpus.yaml sustained_clock_mhz: power- and thermally
// limited), not at the clock its calibration benchmark ran at. Two kinds of benchmark clock:
//  - locked at the peak-basis clock: the FA3 paper's H100 tables (cuDNN, FA3, Triton forward) ran with
//    the clock locked at 1830 MHz (FA3 appendix C.1); Blackwell's attention is derived from them. A
//    step runs them at (sustained / peak-basis clock)^kClockThroughputElasticity (H100: (1580 / 1830)^0.67
//    = 0.906).
//  - short runs, clock not logged: the GEMM plateaus (MAMF: 50 warm-up + 100 timed matmuls per shape,
//    well under a second; XLA tables; EleutherAI's layer GEMMs; AMD MAF) and the FlashAttention
//    repository's fwd+bwd figures. Measured on an H200 (700 W, data/measured/H200-2026-11-27): the power
//    cap takes about half a second to bite — nvidia-smi read 1950 MHz 0.03 s into back-to-back bf16
//    8192^3 GEMMs, 1515 MHz at 0.5 s, then 1440-1530 MHz (median 1470) with "SW power cap" active for
//    the remaining 40 s. So a short run on Hopper runs at the boost clock (1980 MHz): 807 TF alone, 660 TF
//    sustained. A training step's mix draws less power than GEMMs alone: a Llama-7B-sized layer's
//    forward + backward held 1515-1650 MHz (median 1582) at the same cap and ran 0.917 of its short-run
//    speed; the catalog's sustained clock is that of the layer mix (1580 MHz; data/gpus.yaml [MEAS-H200]).
//    Where the catalog gives boost_clock_mhz, a short-run table runs in a step at
//    (sustained / boost)^kClockThroughputElasticity; where it does not (no clock log of that part's
//    short runs: A100, whose 400 W cap already acts inside short runs at randn data, thonking.ai "Strangely,
//    Matrix Multiplications on GPUs Run Faster When Given 'Predictable' Data"; Blackwell; AMD), only the
//    long-run part applies: AMD's 30-s TAF runs (ROCm blog "Completing the GPU Performance Picture") and
//    randn-vs-structured inputs put it at -1..-7%; we take the middle, 4% [derived].
inline constexpr double kLongRunClockShare = 0.96;

// Throughput does not fall as fast as the clock: the H200 run above gave 660 / 807 TF = 0.818 of the
// short-run throughput at 1470 / 1980 MHz = 0.742 of the clock (HBM keeps its clock; a slower SM waits
// less on it), so throughput ~ clock^0.67 [measured: ln 0.818 / ln 0.742 = 0.67]. Used for every clock
// ratio of a tensor-core table: short-run (boost -> sustained) and locked (peak basis -> sustained).
inline constexpr double kClockThroughputElasticity = 0.67;

// The slowest GPU sets the pace of synchronous training. GPUs of one SKU differ: "5% and higher" between
// the GPUs of one 8-GPU node in max-achievable matmul FLOPS, from cooling position and silicon V-F curves
// (ml-engineering compute/accelerator/README.md, "Not all accelerators are created equal").
// Read as the range of 8 normal draws (expected 2.847 sigma), the per-GPU
// sigma of tensor throughput is 0.05 / 2.847 = 1.76% [derived]. A job of N GPUs runs its tensor kernels
// at the expected slowest of N (Blom's approximation of the normal order statistic), e.g. 8 GPUs -2.5%,
// 1,024 GPUs -5.6%. The calibration tables were measured on one GPU: a typical one.
inline constexpr double kSameSkuSpreadRangeOf8 = 0.05;
inline constexpr double kExpectedRangeOf8Normals = 2.847;

// ---------------------------------------------------------------------------------------------
// Compute-communication interference (docs/compute-model.md §1.4)
// ---------------------------------------------------------------------------------------------

// However much HBM traffic the collectives beside a kernel move, the kernel keeps at least this share
// of the bandwidth (the memory controllers interleave requests; no measurement shows a kernel starved).
// A guard, not a fit: two NVLink rings at full speed take ~0.45 of an H100's 3.35 TB/s.
inline constexpr double kMinHbmShareLeft = 0.25;

// A GEMM on Hopper or Blackwell beside another kernel that holds SMs runs this much slower than its share of
// the SMs left gives. Measured on an H200 (data/measured/H200-2026-11-27, interference proxy: a copy kernel of
// G CTAs beside cuBLAS): four layer-sized bf16 GEMMs at G = 2..32 took, in geometric mean, 1.102x the time of
// the SM-share roofline (per point 0.92-1.22x, at G = 2 as at G = 32), while FlashAttention-2 beside the same
// kernel slowed by its SM share exactly (1.00x). cuBLAS's sm90/sm100 GEMMs are persistent, cluster-launched
// kernels sized for the whole GPU (a 2-SM cluster needs two free SMs of one GPC), FA2's are neither, which is
// the likely reason; the size is the measurement. Checked against pytorch/pytorch PR #172714 (8x H100, 8192^3
// matmul beside an all-gather: NCCL overlap 1.14x copy-engine overlap; test
// Interference.NcclOverlapCostsMoreThanCopyEngineOverlap). Not applied beside Transformer Engine's userbuffers,
// whose overlapped GEMMs cuBLAS plans for the SMs left (TE initialize_ub set_sm_margin; the ring exchange moves its
// data on the copy engines): CommLoad::planned_ctas. Ampere's and AMD's GEMMs were not measured: 1.
inline constexpr double kGemmBesideSmHolderSlowdown = 1.10;

}  // namespace trainsim::roofline
