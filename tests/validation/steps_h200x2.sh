#!/usr/bin/env bash
# Step times of a real training job against `commscale predict` (issue 9, the 2-GPU part).
#
# tests/data/h200x2-steps holds the logs of tests/gpu/steps.py (GPT 1.3B, bf16 autocast, AdamW)
# on one and on two H200s (DDP, FSDP2 full shard, Megatron-style TP=2) and the model as a
# workload file. The calibration is fitted from tests/data/h200x2-commscale/calib_default.csv,
# measured by commscale-run on the same kind of machine, one process per GPU like torchrun, and
# the only bundled 2 x H200 data with all-gather and reduce-scatter (FSDP needs both; the
# nccl-tests mpirun log has all-reduce only). The measured 1-GPU fwd+bwd is the --measured input;
# everything at 2 GPUs is predicted.
#
# Plans say what PyTorch does: parameters, gradients and Adam state are fp32 under autocast, so
# DDP all-reduces 4-byte gradients (weight_bytes=4,grad_bytes=4,optim_bytes=8); FSDP2 gathers
# bf16 parameters and reduce-scatters fp32 gradients (grad_bytes=4); TP runs 2 micro-batches of 8
# per step to keep 8 samples per GPU (DLPerf's fixed per-GPU batch).
#
# Tolerance (relative error of step time and of speedup): 3% at 1 GPU, where the compute is
# anchored to the measurement and only the optimizer is modelled; 12% at 2 GPUs. On these logs the
# step-time errors are -0.8% (1 GPU), -6.8% (DDP), -7.8% (FSDP) and -10.1% (TP), all too fast,
# and the speedups +6.4%, +8.2%, +8.9% too high: the model keeps compute at its 1-GPU speed
# beside NCCL kernels (5% interference) while the job lost 21-28 ms per step under DDP and FSDP,
# and TP=2 lost 40 ms more than the modelled all-reduces and narrower GEMMs. The interquartile
# range of the measured steps is up to 3.5% of the median; 12% is the bar the Megatron-LM cases
# of test_sim meet (11%). What it catches: a model that dropped the TP all-reduces (about 48 ms
# of 410: -22%), or any that over-costs the gradient all-reduce or ZeRO-3 gathers by more than
# about 40 ms a step. It cannot tell exposed from hidden DP traffic at 2 GPUs (15 ms of 330).
# STEPS_TOL1 and STEPS_TOL2 override the two tolerances (fractions).
#
# usage: steps_h200x2.sh COMMSCALE DATA_DIR TMP_DIR
set -u
cs=$1 data=$2 tmp=$3
mkdir -p "$tmp"
d=$data/h200x2-steps
tol1=${STEPS_TOL1:-0.03} tol2=${STEPS_TOL2:-0.12}
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# value of KEY on the `# result` line of LOG
res() { sed -n 's/^# result .*'"$2"'=\([0-9.]*\).*/\1/p' "$d/$1.log"; }

"$cs" fit "$data/h200x2-commscale/calib_default.csv" --launch process --no-cv -o "$tmp/cal.yaml" \
  >"$tmp/fit.out" 2>"$tmp/fit.err" && ok || bad "fit: $(cat "$tmp/fit.err")"

fb1=$(res single fwdbwd_ms)
t1=$(res single step_ms)
[ -n "$fb1" ] && [ -n "$t1" ] && ok || bad "no result line in $d/single.log"

# name, log, GPUs, samples per step (for measured speedup), plan
cases="single single 1 8 dp=1,mbs=8,gbs=8,weight_bytes=4,grad_bytes=4,optim_bytes=8
ddp ddp2 2 16 dp=2,mbs=8,gbs=16,weight_bytes=4,grad_bytes=4,optim_bytes=8
fsdp fsdp2 2 16 dp=2,zero=3,mbs=8,gbs=16,grad_bytes=4
tp tp2 2 16 tp=2,mbs=8,gbs=16,weight_bytes=4,grad_bytes=4,optim_bytes=8"

printf '%-7s %5s %12s %12s %8s %10s %10s %8s\n' "#case" gpus meas_ms pred_ms err meas_spd pred_spd err
while read -r name log gpus samples plan; do
  tm=$(res "$log" step_ms)
  [ -n "$tm" ] && ok || { bad "no result line in $d/$log.log"; continue; }
  "$cs" predict --workload "$d/gpt-1b.yaml" --gpu h200 --topology h200x2 --cal "$tmp/cal.yaml" \
    --measured "${fb1}ms" --plan "$plan" --gpus "$gpus" --format csv >"$tmp/$name.csv" \
    2>"$tmp/$name.err" && ok || { bad "predict $name: $(cat "$tmp/$name.err")"; continue; }
  # columns: 5 status, 6 step_s, 14 speedup (the quoted plan, with its commas, replaced first)
  line=$(awk -F, -v tm="$tm" -v t1="$t1" -v s="$samples" -v name="$name" -v g="$gpus" '
    NR == 2 && $5 == "ok" {
      tp = $6 * 1e3; e = (tp - tm) / tm
      sm = (s / tm) / (8 / t1); sp = $14; es = (sp - sm) / sm
      printf "%-7s %5d %12.1f %12.1f %+7.1f%% %10.3f %10.3f %+7.1f%%|%g|%g|%+.1f%%|%+.1f%%\n",
             name, g, tm, tp, 100 * e, sm, sp, 100 * es, e, es, 100 * e, 100 * es }' \
    <(sed 's/"[^"]*"/plan/' "$tmp/$name.csv"))
  [ -n "$line" ] && ok || { bad "predict $name gave no feasible row: $(cat "$tmp/$name.csv")"; continue; }
  IFS='|' read -r row e es epct espct <<<"$line"
  echo "$row"
  tol=$tol2; [ "$gpus" -eq 1 ] && tol=$tol1
  awk -v e="$e" -v t="$tol" 'BEGIN { exit !(e < t && -e < t) }' && ok ||
    bad "$name: step time off by $epct (tolerance $tol)"
  awk -v e="$es" -v t="$tol" 'BEGIN { exit !(e < t && -e < t) }' && ok ||
    bad "$name: speedup off by $espct (tolerance $tol)"
done <<<"$cases"

echo "steps_h200x2: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
