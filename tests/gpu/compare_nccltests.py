#!/usr/bin/env python3
"""compare_nccltests.py NCCLTESTS_LOG COMMSCALE_CSV — all_reduce from nccl-tests and commscale-run
side by side: busbw ratio for 64 MiB..4 GiB (acceptance: within 3%) and time difference for
8 B..64 KiB (acceptance: within 2 us). Out-of-place columns of nccl-tests; NCCL's own choice rows
of commscale (algorithm auto)."""
import csv
import sys


def nccltests(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 8 and f[0].isdigit() and f[2] in ("float", "half", "bfloat16", "double"):
            # size count type redop root time algbw busbw #wrong ...
            out[int(f[0])] = (float(f[5]), float(f[7]))
    return out


def commscale(path):
    rows = [r for r in csv.reader(l for l in open(path) if not l.startswith("#"))]
    h = rows[0]
    out = {}
    for r in rows[1:]:
        d = dict(zip(h, r))
        if d["collective"] == "all_reduce" and d["algorithm"] == "auto" and d["protocol"] == "auto":
            out[int(float(d["bytes"]))] = (float(d["time_us"]), float(d["busbw_GBps"]))
    return out


def main():
    nt, cs = nccltests(sys.argv[1]), commscale(sys.argv[2])
    worst_bw, worst_dt, ok = 0.0, 0.0, True
    print("%12s %12s %12s %8s %10s %10s %8s" % ("bytes", "nt_time_us", "cs_time_us", "dt_us",
                                                "nt_busbw", "cs_busbw", "bw_diff"))
    for b in sorted(set(nt) & set(cs)):
        (tn, bn), (tc, bc) = nt[b], cs[b]
        rel = (bc / bn - 1) if bn > 0 else 0.0
        mark = ""
        if 64 << 20 <= b <= 4 << 30:
            worst_bw = max(worst_bw, abs(rel))
            if abs(rel) > 0.03:
                mark, ok = " <-- busbw off by more than 3%", False
        if b <= 64 << 10:
            worst_dt = max(worst_dt, abs(tc - tn))
            if abs(tc - tn) > 2.0:
                mark, ok = " <-- time off by more than 2 us", False
        print("%12d %12.2f %12.2f %+8.2f %10.2f %10.2f %+7.1f%%%s" % (b, tn, tc, tc - tn, bn, bc,
                                                                    100 * rel, mark))
    print("busbw 64MiB-4GiB: worst difference %.1f%% (limit 3%%); time 8B-64KiB: worst "
          "difference %.2f us (limit 2 us): %s" % (100 * worst_bw, worst_dt,
                                                   "PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
