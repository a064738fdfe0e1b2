#!/usr/bin/env python3
"""gpu_defaults.py -- the compute-model keys of a GPU file (model/gpu.h) from that GPU's probes,
and nothing else (no training step is read): what model/gpus/h100-sxm.yaml and h200.yaml carry.

usage: gpu_defaults.py HBM_BW_GBPS PEAK_BF16_TFLOPS FILE...   (probe CSVs and host_probe.csv)

  gemm_efficiency, gemm_half_dim   eff = E x/(x + H), x = min(m, n, k), least squares of
                                   log(time) over the bf16 gemm rows (H on a grid, E in closed form)
  gemm_efficiency_fp8              E of the same curve (that H) over the fp8 gemm rows' fraction
                                   of the fp8 peak
  attn_efficiency, attn_half_dim,  eff = E p/(p + D) s/(s + S) d/p over the attn_fwd rows of at
  attn_half_seq, attn_bwd_factor   least 100 us (shorter ones time the host's launch), p the head
                                   dimension d padded as FlashAttention-2 pads it (a multiple of
                                   32 up to 192, else 256: model/compute.c); the backward
                                   factor is the median attn_bwd / attn_fwd time of those rows
  mem_efficiency                   the largest copy's GB/s over the datasheet bandwidth
  *_efficiency of the classes      the model's own bytes at each memop row's shape over its time,
                                   as calibrate/probe.c's cs_probe_memop_bw converts them (bf16
                                   activations, fp32 weights/gradients/Adam: 24 bytes a parameter)
  kernel_overhead                  launch,device: GPU time per minimal kernel
  host_layer_time                  median host time per layer of host_probe.csv (or eager_layer)
  host_fwd_share                   median over host_probe.csv's widths of the forward call's
                                   host time per layer over forward + loss.backward()
"""
import csv
import math
import statistics
import sys


def rows_of(path):
    with open(path) as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


def padded(d):
    """The head dimension FlashAttention-2 runs at (flash_api.cpp, head_size_rounded)."""
    return 32 * math.ceil(d / 32) if d <= 192 else 256


def fit_curve(xs, effs, grid):
    """E, H minimising sum (log eff - log(E x/(x+H)))^2."""
    best = None
    for h in grid:
        lg = [math.log(e) - math.log(x / (x + h)) for x, e in zip(xs, effs)]
        le = sum(lg) / len(lg)
        r = sum((v - le) ** 2 for v in lg)
        if best is None or r < best[0]:
            best = (r, math.exp(le), h)
    return best[1], best[2], math.sqrt(best[0] / len(xs))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    hbm = float(sys.argv[1]) * 1e9
    peak = float(sys.argv[2]) * 1e12
    probe, host = [], []
    for p in sys.argv[3:]:
        rs = rows_of(p)
        (host if rs and "what" in rs[0] else probe).extend(rs)
    out = {}
    g = [r for r in probe if r["kind"] == "gemm" and r["dtype"] == "bf16"]
    xs = [min(float(r["m"]), float(r["n"]), float(r["k"])) for r in g]
    effs = [float(r["tflops"]) * 1e12 / peak for r in g]
    e, h, rms = fit_curve(xs, effs, range(0, 2049, 4))
    out["gemm_efficiency"] = (e, f"fit over {len(g)} bf16 GEMMs, rms log error {rms:.3f}")
    out["gemm_half_dim"] = (h, "")
    # fp8 GEMMs on the bf16 curve's shape (the same H): E over the fp8 rows' fraction of the fp8
    # peak (frac_peak, the probe's own datasheet figure), in closed form
    g8 = [r for r in probe if r["kind"] == "gemm" and r["dtype"] == "fp8" and r.get("frac_peak")]
    if g8:
        x8 = [min(float(r["m"]), float(r["n"]), float(r["k"])) for r in g8]
        lg8 = [math.log(float(r["frac_peak"])) - math.log(x / (x + h)) for r, x in zip(g8, x8)]
        le8 = sum(lg8) / len(lg8)
        rms8 = math.sqrt(sum((v - le8) ** 2 for v in lg8) / len(lg8))
        out["gemm_efficiency_fp8"] = (math.exp(le8), f"fit over {len(g8)} fp8 GEMMs at "
                                      f"gemm_half_dim, rms log error {rms8:.3f}")
    af = [r for r in probe if r["kind"] == "attn_fwd" and float(r["time_us"]) >= 100]
    ab = {(r["m"], r["n"], r["k"]): float(r["time_us"]) for r in probe if r["kind"] == "attn_bwd"}
    best = None
    for d_half in range(0, 257, 4):
        for s_half in range(0, 8193, 64):
            lg = [math.log(float(r["tflops"]) * 1e12 / peak) -
                  math.log(padded(float(r["n"])) / (padded(float(r["n"])) + d_half)) -
                  math.log(float(r["m"]) / (float(r["m"]) + s_half)) -
                  math.log(float(r["n"]) / padded(float(r["n"]))) for r in af]
            le = sum(lg) / len(lg)
            res = sum((v - le) ** 2 for v in lg)
            if best is None or res < best[0]:
                best = (res, math.exp(le), d_half, s_half)
    out["attn_efficiency"] = (best[1], f"fit over {len(af)} attn_fwd rows of >= 100 us, rms log "
                              f"error {math.sqrt(best[0] / len(af)):.3f}")
    out["attn_half_dim"] = (best[2], "")
    out["attn_half_seq"] = (best[3], "")
    ratios = [ab[(r["m"], r["n"], r["k"])] / float(r["time_us"]) for r in af
              if (r["m"], r["n"], r["k"]) in ab]
    out["attn_bwd_factor"] = (statistics.median(ratios), f"median of {len(ratios)}")
    copies = [r for r in probe if r["kind"] == "membw" and r["dtype"] == "copy"]
    big = max(copies, key=lambda r: float(r["bytes"]))
    out["mem_efficiency"] = (float(big["GBps"]) * 1e9 / hbm, f"copy of {float(big['bytes']) / 2**31:.0f} GiB")
    e2 = 2.0
    cls = {"norm_efficiency": [], "act_efficiency": [], "residual_efficiency": [],
           "softmax_efficiency": [], "xent_efficiency": [], "optim_efficiency": [],
           "gather_efficiency": [], "reduce_efficiency": [], "cast_efficiency": []}
    memop = {(r["dtype"], r["m"], r["n"]): float(r["time_us"]) * 1e-6
             for r in probe if r["kind"] == "memop"}
    for (name, m, n), t in memop.items():
        M, N = float(m), float(n)
        if name in ("layernorm_fwd", "gelu_fwd"):
            tb = memop.get((name.replace("fwd", "bwd"), m, n))
            if tb:
                key = "norm_efficiency" if name[0] == "l" else "act_efficiency"
                cls[key].append(3 * 2 * M * N * e2 / (t + tb) / hbm)
        elif name == "residual_add":
            cls["residual_efficiency"].append(3 * M * N * e2 / t / hbm)
        elif name == "softmax_fwd":
            cls["softmax_efficiency"].append(2 * M * N * e2 / t / hbm)
        elif name == "cross_entropy":
            cls["xent_efficiency"].append(36 * M * N / t / hbm)
        elif name == "adamw":
            cls["optim_efficiency"].append(24 * M / t / hbm)
        elif name == "qkv_grad_cat":
            cls["gather_efficiency"].append(2 * M * N * e2 / t / hbm)
        elif name == "bias_grad":
            cls["reduce_efficiency"].append(M * N * e2 / t / hbm)
        elif name == "grad_cast":
            cls["cast_efficiency"].append(M * N * (4 + e2) / t / hbm)
    for k, v in cls.items():
        if v:
            out[k] = (statistics.median(v), f"median of {len(v)} memop rows")
    dev = [float(r["time_us"]) for r in probe if r["kind"] == "launch" and r["dtype"] == "device"]
    if dev:
        out["kernel_overhead"] = (statistics.median(dev), "us; launch,device")
    hl = [float(r["value"]) for r in host if r["what"] == "host_layer"]
    src = "host_probe.csv host_layer"
    if not hl:
        hl = [float(r["time_us"]) for r in probe if r["kind"] == "launch" and r["dtype"] == "eager_layer"]
        src = "launch,eager_layer"
    if hl:
        out["host_layer_time"] = (statistics.median(hl), f"us; median of {len(hl)} {src}")
    # the forward's share of the host's time per layer: one per width and file (the rows come
    # in order, host_layer_fwd before host_layer_bwd of the same width)
    shares, fwd = [], None
    for r in host:
        if r["what"] == "host_layer_fwd":
            fwd = float(r["value"])
        elif r["what"] == "host_layer_bwd" and fwd is not None:
            shares.append(fwd / (fwd + float(r["value"])))
            fwd = None
    if shares:
        out["host_fwd_share"] = (statistics.median(shares),
                                 f"median of {len(shares)} host_layer_fwd/(fwd + bwd)")
    for k, (v, note) in out.items():
        unit = "us" if k in ("kernel_overhead", "host_layer_time") else ""
        val = f"{v:.0f}" if k.endswith("half_dim") or k.endswith("half_seq") else f"{v:.3f}"
        print(f"{k}: {val}{unit}" + (f"   # {note}" if note else ""))


if __name__ == "__main__":
    main()
