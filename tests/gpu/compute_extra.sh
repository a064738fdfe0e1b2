#!/usr/bin/env bash
# compute_extra.sh -- the second call of issue 15's measurements on one GPU: the runner's probes
# (bf16 GEMMs, copies, launch floor) and their repeat around tests/gpu/torch_probes.py (torch GEMMs
# on the same shapes, CUDA-graphed when short; attention, memory kernels, eager launch), then
# tests/gpu/host_probe.py (host time per layer of an eager step at three widths; sustained vs
# burst GEMM throughput).
#
# usage (repository root): tests/gpu/compute_extra.sh OUTDIR
set -u
OUT=${1:?usage: compute_extra.sh OUTDIR}
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
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
  nproc; grep -m1 'model name' /proc/cpuinfo; uname -r; } >"$W/machine.txt" 2>&1
cmake -S . -B build-gpu -DCS_RUNNER_ONLY=ON -DCS_WITH_CUDA=ON -DCS_WITH_MPI=OFF -DCS_WITH_NCCL=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$W/build.log" 2>&1 &&
  cmake --build build-gpu -j16 --target commscale-run >>"$W/build.log" 2>&1 || tail -30 "$W/build.log"
RUN=$PWD/build-gpu/calibrate/commscale-run
stage probes 90 "$RUN" --probes-only --probes gemm,membw,launch --probe-dtypes bf16 \
  --probe-output "$W/probes.csv" --overwrite
stage torch_probes 150 python3 "$D/torch_probes.py" "$W/probes.csv" "$W/torch_gemm.csv" "$W/torch_probes.csv"
stage probes_rep 80 "$RUN" --probes-only --probes gemm --probe-dtypes bf16 \
  --probe-output "$W/probes_rep.csv" --overwrite
stage host_probe 120 python3 "$D/host_probe.py" "$W/host_probe.csv"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >>"$W/machine.txt" 2>&1
for f in probes.csv probes_rep.csv torch_gemm.csv torch_probes.csv host_probe.csv; do
  [ -f "$W/$f" ] && cp "$W/$f" "$OUT/"
done
cp "$W/summary.txt" "$OUT/"
tar -czf "$OUT/logs.tar.gz" -C "$W" . && rm -rf "$W"
ls -la "$OUT"
