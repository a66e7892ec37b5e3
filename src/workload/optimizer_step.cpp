#include "workload/optimizer_step.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/check.hpp"
#include "workload/kernels_factory.hpp"

namespace trainsim {

namespace {

// MultiTensorApply.cuh: tensors per launch by the number of tensor lists, blocks per launch, elements per block.
constexpr std::array<int, 5> kMaxTensors = {110, 64, 48, 36, 30};
constexpr double kBlocksPerLaunch = 320;
constexpr double kChunkElements = 65536;

// One elementwise op of an unfused update: HBM bytes per element and the tensor lists its kernel takes.
struct Pass {
  double bytes;
  int lists;
};

// torch.optim.AdamW's ops (adamw.py, _multi_tensor_adamw / _single_tensor_adamw): param.mul_(1 - lr * wd) (8 B),
// exp_avg.lerp_(grad) (12), exp_avg_sq.mul_(beta2) (8), .addcmul_(grad, grad) (16), sqrt (8), div_ by the bias
// correction (8), add_(eps) (8), param.addcdiv_(exp_avg, denom) (16): 84 B per element.
constexpr std::array<Pass, 8> kAdamPasses = {{{8, 1}, {12, 2}, {8, 1}, {16, 3}, {8, 2}, {8, 1}, {8, 1}, {16, 3}}};
// torch.optim.SGD with momentum (sgd.py): buf.mul_(momentum) (8), buf.add_(grad) (12), param.add_(buf) (12).
constexpr std::array<Pass, 3> kSgdPasses = {{{8, 1}, {12, 2}, {12, 2}}};
// The clip-scale pass and the fp32 -> bf16 copy (optimizer_step_kernel), as one more pass over two lists.
constexpr Pass kAround = {kOptimizerAroundBytesPerElement, 2};

// Adds ops for `launches` launches of one pass, split so that no op stands for more than an op can count.
void add_launches(std::vector<OptimizerOp>& out, const KernelDesc& k, int launches) {
  constexpr int kMaxPerOp = 255;  // Op::launches
  const int ops = std::max(1, (launches + kMaxPerOp - 1) / kMaxPerOp);
  for (int i = 0; i < ops; ++i) {
    KernelDesc part = k;
    part.bytes /= ops;
    part.flops /= ops;
    out.push_back({part, std::min(kMaxPerOp, launches - i * kMaxPerOp)});
  }
}

}  // namespace

void emit_optimizer_step(RankBuilder& rb, const OpContext& ctx, Optimizer o, OptimizerImplementation impl,
                         const std::vector<double>& tensors, Precision p) {
  for (const OptimizerOp& op : optimizer_step_ops(o, impl, tensors, p)) {
    if (op.after_host_read) rb.host_wait_for_last();
    rb.compute(ctx, optimizer_step_name(o), op.kernel, op.launches);
  }
}

int multi_tensor_launches(const std::vector<double>& tensors, int lists) {
  TRAINSIM_CHECK(lists >= 1 && lists <= static_cast<int>(kMaxTensors.size()), "multi-tensor kernel lists out of range");
  const auto max_tensors = static_cast<std::size_t>(kMaxTensors[static_cast<std::size_t>(lists - 1)]);
  // A launch is sent when it holds its tensors' worth or its blocks' worth, whichever fills first.
  int launches = 0;
  std::size_t held = 0;
  double blocks = 0;
  for (const double n : tensors) {
    if (!(n > 0)) continue;
    double left = std::ceil(n / kChunkElements);
    ++held;
    while (blocks + left >= kBlocksPerLaunch) {
      left -= kBlocksPerLaunch - blocks;
      ++launches;
      blocks = 0;
      held = left > 0 ? 1 : 0;
    }
    blocks += left;
    if (held == max_tensors) {
      ++launches;
      held = 0;
      blocks = 0;
    }
  }
  if (held > 0) ++launches;
  return launches;
}

std::vector<double> local_optimizer_tensors(const std::vector<ParamUnit>& units, OptimizerSharding sharding, int shards,
                                            double local_total) {
  TRAINSIM_CHECK(shards >= 1, "local_optimizer_tensors: shards must be positive");
  const double n = static_cast<double>(shards);
  std::vector<double> out;
  double sum = 0;
  for (const ParamUnit& u : units) {
    if (!(u.params > 0) || u.tensors < 1) continue;
    const double c = static_cast<double>(u.tensors);
    double count = c, share = u.params;
    if (sharding == OptimizerSharding::PerTensor) share = u.params / n;
    if (sharding == OptimizerSharding::Flat) {
      count = std::max(1.0, std::round(std::min(c, 1.0 + c / n)));
      share = u.params / n;
    }
    for (int i = 0; i < static_cast<int>(count); ++i) out.push_back(share / count);
    sum += share;
  }
  if (sum > 0)
    for (double& x : out) x *= local_total / sum;
  return out;
}

std::vector<OptimizerOp> optimizer_step_ops(Optimizer o, OptimizerImplementation impl,
                                            const std::vector<double>& tensors, Precision p) {
  TRAINSIM_CHECK(impl != OptimizerImplementation::Auto, "optimizer_step_ops: the implementation is resolved first");
  double total = 0;
  for (const double n : tensors) total += n;
  std::vector<OptimizerOp> out;
  if (!(total > 0)) return out;
  if (impl == OptimizerImplementation::Fused) {
    // The update over p, g, m, v (SGD: p, g, buf), the clip scale and the copy: multi-tensor launches each.
    const int lists = o == Optimizer::SGD ? 3 : 4;
    const int launches = multi_tensor_launches(tensors, lists) + 2 * multi_tensor_launches(tensors, kAround.lists);
    add_launches(out, optimizer_step_kernel(o, total, p), launches);
    return out;
  }
  TRAINSIM_CHECK(o != Optimizer::Lamb, "LAMB runs only as fused kernels (validation refuses the rest)");
  std::vector<Pass> passes = o == Optimizer::SGD ? std::vector<Pass>(kSgdPasses.begin(), kSgdPasses.end())
                                                 : std::vector<Pass>(kAdamPasses.begin(), kAdamPasses.end());
  passes.push_back(kAround);
  const double flops = optimizer_step_kernel(o, 1, p).flops / static_cast<double>(passes.size());
  if (impl == OptimizerImplementation::Foreach) {
    for (const Pass& pass : passes)
      add_launches(out, memory_kernel(KernelKind::OptimizerStep, pass.bytes * total, flops * total, p),
                   multi_tensor_launches(tensors, pass.lists));
    return out;
  }
  const bool synced = impl == OptimizerImplementation::DecoupledAdamW;
  if (synced)  // state['step'] += 1 for every parameter first, one 4-byte kernel each
    for (const double n : tensors)
      if (n > 0) out.push_back({memory_kernel(KernelKind::OptimizerStep, 8, 1, p), 1});
  for (const double n : tensors) {
    if (!(n > 0)) continue;
    for (std::size_t i = 0; i < passes.size(); ++i)
      out.push_back({memory_kernel(KernelKind::OptimizerStep, passes[i].bytes * n, flops * n, p), 1, synced && i == 0});
  }
  return out;
}

}  // namespace trainsim
