// A transformer layer as eager PyTorch runs it (training.fusion: eager; the default for framework fsdp):
// every PyTorch op is its own kernel with its own pass over HBM, where Megatron / Transformer Engine (or
// torch.compile) fuse them. The GEMMs and the fused attention kernel are the same either way; what changes
// is the memory-bound work around them. Bytes below count reads + writes per element of the tensor the op
// runs over, with `ab` the activation dtype's size and 4 the fp32 that PyTorch's own code upcasts to.
// Checked against a Llama-style layer written in plain PyTorch and timed on an H200 at three sizes
// (data/measured/H200-2026-11-27, characterise-layer-sizes.json; test MeasuredH200Layer.*).
#include "workload/kernels_factory.hpp"
#include "workload/layer_ops.hpp"

namespace trainsim {

namespace {
using layer_ops_detail::D;

// fp32 bytes: the dtype PyTorch's RMSNorm code computes in whatever the activation dtype.
constexpr double kF32 = 4.0;
}  // namespace

void LayerEmitter::eager_norm(const OpContext& ctx, const char* name, bool backward, double rows, double width) {
  const double ab = activation_bytes(d_.precision);
  const double elems = rows * width;
  if (d_.layernorm) {
    // F.layer_norm: PyTorch's own kernel, which runs at about half the HBM bandwidth of a fused one
    // (KernelKind::TorchLayerNorm, measured). Forward reads x and writes y; backward reads x and dy and
    // writes dx, then a second kernel reads x and dy again for the weight and bias gradients.
    rb_.compute(ctx, name,
                memory_kernel(KernelKind::TorchLayerNorm, elems * ab * (backward ? 5.0 : 2.0),
                              elems * (backward ? 10.0 : 6.0), d_.precision),
                backward ? 2 : 1);
    return;
  }
  // RMSNorm written in PyTorch (Hugging Face's LlamaRMSNorm and its kind):
  //   w * (x.float() * rsqrt(x.float().pow(2).mean(-1) + eps)).to(dtype)
  // forward: upcast (ab + 4), pow (4 + 4), mean (4), scale (4 + 4), downcast (4 + ab), weight (ab + ab)
  //   = 4 ab + 28;
  // backward, autograd through the same ops: weight (2 ab) and its gradient (4 ab), downcast (ab + 4),
  //   scale (8) and its row sums (16), mean (4), pow (12), the two paths into x summed (12), upcast (4 + ab)
  //   = 8 ab + 60.
  // Kernels launched: forward the six passes above plus `+ eps` and `rsqrt` on the row means (8); backward
  // autograd's formulas for them: the weight product's two gradients and the weight's row sum (3), the downcast
  // (1), the scale's two gradients and the row sum (3), rsqrt (2), mean (1), pow (2), the sum of the paths into
  // x (1) and the upcast (1) (14).
  const double bytes = backward ? 8.0 * ab + 15.0 * kF32 : 4.0 * ab + 7.0 * kF32;
  rb_.compute(ctx, name,
              memory_kernel(KernelKind::Elementwise, elems * bytes, elems * (backward ? 10.0 : 6.0), d_.precision),
              backward ? 14 : 8);
}

double LayerEmitter::activation_bytes_per_element(bool backward) const {
  const double ab = activation_bytes(d_.precision);
  // Fused (Megatron's bias-GeLU / SwiGLU kernels, and a lone GeLU in eager PyTorch): forward reads the
  // G inputs and writes one output; backward reads the gradient and the G inputs and writes G gradients.
  if (!d_.eager || d_.G == 1) return backward ? (2.0 * d_.G + 1.0) * ab : (d_.G + 1.0) * ab;
  // Eager SwiGLU, silu(gate) * up: forward silu (2 ab) then the product (3 ab); backward the product's two
  // gradients (3 ab each) and silu's (3 ab).
  return backward ? 9.0 * ab : 5.0 * ab;
}

int LayerEmitter::activation_launches(bool backward) const {
  if (!d_.eager || d_.G == 1) return 1;
  return backward ? 3 : 2;  // silu and the product; backward the product's two gradients and silu's
}

int LayerEmitter::rope_launches() const {
  // Eager, for q and for k: neg, cat, the two products and the sum forward; backward the two products'
  // gradients, neg's, the slices' gradients copied back and the two paths summed.
  return d_.eager ? 10 : 1;
}

double LayerEmitter::rope_bytes_per_element() const {
  const double ab = activation_bytes(d_.precision);
  if (!d_.eager) return 2.0 * ab;  // one fused kernel reads q / k and writes them rotated
  // Eager: x * cos + rotate_half(x) * sin, rotate_half = cat(-x2, x1): negate half (ab), concatenate (2 ab),
  // two products (2 ab each), the sum (3 ab); backward the same chain in reverse.
  return 10.0 * ab;
}

void LayerEmitter::eager_output_layout(const OpContext& ctx, bool backward) {
  // The kernel's output [b, heads, s, d] transposed back to [b, s, heads * d] for the output projection
  // (out.transpose(1, 2).contiguous()); backward, the projection's input gradient copied into the kernel's layout.
  elementwise(ctx, backward ? "attn.output_layout.bwd" : "attn.output_layout",
              D(d_.T) * D(d_.attn_local) * 2.0 * activation_bytes(d_.precision));
}

void LayerEmitter::eager_qkv_grad_layout(const OpContext& ctx) {
  // The q, k and v gradients gathered into the projection's [T, (a + 2g) d] gradient.
  elementwise(ctx, "attn.qkv_grad_layout", D(d_.T) * D(d_.qkv_out) * 2.0 * activation_bytes(d_.precision));
}

}  // namespace trainsim
