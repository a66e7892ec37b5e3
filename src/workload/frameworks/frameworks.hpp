#pragma once
// The implementations make_training_framework chooses from (training_framework.cpp), one file each.
#include <memory>

#include "workload/frameworks/training_framework.hpp"

namespace trainsim {

std::unique_ptr<TrainingFramework> make_megatron_framework();   // megatron.cpp
std::unique_ptr<TrainingFramework> make_fsdp_framework();       // fsdp.cpp
std::unique_ptr<TrainingFramework> make_deepspeed_framework();  // deepspeed.cpp

}  // namespace trainsim
