#!/usr/bin/env python3
"""Profile the kernels a trainsim scenario needs and write an op database (docs/op-database.md).

    profile_ops.py SCENARIO -o db.csv [--trainsim PATH] [--gpu-name NAME] [--device cuda|cpu]
                   [--warmup N] [--iters N] [--max-ops N] [--set k=v ...]

Asks `trainsim ops SCENARIO --json` for the distinct kernels of one iteration, builds PyTorch
tensors of each kernel's shape, times the matching PyTorch op and writes one CSV row per kernel.
On a CUDA GPU each call is timed with CUDA events after warm-up (median of --iters, L2 flushed
before each call); without one it runs on the CPU, so the pipeline can be tested anywhere (the
CPU times describe no GPU). Kernels that cannot be run here are skipped with a message on stderr;
the simulator prices those with its roofline model. See tools/profile/README.md.

Standard library + torch only.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

DB_MAGIC = "# trainsim op database v1"
DB_HEADER = "gpu,op,dtype,m,n,k,batch,causal,bytes,time_us"

# Kinds the database keys by shape (m, n, k, batch, causal); the others by the HBM bytes they move.
SHAPE_KINDS = ("gemm", "attention_unfused", "flash_attn_fwd", "flash_attn_bwd")
MEMORY_KINDS = ("softmax", "layernorm", "torch_layernorm", "elementwise", "cross_entropy", "embedding", "optimizer_step",
                "memset")

# HBM traffic per element of the PyTorch op each memory-bound kind runs, in elements of the tensor
# dtype (reads + writes): the op is sized with bytes / (traffic * element size) elements so that it
# moves about the kernel's `bytes`.
#   softmax        torch.softmax(x, -1)                     read x, write y               2
#   layernorm      F.layer_norm(x, (w,), weight, bias)      read x, write y               2
#                  (stands in for the fused norm of Transformer Engine / apex, which needs those packages)
#   torch_layernorm  F.layer_norm, as an eager model runs it  read x, write y               2
#   elementwise    torch.add(a, b, out=c)                   read a, b, write c            3
#   cross_entropy  F.cross_entropy(logits, target)          log-softmax read + write, nll read   3
#   embedding      F.embedding(index, table)                read gathered rows, write out 2
#   memset         t.zero_()                                write t                       1
# optimizer_step runs torch.optim.Adam on fp32 master weights whatever the training dtype: it reads
# weight, grad, exp_avg, exp_avg_sq and writes weight, exp_avg, exp_avg_sq, 7 x 4 = 28 bytes/param.
MEMORY_TRAFFIC = {"softmax": 2, "layernorm": 2, "torch_layernorm": 2, "elementwise": 3, "cross_entropy": 3, "embedding": 2, "memset": 1}
ADAM_BYTES_PER_PARAM = 28
ROW_WIDTH = 4096          # last dimension of the 2-D tensors memory-bound ops run on (a hidden size)
EMBEDDING_TABLE_ROWS = 8192

# CPU runs are for testing the pipeline: skip kernels that would take minutes or need a lot of memory.
CPU_DEFAULT_MAX_GFLOP = 50.0
CPU_DEFAULT_MAX_MIB = 2048.0

L2_FLUSH_BYTES = 256 << 20  # larger than any GPU's L2 (H100: 50 MiB, B200: 126 MiB)


class Skip(Exception):
    """This kernel is not profiled here; the message says why."""


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Time the distinct kernels of a trainsim scenario with PyTorch and write an op database CSV.")
    p.add_argument("scenario", nargs="?", help="scenario YAML file (or give --ops-json instead)")
    p.add_argument("--ops-json", metavar="FILE",
                   help="read the kernel list from FILE, saved earlier from `trainsim ops SCENARIO --json`, "
                        "instead of running trainsim (for a GPU machine without trainsim)")
    p.add_argument("-o", "--output", required=True, help="op database CSV to write")
    p.add_argument("--trainsim", help="trainsim binary (default: trainsim on PATH, else build/trainsim of this checkout)")
    p.add_argument("--gpu-name", help="value of the gpu column (default: the scenario's cluster.gpu on CUDA, 'cpu' on CPU)")
    p.add_argument("--device", choices=("cuda", "cpu"), help="where to run (default: cuda when available, else cpu)")
    p.add_argument("--warmup", type=int, help="untimed calls before timing (default: 10 on CUDA, 1 on CPU)")
    p.add_argument("--iters", type=int, help="timed calls; the median is written (default: 50 on CUDA, 3 on CPU)")
    p.add_argument("--max-ops", type=int, help="profile at most this many kernels (in `trainsim ops` order); skip the rest")
    p.add_argument("--max-gflop", type=float,
                   help=f"skip kernels above this many GFLOP (default: no limit on CUDA, {CPU_DEFAULT_MAX_GFLOP:g} on CPU)")
    p.add_argument("--max-mib", type=float,
                   help=f"skip kernels whose tensors need more MiB (default: no limit on CUDA, {CPU_DEFAULT_MAX_MIB:g} on CPU)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="scenario override passed to trainsim (repeatable)")
    a = p.parse_args(argv)
    for name in ("warmup", "iters", "max_ops"):
        v = getattr(a, name)
        if v is not None and v < (1 if name == "iters" else 0):
            p.error(f"--{name.replace('_', '-')} must be >= {1 if name == 'iters' else 0}, got {v}")
    if (a.scenario is None) == (a.ops_json is None):
        p.error("give a scenario or --ops-json FILE (one of the two)")
    if a.ops_json is not None and a.overrides:
        p.error("--set applies to a scenario; the kernel list of --ops-json is already resolved")
    if a.gpu_name is not None and (not a.gpu_name.strip() or "," in a.gpu_name or "\n" in a.gpu_name):
        p.error(f"--gpu-name must be a non-empty name without commas, got {a.gpu_name!r}")
    return a


def find_trainsim(explicit):
    if explicit:
        return explicit
    on_path = shutil.which("trainsim")
    if on_path:
        return on_path
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    built = os.path.join(repo, "build", "trainsim")
    if os.access(built, os.X_OK):
        return built
    sys.exit("profile_ops: no trainsim binary: pass --trainsim PATH (or build it with `make build`)")


def load_ops(trainsim, scenario, overrides):
    cmd = [trainsim, "ops", scenario, "--json"]
    for kv in overrides:
        cmd += ["--set", kv]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        sys.exit(f"profile_ops: cannot run {trainsim}: {e}")
    if r.returncode != 0:
        sys.exit(f"profile_ops: `{' '.join(cmd)}` failed (exit {r.returncode}):\n{r.stderr.strip() or r.stdout.strip()}")
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError as e:
        sys.exit(f"profile_ops: `{' '.join(cmd)}` printed no JSON ({e})")


def load_ops_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            listing = json.load(f)
    except OSError as e:
        sys.exit(f"profile_ops: cannot read --ops-json {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        sys.exit(f"profile_ops: --ops-json {path} is not JSON ({e})")
    if not isinstance(listing, dict) or not isinstance(listing.get("ops"), list) or "gpu" not in listing:
        sys.exit(f"profile_ops: --ops-json {path} is not the output of `trainsim ops SCENARIO --json` "
                 f"(needs 'gpu' and a list 'ops')")
    listing.setdefault("scenario", path)
    return listing


def describe(op):
    if op["op"] in SHAPE_KINDS:
        causal = " causal" if op["causal"] else ""
        return f"{op['op']} {op['dtype']} m={op['m']} n={op['n']} k={op['k']} batch={op['batch']}{causal}"
    return f"{op['op']} {op['dtype']} bytes={op['bytes']}"


class Profiler:
    def __init__(self, torch, device, warmup, iters):
        self.torch = torch
        self.F = torch.nn.functional
        self.device = device
        self.warmup = warmup
        self.iters = iters
        self.cuda = device == "cuda"
        self.flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device=device) if self.cuda else None

    # --- dtypes -----------------------------------------------------------------------------------

    def tensor_dtype(self, dtype):
        """The torch dtype tensors of a kernel are made of (fp8 GEMMs are handled in gemm())."""
        t = self.torch
        if not self.cuda:
            # CPU: everything runs in fp32. PyTorch's CPU kernels lack fp16 GEMMs (1.13) and
            # attention, emulate bf16 slowly and have no fp8; the CPU run tests the pipeline only.
            return t.float32
        # fp8 and fp4 outside GEMMs: activations stay bf16 under FP8 and NVFP4 recipes (Transformer Engine).
        return {"fp32": t.float32, "tf32": t.float32, "bf16": t.bfloat16, "fp16": t.float16, "fp8": t.bfloat16,
                "fp4": t.bfloat16}[dtype]

    def set_tf32(self, dtype):
        if self.cuda:
            self.torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
            self.torch.backends.cudnn.allow_tf32 = dtype == "tf32"

    def randn(self, shape, dtype, requires_grad=False):
        return self.torch.randn(*shape, dtype=dtype, device=self.device, requires_grad=requires_grad)

    # --- timing -----------------------------------------------------------------------------------

    def time_us(self, fn):
        """Median time of one call of fn, in microseconds."""
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        if self.cuda:
            torch.cuda.synchronize()
            pairs = []
            for _ in range(self.iters):
                self.flush.zero_()  # evict the operands from L2: in training they come from HBM
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                pairs.append((start, end))
            torch.cuda.synchronize()
            times = [s.elapsed_time(e) * 1e3 for s, e in pairs]  # ms -> us
        else:
            times = []
            for _ in range(self.iters):
                t0 = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t0) * 1e6)
        # The database needs time_us > 0; a timer tick of 0 on a trivially small kernel reads as 1 ns.
        return max(statistics.median(times), 1e-3)

    # --- kernels ----------------------------------------------------------------------------------

    def gemm(self, op):
        """gemm / attention_unfused: C[m x n] = A[m x k] B[k x n]; bmm over `batch` members."""
        m, n, k, batch = op["m"], op["n"], op["k"], op["batch"]
        if op["dtype"] == "fp8" and self.cuda:
            return self.fp8_gemm(m, n, k, batch)
        if op["dtype"] == "fp4":
            raise Skip("NVFP4 GEMMs need Transformer Engine's NVFP4 quantizer and block-scaled GEMM, which this tool does not run")
        dt = self.tensor_dtype(op["dtype"])
        self.set_tf32(op["dtype"])
        if batch == 1:
            a, b = self.randn((m, k), dt), self.randn((k, n), dt)
            return lambda: self.torch.matmul(a, b)
        a, b = self.randn((batch, m, k), dt), self.randn((batch, k, n), dt)
        return lambda: self.torch.bmm(a, b)

    def fp8_gemm(self, m, n, k, batch):
        torch = self.torch
        if batch != 1:
            raise Skip("grouped fp8 GEMMs have no single PyTorch kernel")
        if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
            raise Skip(f"fp8 GEMMs need torch._scaled_mm (PyTorch >= 2.1), this is {torch.__version__}")
        a = self.randn((m, k), torch.bfloat16).to(torch.float8_e4m3fn)
        b = self.randn((n, k), torch.bfloat16).to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
        one = torch.ones((), dtype=torch.float32, device=self.device)

        def run():
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        try:
            run()
        except (RuntimeError, TypeError) as e:
            raise Skip(f"fp8 GEMM not supported on this GPU / PyTorch ({str(e).splitlines()[0]})")
        return run

    def attention_fn(self):
        """Fused attention: scaled_dot_product_attention (PyTorch >= 2.0: flash / memory-efficient
        kernels); older PyTorch (Debian's 1.13) gets the same math unfused, which is what the CPU runs."""
        F = self.F
        if hasattr(F, "scaled_dot_product_attention"):
            return lambda q, k, v, causal: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch = self.torch

        def math_attention(q, k, v, causal):
            s = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
            if causal:  # top-left aligned, as scaled_dot_product_attention's is_causal
                mask = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool, device=s.device).triu(1)
                s = s.masked_fill(mask, float("-inf"))
            return torch.matmul(torch.softmax(s, dim=-1), v)
        return math_attention

    def flash_attention(self, op, backward):
        """m = query length, n = key length, k = head dim, batch = micro-batch x heads: tensors
        (1, batch, len, head_dim), the layout the fused kernels want."""
        m, n, d, batch, causal = op["m"], op["n"], op["k"], op["batch"], bool(op["causal"])
        dt = self.tensor_dtype(op["dtype"])
        attn = self.attention_fn()
        q = self.randn((1, batch, m, d), dt, requires_grad=backward)
        k = self.randn((1, batch, n, d), dt, requires_grad=backward)
        v = self.randn((1, batch, n, d), dt, requires_grad=backward)
        if not backward:
            def fwd():
                with self.torch.no_grad():
                    return attn(q, k, v, causal)
            return fwd
        out = attn(q, k, v, causal)
        dout = self.torch.randn_like(out)
        # The backward alone: the forward graph is kept and differentiated again on each call.
        return lambda: self.torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)

    def elements(self, op, dt):
        """Elements of the op's main tensor so that it moves about op['bytes'] bytes."""
        es = self.torch.empty((), dtype=dt).element_size()
        return max(1, int(op["bytes"]) // (MEMORY_TRAFFIC[op["op"]] * es))

    def rows_cols(self, elements):
        cols = min(ROW_WIDTH, elements)
        return max(1, elements // cols), cols

    def memory_bound(self, op):
        torch, F = self.torch, self.F
        kind = op["op"]
        if kind == "optimizer_step":
            return self.optimizer_step(op)
        dt = self.tensor_dtype(op["dtype"])
        rows, cols = self.rows_cols(self.elements(op, dt))
        if kind == "softmax":
            x = self.randn((rows, cols), dt)
            return lambda: torch.softmax(x, dim=-1)
        if kind in ("layernorm", "torch_layernorm"):
            x, w, b = self.randn((rows, cols), dt), self.randn((cols,), dt), self.randn((cols,), dt)
            return lambda: F.layer_norm(x, (cols,), w, b)
        if kind == "elementwise":
            a, b, c = self.randn((rows, cols), dt), self.randn((rows, cols), dt), self.randn((rows, cols), dt)
            return lambda: torch.add(a, b, out=c)
        if kind == "cross_entropy":
            logits = self.randn((rows, cols), dt)
            target = torch.randint(0, cols, (rows,), device=self.device)
            return lambda: F.cross_entropy(logits, target)
        if kind == "embedding":
            table = self.randn((EMBEDDING_TABLE_ROWS, cols), dt)
            index = torch.randint(0, EMBEDDING_TABLE_ROWS, (rows,), device=self.device)
            return lambda: F.embedding(index, table)
        if kind == "memset":
            t = torch.empty((rows, cols), dtype=dt, device=self.device)
            return t.zero_
        raise Skip(f"no PyTorch op for kind '{kind}'")

    def optimizer_step(self, op):
        torch = self.torch
        params = max(1, int(op["bytes"]) // ADAM_BYTES_PER_PARAM)
        w = torch.zeros(params, dtype=torch.float32, device=self.device, requires_grad=True)
        w.grad = torch.randn_like(w)
        opt = None
        if self.cuda:
            try:  # one fused kernel per step where PyTorch has it (>= 2.0), as Megatron's fused Adam
                opt = torch.optim.Adam([w], lr=1e-4, fused=True)
            except (TypeError, RuntimeError):
                opt = None
        if opt is None:
            opt = torch.optim.Adam([w], lr=1e-4)
        return opt.step

    def build(self, op):
        """The call to time for one row of `trainsim ops --json`."""
        kind = op["op"]
        if kind in ("gemm", "attention_unfused"):
            return self.gemm(op)
        if kind == "flash_attn_fwd":
            return self.flash_attention(op, backward=False)
        if kind == "flash_attn_bwd":
            return self.flash_attention(op, backward=True)
        if kind in MEMORY_KINDS:
            return self.memory_bound(op)
        raise Skip(f"unknown kernel kind '{kind}' (this script is older than the trainsim binary)")


def tensor_mib(op, cpu):
    """About how much memory the tensors of the op's PyTorch call take, MiB."""
    es = 4 if cpu else (1 if op["dtype"] == "fp8" else 4 if op["dtype"] in ("fp32", "tf32") else 2)
    m, n, k, batch = op["m"], op["n"], op["k"], op["batch"]
    if op["op"] in ("gemm", "attention_unfused"):
        b = (m * k + k * n + m * n) * batch * es
    elif op["op"] in ("flash_attn_fwd", "flash_attn_bwd"):
        b = (2 * m * k + 2 * n * k) * batch * es * (3 if op["op"] == "flash_attn_bwd" else 1)
        if cpu:
            b += 3 * batch * m * n * es  # the unfused math keeps the score matrices
    elif op["op"] == "optimizer_step":
        b = op["bytes"] * 16 / ADAM_BYTES_PER_PARAM  # weight, grad and the two moments
    else:
        b = op["bytes"] * 2
    return b / (1 << 20)


def too_big(op, max_gflop, max_mib, cpu):
    if op["op"] in SHAPE_KINDS and min(op["m"], op["n"], op["k"], op["batch"]) <= 0:
        return "an empty shape costs nothing"
    if op["op"] not in SHAPE_KINDS and op["bytes"] <= 0:
        return "moves no bytes, costs nothing"
    gflop = op["flops"] / 1e9
    if max_gflop is not None and gflop > max_gflop:
        return f"{gflop:.1f} GFLOP is over --max-gflop {max_gflop:g}"
    mib = tensor_mib(op, cpu)
    if max_mib is not None and mib > max_mib:
        return f"needs about {mib:.0f} MiB of tensors, over --max-mib {max_mib:g}"
    return None


def csv_row(gpu, op, time_us):
    shape = op["op"] in SHAPE_KINDS
    fields = [gpu, op["op"], op["dtype"],
              op["m"] if shape else 0, op["n"] if shape else 0, op["k"] if shape else 0,
              op["batch"] if shape else 1, int(bool(op["causal"])) if shape else 0,
              0 if shape else int(op["bytes"]), f"{time_us:.3f}"]
    return ",".join(str(f) for f in fields)


def main(argv):
    a = parse_args(argv)
    # The kernel list first: a bad scenario is reported before the slow import of torch.
    if a.ops_json is not None:
        listing = load_ops_json(a.ops_json)
    else:
        listing = load_ops(find_trainsim(a.trainsim), a.scenario, a.overrides)
    ops = listing["ops"]
    try:
        import torch
    except ImportError:
        sys.exit("profile_ops: PyTorch is not installed (pip install torch, or apt-get install python3-torch)")
    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("profile_ops: --device cuda but PyTorch sees no CUDA GPU")
    cpu = device == "cpu"
    warmup = a.warmup if a.warmup is not None else (1 if cpu else 10)
    iters = a.iters if a.iters is not None else (3 if cpu else 50)
    max_gflop = a.max_gflop if a.max_gflop is not None else (CPU_DEFAULT_MAX_GFLOP if cpu else None)
    max_mib = a.max_mib if a.max_mib is not None else (CPU_DEFAULT_MAX_MIB if cpu else None)

    gpu = a.gpu_name or ("cpu" if cpu else listing["gpu"])
    hardware = "CPU" if cpu else torch.cuda.get_device_name()
    if not cpu and not a.gpu_name:
        print(f"profile_ops: rows are labelled '{gpu}' (the scenario's cluster.gpu) and were measured on {hardware}; "
              f"pass --gpu-name if that is not the same GPU", file=sys.stderr)
    print(f"profile_ops: {len(ops)} kernels of {listing['scenario']} on {hardware} as gpu '{gpu}' "
          f"(torch {torch.__version__}, warm-up {warmup}, median of {iters})", file=sys.stderr)

    profiler = Profiler(torch, device, warmup, iters)
    rows, skipped = [], 0
    for i, op in enumerate(ops):
        if a.max_ops is not None and i >= a.max_ops:
            reason = f"over --max-ops {a.max_ops}"
        else:
            reason = too_big(op, max_gflop, max_mib, cpu)
        t = None
        if reason is None:
            try:
                t = profiler.time_us(profiler.build(op))
            except Skip as e:
                reason = str(e)
            except (RuntimeError, MemoryError) as e:  # out of memory, a kernel PyTorch lacks here
                reason = f"PyTorch failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            finally:
                if not cpu:
                    torch.cuda.empty_cache()
        if reason is not None:
            skipped += 1
            print(f"skip {describe(op)}: {reason}", file=sys.stderr)
            continue
        rows.append(csv_row(gpu, op, t))
        print(f"  {describe(op)}: {t:.3f} us", file=sys.stderr)

    with open(a.output, "w", encoding="utf-8") as f:
        f.write(DB_MAGIC + "\n")
        f.write(f"# profiled by tools/profile/profile_ops.py: scenario {listing['scenario']}, {hardware}, "
                f"torch {torch.__version__}, warm-up {warmup}, median of {iters}\n")
        if cpu:
            f.write("# CPU times, fp32 whatever the dtype column says: for testing, not for predictions\n")
        f.write(DB_HEADER + "\n")
        for r in rows:
            f.write(r + "\n")
    print(f"profile_ops: wrote {len(rows)} rows to {a.output}; skipped {skipped} "
          f"(the simulator prices those with its roofline)", file=sys.stderr)
    if not rows:
        # The database loader rejects a file without rows: say so here rather than at simulation time.
        print("profile_ops: warning: no kernel was profiled, trainsim will not load this file", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
