#pragma once
// KernelDesc builders for the compute tests, written from the FLOP/byte conventions in
// src/workload/kernel.hpp (kept local so these tests do not depend on the workload layer's code).
#include <cstdint>

#include "core/kernel_desc.hpp"

namespace trainsim::test {

inline double elem_bytes(Precision p) {
  switch (p) {
    case Precision::FP32:
    case Precision::TF32: return 4;
    case Precision::FP8: return 1;
    default: return 2;
  }
}

// FLOPs 2*m*n*k*batch; bytes: A, B read once and C written once.
inline KernelDesc gemm(std::int64_t m, std::int64_t n, std::int64_t k, Precision p = Precision::BF16,
                       std::int64_t batch = 1) {
  KernelDesc d;
  d.kind = KernelKind::Gemm;
  d.dtype = p;
  d.m = m;
  d.n = n;
  d.k = k;
  d.batch = batch;
  const double M = static_cast<double>(m), N = static_cast<double>(n), K = static_cast<double>(k);
  const double B = static_cast<double>(batch);
  d.flops = 2.0 * M * N * K * B;
  d.bytes = B * (M * K + K * N + M * N) * elem_bytes(p);
  return d;
}

// FA convention (FlashAttention papers' benchmarks): fwd FLOPs 4 * s_q * s_kv * d per (batch x head), halved when
// causal; bwd 2.5x the forward.
inline KernelDesc flash(bool backward, std::int64_t batch_heads, std::int64_t s_q, std::int64_t s_kv,
                        std::int64_t head_dim, bool causal, Precision p = Precision::BF16) {
  KernelDesc d;
  d.kind = backward ? KernelKind::FlashAttnBwd : KernelKind::FlashAttnFwd;
  d.dtype = p;
  d.batch = batch_heads;
  d.m = s_q;
  d.n = s_kv;
  d.k = head_dim;
  d.causal = causal;
  const double dense = 4.0 * static_cast<double>(batch_heads) * static_cast<double>(s_q) * static_cast<double>(s_kv) *
                       static_cast<double>(head_dim);
  d.flops = (backward ? 2.5 : 1.0) * (causal ? dense / 2 : dense);
  d.bytes = (backward ? 8.0 : 4.0) * static_cast<double>(batch_heads * s_q * head_dim) * elem_bytes(p);
  return d;
}

// The FA benchmarks run batch x seqlen = 16k tokens with hidden 2048 (FA2/FA3 benchmark setup): at head dim
// d that is (16384 / s) sequences x (2048 / d) heads.
inline std::int64_t bench_batch_heads(std::int64_t s, std::int64_t d) { return (16384 / s) * (2048 / d); }

inline KernelDesc memory(KernelKind kind, double bytes, double flops = 0, Precision p = Precision::BF16) {
  KernelDesc d;
  d.kind = kind;
  d.dtype = p;
  d.bytes = bytes;
  d.flops = flops;
  return d;
}

}  // namespace trainsim::test
