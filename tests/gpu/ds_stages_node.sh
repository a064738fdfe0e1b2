#!/usr/bin/env bash
# ds_stages_node.sh -- one DeepSpeed release at ZeRO stages 1, 2 and 3 on one node of 2 GPUs, at
# GPT-2 small's widths (hidden 768, 12 heads, FFN 3072): the host-time probe (sequence 8,
# micro-batch 1, 4 and 20 layers) under each stage and as plain fp16 on one GPU, then GPT-2 small
# itself (12 layers, sequence 1024, micro-batch 4) under each stage and on one GPU.
#
# usage (repository root): tests/gpu/ds_stages_node.sh OUTDIR DS_PATH
# DS_PATH holds a `deepspeed` package (tests/data/ds-zero3-h200x2/README.md says how each release
# here was prepared). Needs python3 with PyTorch, torchrun.
set -u
OUT=${1:?usage: ds_stages_node.sh OUTDIR DS_PATH}
DS=${2:?usage: ds_stages_node.sh OUTDIR DS_PATH}
S=tests/gpu/ds_zero3.py
# shellcheck source=run_lib.sh
. "$(dirname "$0")/run_lib.sh"
node_init "$OUT"
TR="torchrun --standalone --nproc_per_node=2"
W="--hidden 768 --heads 12 --ffn 3072"
PROBE="$W --seq 8 --mbs 1 --warmup 3 --steps 10"
GPT2="$W --layers 12 --seq 1024 --mbs 4 --warmup 3 --steps 10"

for L in 4 20; do
  run probe-single-l$L 60 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single $PROBE --layers $L
  for ST in 1 2 3; do
    run probe-s$ST-l$L 120 env CUDA_VISIBLE_DEVICES=0,1 $TR $S --ds-path "$DS" --stage $ST $PROBE \
      --layers $L
  done
done
run gpt2-single 60 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single $GPT2
for ST in 1 2 3; do
  run gpt2-s$ST 120 env CUDA_VISIBLE_DEVICES=0,1 $TR $S --ds-path "$DS" --stage $ST $GPT2
done
ls -la "$OUT"
