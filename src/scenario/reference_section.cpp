// The `reference:` block: what a real run of the same job measured. It never changes what is
// simulated; `trainsim validate` compares against it.
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

std::optional<ReferenceSpec> read_reference(const Section& reference) {
  if (!reference.present()) return std::nullopt;
  ReferenceSpec r;
  reference.read("source", r.source);
  if (auto c = reference.choice<std::string>("confidence", {{"high", "high"}, {"medium", "medium"}, {"low", "low"}}))
    r.confidence = *c;
  reference.read("iteration_time_s", r.iteration_time_s, Bound::Positive);
  reference.read("tflops_per_gpu", r.tflops_per_gpu, Bound::Positive);
  reference.read("mfu", r.mfu, Bound::Positive);
  reference.read("hfu", r.hfu, Bound::Positive);
  reference.read("tokens_per_s_per_gpu", r.tokens_per_s_per_gpu, Bound::Positive);
  reference.read("busbw_GBps", r.busbw_GBps, Bound::Positive);
  // Utilisations are fractions of the peak (spec: "0..1"); 45 instead of 0.45 is a unit slip.
  if (r.mfu && *r.mfu > 1) reference.fail("mfu", "expected a fraction between 0 and 1, got " + std::to_string(*r.mfu));
  if (r.hfu && *r.hfu > 1) reference.fail("hfu", "expected a fraction between 0 and 1, got " + std::to_string(*r.hfu));
  if (auto f = reference.choice<FlopsConvention>(
          "flops_convention", {{"model", FlopsConvention::Model}, {"hardware", FlopsConvention::Hardware}}))
    r.flops_convention = *f;
  reference.read("notes", r.notes);
  return r;
}

}  // namespace trainsim::scenario_detail
