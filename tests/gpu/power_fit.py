#!/usr/bin/env python3
"""The power limit's gain for tensor-core kernels, from clock_probe.py's summaries.

usage: power_fit.py CLOCKS.log...

Each log (clock_probe.py's stdout) has a back-to-back GEMM rate (lines gemm_back_to_back*) and
the rate with memory-bound kernels between products (gemm_adds_*), each with the GEMM's share of
the time. The gain of a row is its rate over the mean back-to-back rate of its own log, minus 1.
The model (model/compute.c, cs_compute_power_gain) takes the gain as a clipped line in the share:
the full gain G at share <= lo, none at share >= hi, linear between. This prints the G, lo, hi of
least squares over every row of every log (a grid of 0.001 in G, 0.01 in lo and hi), as the
gemm_power_gain, gemm_power_share_lo and gemm_power_share_hi keys of a GPU file.
"""
import re
import sys


def rows_of(path):
    base, rows = [], []
    pat = re.compile(r"(gemm_\w+): clock .* GEMM ([\d.]+) TFLOP/s, GEMM share ([\d.]+)")
    with open(path) as f:
        for line in f:
            m = pat.match(line)
            if not m:
                continue
            if "back_to_back" in m.group(1):
                base.append(float(m.group(2)))
            else:
                rows.append((float(m.group(3)), float(m.group(2))))
    if not base or not rows:
        sys.exit(f"{path}: no gemm_back_to_back or gemm_adds_* lines (clock_probe.py's output)")
    b = sum(base) / len(base)
    return [(share, rate / b - 1) for share, rate in rows]


def gain(share, g, lo, hi):
    if share <= lo:
        return g
    if share >= hi:
        return 0.0
    return g * (hi - share) / (hi - lo)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    pts = [p for path in sys.argv[1:] for p in rows_of(path)]
    best = None
    for g in (x / 1000 for x in range(50, 301)):
        for lo in (x / 100 for x in range(10, 60)):
            for hi in (x / 100 for x in range(int(lo * 100) + 5, 100)):
                e = sum((gain(s, g, lo, hi) - y) ** 2 for s, y in pts)
                if best is None or e < best[0]:
                    best = (e, g, lo, hi)
    e, g, lo, hi = best
    rms = (e / len(pts)) ** 0.5
    note = f"least squares over {len(pts)} rows of {len(sys.argv) - 1} log(s), rms {rms:.4f}"
    print(f"gemm_power_gain: {g:.3f}   # {note}")
    print(f"gemm_power_share_lo: {lo:.2f}")
    print(f"gemm_power_share_hi: {hi:.2f}")


if __name__ == "__main__":
    main()
