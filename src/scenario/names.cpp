// Names of the scenario's enums as the scenario file spells them, and NCCL setting lookup.
#include "scenario/scenario.hpp"

namespace trainsim {

namespace {
constexpr FrameworkInfo kFrameworks[] = {
    {Framework::Megatron, "megatron",
     "Megatron-LM / Megatron-Core / NeMo: TP/PP/CP/EP, DDP buckets or the distributed optimizer (zero_stage 1), "
     "interleaved 1F1B, fused kernels"},
    {Framework::DeepSpeed, "deepspeed",
     "DeepSpeed ZeRO 1-3 with its bucket and prefetch settings (parallelism.deepspeed.*)"},
    {Framework::FSDP, "fsdp",
     "PyTorch FSDP (FULL_SHARD = zero_stage 3, SHARD_GRAD_OP = 2): per-unit all-gathers and reduce-scatters, "
     "fp32 gradient reduction, eager PyTorch kernels by default"},
};
}  // namespace

std::span<const FrameworkInfo> frameworks() { return kFrameworks; }

const char* to_string(Framework f) {
  for (const FrameworkInfo& i : kFrameworks)
    if (i.id == f) return i.name;
  return "?";
}

const char* to_string(Fusion f) {
  switch (f) {
    case Fusion::Auto: return "auto";
    case Fusion::Eager: return "eager";
    case Fusion::Fused: return "fused";
  }
  return "auto";
}

const char* to_string(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::Delayed: return "delayed";
    case Fp8Recipe::Tensorwise: return "tensorwise";
    case Fp8Recipe::Mxfp8: return "mxfp8";
  }
  return "?";
}

bool eager_pytorch(const Scenario& s) {
  if (s.training.fusion != Fusion::Auto) return s.training.fusion == Fusion::Eager;
  return s.parallelism.framework == Framework::FSDP;
}

const char* to_string(RecomputeGranularity r) {
  switch (r) {
    case RecomputeGranularity::None: return "none";
    case RecomputeGranularity::Selective: return "selective";
    case RecomputeGranularity::Full: return "full";
  }
  return "?";
}

std::optional<std::string> NcclSpec::get(const std::string& name) const {
  const auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  return it->second;
}

}  // namespace trainsim
