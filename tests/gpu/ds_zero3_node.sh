#!/usr/bin/env bash
# ds_zero3_node.sh -- DeepSpeed v0.3.13's ZeRO-3 on one node of 2 (or more) GPUs, with everything
# its prediction needs measured on the same machine in the same call: commscale-run's NCCL
# calibration on 2 ranks with NVLink and with NVLink peer access off (NCCL_P2P_DISABLE=1, the
# host-memory path), the model's fp16 forward + backward on one GPU (tests/gpu/ds_zero3.py
# --mode single), then ZeRO-3 steps on 2 GPUs both ways (and on NGPUS when more).
#
# usage (repository root): tests/gpu/ds_zero3_node.sh OUTDIR DS_PATH [NGPUS] [MODEL OPTIONS...]
# DS_PATH holds the `deepspeed` package of the v0.3.13 tag of microsoft/DeepSpeed, prepared so:
#   git archive v0.3.13 deepspeed op_builder | tar -x -C DS_PATH
#   rm DS_PATH/deepspeed/ops/op_builder; mv DS_PATH/op_builder DS_PATH/deepspeed/ops/
#   write DS_PATH/deepspeed/git_version_info_installed.py (version, git_hash, git_branch,
#     installed_ops = {}, compatible_ops = {}, torch_info)
#   in deepspeed/runtime/engine.py (and zero/stage2.py, for --stage 2) use torch._utils'
#     _flatten_dense_tensors and _unflatten_dense_tensors in place of UtilsBuilder().load() (a
#     JIT-built op of the same functions); in deepspeed/ops/__init__.py drop
#     `from . import sparse_attention`
# (no other change to DeepSpeed's code). Needs: python3 with PyTorch, torchrun, mpirun, cmake,
# CUDA and NCCL. Writes OUTDIR/{calib_n2.csv,calib_p2poff.csv,*.log,summary.txt,machine.txt}.
set -u
OUT=${1:?usage: ds_zero3_node.sh OUTDIR DS_PATH [NGPUS] [MODEL OPTIONS...]}
DS=${2:?usage: ds_zero3_node.sh OUTDIR DS_PATH [NGPUS] [MODEL OPTIONS...]}
N=${3:-2}
shift 3 2>/dev/null || shift $#
S=tests/gpu/ds_zero3.py
# shellcheck source=run_lib.sh
. "$(dirname "$0")/run_lib.sh"
node_init "$OUT"

{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvidia-smi topo -m; nproc; grep -m1 'model name' /proc/cpuinfo
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
    "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'
  for m in numpy psutil tqdm tensorboardX mpi4py ninja; do
    python3 -c "import $m" 2>/dev/null && echo "python module $m: yes" || echo "python module $m: no"
  done
} >"$OUT/machine.txt" 2>&1
head -4 "$OUT/machine.txt"

# the smoke test first: a two-layer model, three steps
run smoke 120 torchrun --standalone --nproc_per_node=2 $S --ds-path "$DS" --layers 2 --hidden 512 \
  --heads 8 --ffn 2048 --seq 512 --mbs 2 --warmup 1 --steps 1
grep -q '^# result' "$OUT/smoke.log" || exit 1

NH=$(dirname "$(dirname "$(find /usr/local/cuda/include /usr/include /usr/local -maxdepth 3 -name nccl.h 2>/dev/null | head -1)")")
cmake -S . -B build-gpu -DCS_RUNNER_ONLY=ON -DCS_WITH_NCCL=ON -DCS_WITH_MPI=ON \
  -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
  NCCL_HOME=$NH cmake --build build-gpu -j16 --target commscale-run >>"$OUT/build.log" 2>&1 ||
  tail -20 "$OUT/build.log"
RUN=$PWD/build-gpu/calibrate/commscale-run

run single 120 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single "$@"
run zero3-n2 200 env CUDA_VISIBLE_DEVICES=0,1 torchrun --standalone --nproc_per_node=2 $S --ds-path "$DS" "$@"
run zero3-n2-p2poff 200 env NCCL_P2P_DISABLE=1 CUDA_VISIBLE_DEVICES=0,1 torchrun --standalone \
  --nproc_per_node=2 $S --ds-path "$DS" "$@"
MPI="mpirun --allow-run-as-root -np 2 --bind-to none -x NCCL_NVLS_ENABLE"
[ -x "$RUN" ] && run calib_n2 150 $MPI "$RUN" --algos auto -o "$OUT/calib_n2.csv" --overwrite
[ -x "$RUN" ] && NCCL_P2P_DISABLE=1 run calib_p2poff 150 $MPI -x NCCL_P2P_DISABLE "$RUN" --algos auto \
  -o "$OUT/calib_p2poff.csv" --overwrite
# the hooks' host time: a thin model (every weight under the persistence threshold, so no
# gather) at 4 and 36 layers under ZeRO-3 and plain fp16 on one GPU; the slope per layer of the
# difference is what DeepSpeed's hooks add per transformer block
THIN="--hidden 64 --heads 2 --ffn 256 --vocab 1024 --seq 128 --mbs 1 --warmup 3 --steps 12"
for L in 4 36; do
  run thin-zero3-l$L 120 env CUDA_VISIBLE_DEVICES=0,1 torchrun --standalone --nproc_per_node=2 $S \
    --ds-path "$DS" $THIN --layers $L
  run thin-single-l$L 60 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single $THIN --layers $L
done
if [ -n "${DS_MBS2:-}" ]; then
  run single-mbs2 120 env CUDA_VISIBLE_DEVICES=0 python3 $S --mode single --mbs 2 "$@"
  run zero3-n2-mbs2 200 env CUDA_VISIBLE_DEVICES=0,1 torchrun --standalone --nproc_per_node=2 $S \
    --ds-path "$DS" --mbs 2 "$@"
fi
if [ "$N" -gt 2 ]; then
  run zero3-n$N 200 torchrun --standalone --nproc_per_node="$N" $S --ds-path "$DS" "$@"
fi
ls -la "$OUT"
