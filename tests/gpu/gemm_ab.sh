#!/usr/bin/env bash
# gemm_ab.sh -- the GEMM probe against torch, interleaved on one GPU (issue 15): R alternations of
# commscale-run's bf16 GEMM probe (1 s settle, trials of TRIAL) and tests/gpu/gemm_ab.py's torch
# timing of the same shapes the same way, A/B/A/B; then gemm_ab.py compare.
#
# usage: tests/gpu/gemm_ab.sh COMMSCALE_RUN OUTDIR [R] [TRIAL_MS]
set -u
RUN=${1:?usage: gemm_ab.sh COMMSCALE_RUN OUTDIR [R] [TRIAL_MS]}
OUT=${2:?usage}
R=${3:-3}
TMS=${4:-25}
D=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
for i in $(seq 1 "$R"); do
  t0=$(date +%s.%N)
  timeout 150 "$RUN" --probes-only --probes gemm --probe-dtypes bf16 --trial-time "${TMS}ms" \
    --probe-settle 1s -q --probe-output "$OUT/probe_$i.csv" --overwrite >"$OUT/probe_$i.log" 2>&1
  echo "probe $i: exit $? $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
  t0=$(date +%s.%N)
  timeout 150 python3 "$D/gemm_ab.py" torch "$OUT/probe_1.csv" "$OUT/torch_$i.csv" "$TMS" \
    >"$OUT/torch_$i.log" 2>&1
  echo "torch $i: exit $? $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
done
python3 "$D/gemm_ab.py" compare "$OUT" | tee "$OUT/compare.txt"
