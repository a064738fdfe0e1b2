#!/usr/bin/env python3
"""saved_bytes.py -- what one single-GPU training step of steps.py's GPT holds, by phase and by
dtype (issue 14: the memory model's activations under bf16 autocast over fp32 weights).

usage: saved_bytes.py SHAPES.csv OUT.csv

For each shape (the columns of single_shapes.csv), after two untimed steps (so that the fused
AdamW state exists), one more step is run with torch.autograd.graph.saved_tensors_hooks: every
tensor autograd saves for backward is recorded once per storage (views share it), parameters'
own storages left out, and summed by dtype. torch.cuda.memory_allocated is read before the
forward, after it (loss computed, nothing freed yet), after backward and after the optimizer
step; torch.cuda.max_memory_allocated over the step is the peak. One CSV row per shape, bytes.
"""
import csv
import gc
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from single_steps import Shape, make_step  # noqa: E402


def measure(a, dev):
    model, opt, x, y, amp = make_step(a, dev)
    nparam = sum(p.numel() for p in model.parameters())
    pstore = {p.untyped_storage().data_ptr() for p in model.parameters()}
    for _ in range(2):
        with amp:
            loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    del loss
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats(dev)
    seen, by = set(), {}

    def pack(t):
        s = t.untyped_storage()
        k = s.data_ptr()
        if k not in pstore and k not in seen:
            seen.add(k)
            by[str(t.dtype)] = by.get(str(t.dtype), 0) + s.nbytes()
        return t

    a0 = torch.cuda.memory_allocated(dev)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with amp:
            loss = model(x, y)
    torch.cuda.synchronize()
    a1 = torch.cuda.memory_allocated(dev)
    loss.backward()
    torch.cuda.synchronize()
    a2 = torch.cuda.memory_allocated(dev)
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    a3 = torch.cuda.memory_allocated(dev)
    peak = torch.cuda.max_memory_allocated(dev)
    del model, opt, x, y, loss
    gc.collect()
    torch.cuda.empty_cache()
    return {"name": a.name, "params": nparam, "saved_fp32": by.get("torch.float32", 0),
            "saved_bf16": by.get("torch.bfloat16", 0),
            "saved_other": sum(v for k, v in by.items()
                               if k not in ("torch.float32", "torch.bfloat16")),
            "alloc_before_fwd": a0, "alloc_after_fwd": a1, "alloc_after_bwd": a2,
            "alloc_after_opt": a3, "peak": peak}


def main():
    shapes_csv, out_csv = sys.argv[1], sys.argv[2]
    dev = torch.device("cuda", 0)
    with open(shapes_csv) as f:
        shapes = [Shape(r) for r in csv.DictReader(f)]
    rows = []
    for a in shapes:
        r = measure(a, dev)
        print(" ".join(f"{k}={v}" for k, v in r.items()), flush=True)
        rows.append(r)
    with open(out_csv, "w", newline="") as f:
        f.write(f"# saved tensors and allocated bytes per phase, {torch.cuda.get_device_name(dev)}, "
                f"torch {torch.__version__}; tests/gpu/saved_bytes.py\n")
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
