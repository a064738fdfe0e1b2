#!/usr/bin/env bash
# steps_node.sh -- issue 9, item 2 on one node of N GPUs (2, 4 or 8): time tests/gpu/steps.py
# (GPT ~1.3B) on one GPU, then DDP, FSDP (full shard) and TP at 2 and N GPUs with the per-GPU
# batch of the 1-GPU run, then DDP and FSDP on 2 GPUs with NVLink peer access off
# (NCCL_P2P_DISABLE=1, the host-memory path). One log per run, a `# result` line at the end of
# each; all logs and a summary packed into OUTDIR/steps.tar.gz.
#
# usage (repository root): tests/gpu/steps_node.sh OUTDIR NGPUS
# Needs: python3 with PyTorch (CUDA, NCCL) and torchrun.
set -u
OUT=${1:?usage: steps_node.sh OUTDIR NGPUS}
N=${2:?usage: steps_node.sh OUTDIR NGPUS}
W=$OUT/steps
S=tests/gpu/steps.py
# shellcheck source=run_lib.sh
. "$(dirname "$0")/run_lib.sh"
node_init "$W"
run() { run_logged "$W" 200 "$@"; } # name, command... (200 s each)

{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvidia-smi topo -m; nproc
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
    "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'
} >"$W/machine.txt" 2>&1

[ -n "${STEPS_SKIP_SINGLE:-}" ] || run single env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single
for g in $(printf '%s\n' 2 "$N" | sort -nu); do
  run ddp$g torchrun --standalone --nproc_per_node="$g" $S --mode ddp
  run fsdp$g torchrun --standalone --nproc_per_node="$g" $S --mode fsdp
  run tp$g torchrun --standalone --nproc_per_node="$g" $S --mode tp --accum "$g"
done
[ -n "${STEPS_SKIP_P2POFF:-}" ] && { tar -czf "$OUT/steps.tar.gz" -C "$W" .; exit 0; }
run ddp2-p2poff env NCCL_P2P_DISABLE=1 CUDA_VISIBLE_DEVICES=0,1 torchrun --standalone --nproc_per_node=2 $S --mode ddp
run fsdp2-p2poff env NCCL_P2P_DISABLE=1 CUDA_VISIBLE_DEVICES=0,1 torchrun --standalone --nproc_per_node=2 $S --mode fsdp
tar -czf "$OUT/steps.tar.gz" -C "$W" .
