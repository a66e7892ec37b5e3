#include "workload/frameworks/training_framework.hpp"

#include <string>

#include "core/check.hpp"
#include "core/error.hpp"
#include "workload/frameworks/frameworks.hpp"

namespace trainsim {

void TrainingFramework::validate(const Scenario& s) const {
  const auto& p = s.parallelism;
  if (s.model.moe.enabled())  // validation rejects it; a direct caller too
    throw ScenarioError(s.file, "parallelism.framework", "model.moe is simulated with framework megatron only");
  if (p.virtual_pipeline > 1)
    throw ScenarioError(s.file, "parallelism.virtual_pipeline",
                        "virtual_pipeline " + std::to_string(p.virtual_pipeline) +
                            " selects Megatron-LM's interleaved 1F1B schedule; framework " + to_string(p.framework) +
                            " has no interleaved schedule (use virtual_pipeline 1)");
}

std::unique_ptr<TrainingFramework> make_training_framework(Framework framework) {
  switch (framework) {
    case Framework::Megatron: return make_megatron_framework();
    case Framework::DeepSpeed: return make_deepspeed_framework();
    case Framework::FSDP: return make_fsdp_framework();
  }
  TRAINSIM_UNREACHABLE("training framework without an implementation");
}

}  // namespace trainsim
