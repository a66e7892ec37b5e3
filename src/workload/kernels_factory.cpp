#include "workload/kernels_factory.hpp"

#include "core/check.hpp"
#include "model/flops.hpp"
#include "scenario/scenario.hpp"

namespace trainsim {

double activation_bytes(Precision p) {
  switch (p) {
    case Precision::FP32:
    case Precision::TF32: return 4;
    default: return 2;
  }
}

// NVFP4: a 4-bit value plus one E4M3 scale per block of 16 (Transformer Engine nvfp4.rst).
double gemm_operand_bytes(Precision p) {
  if (p == Precision::FP4) return 0.5 + 1.0 / 16.0;
  return p == Precision::FP8 ? 1 : activation_bytes(p);
}

double quantized_copy_bytes(Precision p, Fp8Recipe recipe) {
  if (p == Precision::FP8 && recipe == Fp8Recipe::Mxfp8) return 1.0 + 1.0 / 32.0;
  return gemm_operand_bytes(p);
}

KernelDesc gemm(std::int64_t m, std::int64_t n, std::int64_t k, Precision p, std::int64_t batch) {
  KernelDesc d;
  d.kind = KernelKind::Gemm;
  d.dtype = p;
  d.m = m;
  d.n = n;
  d.k = k;
  d.batch = batch;
  const double bm = static_cast<double>(m), bn = static_cast<double>(n), bk = static_cast<double>(k);
  const double b = static_cast<double>(batch);
  d.flops = 2.0 * bm * bn * bk * b;
  // Operands read once, output written once in the activation dtype (ideal caching).
  d.bytes = b * ((bm * bk + bk * bn) * gemm_operand_bytes(p) + bm * bn * activation_bytes(p));
  return d;
}

namespace {
KernelDesc attention(KernelKind kind, std::int64_t batch, std::int64_t s_q, std::int64_t s_kv, std::int64_t head_dim,
                     bool causal, Precision p, double flop_factor, double io_tensors, std::int64_t window) {
  KernelDesc d;
  d.kind = kind;
  d.dtype = quantized_gemms(p) ? Precision::BF16 : p;  // attention runs in bf16 under FP8 and NVFP4 recipes
  d.batch = batch;
  d.m = s_q;
  d.n = s_kv;
  d.k = head_dim;
  d.causal = causal;
  TRAINSIM_CHECK(window == 0 || (causal && s_q == s_kv), "a sliding window needs causal self-attention");
  d.window = window > 0 && window < s_kv ? window : 0;  // a window as long as the sequence is no window
  const double dense = 4.0 * static_cast<double>(batch) * static_cast<double>(s_q) * static_cast<double>(s_kv) *
                       static_cast<double>(head_dim);
  d.flops =
      flop_factor *
      (causal ? dense / 2.0 * causal_window_share(static_cast<double>(s_kv), static_cast<double>(d.window)) : dense);
  d.bytes = io_tensors * static_cast<double>(batch) * static_cast<double>(s_q) * static_cast<double>(head_dim) *
            activation_bytes(d.dtype);
  return d;
}
}  // namespace

KernelDesc flash_attention_fwd(std::int64_t batch, std::int64_t s_q, std::int64_t s_kv, std::int64_t head_dim,
                               bool causal, Precision p, std::int64_t window) {
  return attention(KernelKind::FlashAttnFwd, batch, s_q, s_kv, head_dim, causal, p, 1.0, 4.0, window);  // q,k,v; o
}

KernelDesc flash_attention_bwd(std::int64_t batch, std::int64_t s_q, std::int64_t s_kv, std::int64_t head_dim,
                               bool causal, Precision p, std::int64_t window) {
  return attention(KernelKind::FlashAttnBwd, batch, s_q, s_kv, head_dim, causal, p, 2.5, 8.0,
                   window);  // q,k,v,o,do in; dq,dk,dv out
}

KernelDesc optimizer_step_kernel(Optimizer o, double elements, Precision p) {
  double update_bytes = 28.0, flops = 12.0;  // Adam
  if (o == Optimizer::SGD) update_bytes = 20.0, flops = 4.0;
  if (o == Optimizer::Lamb) update_bytes = 48.0, flops = 16.0;
  return memory_kernel(KernelKind::OptimizerStep, elements * (update_bytes + kOptimizerAroundBytesPerElement),
                       elements * flops, p);
}

const char* optimizer_step_name(Optimizer o) {
  switch (o) {
    case Optimizer::SGD: return "optimizer.sgd";
    case Optimizer::Lamb: return "optimizer.lamb";
    case Optimizer::Adam: break;
  }
  return "optimizer.adam";
}

KernelDesc memory_kernel(KernelKind kind, double bytes, double flops, Precision p) {
  KernelDesc d;
  d.kind = kind;
  d.dtype = p;
  d.bytes = bytes;
  d.flops = flops;
  return d;
}

std::vector<StemmedKernel> nvfp4_quantize_kernels(double elems) {
  return {
      {"fp4.amax", memory_kernel(KernelKind::Elementwise, 2.0 * elems, elems, Precision::BF16)},
      {"fp4.quantize", memory_kernel(KernelKind::Elementwise, (2.0 + 2.0 * gemm_operand_bytes(Precision::FP4)) * elems,
                                     4.0 * elems, Precision::BF16)}};
}

StemmedKernel fp8_transpose_kernel(double elems) {
  return {"fp8.transpose", memory_kernel(KernelKind::Elementwise, elems * 2.0, 2.0 * elems, Precision::BF16)};
}

std::vector<StemmedKernel> fp8_quantize_gathered_kernels(Fp8Recipe recipe, double local_elems, double gathered_elems,
                                                         bool after_te_norm) {
  constexpr double kCast = 2.0 + 1.0, kAmax = 2.0, kMxfp8Quantize = 2.0 + 2.0 * (1.0 + 1.0 / 32.0);
  const auto local = [&](const char* stem, double bytes) {
    return StemmedKernel{
        stem, memory_kernel(KernelKind::Elementwise, local_elems * bytes, 2.0 * local_elems, Precision::BF16)};
  };
  switch (recipe) {
    case Fp8Recipe::Delayed:
      if (after_te_norm) return {fp8_transpose_kernel(gathered_elems)};  // the norm wrote the local FP8 shard
      return {local("fp8.cast", kCast), fp8_transpose_kernel(gathered_elems)};
    case Fp8Recipe::Tensorwise:
      if (after_te_norm) return {local("fp8.cast", kCast), fp8_transpose_kernel(gathered_elems)};
      return {local("fp8.amax", kAmax), local("fp8.cast", kCast), fp8_transpose_kernel(gathered_elems)};
    case Fp8Recipe::Mxfp8: return {local("fp8.quantize", kMxfp8Quantize)};
  }
  return {};
}

std::vector<StemmedKernel> fp8_quantize_kernels(Fp8Recipe recipe, double elems, bool after_te_norm, bool weight) {
  // Bytes per element: a cast-transpose reads 2 B and writes 1 B row-wise + 1 B column-wise; a transpose alone reads
  // and writes 1 B; an amax pass reads 2 B; an MXFP8 quantize writes both copies with one E8M0 scale per 32.
  constexpr double kCastTranspose = 2.0 + 1.0 + 1.0, kAmax = 2.0;
  constexpr double kMxfp8Quantize = 2.0 + 2.0 * (1.0 + 1.0 / 32.0);
  const auto k = [&](const char* stem, double bytes) {
    return StemmedKernel{stem, memory_kernel(KernelKind::Elementwise, elems * bytes, 2.0 * elems, Precision::BF16)};
  };
  const char* cast = weight ? "fp8.cast" : "fp8.cast_transpose";
  switch (recipe) {
    case Fp8Recipe::Delayed:
      if (after_te_norm) return {fp8_transpose_kernel(elems)};
      return {k(cast, kCastTranspose)};
    case Fp8Recipe::Tensorwise:
      if (after_te_norm) return {k(cast, kCastTranspose)};  // the norm computed the amax
      return {k("fp8.amax", kAmax), k(cast, kCastTranspose)};
    case Fp8Recipe::Mxfp8: return {k("fp8.quantize", kMxfp8Quantize)};
  }
  return {};
}

}  // namespace trainsim
