#!/usr/bin/env python3
"""The V100's GEMM efficiency curve from DeepBench's published V100 fp16 GEMM times.

Reads gemm-fp16.csv (beside this file) and fits commscale's curve (model/compute.c gemm_time):
time = max(2 m n k / (peak * E * x / (x + h)), bytes / (hbm_bw * mem_efficiency)) + kernel_overhead,
x = min(m, n, k), with the V100 datasheet's peak (125 TFLOP/s fp16) and HBM (900 GB/s) and the
defaults of model/gpu.c (mem_efficiency 0.8, kernel_overhead 3 us), by least squares in log time
over a grid (E in 0.01 steps, h in 8-element steps). Prints the fit and, beside it, the errors of
the default curve (E 0.8, h 64). Usage: python3 fit.py [gemm-fp16.csv]
"""
import csv
import math
import os
import sys

PEAK, MEMBW, OVERHEAD = 125e12, 900e9 * 0.8, 3e-6


def model(e, h, m, n, k, nbytes):
    x = min(m, n, k)
    return max(2 * m * n * k / (PEAK * e * x / (x + h)), nbytes / MEMBW) + OVERHEAD


def summary(e, h, pts):
    err = sorted(abs(model(e, h, *p[:4]) / p[4] - 1) for p in pts)
    rms = math.sqrt(sum(math.log(model(e, h, *p[:4]) / p[4]) ** 2 for p in pts) / len(pts))
    return "median |error| %.1f%%, 90th percentile %.1f%%, rms log error %.3f" % (
        100 * err[len(err) // 2], 100 * err[int(0.9 * len(err))], rms)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "gemm-fp16.csv")
    pts = []
    with open(path) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            if row["kind"] == "gemm":
                pts.append((float(row["m"]), float(row["n"]), float(row["k"]), float(row["bytes"]),
                            float(row["time_us"]) * 1e-6))
    best = min((sum(math.log(model(e / 100, h, *p[:4]) / p[4]) ** 2 for p in pts), e / 100, h)
               for e in range(60, 100) for h in range(8, 640, 8))
    _, e, h = best
    print("%d GEMM shapes of %s" % (len(pts), os.path.basename(path)))
    print("fit:     gemm_efficiency %.2f, gemm_half_dim %d: %s" % (e, h, summary(e, h, pts)))
    print("default: gemm_efficiency 0.80, gemm_half_dim 64: %s" % summary(0.8, 64, pts))


if __name__ == "__main__":
    main()
