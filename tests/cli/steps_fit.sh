#!/usr/bin/env bash
# commscale fit --steps: (1) parameters known by construction are recovered from steps the model
# itself generated with them; (2) on the bundled real steps, a fit of the 1- and 2-GPU runs
# predicts the held-out 4-GPU DDP, FSDP and TP steps of tests/data/h200x4 within 8% (issue 15);
# (3) the calibration written keeps loading, predict uses it and says so; (4) bad input is one
# located line and exit 1.
# usage: steps_fit.sh COMMSCALE DATA_DIR TMP_DIR
set -u
cs=$1 data=$2 tmp=$3
mkdir -p "$tmp"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
d=$data/steps-fit

# (1) a calibration with a known steps section: compute x1.2, interference 1.3, no host time
{ cat "$d/cal-h200x4.yaml"
  printf 'steps:\n  source: synthetic\n  compute_scale: 1.2\n  host: 0s\n  interference: 1.3\n  points: 1\n'
} >"$tmp/known.yaml"
pl() { "$cs" predict -w "$data/h200x2-steps/gpt-1b.yaml" --gpu h200 -t "$data/h200x4/h200x4.yaml" \
  --cal "$tmp/known.yaml" --plan "$1" -G "$2" --format csv 2>>"$tmp/discard" | sed 's/"[^"]*"/P/g' | awk -F, 'NR==2 { print $6 }'; }
{ printf 'version: 1\ndefaults: {workload: %s, gpu: h200, topology: %s, cal: %s}\nsteps:\n' \
    "$data/h200x2-steps/gpt-1b.yaml" "$data/h200x4/h200x4.yaml" "$d/cal-h200x4.yaml"
  for p in "dp=1,mbs=8,gbs=8:1" "dp=1,mbs=4,gbs=4:1" "dp=2,mbs=8,gbs=16:2" "dp=2,zero=3,mbs=8,gbs=16:2" \
           "tp=2,mbs=8,gbs=16:2" "dp=4,mbs=8,gbs=32:4"; do
    plan=${p%:*} g=${p##*:}
    t=$(pl "$plan" "$g")
    printf '  - {plan: "%s", gpus: %s, step: %ss}\n' "$plan" "$g" "$t"
  done
} >"$tmp/synthetic.yaml"
"$cs" fit --steps "$tmp/synthetic.yaml" -o "$tmp/synth-cal.yaml" >"$tmp/synth.out" 2>"$tmp/synth.err" &&
  ok || bad "synthetic fit: $(cat "$tmp/synth.err")"
awk '$1 == "compute_scale" { e = $2 / 1.2 - 1; exit !(e < 0.01 && e > -0.01) }' "$tmp/synth.out" &&
  ok || bad "compute scale not recovered: $(cat "$tmp/synth.out")"
awk '$1 == "interference" { e = $2 - 1.3; exit !(e < 0.02 && e > -0.02) }' "$tmp/synth.out" &&
  ok || bad "interference not recovered: $(cat "$tmp/synth.out")"

# (2) the real steps: every held-out 4-GPU step within 8%
"$cs" fit --steps "$d/steps-1-2gpu.yaml" --check "$d/steps-4gpu.yaml" --cal "$d/cal-h200x4.yaml" \
  -o "$tmp/cal.yaml" >"$tmp/real.out" 2>"$tmp/real.err" && ok || bad "real fit: $(cat "$tmp/real.err")"
n=$(awk '/held-out/ { h = 1; next } h && /^4xH200/ { e = $NF; sub("%", "", e); e = e < 0 ? -e : e;
  if (e <= 8) k++ } END { print k + 0 }' "$tmp/real.out")
[ "$n" -eq 3 ] && ok || bad "held-out 4-GPU steps within 8%: $n of 3: $(cat "$tmp/real.out")"
# one workload at one micro-batch: the host time moves every step as the compute scale does, so the
# fit must call it not determined (a fit that keeps it lands at correlation -1 with se > value)
grep -qE '^host +0 +- +\(not determined' "$tmp/real.out" && ok || bad "host fitted on collinear steps: $(cat "$tmp/real.out")"

# (3) the written calibration loads and predict names the steps calibration in its header
"$cs" predict -w "$data/h200x2-steps/gpt-1b.yaml" --gpu h200 -t "$data/h200x4/h200x4.yaml" \
  --cal "$tmp/cal.yaml" --plan dp=4,mbs=8,gbs=32 -G 4 >"$tmp/p.out" 2>&1 && ok || bad "predict: $(cat "$tmp/p.out")"
grep -q '^# steps     calibrated from' "$tmp/p.out" && ok || bad "predict header lacks the steps line"
"$cs" coll --cal "$d/cal-h200x4.yaml" -g 2 --sizes 1M >>"$tmp/discard" 2>&1 && ok || bad "a file without steps no longer loads"

# (4) bad input: a located one-line error, exit 1
printf 'version: 1\nsteps:\n  - {plan: "dp=1", gpus: 1, step: 5ms, colour: red}\n' >"$tmp/bad.yaml"
"$cs" fit --steps "$tmp/bad.yaml" -o "$tmp/x.yaml" >>"$tmp/discard" 2>"$tmp/bad.err"
rc=$?
[ $rc -eq 1 ] && grep -q 'bad.yaml:3:.*unknown key "colour"' "$tmp/bad.err" && [ "$(wc -l <"$tmp/bad.err")" -eq 1 ] &&
  ok || bad "bad key: rc $rc, $(cat "$tmp/bad.err")"
printf 'version: 1\ndefaults: {workload: %s, gpu: h200, topology: h200x2}\nsteps:\n  - {plan: "dp=1,mbs=8", gpus: 1, log: nolog.txt}\n' \
  "$data/h200x2-steps/gpt-1b.yaml" >"$tmp/bad2.yaml"
"$cs" fit --steps "$tmp/bad2.yaml" -o "$tmp/x.yaml" >>"$tmp/discard" 2>"$tmp/bad2.err"
[ $? -eq 1 ] && grep -q 'nolog.txt' "$tmp/bad2.err" && ok || bad "missing log: $(cat "$tmp/bad2.err")"

# (5) the data-loader cap: 32 samples a step on one node whose loader sustains 10 samples/s
# cannot take less than 3.2 s; a loader of 1e6 samples/s changes nothing
st() { "$cs" predict -w "$data/h200x2-steps/gpt-1b.yaml" --gpu h200 -t "$data/h200x4/h200x4.yaml" \
  --plan "dp=4,mbs=8,gbs=32$1" -G 4 --format csv 2>>"$tmp/discard" | sed 's/"[^"]*"/P/g' | awk -F, 'NR==2 { print $6 }'; }
capped=$(st ",loader=10") free=$(st "") fast=$(st ",loader=1e6")
awk -v c="$capped" -v f="$free" -v q="$fast" 'BEGIN { exit !(c > 3.199 && c < 3.201 && f < 1 && q == f) }' &&
  ok || bad "loader cap: capped $capped, free $free, fast loader $fast"

echo "steps_fit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
