// Names of the scenario's enums as the scenario file spells them, and NCCL setting lookup.
#include "scenario/scenario.hpp"

namespace trainsim {

const char* to_string(AlgorithmChoice a) {
  switch (a) {
    case AlgorithmChoice::Nccl: return "nccl";
    case AlgorithmChoice::HalvingDoubling: return "halving_doubling";
    case AlgorithmChoice::Hierarchical: return "hierarchical";
    case AlgorithmChoice::ReductionServer: return "reduction_server";
  }
  return "?";
}

const char* to_string(Framework f) {
  switch (f) {
    case Framework::Megatron: return "megatron";
    case Framework::DeepSpeed: return "deepspeed";
    case Framework::FSDP: return "fsdp";
  }
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
