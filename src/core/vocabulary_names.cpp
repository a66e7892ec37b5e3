// Names of the shared vocabulary (precision, collective kinds, kernel kinds), as reports and scenario files
// spell them.
#include "core/collective_kind.hpp"
#include "core/kernel_desc.hpp"
#include "core/precision.hpp"

namespace trainsim {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::TF32: return "tf32";
    case Precision::BF16: return "bf16";
    case Precision::FP16: return "fp16";
    case Precision::FP8: return "fp8";
    case Precision::FP4: return "fp4";
  }
  return "?";
}

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce: return "all_reduce";
    case CollectiveOp::AllGather: return "all_gather";
    case CollectiveOp::ReduceScatter: return "reduce_scatter";
    case CollectiveOp::Broadcast: return "broadcast";
    case CollectiveOp::Reduce: return "reduce";
    case CollectiveOp::AllToAll: return "alltoall";
    case CollectiveOp::SendRecv: return "sendrecv";
  }
  return "?";
}

const char* to_string(KernelKind k) {
  switch (k) {
    case KernelKind::Gemm: return "gemm";
    case KernelKind::FlashAttnFwd: return "flash_attn_fwd";
    case KernelKind::FlashAttnBwd: return "flash_attn_bwd";
    case KernelKind::AttnScoreGemm: return "attention_unfused";
    case KernelKind::Softmax: return "softmax";
    case KernelKind::LayerNorm: return "layernorm";
    case KernelKind::Elementwise: return "elementwise";
    case KernelKind::CrossEntropy: return "cross_entropy";
    case KernelKind::Embedding: return "embedding";
    case KernelKind::OptimizerStep: return "optimizer_step";
    case KernelKind::Memset: return "memset";
    case KernelKind::TorchLayerNorm: return "torch_layernorm";
    case KernelKind::FixedDuration: return "fixed_duration";
  }
  return "?";
}

const char* to_string(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::Auto: return "auto";
    case AttentionKernel::Flash1: return "flash1";
    case AttentionKernel::Flash2: return "flash2";
    case AttentionKernel::Flash3: return "flash3";
    case AttentionKernel::Flash4: return "flash4";
    case AttentionKernel::Triton: return "triton";
    case AttentionKernel::Cudnn: return "cudnn";
  }
  return "auto";
}

}  // namespace trainsim
