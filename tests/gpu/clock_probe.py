#!/usr/bin/env python3
"""clock_probe.py -- the SM clock and power while a GEMM runs back to back and while training
steps run (issue 15: why in-step GEMMs beat the same GEMMs timed alone).

usage: clock_probe.py OUT.csv [--shape g1b3-s2k-b8] [--seconds 6]

nvidia-smi samples clocks.sm and power.draw every 50 ms in the background while (a) a bf16
16384x8192x2048 torch.mm runs back to back for --seconds, (b) training steps of the shape of
single_shapes.csv (single_steps.py's recipe) run for --seconds, (c) the same GEMM runs with a
~1:1 share of memory-bound work between products (a bf16 add over 512 MiB). For each phase it prints
the median clock (MHz), power (W) and the GEMM's TFLOP/s where one runs. Phase (c) is repeated
with 0-8 adds between products ("gemm_adds_N"), printing the GEMM's share of the GPU time, so
that the GEMM rate can be read against that share. Rows: phase,clock_mhz,power_w.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from single_steps import Shape, make_step  # noqa: E402


def sampler():
    return subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                             "-lms", "50"], stdout=subprocess.PIPE, text=True)


def phase(name, fn, seconds, rows):
    p = sampler()
    time.sleep(0.3)
    t0 = time.time()
    out = fn(seconds)
    torch.cuda.synchronize()
    p.terminate()
    lines = p.communicate()[0].split("\n")
    vals = []
    for ln in lines:
        try:
            c, w = (float(x) for x in ln.split(","))
        except ValueError:
            continue
        vals.append((c, w))
        rows.append({"phase": name, "clock_mhz": c, "power_w": w})
    vals = vals[len(vals) // 5:]  # the settled part
    print(f"{name}: clock {statistics.median(v[0] for v in vals):.0f} MHz, power "
          f"{statistics.median(v[1] for v in vals):.0f} W, {out} ({time.time() - t0:.1f} s)", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shape", default="g1b3-s2k-b8")
    ap.add_argument("--seconds", type=float, default=6)
    a = ap.parse_args()
    dev = torch.device("cuda", 0)
    m, n, k = 16384, 8192, 2048
    x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
    w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
    o = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
    big = torch.randn(256 * 2**20, device=dev, dtype=torch.bfloat16)
    big2 = torch.empty_like(big)

    def gemms(sec, adds=0):
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        t_end, ms, it = time.time() + sec, [], []
        while time.time() < t_end:
            for _ in range(20):
                ev[0].record()
                torch.mm(x, w.t(), out=o)
                ev[1].record()
                for _ in range(adds):
                    torch.add(big, big, out=big2)
                ev[2].record()
            torch.cuda.synchronize()
            ms.append(ev[0].elapsed_time(ev[1]))
            it.append(ev[0].elapsed_time(ev[2]))
        t, ti = statistics.median(ms) * 1e-3, statistics.median(it) * 1e-3
        return (f"GEMM {2 * m * n * k / t / 1e12:.0f} TFLOP/s, GEMM share {t / ti:.3f} "
                f"(median of {len(ms)} sampled products)")

    rows = []
    phase("gemm_back_to_back", gemms, a.seconds, rows)
    for na in (1, 2, 3, 4, 6, 8):
        phase(f"gemm_adds_{na}", lambda s, na=na: gemms(s, na), a.seconds, rows)
    phase("gemm_back_to_back_again", gemms, a.seconds, rows)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "single_shapes.csv")) as f:
        shape = next(Shape(r) for r in csv.DictReader(f) if r["name"] == a.shape)
    model, opt, x, y, amp = make_step(shape, dev)

    def steps(sec):
        t_end, k_ = time.time() + sec, 0
        while time.time() < t_end:
            with amp:
                loss = model(x, y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            k_ += 1
        return f"{k_} steps"

    steps(2)
    phase("training_steps", steps, a.seconds, rows)
    with open(a.out, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=["phase", "clock_mhz", "power_w"])
        wr.writeheader()
        wr.writerows(rows)


if __name__ == "__main__":
    main()
