#!/usr/bin/env python3
"""trace_overlap.py -- how a training step's GPU time splits, from a PyTorch profiler trace
(chrome JSON, torch.profiler's export_chrome_trace): the union of NCCL kernels (communication),
the union of every other kernel and memory copy (compute), their overlap, and the time the GPU
ran nothing, between the first and the last GPU event.

usage: trace_overlap.py TRACE.json[.gz] [LABEL]
Prints one line: label span_ms compute_ms comm_ms overlap_ms idle_ms (all on device 0).
"""
import gzip
import json
import sys


def union(iv):
    iv = sorted(iv)
    out = []
    for a, b in iv:
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(iv):
    return sum(b - a for a, b in iv)


def intersect(x, y):
    i = j = 0
    out = []
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if a < b:
            out.append([a, b])
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def main():
    path = sys.argv[1]
    label = sys.argv[2] if len(sys.argv) > 2 else path
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        ev = json.load(f)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    comm, comp = [], []
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        if int(e.get("args", {}).get("device", 0)) != 0:
            continue
        a = float(e["ts"])
        b = a + float(e.get("dur", 0))
        (comm if "nccl" in e.get("name", "").lower() else comp).append((a, b))
    cu, mu = union(comp), union(comm)
    allu = union([tuple(x) for x in cu + mu])
    if not allu:
        print(f"{label} no GPU events")
        return
    span = allu[-1][1] - allu[0][0]
    ov = length(intersect(cu, mu))
    print(f"{label} span_ms={span / 1e3:.2f} compute_ms={length(cu) / 1e3:.2f} "
          f"comm_ms={length(mu) / 1e3:.2f} overlap_ms={ov / 1e3:.2f} "
          f"idle_ms={(span - length(allu)) / 1e3:.2f} kernels={len(comp) + len(comm)}")


if __name__ == "__main__":
    main()
