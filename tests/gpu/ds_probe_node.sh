#!/usr/bin/env bash
# ds_probe_node.sh -- one DeepSpeed release's ZeRO-3 on one node of 2 GPUs, the figures a
# framework profile takes from it, in one call: a smoke test; the hooks' host time (steps.py's GPT
# at the 1.3B widths with next to no compute, sequence 8 and micro-batch 1, at 4 and 20 layers,
# under ZeRO-3 and as plain fp16 on one GPU: the difference per layer is what ZeRO-3's fetch path
# adds, the step() difference per parameter tensor what its optimizer adds); then the GPT 1.3B
# itself at micro-batch 8 and 2 under ZeRO-3 and as plain fp16 forward + backward on one GPU,
# with a profiler trace of one micro-batch-8 step summarised by trace_overlap.py.
#
# usage (repository root): tests/gpu/ds_probe_node.sh OUTDIR DS_PATH
# DS_PATH holds a `deepspeed` package (tests/gpu/ds_zero3_node.sh says how v0.3.13's is prepared;
# tests/data/ds-zero3-h200x2/README.md how a newer one is). Needs python3 with PyTorch, torchrun.
set -u
OUT=${1:?usage: ds_probe_node.sh OUTDIR DS_PATH}
DS=${2:?usage: ds_probe_node.sh OUTDIR DS_PATH}
S=tests/gpu/ds_zero3.py
# shellcheck source=run_lib.sh
. "$(dirname "$0")/run_lib.sh"
node_init "$OUT"
TR="torchrun --standalone --nproc_per_node=2"

run smoke 150 env CUDA_VISIBLE_DEVICES=0,1 $TR $S --ds-path "$DS" --layers 2 --hidden 512 \
  --heads 8 --ffn 2048 --seq 512 --mbs 2 --warmup 1 --steps 1
grep -q '^# result' "$OUT/smoke.log" || exit 1

PROBE="--seq 8 --mbs 1 --warmup 3 --steps 8"
for L in 4 20; do
  run seq8-zero3-l$L 120 env CUDA_VISIBLE_DEVICES=0,1 $TR $S --ds-path "$DS" $PROBE --layers $L
  run seq8-single-l$L 60 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single $PROBE --layers $L
done
run single 90 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single --warmup 3 --steps 8
run single-mbs2 90 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single --mbs 2 --warmup 3 --steps 8
run zero3-n2 150 env CUDA_VISIBLE_DEVICES=0,1 $TR $S --ds-path "$DS" --warmup 3 --steps 8 \
  --trace "$OUT/trace-mbs8.json"
run zero3-n2-mbs2 150 env CUDA_VISIBLE_DEVICES=0,1 $TR $S --ds-path "$DS" --mbs 2 --warmup 3 --steps 8
if [ -f "$OUT/trace-mbs8.json" ]; then
  python3 tests/gpu/trace_overlap.py "$OUT/trace-mbs8.json" >"$OUT/trace-mbs8.txt" 2>&1
  gzip -9 "$OUT/trace-mbs8.json"
fi
ls -la "$OUT"
