#!/usr/bin/env bash
# compute_node.sh -- issue 15's measurements on one GPU, in one call: the GPU's facts, single-GPU
# GPT training steps over tests/gpu/single_shapes.csv (single_steps.py), commscale-run's compute
# probes (GEMM bf16 and fp8 with cuBLASLt's heuristic choice, memory copies, the launch floor),
# the framework-side probes and torch GEMMs on the same shapes (torch_probes.py), the bf16 GEMM
# probe again (its run-to-run spread), and once more with the fastest of cuBLASLt's first 8
# algorithms (--gemm-algos 8).
#
# usage (repository root): tests/gpu/compute_node.sh OUTDIR
# Writes OUTDIR/{steps.csv,probes.csv,probes_rep.csv,probes_algos8.csv,torch_gemm.csv,torch_probes.csv} and
# OUTDIR/logs.tar.gz (machine facts, build log, every program's output, summary.txt).
# Needs: CUDA with cuBLASLt, cmake, python3 with PyTorch.
set -u
OUT=${1:?usage: compute_node.sh OUTDIR}
mkdir -p "$OUT"
W=$OUT/w
mkdir -p "$W"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4
D=$(cd "$(dirname "$0")" && pwd)
now() { date +%s.%N; }
log() { echo "## $(date -u +%H:%M:%S) $*" | tee -a "$W/summary.txt"; }
stage() { # name, seconds, command...
  local name=$1 lim=$2; shift 2
  local t0; t0=$(now)
  log "$name: $*"
  timeout "$lim" "$@" >"$W/$name.log" 2>&1
  local rc=$?
  awk -v a="$t0" -v b="$(now)" -v n="$name" -v r="$rc" \
    'BEGIN { printf "## %s: exit %d after %.1f s\n", n, r, b - a }' | tee -a "$W/summary.txt"
  tail -4 "$W/$name.log"
}

{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,pcie.link.gen.max,pcie.link.width.max --format=csv
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu --format=csv
  nvidia-smi -q | sed -n '1,40p'
  nproc; grep -m1 'model name' /proc/cpuinfo; uname -r
  python3 -c 'import torch; p = torch.cuda.get_device_properties(0); print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), p.name, p.multi_processor_count, "SMs", round(p.total_memory / 2**20), "MiB")'
} >"$W/machine.txt" 2>&1
head -3 "$W/machine.txt"

log "build commscale-run (runner only, CUDA)"
cmake -S . -B build-gpu -DCS_RUNNER_ONLY=ON -DCS_WITH_CUDA=ON -DCS_WITH_MPI=OFF -DCS_WITH_NCCL=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$W/build.log" 2>&1 &&
  cmake --build build-gpu -j16 --target commscale-run >>"$W/build.log" 2>&1 || { tail -30 "$W/build.log"; }
RUN=$PWD/build-gpu/calibrate/commscale-run

stage steps 240 python3 "$D/single_steps.py" "$D/single_shapes.csv" "$W/steps.csv"
stage probes 150 "$RUN" --probes-only --probes gemm,membw,launch --probe-dtypes bf16,fp8 \
  --probe-output "$W/probes.csv" --overwrite
stage torch_probes 150 python3 "$D/torch_probes.py" "$W/probes.csv" "$W/torch_gemm.csv" "$W/torch_probes.csv"
# the same bf16 GEMMs again after the torch ones: the probe's own run-to-run spread
stage probes_rep 80 "$RUN" --probes-only --probes gemm --probe-dtypes bf16 \
  --probe-output "$W/probes_rep.csv" --overwrite
stage probes_algos8 90 "$RUN" --probes-only --probes gemm --probe-dtypes bf16 --gemm-algos 8 \
  --probe-output "$W/probes_algos8.csv" --overwrite
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$W/machine.txt" 2>&1

for f in steps.csv probes.csv probes_rep.csv probes_algos8.csv torch_gemm.csv torch_probes.csv; do
  [ -f "$W/$f" ] && cp "$W/$f" "$OUT/"
done
cp "$W/summary.txt" "$OUT/"
tar -czf "$OUT/logs.tar.gz" -C "$W" . && rm -rf "$W"
ls -la "$OUT"
