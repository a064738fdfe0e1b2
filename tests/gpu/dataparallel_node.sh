#!/usr/bin/env bash
# dataparallel_node.sh -- torch.nn.DataParallel on one node of 2 GPUs, against one GPU: the 1.3B
# step of tests/data/h200x2-steps (tests/gpu/steps.py's defaults, micro-batch 8 per GPU), then the
# host-bound probe (sequence 8, micro-batch 1 per GPU) at 4 and 20 layers. One log per run with
# its `# result` line; summary.txt lists them.
#
# usage (repository root): tests/gpu/dataparallel_node.sh OUTDIR
# Needs python3 with PyTorch (CUDA).
set -u
OUT=${1:?usage: dataparallel_node.sh OUTDIR}
S=tests/gpu/steps.py
# shellcheck source=run_lib.sh
. "$(dirname "$0")/run_lib.sh"
node_init "$OUT"

run single 200 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single
run dataparallel2 300 env CUDA_VISIBLE_DEVICES=0,1 python3 $S --mode dataparallel
PROBE="--seq 8 --mbs 1 --warmup 5 --steps 15"
for L in 4 20; do
  run probe-single-l$L 90 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single $PROBE --layers $L
  run probe-dataparallel-l$L 120 env CUDA_VISIBLE_DEVICES=0,1 python3 $S --mode dataparallel \
    $PROBE --layers $L
done
ls -la "$OUT"
