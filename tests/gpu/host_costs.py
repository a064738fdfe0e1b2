#!/usr/bin/env python3
"""host_costs.py -- host (CPU) time of the framework-side work that model/frameworks/*.yaml charges
per rank, per collective call and per hooked module (issues 14 and 15), with the local PyTorch.

usage: host_costs.py OUT.csv [NPROCS]

Starts NPROCS processes (default: the number of visible GPUs, at most 2) in one NCCL process group
G; rank 0 times, on the host clock (time.perf_counter_ns around the Python loop; no CUDA sync inside
the timed region: only the host's enqueue cost is counted):

  rank_loop   DeepSpeed v0.3.13 stage3.py _allgather_param's per-rank loop, as written:
              for i in range(world_size):
                  partitions.append(flat.narrow(0, ps * i, ps))
                  if i == torch.distributed.get_rank(group=G):
                      partitions[i].data.copy_(x, non_blocking=True)
              for world_size 64..2048 (the loop only needs G for get_rank); us per iteration.
  rank_copy   what ProcessGroupNCCL's list-form all_gather does per output after the collective:
              out[j].copy_(flat[j], non_blocking=True) and the caching allocator's record_stream
              of out[j] on the NCCL stream (emulated on a side stream); us per rank.
  call        one async torch.distributed call on a small tensor (all_reduce, all_gather_into_tensor
              of 1024 fp16 elements per rank, async_op=True), the call's host time; us per call.
  module      a chain of N nn.Linear(16, 16) modules with a forward pre-hook and a forward hook that
              do what DeepSpeed 0.3's ZeRO-3 hooks do at the least (a Python call, an attribute and a
              dict lookup, a walk over named_parameters(recurse=False) reading and setting one
              attribute per parameter), minus the same chain without hooks; us per module.

Each figure is the median of 15 repetitions (3 warm-up repetitions first); the module figures
are the medians over five alternations of the chain without and with the hooks. Writes
quantity,param,median_us,p10_us,p90_us,reps.
"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

REPS, WARM = 15, 3


def timed(fn, div):
    ts = []
    for i in range(WARM + REPS):
        t0 = time.perf_counter_ns()
        fn()
        t1 = time.perf_counter_ns()
        if i >= WARM:
            ts.append((t1 - t0) / 1e3 / div)
        torch.cuda.synchronize()  # outside the timed region: the queue starts empty each time
    ts.sort()
    return statistics.median(ts), ts[len(ts) // 10], ts[(9 * len(ts)) // 10]


def rank_loop(G, world_size, ps, dev):
    flat = torch.empty(ps * world_size, dtype=torch.float16, device=dev)
    x = torch.ones(ps, dtype=torch.float16, device=dev)

    def body():
        partitions = []
        for i in range(world_size):
            partitions.append(flat.narrow(0, ps * i, ps))
            if i == torch.distributed.get_rank(group=G):
                partitions[i].data.copy_(x, non_blocking=True)

    return timed(body, world_size)


def rank_copy(world_size, ps, dev):
    flat = torch.empty(world_size, ps, dtype=torch.float16, device=dev)
    outs = [torch.empty(ps, dtype=torch.float16, device=dev) for _ in range(world_size)]
    s = torch.cuda.Stream(device=dev)

    def body():
        with torch.cuda.stream(s):
            for j in range(world_size):
                outs[j].copy_(flat[j], non_blocking=True)
                outs[j].record_stream(s)

    return timed(body, world_size)


def calls(dev, n=200):
    t = torch.ones(1024, dtype=torch.float16, device=dev)
    ws = dist.get_world_size()
    out = torch.empty(1024 * ws, dtype=torch.float16, device=dev)
    res = {}

    def ar():
        for _ in range(n):
            dist.all_reduce(t, async_op=True)

    def ag():
        for _ in range(n):
            dist.all_gather_into_tensor(out, t, async_op=True)

    for name, fn in (("call_all_reduce", ar), ("call_all_gather_into_tensor", ag)):
        ts = []
        for i in range(WARM + REPS):
            dist.barrier()
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            fn()
            t1 = time.perf_counter_ns()
            torch.cuda.synchronize()
            if i >= WARM:
                ts.append((t1 - t0) / 1e3 / n)
        ts.sort()
        res[name] = (statistics.median(ts), ts[len(ts) // 10], ts[(9 * len(ts)) // 10])
    return res


def modules(dev, nmod=256):
    torch.manual_seed(0)
    chain = torch.nn.Sequential(*[torch.nn.Linear(16, 16) for _ in range(nmod)]).to(dev)
    x = torch.randn(4, 16, device=dev, requires_grad=True)
    for p in chain.parameters():
        p.ds_status = 0
    state = {}

    def pre(mod, inp):  # DeepSpeed 0.3 pre_sub_module_forward_function, at its least
        st = state.get(id(mod))
        for _, p in mod.named_parameters(recurse=False):
            if p.ds_status == 0:
                p.ds_status = 1
        state[id(mod)] = st

    def post(mod, inp, out):  # post_sub_module_forward_function, at its least
        for _, p in mod.named_parameters(recurse=False):
            p.ds_status = 0
        return None

    def fwd():
        chain(x)

    def hooks_on():
        return [h for m in chain for h in (m.register_forward_pre_hook(pre), m.register_forward_hook(post))]

    # five alternations without and with the hooks; the medians of each side's medians
    fwd()
    plain, hooked = [], []
    for _ in range(5):
        plain.append(timed(fwd, nmod))
        hs = hooks_on()
        hooked.append(timed(fwd, nmod))
        for h in hs:
            h.remove()
    p = tuple(statistics.median(t[i] for t in plain) for i in range(3))
    q = tuple(statistics.median(t[i] for t in hooked) for i in range(3))
    return {"module_plain": p, "module_hooked": q,
            "module_hook_cost": (q[0] - p[0], q[1] - p[1], q[2] - p[2])}, nmod


def worker(rank, nprocs, out):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    ngpu = torch.cuda.device_count()
    dev = torch.device("cuda", rank % ngpu)
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", rank=rank, world_size=nprocs, device_id=dev)
    G = dist.new_group(list(range(nprocs)))
    rows = []
    c = calls(dev)
    if rank == 0:
        for k, v in c.items():
            rows.append((k, f"world={nprocs}", v))
        for ws in (64, 128, 256, 512, 1024, 2048):
            rows.append(("rank_loop", f"world_size={ws}", rank_loop(G, ws, 1024, dev)))
            rows.append(("rank_copy", f"world_size={ws}", rank_copy(ws, 1024, dev)))
        m, nmod = modules(dev)
        for k, v in m.items():
            rows.append((k, f"modules={nmod}", v))
        with open(out, "w") as f:
            f.write(f"# host_costs.py: torch {torch.__version__}, {torch.cuda.get_device_name(dev)}, "
                    f"{nprocs} process(es); host clock, CUDA sync outside the timed regions; "
                    f"median/p10/p90 of {REPS} repetitions\n")
            f.write("quantity,param,median_us,p10_us,p90_us,reps\n")
            for q, p, (med, lo, hi) in rows:
                f.write(f"{q},{p},{med:.3f},{lo:.3f},{hi:.3f},{REPS}\n")
                print(f"{q:28s} {p:18s} {med:9.3f} us (p10 {lo:.3f}, p90 {hi:.3f})", flush=True)
    dist.barrier()
    dist.destroy_process_group()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else min(2, torch.cuda.device_count())
    mp.spawn(worker, args=(n, out), nprocs=n, join=True)


if __name__ == "__main__":
    main()
