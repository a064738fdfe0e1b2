#!/usr/bin/env python3
"""gemm_compare.py -- the GEMM probe against torch on the same shapes (issue 15's acceptance: the
probe within 3% of torch.matmul), from a folder written by tests/gpu/compute_node.sh.

usage: gemm_compare.py DIR [--min-us US]

Prints, over the bf16 shapes of DIR/torch_gemm.csv, the distribution of probe time / torch time
(probes.csv; probes_rep.csv and probes_algos8.csv where present) and of the probe against its own
repeat. --min-us leaves out shapes whose torch time is under US microseconds.
"""
import csv
import os
import statistics
import sys


def load(path):
    d = {}
    if not os.path.exists(path):
        return d
    with open(path) as f:
        for r in csv.DictReader(l for l in f if not l.startswith("#")):
            if r["kind"] == "gemm" and r["dtype"] == "bf16":
                d[(int(r["m"]), int(r["n"]), int(r["k"]))] = float(r["time_us"])
    return d


def show(name, xs):
    if not xs:
        return
    xs = sorted(xs)
    n = len(xs)
    print(f"{name:28s} n={n:3d} median {statistics.median(xs):.3f} p10 {xs[n // 10]:.3f} "
          f"p90 {xs[9 * n // 10]:.3f} min {xs[0]:.3f} max {xs[-1]:.3f} "
          f"within 3%: {sum(abs(x - 1) <= 0.03 for x in xs)}/{n}")


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    d, min_us = args[0], 0.0
    if "--min-us" in args:
        min_us = float(args[args.index("--min-us") + 1])
    p1 = load(os.path.join(d, "probes.csv"))
    rep = load(os.path.join(d, "probes_rep.csv"))
    a8 = load(os.path.join(d, "probes_algos8.csv"))
    with open(os.path.join(d, "torch_gemm.csv")) as f:
        rows = [r for r in csv.DictReader(l for l in f if not l.startswith("#"))]
    t = {(int(r["m"]), int(r["n"]), int(r["k"])): float(r["linear_us"]) for r in rows
         if float(r["linear_us"]) >= min_us}
    show("probe / torch x@w.t()", [p1[k] / t[k] for k in t if k in p1])
    show("repeat / torch", [rep[k] / t[k] for k in t if k in rep])
    show("probe / repeat", [p1[k] / rep[k] for k in t if k in p1 and k in rep])
    show("fastest of 8 / torch", [a8[k] / t[k] for k in t if k in a8])


if __name__ == "__main__":
    main()
