#!/usr/bin/env python3
"""op_profile.py -- where a single-GPU training step's GPU time goes, kernel by kernel, for the
GPT of steps.py at shapes of single_shapes.csv: the measured side of commscale's per-kernel
compute model (`commscale workload --ops`).

usage: op_profile.py SHAPES.csv OUT.csv [--only a,b] [--warmup 3] [--steps 3]

Each shape runs as single_steps.py runs it (bf16 autocast over fp32 weights, fused AdamW, SDPA
causal). After --warmup steps, --steps steps run under torch.profiler with a device sync between
forward, backward and the optimizer step, so that every kernel falls in one phase by its start
time. Each CUDA kernel is put in a class by its name (gemm, attention, layernorm, softmax/xent,
optimizer, reduce, elementwise, embedding, copy, other); OUT.csv has one row per (shape, phase,
class, kernel name): count and GPU microseconds per step. The per-step sums of all kernels and
the phases' wall times (CUDA events, outside the profiler) are printed to stdout.
"""
import argparse
import collections
import csv
import gc
import os
import re
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from single_steps import Shape, make_step  # noqa: E402

CLASSES = [  # first match wins
    ("attention", r"flash|fmha|sdpa|attention|cudnn_generated"),
    ("optimizer", r"multi_tensor|fused_adam|FusedAdam|adamw|_fused_adam"),
    ("gemm", r"gemm|nvjet|cutlass|xmma|sm90_|sm80_|cublas|splitK|Kernel2"),
    ("layernorm", r"layer_norm|LayerNorm|layernorm"),
    ("softmax_xent", r"softmax|nll_loss|cross_entropy|log_softmax"),
    ("embedding", r"embedding|indexSelect|index_select|index_put|indexing_backward"),
    ("reduce", r"reduce_kernel|Reduce"),
    ("copy", r"copy|Memcpy|Memset|fill"),
    ("elementwise", r"elementwise|vectorized|unrolled|gelu|Gelu"),
]


def klass(name):
    for c, pat in CLASSES:
        if re.search(pat, name):
            return c
    return "other"


def step(model, opt, x, y, amp, mark):
    with torch.profiler.record_function("phase_fwd"):
        with amp:
            loss = model(x, y)
        torch.cuda.synchronize()
    with torch.profiler.record_function("phase_bwd"):
        loss.backward()
        torch.cuda.synchronize()
    with torch.profiler.record_function("phase_opt"):
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
    return loss


def run_shape(a, warmup, nsteps, dev, rows):
    model, opt, x, y, amp = make_step(a, dev)
    # phase wall times without the profiler (CUDA events, syncs between phases as under it)
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
    wall = collections.defaultdict(list)
    for it in range(warmup + nsteps):
        torch.cuda.synchronize()
        ev[0].record()
        with amp:
            loss = model(x, y)
        ev[1].record()
        loss.backward()
        ev[2].record()
        opt.step()
        opt.zero_grad(set_to_none=True)
        ev[3].record()
        torch.cuda.synchronize()
        if it >= warmup:
            for k, ph in enumerate(("fwd", "bwd", "opt")):
                wall[ph].append(ev[k].elapsed_time(ev[k + 1]))
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(nsteps):
            step(model, opt, x, y, amp, None)
    events = prof.events()
    ranges = [(e.name[6:], e.time_range.start, e.time_range.end) for e in events
              if e.name.startswith("phase_") and e.device_type == torch.autograd.DeviceType.CPU]
    agg = collections.defaultdict(lambda: [0, 0.0])
    for e in events:
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        t0 = e.time_range.start
        ph = next((r[0] for r in ranges if r[1] <= t0 <= r[2]), "none")
        key = (ph, klass(e.name), e.name[:160])
        agg[key][0] += 1
        agg[key][1] += e.time_range.end - e.time_range.start
    tot = collections.defaultdict(float)
    for (ph, c, n), (cnt, us) in sorted(agg.items()):
        rows.append({"shape": a.name, "phase": ph, "class": c, "kernel": n,
                     "count_per_step": f"{cnt / nsteps:g}", "us_per_step": f"{us / nsteps:.1f}"})
        tot[ph] += us / nsteps
    med = {ph: sorted(v)[len(v) // 2] for ph, v in wall.items()}
    print(f"{a.name}: wall ms fwd {med['fwd']:.3f} bwd {med['bwd']:.3f} opt {med['opt']:.3f}; "
          f"kernel sum ms " + " ".join(f"{ph} {tot[ph] / 1e3:.3f}" for ph in sorted(tot)),
          flush=True)
    byc = collections.defaultdict(float)
    for r in rows:
        if r["shape"] == a.name:
            byc[(r["phase"], r["class"])] += float(r["us_per_step"])
    for (ph, c), us in sorted(byc.items()):
        print(f"  {a.name} {ph:4s} {c:13s} {us / 1e3:9.3f} ms", flush=True)
    del model, opt, x, y, loss, prof
    gc.collect()
    torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("shapes")
    p.add_argument("out")
    p.add_argument("--only", default="")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=3)
    args = p.parse_args()
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    with open(args.shapes) as f:
        shapes = [Shape(r) for r in csv.DictReader(f) if r["name"] and not r["name"].startswith("#")]
    if args.only:
        keep = set(args.only.split(","))
        shapes = [s for s in shapes if s.name in keep]
    print(f"# op_profile.py torch {torch.__version__} cuda {torch.version.cuda} "
          f"{torch.cuda.get_device_name(dev)}", flush=True)
    rows = []
    with open(args.out, "w", newline="") as f:
        f.write(f"# kernels of single-GPU GPT steps, {torch.cuda.get_device_name(dev)}, torch "
                f"{torch.__version__}; tests/gpu/op_profile.py\n")
        w = csv.DictWriter(f, fieldnames=["shape", "phase", "class", "kernel", "count_per_step",
                                          "us_per_step"])
        w.writeheader()
        for s in shapes:
            n0 = len(rows)
            run_shape(s, args.warmup, args.steps, dev, rows)
            w.writerows(rows[n0:])
            f.flush()


if __name__ == "__main__":
    main()
