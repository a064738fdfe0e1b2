#!/usr/bin/env python3
"""gemm_ab.py -- the GEMM probe against torch on the same GPU, measured the same way (issue 15).

usage: gemm_ab.py torch PROBE_CSV OUT_CSV [TRIAL_MS]
       gemm_ab.py compare DIR

`torch` times, for every bf16 GEMM row of PROBE_CSV (a commscale-run probe CSV), the same product
through PyTorch exactly as commscale-run's probe times it (calibrate/runner/probe_cuda.c): the
same TN product (F.linear(x, w) = x @ w.t() with x n x k, w m x k is cuBLAS's D = A^T B with
A = w, B = x^T, column-major m x n), operands reused from product to product (so the L2 holds the
same data in both), one second of the largest shape back to back first (settled clocks), then per
shape one warm-up and one estimating product, trials of back-to-back products of about TRIAL_MS
(default 25) between CUDA events, 3..10 trials until (max - min) / median <= 5%, the median kept.
A product shorter than 200 us runs inside a CUDA graph of 20 so that PyTorch's eager launch cost
(~8 us per op on these hosts) does not starve the GPU; the probe's cublasLtMatmul call costs far
less than the product, so both time the GPU's back-to-back product.

`compare` reads DIR/probe_N.csv and DIR/torch_N.csv (N = 1, 2, ...: alternations run A/B/A/B on
one GPU by tests/gpu/gemm_ab.sh), takes per shape the median over the alternations of each side,
and prints the ratio's distribution and the count within 3%, and each side's spread between
alternations.
"""
import csv
import glob
import os
import statistics
import sys


def load(path):
    d = {}
    with open(path) as f:
        for r in csv.DictReader(l for l in f if not l.startswith("#")):
            if r["kind"] == "gemm" and r["dtype"] == "bf16":
                d[(int(r["m"]), int(r["n"]), int(r["k"]))] = float(r["time_us"])
    return d


def run_torch(probe_csv, out, trial_ms):
    import torch

    dev = torch.device("cuda", 0)
    shapes = list(load(probe_csv))

    def trials(fn, per):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def batch(iters):
            e0.record()
            for _ in range(iters):
                fn()
            e1.record()
            e1.synchronize()
            return e0.elapsed_time(e1) / 1e3 / iters / per

        batch(1)  # warm-up
        est = batch(1) * per
        iters = max(1, min(10000, int(trial_ms / 1e3 / est)))
        ts = []
        while len(ts) < 10:
            ts.append(batch(iters))
            if len(ts) >= 3:
                med = statistics.median(ts)
                if (max(ts) - min(ts)) / med <= 0.05:
                    break
        return statistics.median(ts), len(ts)

    def gemm(m, n, k):
        x = torch.randn(n, k, device=dev).to(torch.bfloat16)
        w = torch.randn(m, k, device=dev).to(torch.bfloat16)
        o = torch.empty(n, m, device=dev, dtype=torch.bfloat16)
        wt = w.t()

        def fn():
            torch.mm(x, wt, out=o)

        return fn

    # settle: one second of the largest shape back to back
    big = max(shapes, key=lambda s: s[0] * s[1] * s[2])
    fn = gemm(*big)
    fn()
    torch.cuda.synchronize()
    import time
    t0 = time.time()
    while time.time() - t0 < 1.0:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
    del fn
    with open(out, "w") as f:
        f.write(f"# torch {torch.__version__} on {torch.cuda.get_device_name(dev)}: torch.mm(x, w.t(), out=) "
                f"timed as commscale-run's probe (gemm_ab.py), trials of ~{trial_ms} ms, 3..10 within 5%\n")
        f.write("kind,dtype,m,n,k,time_us,trials,graphed\n")
        for m, n, k in shapes:
            fn = gemm(m, n, k)
            fn()
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            fn()
            e1.record()
            e1.synchronize()
            graphed = e0.elapsed_time(e1) < 0.2
            if graphed:
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    for _ in range(3):
                        fn()
                torch.cuda.current_stream().wait_stream(s)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    for _ in range(20):
                        fn()
                t, n_tr = trials(g.replay, 20)
                del g
            else:
                t, n_tr = trials(fn, 1)
            f.write(f"gemm,bf16,{m},{n},{k},{t * 1e6:.3f},{n_tr},{int(graphed)}\n")
            f.flush()
            del fn
    torch.cuda.empty_cache()


def show(name, xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return
    print(f"{name:34s} n={n:3d} median {statistics.median(xs):.3f} p10 {xs[n // 10]:.3f} "
          f"p90 {xs[9 * n // 10]:.3f} min {xs[0]:.3f} max {xs[-1]:.3f} "
          f"within 3%: {sum(abs(x - 1) <= 0.03 for x in xs)}/{n}")


def compare(d):
    P = [load(p) for p in sorted(glob.glob(os.path.join(d, "probe_*.csv")))]
    T = [load(p) for p in sorted(glob.glob(os.path.join(d, "torch_*.csv")))]
    keys = [k for k in P[0] if all(k in x for x in P + T)]
    pm = {k: statistics.median([x[k] for x in P]) for k in keys}
    tm = {k: statistics.median([x[k] for x in T]) for k in keys}
    print(f"{len(P)} probe and {len(T)} torch alternations, {len(keys)} bf16 shapes")
    show("probe / torch (medians)", [pm[k] / tm[k] for k in keys])
    for i, (p, t) in enumerate(zip(P, T)):
        show(f"probe_{i + 1} / torch_{i + 1}", [p[k] / t[k] for k in keys])
    if len(P) > 1:
        show("probe max/min over alternations", [max(x[k] for x in P) / min(x[k] for x in P) for k in keys])
        show("torch max/min over alternations", [max(x[k] for x in T) / min(x[k] for x in T) for k in keys])
    small = [k for k in keys if tm[k] >= 20]
    show("probe / torch, torch >= 20 us", [pm[k] / tm[k] for k in small])
    worst = sorted(keys, key=lambda k: -abs(pm[k] / tm[k] - 1))[:8]
    for k in worst:
        print(f"  {k[0]}x{k[1]}x{k[2]}: probe {pm[k]:.2f} us torch {tm[k]:.2f} us ratio {pm[k] / tm[k]:.3f}")


def main():
    a = sys.argv[1:]
    if len(a) >= 3 and a[0] == "torch":
        run_torch(a[1], a[2], float(a[3]) if len(a) > 3 else 25.0)
    elif len(a) == 2 and a[0] == "compare":
        compare(a[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
