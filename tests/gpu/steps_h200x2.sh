#!/usr/bin/env bash
# steps_h200x2.sh -- issue 9, item 2 on a 2-GPU machine: time tests/gpu/steps.py (GPT ~1.3B) on
# one GPU and on two (DDP, FSDP full shard, TP=2), then DDP and FSDP on one process as a check
# of the wrappers' own cost. One log per run, a `# result` line at the end of each.
#
# usage (repository root): tests/gpu/steps_h200x2.sh OUTDIR
# Needs: python3 with PyTorch (CUDA, NCCL) and torchrun, 2 GPUs.
set -u
OUT=${1:?usage: steps_h200x2.sh OUTDIR}
mkdir -p "$OUT"
# NVLink multicast stays off on shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4
S=tests/gpu/steps.py
TR=(torchrun --standalone --nproc_per_node=2)
TR1=(torchrun --standalone --nproc_per_node=1)
now() { date +%s.%N; }
run() { # name, command...
  local name=$1; shift
  local t0; t0=$(now)
  echo "## $name: $*" | tee -a "$OUT/summary.txt"
  timeout 200 "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  grep -h '^# result' "$OUT/$name.log" | tee -a "$OUT/summary.txt"
  [ $rc -eq 0 ] || { echo "## $name failed rc=$rc"; tail -25 "$OUT/$name.log"; } | tee -a "$OUT/summary.txt"
  awk -v a="$t0" -v b="$(now)" -v n="$name" 'BEGIN { printf "## %s took %.1f s\n", n, b - a }' |
    tee -a "$OUT/summary.txt"
}

{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvidia-smi topo -m; nproc
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
    "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'
} >"$OUT/machine.txt" 2>&1
head -3 "$OUT/machine.txt"

run single env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single
run ddp2 "${TR[@]}" $S --mode ddp
run fsdp2 "${TR[@]}" $S --mode fsdp
run tp2 "${TR[@]}" $S --mode tp --accum 2
run ddp1 env CUDA_VISIBLE_DEVICES=0 "${TR1[@]}" $S --mode ddp
run fsdp1 env CUDA_VISIBLE_DEVICES=0 "${TR1[@]}" $S --mode fsdp
