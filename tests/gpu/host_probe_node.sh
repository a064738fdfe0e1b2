#!/usr/bin/env bash
# host_probe_node.sh -- the host time PyTorch's own data-parallel wrappers add per layer, on one
# node of 2 GPUs: steps.py's GPT at the 1.3B widths with next to no compute (sequence 8,
# micro-batch 1) at 4 and 20 layers, as plain bf16 on one GPU and under DDP and FSDP2 on 2 GPUs
# (with a profiler trace of one step of each at 20 layers).
# What a wrapper adds per layer beyond its collectives is the slope over layers of its step
# against the profile's own prediction of the same probe (tests/data/h200x2-steps/README.md).
#
# usage (repository root): tests/gpu/host_probe_node.sh OUTDIR [MODES]
# MODES (default "single ddp fsdp"): any of single, ddp, fsdp and the FSDP2 variants
# fsdp-root-default (the root's reshard_after_forward left to fully_shard's default) and
# fsdp-false (reshard_after_forward=False for the blocks, the root's default); traces for the
# first three only. PROBE_EXTRA (environment): more steps.py options for every run, e.g.
# "--bias off --steps 30" (later options win).
# Needs python3 with PyTorch and torchrun.
set -u
OUT=${1:?usage: host_probe_node.sh OUTDIR [MODES]}
MODES=${2:-single ddp fsdp}
S=tests/gpu/steps.py
# shellcheck source=run_lib.sh
. "$(dirname "$0")/run_lib.sh"
node_init "$OUT"
TR="torchrun --standalone --nproc_per_node=2"

PROBE="--seq 8 --mbs 1 --warmup 5 --steps 15 ${PROBE_EXTRA:-}"
# at 20 layers a profiler trace of the last step of each, summarised by trace_overlap.py (GPU
# busy with kernels, NCCL, idle: what the host holds up)
for L in 4 20; do
  for M in $MODES; do
    T=()
    [ "$L" = 20 ] && case $M in single | ddp | fsdp) T=(--trace "$OUT/trace-$M-l$L.json") ;; esac
    case $M in
      single) run probe-single-l$L 90 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single $PROBE --layers $L "${T[@]}" ;;
      ddp | fsdp) run probe-$M-l$L 120 env CUDA_VISIBLE_DEVICES=0,1 $TR $S --mode $M $PROBE --layers $L "${T[@]}" ;;
      fsdp-root-default | fsdp-false)
        run probe-$M-l$L 120 env CUDA_VISIBLE_DEVICES=0,1 $TR $S --mode fsdp --fsdp-reshard "${M#fsdp-}" $PROBE --layers $L ;;
      *) echo "host_probe_node.sh: unknown mode $M" >&2 ;;
    esac
  done
done
for f in "$OUT"/trace-*.json; do
  [ -f "$f" ] || continue
  python3 tests/gpu/trace_overlap.py "$f" "$(basename "$f" .json)" >>"$OUT/traces.txt" 2>&1
  gzip -9 "$f"
done
ls -la "$OUT"
