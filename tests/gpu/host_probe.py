#!/usr/bin/env python3
"""host_probe.py -- two effects that a burst probe misses, on GPU 0 (issue 15):

  1. the host's cost per transformer layer of an eager training step (forward, backward, fused
     AdamW, bf16 autocast) when the GPU is not the bottleneck: steps.py's GPT at widths 64, 128
     and 256 (seq 128, micro-batch 1, heads of 64) with 4 and 36 layers; the slope over layers is
     the host time per layer, the intercept the per-step rest (embedding, head, optimizer call);
     and the same slope of the forward call and of loss.backward() timed on the host alone
     (host_layer_fwd, host_layer_bwd: how the host's time splits between the two phases);
  2. sustained matrix throughput: one bf16 GEMM (8192 x 8192 x 8192, then 16384 x 6144 x 2048)
     run back to back for 4 s, timed in 20 ms windows between CUDA events: the first window (the
     probe's burst) against the median of the last 2 s (the clocks a training job settles at).

usage: host_probe.py OUT.csv
Writes rows "what,width,layers,value,unit,note" and prints them.
"""
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from steps import GPT  # noqa: E402

DEV = torch.device("cuda", 0)


def host_step(width, layers, seq=128, vocab=512):
    class A:
        pass
    a = A()
    a.hidden, a.heads, a.ffn, a.vocab, a.seq, a.layers = width, max(1, width // 64), 4 * width, \
        vocab, seq, layers
    torch.manual_seed(0)
    with torch.device(DEV):
        model = GPT(a)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    idx = torch.randint(0, vocab, (1, seq + 1), device=DEV)
    amp = torch.autocast(device_type="cuda", dtype=torch.bfloat16)

    def step():
        with amp:
            loss = model(idx[:, :-1], idx[:, 1:])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    for _ in range(8):
        step()
    torch.cuda.synchronize()
    ts, tf, tb = [], [], []
    for _ in range(25):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    # the same step with the host's time per phase: nothing here waits for the GPU (the GPU is
    # idle most of the time at these widths), so each call returns when its kernels are issued
    for _ in range(25):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with amp:
            loss = model(idx[:, :-1], idx[:, 1:])
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        opt.zero_grad(set_to_none=True)
        tf.append(t1 - t0)
        tb.append(t2 - t1)
    del model, opt
    torch.cuda.empty_cache()
    return statistics.median(ts), statistics.median(tf), statistics.median(tb)


def sustained(m, n, k, seconds=4.0, window_ms=20.0):
    a = torch.randn(m, k, device=DEV).to(torch.bfloat16)
    b = torch.randn(k, n, device=DEV).to(torch.bfloat16)
    o = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
    for _ in range(3):
        torch.mm(a, b, out=o)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    torch.mm(a, b, out=o)
    e1.record()
    e1.synchronize()
    per = max(1, int(window_ms / e0.elapsed_time(e1)))
    time.sleep(1.0)  # let the clocks fall back to idle first, as between probe points
    wins, t_end = [], time.time() + seconds
    while time.time() < t_end:
        e0.record()
        for _ in range(per):
            torch.mm(a, b, out=o)
        e1.record()
        e1.synchronize()
        wins.append((time.time(), e0.elapsed_time(e1) / per))
    t_last = wins[-1][0]
    late = [w for t, w in wins if t >= t_last - 2.0]
    del a, b, o
    torch.cuda.empty_cache()
    return wins[0][1], statistics.median(late), len(wins)


def main():
    out = open(sys.argv[1], "w")
    out.write(f"# host_probe.py; {torch.cuda.get_device_name(DEV)}, torch {torch.__version__}\n")
    out.write("what,width,layers,value,unit,note\n")

    def put(*r):
        line = ",".join(str(x) for x in r)
        out.write(line + "\n")
        out.flush()
        print(line, flush=True)
    for w in (64, 128, 256):
        lo, hi = 4, 36
        (t_lo, f_lo, b_lo), (t_hi, f_hi, b_hi) = host_step(w, lo), host_step(w, hi)
        put("host_step", w, lo, f"{t_lo * 1e6:.1f}", "us", "median of 25 steps")
        put("host_step", w, hi, f"{t_hi * 1e6:.1f}", "us", "median of 25 steps")
        put("host_layer", w, "", f"{(t_hi - t_lo) / (hi - lo) * 1e6:.1f}", "us",
            f"slope {lo}..{hi} layers")
        put("host_rest", w, "", f"{(t_lo - lo * (t_hi - t_lo) / (hi - lo)) * 1e6:.1f}", "us",
            "intercept")
        # the host's time per layer in each phase: the forward call and loss.backward() timed
        # alone on the host (no sync inside), slope over the same layer counts
        put("host_layer_fwd", w, "", f"{(f_hi - f_lo) / (hi - lo) * 1e6:.1f}", "us",
            f"slope {lo}..{hi} layers of the forward call; median of 25")
        put("host_layer_bwd", w, "", f"{(b_hi - b_lo) / (hi - lo) * 1e6:.1f}", "us",
            f"slope {lo}..{hi} layers of loss.backward(); median of 25")
    for m, n, k in ((8192, 8192, 8192), (16384, 6144, 2048)):
        first, late, nw = sustained(m, n, k)
        put("gemm_first_window", f"{m}x{n}x{k}", "", f"{first * 1e3:.2f}", "us",
            f"{2 * m * n * k / first / 1e9:.1f} TFLOP/s")
        put("gemm_sustained", f"{m}x{n}x{k}", "", f"{late * 1e3:.2f}", "us",
            f"{2 * m * n * k / late / 1e9:.1f} TFLOP/s; median of the last 2 s of {nw} windows")


if __name__ == "__main__":
    main()
