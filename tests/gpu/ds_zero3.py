#!/usr/bin/env python3
"""ds_zero3.py -- time training steps of tests/gpu/steps.py's GPT under DeepSpeed ZeRO-3 as
released in v0.3.13 (2021-03-16), the implementation section 8 of VALIDATION.md compares with,
so that the deepspeed-zero3-v0.3 profile can be checked against a real run of that code.

DeepSpeed is not part of this repository: --ds-path names a directory holding the `deepspeed`
package of the v0.3.13 tag of microsoft/DeepSpeed (with op_builder copied in, its
git_version_info_installed.py written, its JIT-built flatten op replaced by torch's own
_flatten_dense_tensors, and the sparse-attention import dropped: tests/gpu/ds_zero3_node.sh says
how). What 2021 DeepSpeed needs from 2021 PyTorch and that PyTorch 2 no longer has is shimmed
here: torch._six.inf, and empty tensorboardX, mpi4py and psutil modules where they are missing
(none is on the path timed).

Modes:
  single  one GPU, no DeepSpeed: the model in fp16, forward + backward of one micro-batch timed
          (the compute reference a prediction is pinned to: `measured`)
  zero3   DeepSpeed over all ranks of torchrun at ZeRO stage --stage (3 unless given): fp16
          with dynamic loss scaling, the defaults of v0.3.13 (stage 3: overlap_comm,
          contiguous_gradients off, reduce and all-gather buckets 5e8, prefetch bucket 5e7, max
          live 1e9, persistence 1e5), Adam (torch.optim.Adam, fused) over the fp32 master copy

Each step: engine(x) -> loss; engine.backward(loss); engine.step(); then a device sync. Step
times are host wall times (DeepSpeed's ZeRO-3 synchronises the device on every fetch), the
maximum over ranks; printed one per step, then the median; the last line is a `# result` line
of key=value pairs (step_ms, fwdbwd_ms in single mode).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time
import types

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steps  # noqa: E402  (the GPT of steps.py)


def shim():
    six = types.ModuleType("torch._six")
    six.inf = math.inf
    six.string_classes = (str, bytes)
    six.int_classes = int
    sys.modules.setdefault("torch._six", six)
    for name in ("tensorboardX", "mpi4py", "psutil"):
        try:
            __import__(name)
        except ImportError:
            m = types.ModuleType(name)
            m.SummaryWriter = object
            m.MPI = None

            class _VM:
                total = available = used = 0
                percent = 0.0
            m.virtual_memory = lambda: _VM()
            sys.modules[name] = m


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mode", choices=["single", "zero3"], default="zero3")
    p.add_argument("--stage", type=int, default=3, choices=[0, 1, 2, 3],
                   help="ZeRO stage of the DeepSpeed run (default 3)")
    p.add_argument("--ds-path", default=os.environ.get("DS_PATH", ""))
    steps.model_args(p)
    p.add_argument("--warmup", type=int, default=4)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--zero", default="{}",
                   help='JSON merged into zero_optimization, e.g. {"stage3_prefetch_bucket_size": 0}')
    steps.trace_arg(p)
    p.add_argument("--profile", default="", help="rank 0: cProfile the timed steps, top functions to this file")
    return p.parse_args()


def main():
    a = parse()
    if a.mode == "single":
        rank, world, local = 0, 1, 0
    else:
        shim()
        if a.ds_path:
            sys.path.insert(0, a.ds_path)
        import deepspeed
        dist.init_process_group("nccl")
        rank, world = dist.get_rank(), dist.get_world_size()
        local = int(os.environ.get("LOCAL_RANK", rank))
    dev = torch.device("cuda", local)
    torch.cuda.set_device(dev)
    say = print if rank == 0 else (lambda *x, **k: None)
    torch.manual_seed(1234)
    with torch.device(dev):
        model = steps.GPT(a, 1, 0, None)
    nparam = sum(p.numel() for p in model.parameters())
    say(f"# ds_zero3.py mode={a.mode} world={world} torch {torch.__version__} "
        f"{torch.cuda.get_device_name(dev)} nccl {torch.cuda.nccl.version()}")
    say(f"# model layers={a.layers} hidden={a.hidden} heads={a.heads} ffn={a.ffn} "
        f"vocab={a.vocab} seq={a.seq} parameters={nparam} mbs={a.mbs} "
        f"NCCL_P2P_DISABLE={os.environ.get('NCCL_P2P_DISABLE')}")
    idx = torch.randint(0, a.vocab, (a.mbs, a.seq), device=dev)
    tgt = torch.randint(0, a.vocab, (a.mbs, a.seq), device=dev)
    times, fb = [], []
    if a.mode == "single":
        model = model.half()
        for i in range(a.warmup + a.steps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            loss = model(idx, tgt)
            loss.backward()
            torch.cuda.synchronize()
            t = time.perf_counter() - t0
            model.zero_grad(set_to_none=True)
            if i >= a.warmup:
                times.append(t)
                say(f"step {i - a.warmup} fwdbwd_ms={1e3 * t:.2f}")
        med = statistics.median(times)
        say(f"# result mode=single fwdbwd_ms={1e3 * med:.3f} "
            f"min_ms={1e3 * min(times):.3f} max_ms={1e3 * max(times):.3f} "
            f"peak_gib={torch.cuda.max_memory_allocated(dev) / 2**30:.2f}")
        return
    cfg = {
        "train_batch_size": a.mbs * world,
        "train_micro_batch_size_per_gpu": a.mbs,
        "gradient_accumulation_steps": 1,
        "fp16": {"enabled": True, "initial_scale_power": 12},
        "zero_optimization": dict({"stage": a.stage}, **json.loads(a.zero)),
        "steps_per_print": 1000000,
        "wall_clock_breakdown": False,
    }
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, fused=True)
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config_params=cfg)
    say(f"# deepspeed {deepspeed.__version__} from {os.path.dirname(deepspeed.__file__)}")
    skipped = 0
    prof = None
    tracer = steps.LastStepTrace(a.trace, a.warmup + a.steps, rank == 0)
    for i in range(a.warmup + a.steps):
        tracer.step(i)
        if i == a.warmup and a.profile and rank == 0:
            import cProfile
            prof = cProfile.Profile()
            prof.enable()
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        loss = engine(idx, tgt)
        engine.backward(loss)
        t1 = time.perf_counter()
        engine.step()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        x = torch.tensor([t1 - t0, t2 - t0], device=dev)
        dist.all_reduce(x, op=dist.ReduceOp.MAX)
        over = getattr(engine.optimizer, "overflow", False)
        if i >= a.warmup:
            times.append(float(x[1]))
            fb.append(float(x[0]))
            skipped += bool(over)
            say(f"step {i - a.warmup} fwdbwd_ms={1e3 * float(x[0]):.2f} "
                f"step_ms={1e3 * float(x[1]):.2f} overflow={int(bool(over))} loss={float(loss):.3f}")
    tracer.finish()
    if prof is not None:
        import io
        import pstats
        prof.disable()
        out = io.StringIO()
        st = pstats.Stats(prof, stream=out)
        st.sort_stats("tottime").print_stats(45)
        st.sort_stats("cumulative").print_stats(45)
        with open(a.profile, "w") as f:
            f.write(out.getvalue())
    med = statistics.median(times)
    say(f"# result mode=zero3 stage={a.stage} world={world} step_ms={1e3 * med:.3f} "
        f"fwdbwd_ms={1e3 * statistics.median(fb):.3f} "
        f"min_ms={1e3 * min(times):.3f} max_ms={1e3 * max(times):.3f} overflow_steps={skipped} "
        f"peak_gib={torch.cuda.max_memory_allocated(dev) / 2**30:.2f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
