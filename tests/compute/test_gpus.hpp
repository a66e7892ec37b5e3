#pragma once
// GpuSpecs for the compute tests, built by hand (the catalog is another layer). Numbers from
// the vendors' datasheets as data/gpus.yaml records them (dense peaks, TFLOPS; HBM GB/s; SM / CU counts).
#include "hardware/gpu_spec.hpp"

namespace trainsim::test {

inline GpuSpec a100_80gb() {
  GpuSpec g;
  g.name = "A100-SXM4-80GB";
  g.architecture = "ampere";
  g.sm_version = 80;
  g.vendor = "NVIDIA";
  g.fp32_tflops = 19.5;
  g.tf32_tflops = 156;
  g.bf16_tflops = 312;
  g.fp16_tflops = 312;  // no fp8 on Ampere
  g.hbm_GBps = 2039;
  g.memory_gib = 80;
  g.sm_count = 108;
  return g;
}

inline GpuSpec h100_sxm() {
  GpuSpec g;
  g.name = "H100-SXM5-80GB";
  g.architecture = "hopper";
  g.sm_version = 90;
  g.vendor = "NVIDIA";
  g.fp32_tflops = 66.9;
  g.tf32_tflops = 494.7;
  g.bf16_tflops = 989.4;
  g.fp16_tflops = 989.4;
  g.fp8_tflops = 1978.9;
  g.hbm_GBps = 3350;
  g.memory_gib = 80;
  g.sm_count = 132;
  return g;
}

inline GpuSpec b200() {
  GpuSpec g;
  g.name = "B200-HGX";
  g.architecture = "blackwell";
  g.sm_version = 100;
  g.vendor = "NVIDIA";
  g.fp32_tflops = 75;
  g.tf32_tflops = 1100;
  g.bf16_tflops = 2250;
  g.fp16_tflops = 2250;
  g.fp8_tflops = 4500;
  g.hbm_GBps = 7700;
  g.memory_gib = 180;
  g.sm_count = 148;
  return g;
}

inline GpuSpec mi300x() {
  GpuSpec g;
  g.name = "MI300X";
  g.architecture = "cdna3";
  g.sm_version = 0;
  g.vendor = "AMD";
  g.fp32_tflops = 163.4;
  g.tf32_tflops = 653.7;
  g.bf16_tflops = 1307.4;
  g.fp16_tflops = 1307.4;
  g.fp8_tflops = 2614.9;
  g.hbm_GBps = 5300;
  g.memory_gib = 192;
  g.sm_count = 304;
  return g;
}

}  // namespace trainsim::test
