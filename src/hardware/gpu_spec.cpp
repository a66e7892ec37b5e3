#include "hardware/gpu_spec.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace trainsim {

namespace {
const std::optional<double>& peak_field(const GpuSpec& g, Precision p) {
  switch (p) {
    case Precision::FP32: return g.fp32_tflops;
    case Precision::TF32: return g.tf32_tflops;
    case Precision::BF16: return g.bf16_tflops;
    case Precision::FP16: return g.fp16_tflops;
    case Precision::FP8: return g.fp8_tflops;
    case Precision::FP4: return g.fp4_tflops;
  }
  throw Error(fmt::format("GPU {}: unknown precision value {}", g.name, static_cast<int>(p)));
}
}  // namespace

bool GpuSpec::supports(Precision p) const {
  const auto& v = peak_field(*this, p);
  return v.has_value() && *v > 0;
}

double GpuSpec::peak_tflops(Precision p) const {
  const auto& v = peak_field(*this, p);
  if (!v.has_value() || *v <= 0) {
    throw Error(
        fmt::format("GPU {} has no {} support (no dense {} peak in its spec); choose another "
                    "training.precision or GPU",
                    name.empty() ? std::string("(unnamed)") : name, to_string(p), to_string(p)));
  }
  return *v;
}

}  // namespace trainsim
