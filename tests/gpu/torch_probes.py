#!/usr/bin/env python3
"""torch_probes.py -- the framework side of the compute probes (issue 15), on GPU 0:

  1. torch GEMMs on the bf16 shapes of a commscale-run probe CSV: x @ w.t() with x n x k and
     w m x k (F.linear without bias; the probe's D = A^T B, cuBLASLt's TN, is exactly this
     product) and an m x k by k x n product (NN), both through torch.mm(out=) so that outputs are
     reused; a product shorter than 200 us is timed inside a CUDA graph of 20 (eager PyTorch would
     time the host's launch instead); one CSV row per shape beside the probe's time (GEMM_OUT);
  2. fused attention: torch.nn.functional.scaled_dot_product_attention (causal, bf16: the flash
     kernel on Hopper) forward, and forward + backward, by head dimension and sequence;
  3. memory-bound kernels as a bf16-autocast GPT step runs them: LayerNorm (fp32 under autocast)
     forward and backward, tanh-GELU (bf16) forward and backward, the residual add (fp32 + bf16),
     softmax (bf16), cross-entropy over fp32 logits (cast, log-softmax, backward), fused AdamW over
     fp32 parameters, and a bf16 copy; and three kernels only an eager backward runs: the
     concatenation of the query, key and value gradients into the fused projection's output
     gradient (qkv_grad_cat: autograd's backward of splitting a [b, s, 3, heads, d] output into
     [b, heads, s, d] tensors), a bias gradient (bias_grad: the bf16 output gradient summed over
     tokens) and the cast of a bf16 weight gradient back to fp32 (grad_cast: ToCopyBackward of
     autocast's weight cast);
  4. the launch floor of eager PyTorch: the host time per tiny operator, and the host time and
     kernel count per transformer layer of a training step on a model too small to keep the GPU
     busy (tests/gpu/steps.py's GPT at hidden 64).

Rows 2-4 are written in the probe CSV format (calibrate/probe.h: kinds attn_fwd, attn_bwd, memop,
launch) to PROBES_OUT. Times: CUDA events around batches sized to about 30 ms, 5 trials, median
(min and max kept); host times by time.perf_counter.

usage: torch_probes.py PROBE_CSV GEMM_OUT PROBES_OUT [--only launch,attention,memops,gemm]
"""
import csv
import datetime
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DEV = torch.device("cuda", 0)
HEADER = ("kind,dtype,m,n,k,bytes,time_us,time_min_us,time_max_us,trials,tflops,GBps,frac_peak,"
          "factor,gpu,source")
SOURCE = "torch_probes.py"


def bench(fn, target_ms=30.0, trials=5):
    """Median, min, max seconds per call of fn() (device events around batches)."""
    fn()
    fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    fn()
    e1.record()
    e1.synchronize()
    est = max(e0.elapsed_time(e1), 1e-3)
    iters = max(1, min(10000, int(target_ms / est)))
    ts = []
    for _ in range(trials):
        e0.record()
        for _ in range(iters):
            fn()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) / iters / 1e3)
    return statistics.median(ts), min(ts), max(ts), trials


def bench_graph(fn, inner=20):
    """bench() of a CUDA graph of `inner` calls of fn (no host launch cost), per call."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(inner):
            fn()
    t = bench(g.replay)
    return t[0] / inner, t[1] / inner, t[2] / inner, t[3]


def gemm_time(a, b, o):
    """torch.mm(a, b, out=o): eager when one product outlasts the host's launch, else graphed."""
    t = bench(lambda: torch.mm(a, b, out=o))
    return t if t[0] > 200e-6 else bench_graph(lambda: torch.mm(a, b, out=o))


def rnd(*shape, dtype=torch.bfloat16):
    return torch.randn(*shape, device=DEV, dtype=torch.float32).to(dtype)


def gemms(probe_csv, out):
    rows = []
    with open(probe_csv) as f:
        lines = [l for l in f if not l.startswith("#")]
    for r in csv.DictReader(lines):
        if r["kind"] == "gemm" and r["dtype"] == "bf16":
            rows.append((int(r["m"]), int(r["n"]), int(r["k"]), float(r["time_us"])))
    seen = set()
    with open(out, "w", newline="") as f:
        f.write(f"# torch GEMMs on the probe's bf16 shapes; {torch.cuda.get_device_name(DEV)}, "
                f"torch {torch.__version__}; median of 5 trials of ~30 ms; under 200 us in CUDA graphs\n")
        f.write("m,n,k,probe_us,linear_us,matmul_us,probe_over_linear,probe_over_matmul\n")
        for m, n, k, pus in rows:
            if (m, n, k) in seen:
                continue
            seen.add((m, n, k))
            x, w = rnd(n, k), rnd(m, k)
            o = torch.empty(n, m, device=DEV, dtype=torch.bfloat16)
            lin = gemm_time(x, w.t(), o)[0] * 1e6  # F.linear(x, w) without bias
            del x, w, o
            a, b = rnd(m, k), rnd(k, n)
            o = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
            mm = gemm_time(a, b, o)[0] * 1e6
            del a, b, o
            f.write(f"{m},{n},{k},{pus:.3f},{lin:.3f},{mm:.3f},{pus / lin:.4f},{pus / mm:.4f}\n")
            f.flush()
            print(f"gemm {m}x{n}x{k}: probe {pus:.1f} us, F.linear {lin:.1f} us, matmul {mm:.1f} us "
                  f"-> probe/linear {pus / lin:.3f}", flush=True)
    torch.cuda.empty_cache()


class Out:
    def __init__(self, path):
        self.f = open(path, "w")
        self.gpu = torch.cuda.get_device_name(DEV)
        p = torch.cuda.get_device_properties(DEV)
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.f.write("# commscale probes v1\n")
        self.f.write(f"# tool: tests/gpu/torch_probes.py (torch {torch.__version__}, cuda "
                     f"{torch.version.cuda}, cudnn {torch.backends.cudnn.version()})\n")
        self.f.write(f"# date: {now}\n")
        self.f.write(f"# gpu: {self.gpu}, compute capability {p.major}.{p.minor}, "
                     f"{p.multi_processor_count} SMs, {p.total_memory / 2**20:.0f} MiB\n")
        self.f.write("# timing: CUDA events around batches of about 30 ms, median of 5 trials\n")
        self.f.write("# attention: scaled_dot_product_attention causal bf16 (flash on Hopper); "
                     "m = seq, n = head dim, k = batch x heads; attn_bwd = (fwd+bwd) - fwd\n")
        self.f.write("# memop: bytes = what the kernels read and write at the dtypes autocast "
                     "uses (LayerNorm fp32, GELU bf16, residual fp32 + bf16, CE fp32 logits)\n")
        self.f.write(HEADER + "\n")

    def row(self, kind, dtype, m, n, k, nbytes, t, flops=None, trials=5):
        med, lo, hi = t[0], t[1], t[2]
        tf = f"{flops / med / 1e12:.6g}" if flops else ""
        gb = f"{nbytes / med / 1e9:.6g}" if nbytes and kind == "memop" else ""
        self.f.write(f"{kind},{dtype},{m},{n},{k},{int(nbytes)},{med * 1e6:.6g},{lo * 1e6:.6g},"
                     f"{hi * 1e6:.6g},{trials},{tf},{gb},,,{self.gpu},{SOURCE}\n")
        self.f.flush()
        extra = f"{flops / med / 1e12:.1f} TFLOP/s" if flops else (
            f"{nbytes / med / 1e9:.0f} GB/s" if nbytes else "")
        print(f"{kind} {dtype} {m}x{n}x{k}: {med * 1e6:.2f} us {extra}", flush=True)


def attention(out):
    for d in (64, 80, 96, 128):
        for s in (1024, 2048, 4096, 8192):
            for b, h in ((1, 16), (max(1, 16384 // s), 16)):
                q, k, v = (rnd(b, h, s, d).requires_grad_() for _ in range(3))
                fl = 4.0 * s * s * d * b * h / 2  # causal: half the score matrix
                with torch.no_grad():
                    tf = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                g = rnd(b, h, s, d)

                def fb():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    torch.autograd.grad(o, (q, k, v), g)
                tfb = bench(fb)
                tb = tuple(max(x - y, 1e-9) for x, y in zip(tfb[:3], tf[:3]))
                nb = 4 * b * h * s * d * 2
                out.row("attn_fwd", "bf16", s, d, b * h, nb, tf, fl)
                out.row("attn_bwd", "bf16", s, d, b * h, 2 * nb, tb, 2.5 * fl)
                del q, k, v, g
    torch.cuda.empty_cache()


def memops(out):
    T = 16384
    for h in (768, 2048, 4096):
        x = rnd(T, h, dtype=torch.float32).requires_grad_()
        w = torch.ones(h, device=DEV, requires_grad=True)
        bb = torch.zeros(h, device=DEV, requires_grad=True)
        out.row("memop", "layernorm_fwd", T, h, 1, 2 * T * h * 4,
                bench(lambda: F.layer_norm(x, (h,), w, bb)))
        y = F.layer_norm(x, (h,), w, bb)
        g = rnd(T, h, dtype=torch.float32)
        tfb = bench(lambda: torch.autograd.grad(F.layer_norm(x, (h,), w, bb), (x, w, bb), g))
        tf = bench(lambda: F.layer_norm(x, (h,), w, bb))
        out.row("memop", "layernorm_bwd", T, h, 1, 3 * T * h * 4,
                tuple(max(a - c, 1e-9) for a, c in zip(tfb[:3], tf[:3])))
        del y, g
        u = rnd(T, 4 * h).requires_grad_()
        gu = rnd(T, 4 * h)
        out.row("memop", "gelu_fwd", T, 4 * h, 1, 2 * T * 4 * h * 2,
                bench(lambda: F.gelu(u, approximate="tanh")))
        tf = bench(lambda: F.gelu(u, approximate="tanh"))
        tfb = bench(lambda: torch.autograd.grad(F.gelu(u, approximate="tanh"), (u,), gu))
        out.row("memop", "gelu_bwd", T, 4 * h, 1, 3 * T * 4 * h * 2,
                tuple(max(a - c, 1e-9) for a, c in zip(tfb[:3], tf[:3])))
        del u, gu
        r = rnd(T, h)
        xd = x.detach()
        out.row("memop", "residual_add", T, h, 1, T * h * (4 + 2 + 4), bench(lambda: xd + r))
        sm = rnd(T, 4 * h)
        out.row("memop", "softmax_fwd", T, 4 * h, 1, 2 * T * 4 * h * 2,
                bench(lambda: torch.softmax(sm, dim=-1)))
        del x, w, bb, r, xd, sm
    torch.cuda.empty_cache()
    b, s = 8, 2048
    for h, heads in ((768, 12), (2048, 16), (4096, 32)):
        T, d = b * s, h // heads
        qkv = rnd(b, s, 3 * h).requires_grad_()
        q, k, v = qkv.view(b, s, 3, heads, d).permute(2, 0, 3, 1, 4)
        gq, gk, gv = (rnd(b, heads, s, d) for _ in range(3))
        # reads the three gradients and writes the fused one: 2 * T * 3h elements
        out.row("memop", "qkv_grad_cat", T, 3 * h, 1, 2 * T * 3 * h * 2,
                bench(lambda: torch.autograd.grad((q, k, v), (qkv,), (gq, gk, gv),
                                                  retain_graph=True)))
        del qkv, q, k, v, gq, gk, gv
        go = rnd(T, 4 * h)
        out.row("memop", "bias_grad", T, 4 * h, 1, T * 4 * h * 2, bench(lambda: go.sum(0)))
        del go
        gw = rnd(4 * h, h)
        out.row("memop", "grad_cast", 4 * h, h, 1, 4 * h * h * (2 + 4),
                bench(lambda: gw.to(torch.float32)))
        del gw
    torch.cuda.empty_cache()
    V = 50304
    for Tl in (2048, 8192):
        lg = rnd(Tl, V).requires_grad_()
        tgt = torch.randint(0, V, (Tl,), device=DEV)

        def ce():
            loss = F.cross_entropy(lg.float(), tgt)
            torch.autograd.grad(loss, (lg,))
        # cast 2+4, log-softmax 4+4, backward 4+4, cast back 4+2 bytes per logit
        out.row("memop", "cross_entropy", Tl, V, 1, 28 * Tl * V, bench(ce))
        del lg, tgt
    torch.cuda.empty_cache()
    for n in (50_000_000, 400_000_000):
        ps = [torch.zeros(n // 16, device=DEV, requires_grad=True) for _ in range(16)]
        for p in ps:
            p.grad = torch.randn_like(p)
        opt = torch.optim.AdamW(ps, lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
        opt.step()
        # reads parameter, gradient and both moments, writes parameter and moments: 28 bytes
        out.row("memop", "adamw", n, 1, 1, 28 * n, bench(lambda: opt.step(), trials=5))
        del ps, opt
        torch.cuda.empty_cache()
    src = rnd(1 << 29)
    dst = torch.empty_like(src)
    out.row("memop", "copy", 1 << 29, 1, 1, 2 * 2 * (1 << 29), bench(lambda: dst.copy_(src)))
    del src, dst
    torch.cuda.empty_cache()


def launch(out):
    x = torch.zeros(1, device=DEV)
    for _ in range(200):
        x.add_(1)
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        n = 5000
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        ts.append((t1 - t0) / n)
    out.row("launch", "eager", 0, 0, 0, 0, (statistics.median(ts), min(ts), max(ts)))
    # A training step of a GPT too small to keep the GPU busy: its time is the host's.
    from steps import GPT

    class A:
        hidden, heads, ffn, vocab, seq = 64, 1, 256, 512, 32

    def host_step(layers):
        a = A()
        a.layers = layers
        torch.manual_seed(0)
        with torch.device(DEV):
            model = GPT(a)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        idx = torch.randint(0, a.vocab, (1, a.seq + 1), device=DEV)
        amp = torch.autocast(device_type="cuda", dtype=torch.bfloat16)

        def step():
            with amp:
                loss = model(idx[:, :-1], idx[:, 1:])
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        for _ in range(5):
            step()
        torch.cuda.synchronize()
        ts = []
        for _ in range(15):
            t0 = time.perf_counter()
            step()
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - t0)
        kernels = -1
        try:
            from torch.profiler import profile, ProfilerActivity
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                step()
                torch.cuda.synchronize()
            kernels = sum(1 for e in prof.events()
                          if e.device_type == torch.autograd.DeviceType.CUDA)
        except Exception as e:  # the profiler may be unavailable: the count stays unknown
            print(f"# profiler: {e}", flush=True)
        return statistics.median(ts), min(ts), max(ts), kernels

    lo, hi = 2, 34
    a2, a34 = host_step(lo), host_step(hi)
    per = tuple((b - a) / (hi - lo) for a, b in zip(a2[:3], a34[:3]))
    kpl = (a34[3] - a2[3]) / (hi - lo) if a2[3] >= 0 and a34[3] >= 0 else 0
    print(f"# host step: {lo} layers {a2[0] * 1e3:.3f} ms ({a2[3]} kernels), {hi} layers "
          f"{a34[0] * 1e3:.3f} ms ({a34[3]} kernels)", flush=True)
    out.row("launch", "eager_layer", max(0, round(kpl)), hi - lo, 0, 0,
            (per[0], min(per), max(per)), trials=15)


def main():
    probe_csv, gemm_out, probes_out = sys.argv[1:4]
    only = sys.argv[5].split(",") if len(sys.argv) > 5 and sys.argv[4] == "--only" else None
    torch.cuda.set_device(DEV)
    out = Out(probes_out)
    for name, fn in (("launch", lambda: launch(out)), ("attention", lambda: attention(out)),
                     ("memops", lambda: memops(out)), ("gemm", lambda: gemms(probe_csv, gemm_out))):
        if only and name not in only:
            continue
        t0 = time.time()
        try:
            fn()
        except Exception as e:  # keep the other parts
            print(f"# {name} failed: {type(e).__name__}: {e}", flush=True)
        print(f"# {name} took {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
