#!/usr/bin/env python3
"""Measure what a training step does to kernels on one NVIDIA GPU, for trainsim's compute model.

    gpu_characterise.py -o results.json [--parts sustained,interference,attention,fp8,memory,launch]
                        [--sustained-s 45]

Each part is a measurement that trainsim's models take a number from (docs/compute-model.md,
../shared/reference/kernels-in-training.md):

  sustained     bf16 GEMM (8192^3) back to back for --sustained-s seconds while nvidia-smi logs the SM
                clock, power and throttle reasons: the clock and throughput held under dense load.
  interference  GEMMs and flash attention alone, then beside a copy kernel on another stream that holds
                G CTAs of 512 threads (G = 2..32) and streams HBM, as an NCCL kernel holds one CTA per
                channel: the slowdown per SM taken. One GPU has no peer, so the copy kernel stands in for
                the collective (a ring all-gather's CTAs do the same: load a chunk, store it).
  attention     scaled_dot_product_attention per backend (flash = FlashAttention-2, cudnn, efficient),
                causal and not, head dim 128, sequence 512..65536 (batch x heads 256 down to 1): forward and
                backward TFLOP/s (causal FLOPs counted as half).
  fp8           layer-sized GEMMs in bf16 and fp8 (torch._scaled_mm, tensor-wise and row-wise scales),
                and the cast, transpose-cast and amax kernels Transformer Engine runs per GEMM input.
  memory        device copy and elementwise add: achieved HBM bandwidth.
  layer         a Llama-7B-sized transformer layer (RMSNorm, QKV, causal attention, output projection,
                SwiGLU MLP; bf16, 2 x 4096 tokens), forward + backward back to back for --sustained-s
                seconds with the clock logged: a training step's mix of kernels, short run vs sustained.
  launch        host time per kernel launch (eager) and per kernel in a replayed CUDA graph.

Every part is independent: one that fails is recorded with its error and the others still run. The
JSON is rewritten after each part, so a run cut short keeps what it measured.

Standard library + torch; the interference part also needs cupy (a RawKernel) or triton.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import traceback

PARTS = ("sustained", "interference", "attention", "fp8", "memory", "launch", "layer")
L2_FLUSH_BYTES = 256 << 20


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-o", "--output", required=True, help="JSON file to write")
    p.add_argument("--parts", default=",".join(PARTS), help="comma-separated subset of " + ",".join(PARTS))
    p.add_argument("--sustained-s", type=float, default=45.0, help="seconds of back-to-back GEMMs (default 45)")
    p.add_argument("--smi-log", help="also keep nvidia-smi's raw clock log here (CSV)")
    p.add_argument("--layer", default="4096,32,11008,4096,2", metavar="H,HEADS,FFN,SEQ,MB",
                   help="the layer part's size: hidden, heads, SwiGLU width, sequence, micro-batch "
                        "(default a Llama-7B layer over 2 x 4096 tokens)")
    a = p.parse_args(argv)
    a.parts = [x for x in a.parts.split(",") if x]
    try:
        a.layer = [int(v) for v in a.layer.split(",")]
    except ValueError:
        p.error(f"--layer needs five integers H,HEADS,FFN,SEQ,MB, got {a.layer!r}")
    if len(a.layer) != 5 or min(a.layer) < 1 or a.layer[0] % a.layer[1]:
        p.error(f"--layer needs five positive integers with HEADS dividing H, got {a.layer}")
    bad = [x for x in a.parts if x not in PARTS]
    if bad:
        p.error(f"unknown part(s) {bad}; choose from {PARTS}")
    return a


def smi(query):
    try:
        r = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, timeout=20)
        return [v.strip() for v in r.stdout.strip().split(",")] if r.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None


class Timer:
    """CUDA-event timing of a callable: median ms of `iters` calls after `warmup`, L2 flushed before each."""

    def __init__(self, torch):
        self.torch = torch
        self.flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")

    def ms(self, fn, warmup=3, iters=10, flush=True):
        torch = self.torch
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        pairs = []
        for _ in range(iters):
            if flush:
                self.flush.zero_()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            pairs.append((s, e))
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in pairs)


# --- sustained clocks -------------------------------------------------------------------------------

class SmiSampler:
    """nvidia-smi's SM clock, power and clock-event reasons every ~0.5 s, in a thread."""

    def __init__(self):
        base = "clocks.sm,clocks.mem,power.draw,temperature.gpu"
        # clocks_event_reasons (drivers >= 535), clocks_throttle_reasons before; without either, no reasons.
        self.q = next((q for q in (base + ",clocks_event_reasons.active", base + ",clocks_throttle_reasons.active")
                       if smi(q) is not None), base)
        self.samples = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        t0 = time.time()
        while not self.stop.is_set():
            v = smi(self.q)
            if v:
                self.samples.append([round(time.time() - t0, 2)] + v)
            time.sleep(0.5)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def clock_after(self, t):
        c = [float(r[1]) for r in self.samples if r[0] >= t and r[1].replace(".", "").isdigit()]
        return statistics.median(c) if c else None


def part_layer(torch, timer, args, raw_log):
    F = torch.nn.functional
    h, heads, ffn, seq, mb = args.layer
    d = h // heads
    dev, dt = "cuda", torch.bfloat16

    def w(*shape):
        return (torch.randn(*shape, device=dev, dtype=dt) * 0.02).requires_grad_(True)
    wqkv, wo, wg, wu, wd = w(h, 3 * h), w(h, h), w(h, ffn), w(h, ffn), w(ffn, h)
    n1, n2 = torch.ones(h, device=dev, dtype=dt, requires_grad=True), torch.ones(h, device=dev, dtype=dt,
                                                                                  requires_grad=True)
    x = torch.randn(mb, seq, h, device=dev, dtype=dt, requires_grad=True)

    def rms(t, g):
        return t * torch.rsqrt(t.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(t.dtype) * g

    def step():
        a = rms(x, n1)
        q, k, v = (a @ wqkv).view(mb, seq, 3, heads, d).permute(2, 0, 3, 1, 4).unbind(0)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(mb, seq, h)
        y = x + o @ wo
        b = rms(y, n2)
        z = y + (F.silu(b @ wg) * (b @ wu)) @ wd
        z.backward(torch.ones_like(z))
    flops = 3 * 2 * mb * seq * h * (3 * h + h + 3 * ffn) + 3.5 * 4 * mb * heads * seq * seq * d / 2
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    # Bursts: one step after a second of idle, so the clock is at boost when it starts (the power cap
    # takes tens of milliseconds to react): the speed a short benchmark of these kernels sees.
    bursts = []
    for _ in range(5):
        time.sleep(1.0)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        step()
        e.record()
        e.synchronize()
        bursts.append(s.elapsed_time(e))
    time.sleep(3.0)  # cool down: the first timed window is a short run
    windows = []
    with SmiSampler() as smi_log:
        t0 = time.time()
        while time.time() - t0 < args.sustained_s:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(5):
                step()
            e.record()
            e.synchronize()
            windows.append((round(time.time() - t0, 2), s.elapsed_time(e) / 5))
    late = [ms for t, ms in windows if t >= args.sustained_s / 2]
    return {"layer": f"llama-style h={h} heads={heads} ffn={ffn} seq={seq} mb={mb} bf16, fwd+bwd",
            "model_flops_per_step": flops,
            "first_window_ms": windows[0][1], "median_second_half_ms": statistics.median(late),
            "first_window_tflops": flops / windows[0][1] / 1e9,
            "sustained_tflops": flops / statistics.median(late) / 1e9,
            "sustained_over_first": windows[0][1] / statistics.median(late),
            "burst_ms": bursts, "burst_median_ms": statistics.median(bursts),
            "sustained_over_burst": statistics.median(bursts) / statistics.median(late),
            "sm_clock_mhz_median_second_half": smi_log.clock_after(args.sustained_s / 2),
            "windows": windows, "smi_samples": smi_log.samples}


def part_sustained(torch, timer, args, raw_log):
    n = 8192
    a = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
    flop = 2.0 * n ** 3
    for _ in range(5):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    windows = []  # (t_end_s, tflops) per window of 40 GEMMs
    with SmiSampler() as smi_log:
        t_start = time.time()
        while time.time() - t_start < args.sustained_s:
            reps = 40
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(reps):
                torch.matmul(a, b)
            e.record()
            e.synchronize()
            windows.append((round(time.time() - t_start, 2), reps * flop / (s.elapsed_time(e) * 1e-3) / 1e12))
    samples = smi_log.samples
    if raw_log:
        with open(raw_log, "w") as f:
            f.write("t_s,sm_mhz,mem_mhz,power_w,temp_c,event_reasons\n")
            for r in samples:
                f.write(",".join(str(x) for x in r) + "\n")

    def num(x):
        try:
            return float(x)
        except ValueError:
            return None
    late = [r for r in samples if r[0] >= args.sustained_s / 2]
    clocks = [num(r[1]) for r in late if num(r[1])]
    power = [num(r[3]) for r in late if num(r[3])]
    tf_all = [t for _, t in windows]
    tf_late = [t for te, t in windows if te >= args.sustained_s / 2]
    return {
        "gemm": "bf16 8192x8192x8192 torch.matmul, back to back",
        "seconds": args.sustained_s,
        "tflops_first_window": tf_all[0] if tf_all else None,
        "tflops_median_second_half": statistics.median(tf_late) if tf_late else None,
        "tflops_min": min(tf_all) if tf_all else None,
        "sm_clock_mhz_median_second_half": statistics.median(clocks) if clocks else None,
        "sm_clock_mhz_min_second_half": min(clocks) if clocks else None,
        "power_w_median_second_half": statistics.median(power) if power else None,
        "event_reasons_second_half": sorted({r[5] for r in late if len(r) > 5}),
        "windows": windows,
        "smi_samples": samples,
    }


# --- interference -------------------------------------------------------------------------------------

COPY_SRC = r"""
extern "C" __global__ void chan_copy(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                     long long n, int reps) {
  for (int r = 0; r < reps; ++r)
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
      dst[i] = src[i];
}
"""


def make_copy_launcher(torch):
    """A launcher (ctas, reps, stream) of a grid-stride HBM copy, as an NCCL channel's CTA copies."""
    nbytes = 1 << 30
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    n16 = nbytes // 16
    try:
        import cupy
        kern = cupy.RawKernel(COPY_SRC, "chan_copy")

        def launch(ctas, reps, stream):
            with cupy.cuda.ExternalStream(stream.cuda_stream):
                kern((ctas,), (512,), (cupy.uint64(src.data_ptr()), cupy.uint64(dst.data_ptr()),
                                       cupy.int64(n16), cupy.int32(reps)))
        launch(1, 1, torch.cuda.current_stream())  # compiles, and fails here rather than mid-measurement
        torch.cuda.synchronize()
        return launch, nbytes, "cupy RawKernel, 512 threads/CTA, 16-byte loads"
    except Exception as e:  # no cupy, or it cannot launch here: Triton's copy instead
        print(f"gpu_characterise: cupy copy kernel unavailable ({e}); using triton", file=sys.stderr)
    import triton
    import triton.language as tl

    @triton.jit
    def chan_copy(src_ptr, dst_ptr, n, reps, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        nprog = tl.num_programs(0)
        for _ in range(reps):
            for start in range(pid * BLOCK, n, nprog * BLOCK):
                offs = start + tl.arange(0, BLOCK)
                m = offs < n
                tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)
    s32, d32 = src.view(torch.int32), dst.view(torch.int32)

    def launch(ctas, reps, stream):
        with torch.cuda.stream(stream):
            chan_copy[(ctas,)](s32, d32, s32.numel(), reps, BLOCK=2048, num_warps=16)
    return launch, nbytes, "triton, 16 warps/CTA"


def part_interference(torch, timer, args, raw_log):
    F = torch.nn.functional
    launch, nbytes, how = make_copy_launcher(torch)
    side = torch.cuda.Stream()
    main = torch.cuda.Stream()  # both non-blocking: the legacy default stream would serialise them
    victims = {}
    for (m, n, k) in [(8192, 8192, 8192), (16384, 12288, 4096), (16384, 4096, 4096), (8192, 28672, 8192),
                      (4096, 4096, 4096)]:
        a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
        victims[f"gemm bf16 m={m} n={n} k={k}"] = (lambda a=a, b=b: torch.matmul(a, b), 2.0 * m * n * k)
    q = torch.randn(1, 32 * 4, 4096, 128, dtype=torch.bfloat16, device="cuda")
    victims["flash fwd causal s=4096 bh=128 d=128"] = (
        lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True), 4.0 * 4096 * 4096 * 128 * 128 / 2)

    # The copy alone: bandwidth by CTA count.
    copy_alone = {}
    for g in (2, 4, 8, 16, 24, 32):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(side)
        launch(g, 2, side)
        e.record(side)
        e.synchronize()
        copy_alone[g] = 2 * 2 * nbytes / (s.elapsed_time(e) * 1e-3) / 1e9  # read + write, GB/s
    results = {"copy_kernel": how, "copy_alone_GBps_by_ctas": copy_alone, "victims": {}}
    for name, (fn, flop) in victims.items():
        with torch.cuda.stream(main):
            alone = timer.ms(fn, warmup=5, iters=20, flush=False)
        row = {"alone_ms": alone, "alone_tflops": flop / (alone * 1e-3) / 1e12, "beside_copy": {}}
        for g in (2, 4, 8, 16, 24, 32):
            # Enough repetitions that the copy outlasts 30 victim calls; the victims are timed between
            # their own events on the main stream while the copy runs on the side stream.
            need_s = 60 * alone * 1e-3
            reps = max(1, int(need_s * copy_alone[g] * 1e9 / (2 * nbytes)) + 1)
            torch.cuda.synchronize()
            launch(g, reps, side)
            time.sleep(0.002)  # let the copy's CTAs become resident first
            pairs = []
            with torch.cuda.stream(main):
                for i in range(30):
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record(main)
                    fn()
                    e.record(main)
                    pairs.append((s, e))
            torch.cuda.synchronize()
            t = statistics.median(s.elapsed_time(e) for s, e in pairs[5:])
            row["beside_copy"][g] = {"ms": t, "slowdown": t / alone,
                                     "sm_fraction_taken": g / torch.cuda.get_device_properties(0).multi_processor_count}
        results["victims"][name] = row
    return results


# --- attention ----------------------------------------------------------------------------------------

def part_attention(torch, timer, args, raw_log):
    F = torch.nn.functional
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return {"error": "torch.nn.attention.sdpa_kernel needs PyTorch >= 2.3"}
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
    if hasattr(SDPBackend, "CUDNN_ATTENTION"):
        backends["cudnn"] = SDPBackend.CUDNN_ATTENTION
    d = 128
    rows = []
    for name, be in backends.items():
        for causal in (True, False):
            for s in (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536):
                # About 1 TFLOP per causal forward from 4K up (256 heads x micro-batch below): enough work
                # to fill the GPU, little enough to time 65K tokens in milliseconds.
                bh = max(1, min(256, 2 ** 32 // (s * s)))
                flop_fwd = 4.0 * bh * s * s * d * (0.5 if causal else 1.0)
                row = {"backend": name, "causal": causal, "seq": s, "batch_x_heads": bh, "head_dim": d}
                try:
                    with sdpa_kernel(be):
                        q = torch.randn(1, bh, s, d, dtype=torch.bfloat16, device="cuda", requires_grad=True)
                        k = torch.randn_like(q, requires_grad=True)
                        v = torch.randn_like(q, requires_grad=True)

                        def fwd():
                            with torch.no_grad():
                                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        t_f = timer.ms(fwd, warmup=2, iters=5)
                        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        dout = torch.randn_like(out)
                        t_b = timer.ms(lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True),
                                       warmup=2, iters=5)
                        del out, dout, q, k, v
                    row.update(fwd_ms=t_f, bwd_ms=t_b, fwd_tflops=flop_fwd / (t_f * 1e-3) / 1e12,
                               bwd_tflops=2.5 * flop_fwd / (t_b * 1e-3) / 1e12)
                except Exception as e:  # a backend that does not support this shape / GPU
                    row["error"] = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
                torch.cuda.empty_cache()
                rows.append(row)
    return {"flop_convention": "fwd 4*bh*s^2*d (x0.5 causal); bwd 2.5x fwd", "rows": rows}


# --- fp8 ----------------------------------------------------------------------------------------------

def part_fp8(torch, timer, args, raw_log):
    rows = []
    f8 = torch.float8_e4m3fn
    one = torch.ones((), dtype=torch.float32, device="cuda")
    for tokens in (4096, 16384):
        for (n, k) in [(6144, 4096), (4096, 4096), (22016, 4096), (4096, 11008), (10240, 8192), (8192, 8192),
                       (57344, 8192), (8192, 28672)]:
            row = {"m": tokens, "n": n, "k": k}
            a = torch.randn(tokens, k, dtype=torch.bfloat16, device="cuda")
            b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
            flop = 2.0 * tokens * n * k
            t = timer.ms(lambda: torch.matmul(a, b))
            row["bf16_ms"], row["bf16_tflops"] = t, flop / (t * 1e-3) / 1e12
            try:
                a8 = a.to(f8)
                b8 = b.t().contiguous().to(f8).t()  # column-major second operand
                t = timer.ms(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
                row["fp8_tensorwise_ms"], row["fp8_tensorwise_tflops"] = t, flop / (t * 1e-3) / 1e12
                sa = torch.ones(tokens, 1, dtype=torch.float32, device="cuda")
                sb = torch.ones(1, n, dtype=torch.float32, device="cuda")
                try:
                    t = timer.ms(lambda: torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16))
                    row["fp8_rowwise_ms"], row["fp8_rowwise_tflops"] = t, flop / (t * 1e-3) / 1e12
                except Exception as e:
                    row["fp8_rowwise_error"] = str(e).splitlines()[0][:200]
                # The casts Transformer Engine runs on one GEMM input of this shape: amax, scaled cast,
                # and the cast of the transpose (the backward's wgrad operand).
                row["amax_ms"] = timer.ms(lambda: a.abs().amax())
                row["cast_ms"] = timer.ms(lambda: (a * 1.0).to(f8))
                row["cast_transpose_ms"] = timer.ms(lambda: a.t().contiguous().to(f8))
                row["input_bytes_bf16"] = a.numel() * 2
            except Exception as e:
                row["fp8_error"] = str(e).splitlines()[0][:200]
            del a, b
            torch.cuda.empty_cache()
            rows.append(row)
    return {"rows": rows}


# --- memory and launch ---------------------------------------------------------------------------------

def part_memory(torch, timer, args, raw_log):
    out = {}
    for gib in (1, 4):
        n = gib << 30
        x = torch.empty(n, dtype=torch.uint8, device="cuda")
        y = torch.empty_like(x)
        t = timer.ms(lambda: y.copy_(x), flush=False)
        out[f"copy_{gib}GiB_GBps_rw"] = 2 * n / (t * 1e-3) / 1e9
        a = torch.empty(n // 2, dtype=torch.bfloat16, device="cuda")
        b = torch.empty_like(a)
        c = torch.empty_like(a)
        t = timer.ms(lambda: torch.add(a, b, out=c), flush=False)
        out[f"add_{gib}GiB_GBps_rw"] = 3 * n / (t * 1e-3) / 1e9
        del x, y, a, b, c
        torch.cuda.empty_cache()
    return out


def part_launch(torch, timer, args, raw_log):
    x = torch.zeros(1, device="cuda")
    n = 20000
    for _ in range(100):
        x.add_(1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    t_host = time.perf_counter() - t0
    torch.cuda.synchronize()
    t_all = time.perf_counter() - t0
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(1000):
            x.add_(1)
    g.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(10):
        g.replay()
    torch.cuda.synchronize()
    t_graph = time.perf_counter() - t0
    return {"eager_host_us_per_launch": t_host / n * 1e6, "eager_us_per_kernel_end_to_end": t_all / n * 1e6,
            "graph_us_per_kernel": t_graph / 10000 * 1e6,
            "what": "x.add_(1) on one element: host dispatch + launch (eager) vs replayed CUDA graph"}


def main(argv):
    args = parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        sys.exit("gpu_characterise: needs a CUDA GPU")
    props = torch.cuda.get_device_properties(0)
    info = {"device": torch.cuda.get_device_name(0), "sm_count": props.multi_processor_count,
            "memory_gib": props.total_memory / 2 ** 30, "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    v = smi("driver_version,clocks.max.sm,clocks.max.mem,clocks.applications.graphics,power.limit,"
            "power.default_limit,clocks.sm")
    if v:
        info.update(zip(["driver", "max_sm_mhz", "max_mem_mhz", "application_sm_mhz", "power_limit_w",
                         "default_power_limit_w", "idle_sm_mhz"], v))
    result = {"info": info}

    def save():
        with open(args.output, "w") as f:
            json.dump(result, f, indent=1)
    save()
    timer = Timer(torch)
    for part in args.parts:
        t0 = time.time()
        print(f"gpu_characterise: {part} ...", file=sys.stderr, flush=True)
        try:
            result[part] = globals()["part_" + part](torch, timer, args, args.smi_log)
        except Exception as e:
            result[part] = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-2000:]}
        result[part + "_wall_s"] = round(time.time() - t0, 1)
        torch.cuda.empty_cache()
        save()
        print(f"gpu_characterise: {part} done in {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
