#!/usr/bin/env python3
"""steps.py -- time training steps of a GPT of about 1B parameters under PyTorch, to check
`commscale predict` against real step times (issue 9).

The model is written here from the GPT-2 recipe: learned positions, pre-LayerNorm blocks with
biases, GELU FFN, tied input/output embeddings, no dropout, flash attention through
torch.nn.functional.scaled_dot_product_attention (causal). Tokens are synthetic (uniform random),
so only the speed means anything. Mixed precision is bf16 autocast over fp32 weights (fp32
master weights and fp32 AdamW state, fused AdamW).

Modes (one process per GPU; start the multi-GPU ones with torchrun):
  single  one GPU, no torch.distributed
  ddp     DistributedDataParallel over NCCL, 25 MiB buckets unless --bucket-mb says otherwise;
          gradients are fp32 (the parameters are), so the all-reduce moves 4 bytes per parameter
  fsdp    FSDP2 fully_shard per block and at the root (full shard, ZeRO-3); bf16 parameters in
          compute (all-gathers move 2 bytes per parameter), fp32 gradient reduce-scatter
  tp      Megatron-style tensor parallelism over all ranks: column-parallel QKV and FC1,
          row-parallel projection and FC2, so 2 all-reduces forward (after the row-parallel
          layers) and 2 backward (before the column-parallel ones) per block; vocabulary-parallel
          embedding and cross-entropy with the tied head
  dataparallel  one process (plain python3), torch.nn.DataParallel over every visible GPU: the
          module replicated from GPU 0 each step, --mbs samples per GPU scattered from GPU 0,
          the losses gathered onto it, the gradients reduced onto it; the optimizer on GPU 0

The per-GPU batch is fixed (the DLPerf definition of speedup): every mode runs --mbs samples per
micro-batch and --accum micro-batches per step on each model replica; ddp, fsdp and
dataparallel have one replica per GPU, tp one replica per TP group, so `tp` on 2 GPUs should run with --accum 2 to keep
the batch per GPU of the 1-GPU run.

Timing: --warmup steps, then --steps timed steps. Each step is bracketed by CUDA events: start,
end of the last backward (fwd+bwd, the communication that backward waits for included), end of
the optimizer step. Step times are the maximum over ranks. Printed: one line per step, then the
median, min, max and interquartile range, tokens/s over all GPUs, and peak memory per GPU.
The last line is a `# result` line of key=value pairs for scripts.
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributed as dist


# ---------------------------------------------------------------------------------------------
# Tensor-parallel building blocks (Megatron-LM's f and g operators, written from the paper,
# arXiv 1909.08053 section 3).

class _CopyToTP(torch.autograd.Function):
    """f: identity forward, all-reduce of the gradient backward."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, g):
        g = g.contiguous()
        dist.all_reduce(g, group=ctx.group)
        return g, None


class _ReduceFromTP(torch.autograd.Function):
    """g: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        x = x.contiguous()
        dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, g):
        return g, None


def lowp(x):
    """x in the autocast dtype, so that TP collectives move 16-bit values as under Megatron-LM's
    bf16 training (autocast would cast inside the GEMM, after the collective)."""
    t = x.device.type
    return x.to(torch.get_autocast_dtype(t)) if torch.is_autocast_enabled(t) else x


def copy_to_tp(x, group):
    return x if group is None else _CopyToTP.apply(lowp(x), group)


def reduce_from_tp(x, group):
    return x if group is None else _ReduceFromTP.apply(x, group)


class ColumnLinear(nn.Module):
    """Y = X A with A split by columns over the TP group; the input is replicated."""

    def __init__(self, din, dout, tp, group, bias=True):
        super().__init__()
        assert dout % tp == 0
        self.group = group
        self.weight = nn.Parameter(torch.empty(dout // tp, din))
        self.bias = nn.Parameter(torch.zeros(dout // tp)) if bias else None
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        return F.linear(copy_to_tp(x, self.group), self.weight, self.bias)


class RowLinear(nn.Module):
    """Y = X A with A split by rows; the input is split by columns, partial outputs summed."""

    def __init__(self, din, dout, tp, group, std, bias=True):
        super().__init__()
        assert din % tp == 0
        self.group = group
        self.weight = nn.Parameter(torch.empty(dout, din // tp))
        self.bias = nn.Parameter(torch.zeros(dout)) if bias else None
        nn.init.normal_(self.weight, std=std)

    def forward(self, x):
        y = reduce_from_tp(F.linear(x, self.weight), self.group)
        return y if self.bias is None else y + self.bias


class _VocabParallelCE(torch.autograd.Function):
    """Cross-entropy over logits split by vocabulary: three all-reduces of one value per token
    (max, target logit, sum of exponentials), no gather of the logits."""

    @staticmethod
    def forward(ctx, logits, target, vstart, group):
        logits = logits.float()
        m = logits.max(dim=-1).values
        dist.all_reduce(m, op=dist.ReduceOp.MAX, group=group)
        logits = logits - m.unsqueeze(-1)
        vlocal = logits.shape[-1]
        outside = (target < vstart) | (target >= vstart + vlocal)
        t = (target - vstart).clamp(0, vlocal - 1)
        pred = logits.gather(-1, t.unsqueeze(-1)).squeeze(-1)
        pred = pred.masked_fill(outside, 0.0)
        dist.all_reduce(pred, group=group)
        exp = logits.exp_()
        s = exp.sum(dim=-1)
        dist.all_reduce(s, group=group)
        loss = torch.log(s) - pred
        exp.div_(s.unsqueeze(-1))
        ctx.save_for_backward(exp, t, outside)
        return loss

    @staticmethod
    def backward(ctx, g):
        softmax, t, outside = ctx.saved_tensors
        grad = softmax
        grad.scatter_add_(-1, t.unsqueeze(-1), -(~outside).unsqueeze(-1).to(grad.dtype))
        grad.mul_(g.unsqueeze(-1))
        return grad, None, None, None


# ---------------------------------------------------------------------------------------------
# The model.

_MASKS = {}


def unfused_attention(q, k, v):
    """--attention megatron-v1: the attention core the Megatron-LM GPT-2 of 2020 computed (the
    code DLPerf's DeepSpeed runs trained, VALIDATION.md section 11; commscale's workload key
    attention_code: megatron-v1), in the activation type without autocast: the full s x s scores
    by a batched matmul, divided by sqrt(head dim), multiplied by the 0/1 causal mask and reduced
    by 10000 where it is 0 (three passes over the scores), a softmax in the activation type, and
    the batched matmul with the values. No dropout (steps.py has none)."""
    s, d = q.shape[-2], q.shape[-1]
    with torch.autocast(device_type=q.device.type, enabled=False):
        dt = torch.bfloat16 if q.device.type == "cuda" else q.dtype
        q, k, v = q.to(dt), k.to(dt), v.to(dt)
        key = (s, dt, q.device)
        if key not in _MASKS:
            m = torch.tril(torch.ones(s, s, device=q.device, dtype=dt)).view(1, 1, s, s)
            _MASKS[key] = (m, 10000.0 * (1.0 - m))
        mask, sub = _MASKS[key]
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / math.sqrt(d)
        scores = scores * mask - sub
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v)


class Block(nn.Module):
    def __init__(self, a, tp, group):
        super().__init__()
        h = a.hidden
        assert a.heads % tp == 0
        self.heads = a.heads // tp
        self.hd = h // a.heads
        self.attention = getattr(a, "attention", "sdpa")
        std_out = 0.02 / math.sqrt(2 * a.layers)
        bias = getattr(a, "bias", "on") == "on"  # off: no bias in any linear or LayerNorm
        self.ln1 = nn.LayerNorm(h, bias=bias)
        self.qkv = ColumnLinear(h, 3 * h, tp, group, bias)
        self.proj = RowLinear(h, h, tp, group, std_out, bias)
        self.ln2 = nn.LayerNorm(h, bias=bias)
        self.fc1 = ColumnLinear(h, a.ffn, tp, group, bias)
        self.fc2 = RowLinear(a.ffn, h, tp, group, std_out, bias)

    def forward(self, x):
        b, s, _ = x.shape
        # Column-parallel QKV: this rank's heads, laid out [3, heads_local, hd] per token.
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        if self.attention == "sdpa":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            y = unfused_attention(q, k, v)
        y = y.transpose(1, 2).reshape(b, s, self.heads * self.hd)
        x = x + self.proj(y)
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
        return x


class GPT(nn.Module):
    def __init__(self, a, tp=1, rank=0, group=None):
        super().__init__()
        assert a.vocab % tp == 0
        self.group = group
        self.vlocal = a.vocab // tp
        self.vstart = rank * self.vlocal
        self.wte = nn.Parameter(torch.empty(self.vlocal, a.hidden))  # tied with the head
        self.wpe = nn.Parameter(torch.empty(a.seq, a.hidden))
        nn.init.normal_(self.wte, std=0.02)
        nn.init.normal_(self.wpe, std=0.01)
        self.blocks = nn.ModuleList(Block(a, tp, group) for _ in range(a.layers))
        self.lnf = nn.LayerNorm(a.hidden, bias=getattr(a, "bias", "on") == "on")

    def forward(self, idx, target):
        s = idx.shape[1]
        if self.group is None:
            x = F.embedding(idx, self.wte)
        else:
            # Vocabulary-parallel embedding: rows this rank lacks give zeros, then sum.
            outside = (idx < self.vstart) | (idx >= self.vstart + self.vlocal)
            e = F.embedding((idx - self.vstart).clamp(0, self.vlocal - 1), self.wte)
            x = reduce_from_tp(lowp(e.masked_fill(outside.unsqueeze(-1), 0.0)), self.group)
        x = x + self.wpe[:s]
        for blk in self.blocks:
            x = blk(x)
        x = self.lnf(x)
        logits = F.linear(copy_to_tp(x, self.group), self.wte)
        if self.group is None:
            return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), target.reshape(-1))
        return _VocabParallelCE.apply(logits, target, self.vstart, self.group).mean()


# ---------------------------------------------------------------------------------------------

class LastStepTrace:
    """--trace: a torch.profiler chrome trace (CPU and CUDA) of the last of `steps` iterations,
    written to `path` when `finish` is called; nothing when `on` is false (no path, not rank 0,
    or no GPU)."""

    def __init__(self, path, steps, on):
        self.path, self.last, self.on, self.prof = path, steps - 1, bool(path) and on, None

    def step(self, it):
        """Call at the start of iteration `it`: the profiler starts before the last one."""
        if self.on and it == self.last:
            self.prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                           torch.profiler.ProfilerActivity.CUDA])
            self.prof.__enter__()

    def finish(self):
        if self.prof is not None:
            self.prof.__exit__(None, None, None)
            self.prof.export_chrome_trace(self.path)


def trace_arg(p):
    p.add_argument("--trace", default="",
                   help="rank 0: a torch.profiler chrome trace of the last timed step to this file")


def model_args(p):
    """The GPT's shape and the micro-batch, as every driver of this model takes them."""
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--ffn", type=int, default=8192)
    p.add_argument("--vocab", type=int, default=50304)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--mbs", type=int, default=8, help="samples per micro-batch (default 8)")
    p.add_argument("--attention", choices=["sdpa", "megatron-v1"], default="sdpa",
                   help="attention core: flash (SDPA, default) or the unfused megatron-v1 code")
    p.add_argument("--bias", choices=["on", "off"], default="on",
                   help="biases in the linears and LayerNorms (default on, as GPT-2; off: 6 "
                        "tensors a block instead of 12, as bias-free models have)")


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=["single", "ddp", "fsdp", "tp", "dataparallel"],
                   default="single",
                   help="dataparallel: one process, torch.nn.DataParallel over every visible GPU "
                        "(--mbs samples per GPU)")
    model_args(p)
    p.add_argument("--accum", type=int, default=1, help="micro-batches per step per replica")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=15)
    p.add_argument("--bucket-mb", type=float, default=25.0, help="DDP bucket in MiB (default 25)")
    p.add_argument("--fsdp-reshard", choices=["true", "root-default", "false"], default="true",
                   help="FSDP2 reshard_after_forward: true for every block and the root (default), "
                        "root-default (blocks true, the root's left to fully_shard's default), "
                        "false (blocks false, the root's default)")
    p.add_argument("--device", default="cuda", help="cuda, or cpu for a smoke test (gloo)")
    p.add_argument("--cudnn-sdpa", choices=["on", "off"], default="on",
                   help="off: torch.backends.cuda.enable_cudnn_sdp(False), so that SDPA takes "
                        "another fused kernel (flash) instead of cuDNN's")
    p.add_argument("--gil-switch", type=float, default=0.0,
                   help="sys.setswitchinterval in seconds (0: Python's default, 5 ms): how long a "
                        "thread that wants the GIL waits before asking for it (DataParallel's "
                        "replica threads share one interpreter)")
    trace_arg(p)
    return p.parse_args()


def quantile(xs, q):
    xs = sorted(xs)
    i = q * (len(xs) - 1)
    lo = int(math.floor(i))
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def main():
    a = parse()
    if a.gil_switch > 0:
        sys.setswitchinterval(a.gil_switch)
    if a.cudnn_sdpa == "off":
        torch.backends.cuda.enable_cudnn_sdp(False)
    cpu = a.device == "cpu"
    distributed = a.mode not in ("single", "dataparallel")
    if distributed:
        dist.init_process_group("gloo" if cpu else "nccl")
        rank, world = dist.get_rank(), dist.get_world_size()
        local = int(os.environ.get("LOCAL_RANK", rank))
    else:
        rank, world, local = 0, 1, 0
    dev = torch.device("cpu") if cpu else torch.device("cuda", local)
    if not cpu:
        torch.cuda.set_device(dev)
    say = print if rank == 0 else (lambda *x, **k: None)

    tp = world if a.mode == "tp" else 1
    # GPUs and data-parallel replicas: DataParallel's one process drives every visible GPU
    gpus = torch.cuda.device_count() if a.mode == "dataparallel" and not cpu else world
    replicas = gpus if a.mode == "dataparallel" else world // tp
    group = dist.group.WORLD if a.mode == "tp" else None
    # Replicated parameters must start equal on every rank: same seed everywhere.
    torch.manual_seed(1234)
    with torch.device(dev):
        model = GPT(a, tp, rank if tp > 1 else 0, group)
    nparam_local = sum(p.numel() for p in model.parameters())
    if a.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model, device_ids=None if cpu else [local], bucket_cap_mb=a.bucket_mb)
    elif a.mode == "fsdp":
        from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
        mp = MixedPrecisionPolicy(param_dtype=torch.float32 if cpu else torch.bfloat16,
                                  reduce_dtype=torch.float32)
        root_kw = {"reshard_after_forward": True} if a.fsdp_reshard == "true" else {}
        for blk in model.blocks:
            fully_shard(blk, mp_policy=mp, reshard_after_forward=a.fsdp_reshard != "false")
        fully_shard(model, mp_policy=mp, **root_kw)
    elif a.mode == "dataparallel" and not cpu:
        # replicate the module to every GPU, scatter the batch, gather the outputs on GPU 0 and
        # reduce the gradients onto it, each step (torch/nn/parallel/data_parallel.py)
        model = nn.DataParallel(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1,
                            fused=not cpu)

    ver = f"torch {torch.__version__}"
    if not cpu:
        ver += f", cuda {torch.version.cuda}, {torch.cuda.get_device_name(dev)}"
        if distributed:
            v = torch.cuda.nccl.version()
            ver += ", nccl " + (".".join(map(str, v)) if isinstance(v, tuple) else str(v))
    say(f"# steps.py mode={a.mode} world={world} tp={tp} {ver}")
    say(f"# model layers={a.layers} hidden={a.hidden} heads={a.heads} ffn={a.ffn} "
        f"vocab={a.vocab} seq={a.seq} bias={a.bias}; parameters on rank 0 before sharding: {nparam_local} "
        f"({nparam_local * tp / 1e9:.3f} B in the model)")
    say(f"# batch mbs={a.mbs} accum={a.accum} replicas={replicas} "
        f"samples/step={a.mbs * a.accum * replicas} tokens/step={a.mbs * a.accum * replicas * a.seq}"
        f" bucket_mb={a.bucket_mb if a.mode == 'ddp' else '-'} warmup={a.warmup} steps={a.steps}")
    env = {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                          "NVSHMEM_DISABLE_NVLS")}
    say(f"# env {env}; GIL switch interval {sys.getswitchinterval() * 1e3:.2f} ms; "
        f"cudnn sdpa {a.cudnn_sdpa}")

    # Synthetic tokens: one fixed batch per replica (different across DP replicas, equal inside
    # a TP group, which must see the same input).
    g = torch.Generator(device="cpu").manual_seed(100 + (rank // tp))
    rows = a.mbs * (replicas if a.mode == "dataparallel" else 1)  # DataParallel splits dim 0
    data = torch.randint(0, a.vocab, (a.accum, rows, a.seq + 1), generator=g).to(dev)

    amp = torch.autocast(device_type="cpu" if cpu else "cuda", dtype=torch.bfloat16)

    def step():
        for i in range(a.accum):
            x, y = data[i, :, :-1], data[i, :, 1:]
            sync_ctx = model.no_sync() if (a.mode == "ddp" and i < a.accum - 1) else _Null()
            if a.mode == "fsdp":
                model.set_requires_gradient_sync(i == a.accum - 1)
            with sync_ctx:
                with amp:
                    # DataParallel gathers one loss per GPU onto GPU 0
                    loss = model(x, y).mean() / a.accum
                loss.backward()
        return loss

    def stamp():
        if cpu:
            return time.perf_counter()
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    def dt(e0, e1):
        return (e1 - e0) * 1e3 if cpu else e0.elapsed_time(e1)

    fb, st, loss = [], [], None
    tracer = LastStepTrace(a.trace, a.warmup + a.steps, rank == 0 and not cpu)
    for it in range(a.warmup + a.steps):
        tracer.step(it)
        if not cpu:
            torch.cuda.synchronize()
        if it == a.warmup and not cpu:
            for d in range(gpus if a.mode == "dataparallel" else 1):
                torch.cuda.reset_peak_memory_stats(d if a.mode == "dataparallel" else dev)
        e0 = stamp()
        loss = step()
        e1 = stamp()
        try:
            opt.step()
        except (RuntimeError, NotImplementedError) as err:
            if it > 0 or cpu:
                raise
            # Fused AdamW over FSDP2's DTensors may be missing in some versions: say so, use the
            # multi-tensor (foreach) kernel instead, and carry on.
            say(f"# fused AdamW failed ({str(err).splitlines()[0][:120]}); using foreach")
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95),
                                    weight_decay=0.1, foreach=True)
            opt.step()
        opt.zero_grad(set_to_none=True)
        e2 = stamp()
        if not cpu:
            torch.cuda.synchronize()
        if it == 0 and a.mode == "fsdp":
            # after the lazy init of the first step: does the root free its weights after
            # forward (a post-forward mesh) or keep them for backward (None)?
            grp = getattr(model._get_fsdp_state(), "_fsdp_param_group", None)
            say(f"# fsdp reshard={a.fsdp_reshard} root post_forward_mesh_info "
                f"{'None (kept for backward)' if grp is not None and grp.post_forward_mesh_info is None else 'set (resharded)' if grp is not None else 'unknown'}")
        if it >= a.warmup:
            fb.append(dt(e0, e1))
            st.append(dt(e0, e2))
    tracer.finish()
    lossv = loss.detach().float().item() * a.accum

    # The step of the job is the slowest rank's.
    t = torch.tensor([fb, st], dtype=torch.float64, device=dev)
    if distributed:
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
    fb, st = t[0].tolist(), t[1].tolist()
    peak = torch.cuda.max_memory_allocated(dev) / 2**30 if not cpu else 0.0
    if a.mode == "dataparallel" and not cpu:  # GPU 0 holds the replicas' sources and outputs
        peak = max(torch.cuda.max_memory_allocated(d) for d in range(gpus)) / 2**30
    pk = torch.tensor([peak], dtype=torch.float64, device=dev)
    if distributed:
        dist.all_reduce(pk, op=dist.ReduceOp.MAX)
    peak = pk.item()

    tokens = a.mbs * a.accum * replicas * a.seq
    say("# step   fwd+bwd_ms   step_ms   tokens/s")
    for i, (f, s) in enumerate(zip(fb, st)):
        say(f"{i:6d} {f:12.2f} {s:9.2f} {tokens / (s / 1e3):10.0f}")
    med, medfb = statistics.median(st), statistics.median(fb)
    q1, q3 = quantile(st, 0.25), quantile(st, 0.75)
    say(f"# step_ms median {med:.2f} min {min(st):.2f} max {max(st):.2f} iqr {q3 - q1:.2f} "
        f"(n={len(st)}); fwd+bwd_ms median {medfb:.2f} min {min(fb):.2f} max {max(fb):.2f}; "
        f"optimizer_ms median {statistics.median([s - f for s, f in zip(st, fb)]):.2f}")
    say(f"# tokens/s {tokens / (med / 1e3):.0f} (all GPUs), {tokens / (med / 1e3) / gpus:.0f} per GPU;"
        f" peak memory {peak:.2f} GiB per GPU (max over ranks); last loss {lossv:.4f}")
    say(f"# result mode={a.mode} gpus={gpus} tp={tp} mbs={a.mbs} accum={a.accum} "
        f"step_ms={med:.3f} step_min_ms={min(st):.3f} step_max_ms={max(st):.3f} "
        f"step_iqr_ms={q3 - q1:.3f} fwdbwd_ms={medfb:.3f} tokens_per_s={tokens / (med / 1e3):.0f} "
        f"peak_gib={peak:.3f}")
    sys.stdout.flush()
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    main()
