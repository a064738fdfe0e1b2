#!/usr/bin/env python3
"""single_steps.py -- time single-GPU training steps of the GPT of steps.py over a list of shapes
(issue 15): 125M-3B parameters, sequence 1k-4k, micro-batch 1-32, bf16 autocast, fused AdamW.

usage: single_steps.py SHAPES.csv OUT.csv [--warmup 4] [--steps 10]

SHAPES.csv columns: name,layers,hidden,heads,ffn,seq,mbs (vocabulary 50304, as steps.py); optional
vocab and attention (sdpa, default, or megatron-v1: steps.py's --attention).
Every shape runs in this one process (the model and optimizer are freed between shapes). Each step
is bracketed by CUDA events: start, end of forward (loss), end of backward, end of the optimizer
step (zero_grad included); the step time is start..end, and each row keeps the median over the
timed steps (after --warmup untimed ones) of the step and of its three parts, the min and max
step, the host's wall time per step (time.perf_counter around the step, synchronised), and
torch.cuda.max_memory_allocated over the timed steps. One line per step goes to stdout.
"""
import argparse
import csv
import gc
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from steps import GPT  # noqa: E402


class Shape:
    def __init__(self, row):
        self.name = row["name"]
        self.layers, self.hidden, self.heads = int(row["layers"]), int(row["hidden"]), int(row["heads"])
        self.ffn, self.seq, self.mbs = int(row["ffn"]), int(row["seq"]), int(row["mbs"])
        self.vocab = int(row.get("vocab") or 50304)
        self.attention = row.get("attention") or "sdpa"


def make_step(a, dev):
    """steps.py's GPT at shape a on dev with what every single-GPU script here trains it with
    (fused AdamW, one fixed batch, bf16 autocast): (model, optimizer, inputs, targets, autocast)."""
    torch.manual_seed(1234)
    with torch.device(dev):
        model = GPT(a)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=True)
    g = torch.Generator(device="cpu").manual_seed(100)
    data = torch.randint(0, a.vocab, (a.mbs, a.seq + 1), generator=g).to(dev)
    amp = torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return model, opt, data[:, :-1], data[:, 1:], amp


def run_shape(a, warmup, nsteps, dev):
    model, opt, x, y, amp = make_step(a, dev)
    nparam = sum(p.numel() for p in model.parameters())
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
    rec = []
    for it in range(warmup + nsteps):
        torch.cuda.synchronize()
        if it == warmup:
            torch.cuda.reset_peak_memory_stats(dev)
        h0 = time.perf_counter()
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
        h1 = time.perf_counter()
        if it >= warmup:
            f, b, o = ev[0].elapsed_time(ev[1]), ev[1].elapsed_time(ev[2]), ev[2].elapsed_time(ev[3])
            rec.append((f + b + o, f, b, o, 1e3 * (h1 - h0)))
            print(f"{a.name} step {it - warmup} step_ms {f + b + o:.3f} fwd {f:.3f} bwd {b:.3f} "
                  f"opt {o:.3f} wall {1e3 * (h1 - h0):.3f}", flush=True)
    peak = torch.cuda.max_memory_allocated(dev)
    lossv = loss.detach().float().item()
    del model, opt, x, y, loss
    gc.collect()
    torch.cuda.empty_cache()
    med = [statistics.median(r[i] for r in rec) for i in range(5)]
    steps = [r[0] for r in rec]
    return {"name": a.name, "layers": a.layers, "hidden": a.hidden, "heads": a.heads,
            "ffn": a.ffn, "vocab": a.vocab, "seq": a.seq, "mbs": a.mbs, "params": nparam,
            "step_ms": f"{med[0]:.3f}", "step_min_ms": f"{min(steps):.3f}",
            "step_max_ms": f"{max(steps):.3f}", "fwd_ms": f"{med[1]:.3f}",
            "bwd_ms": f"{med[2]:.3f}", "opt_ms": f"{med[3]:.3f}", "wall_ms": f"{med[4]:.3f}",
            "tokens_per_s": f"{a.mbs * a.seq / (med[0] / 1e3):.0f}",
            "peak_mem_bytes": peak, "loss": f"{lossv:.4f}", "steps": nsteps, "warmup": warmup}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("shapes")
    p.add_argument("out")
    p.add_argument("--warmup", type=int, default=4)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--only", default="", help="comma-separated shape names to run")
    args = p.parse_args()
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    with open(args.shapes) as f:
        shapes = [Shape(r) for r in csv.DictReader(f) if r["name"] and not r["name"].startswith("#")]
    if args.only:
        keep = set(args.only.split(","))
        shapes = [s for s in shapes if s.name in keep]
    print(f"# single_steps.py torch {torch.__version__} cuda {torch.version.cuda} "
          f"{torch.cuda.get_device_name(dev)}; bf16 autocast, fused AdamW, SDPA causal; "
          f"warmup {args.warmup} steps {args.steps}", flush=True)
    fields = ["name", "layers", "hidden", "heads", "ffn", "vocab", "seq", "mbs", "params",
              "step_ms", "step_min_ms", "step_max_ms", "fwd_ms", "bwd_ms", "opt_ms", "wall_ms",
              "tokens_per_s", "peak_mem_bytes", "loss", "steps", "warmup"]
    with open(args.out, "w", newline="") as f:
        f.write(f"# single-GPU GPT steps, {torch.cuda.get_device_name(dev)}, torch "
                f"{torch.__version__}, cuda {torch.version.cuda}; tests/gpu/single_steps.py\n")
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        f.flush()
        for s in shapes:
            t0 = time.time()
            try:
                row = run_shape(s, args.warmup, args.steps, dev)
            except torch.cuda.OutOfMemoryError as e:
                print(f"# {s.name}: out of memory ({str(e).splitlines()[0][:100]})", flush=True)
                gc.collect()
                torch.cuda.empty_cache()
                continue
            w.writerow(row)
            f.flush()
            print(f"# result {' '.join(f'{k}={v}' for k, v in row.items())} "
                  f"(took {time.time() - t0:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
