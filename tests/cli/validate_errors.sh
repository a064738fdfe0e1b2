#!/usr/bin/env bash
# `commscale validate` on malformed case files: each must end with exit status 1 (2 for usage) and
# one line on stderr naming file:line:col and what was expected; and a well-formed file whose case
# misses must print the miss and exit 1 (0 under --bounds when the miss is within its bound).
# usage: validate_errors.sh COMMSCALE TMP_DIR
set -u
cs=$1 tmp=$2
mkdir -p "$tmp"
pass=0 fail=0

# expect STATUS PATTERN -- ARGS...
expect() {
  local want=$1 pat=$2
  shift 3
  local err st lines
  err=$(timeout 60 "$cs" "$@" 2>&1 >"$tmp/stdout")
  st=$?
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$st" -eq "$want" ] && printf '%s' "$err" | grep -qE -- "$pat" && [ "$lines" -le 1 ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: commscale $* -> status $st (want $want), stderr: $err (want /$pat/)"
  fi
}

head='version: 1
source: a test
assumptions: none
'
# a busbw case that needs no calibration file: 8 x A100 on NVSwitch, default model
good='  - name: nvlink3
    metric: busbw
    topology: dgx-a100
    size: 16GiB'

printf '%scases:\n%s\n    published: 232GBps\n    bogus: 1\n' "$head" "$good" >"$tmp/unknown.yaml"
printf '%scases:\n  - name: no metric\n    published: 1s\n' "$head" >"$tmp/nometric.yaml"
printf '%scases:\n  - name: bad metric\n    metric: latency\n    published: 1s\n' "$head" >"$tmp/badmetric.yaml"
printf '%scases:\n%s\n' "$head" "$good" >"$tmp/nopub.yaml"
printf '%scases:\n%s\n    published: 232\n' "$head" "$good" >"$tmp/bare.yaml"
printf '%scases:\n%s\n    published: 232GBps\n    bound: 0.5\n' "$head" "$good" >"$tmp/nonote.yaml"
printf 'version: 1\nsource: a test\ncases:\n%s\n    published: 232GBps\n' "$good" >"$tmp/noassume.yaml"
printf 'version: 2\nsource: a\nassumptions: b\ncases:\n%s\n    published: 232GBps\n' "$good" >"$tmp/version.yaml"
printf '%scases:\n%s\n    published: {log: nope.log, key: step_ms}\n' "$head" "$good" >"$tmp/nolog.yaml"
printf '# result step_ms=12.5\n' >"$tmp/run.log"
printf '%scases:\n%s\n    published: {log: run.log, key: tokens_per_s}\n' "$head" "$good" >"$tmp/nokey.yaml"
printf '%scases:\n  - name: step\n    metric: step\n    gpu: a100-80gb\n    topology: dgx-a100\n    gpus: 8\n    published: 1s\n' "$head" >"$tmp/nowl.yaml"

expect 1 'unknown.yaml:10:5: unknown case key "bogus"' -- validate --cases "$tmp/unknown.yaml"
expect 1 'nometric.yaml:5:5: missing required key "metric"' -- validate --cases "$tmp/nometric.yaml"
expect 1 'badmetric.yaml:6:13: .*speedup' -- validate --cases "$tmp/badmetric.yaml"
expect 1 'nopub.yaml:5:5: missing required key "published"' -- validate --cases "$tmp/nopub.yaml"
expect 1 'bare.yaml:9:16: ' -- validate --cases "$tmp/bare.yaml"
expect 1 'nonote.yaml:5:5: .*needs a note' -- validate --cases "$tmp/nonote.yaml"
expect 1 'noassume.yaml:1:1: missing required key "assumptions"' -- validate --cases "$tmp/noassume.yaml"
expect 1 'version.yaml:1:10: ' -- validate --cases "$tmp/version.yaml"
expect 1 'nolog.yaml:9:22: cannot open .*nope.log' -- validate --cases "$tmp/nolog.yaml"
expect 1 'nokey.yaml:9:36: expected "tokens_per_s=NUMBER"' -- validate --cases "$tmp/nokey.yaml"
expect 1 'nowl.yaml:5:5: missing required key "workload"' -- validate --cases "$tmp/nowl.yaml"
expect 2 'expects table, csv or json' -- validate --format xml --cases "$tmp/unknown.yaml"
expect 1 'cannot open|no such' -- validate --cases "$tmp/absent.yaml"

# A case the default model gets (NVLink3 A100 232 GB/s, within 12%), and a deliberately wrong
# published figure (116 GB/s: the model is 2x off it) as a known miss and as a plain miss.
printf '%scases:\n%s\n    published: 232GBps\n' "$head" "$good" >"$tmp/ok.yaml"
printf '%scases:\n%s\n    published: 116GBps\n    bound: 1.5\n    note: half the real figure\n' "$head" "$good" >"$tmp/known.yaml"
printf '%scases:\n%s\n    published: 116GBps\n' "$head" "$good" >"$tmp/miss.yaml"
check() { # check WANT_STATUS PATTERN ARGS...
  local want=$1 pat=$2
  shift 2
  "$cs" validate "$@" >"$tmp/out" 2>"$tmp/err"
  local st=$?
  if [ "$st" -eq "$want" ] && grep -qE -- "$pat" "$tmp/out"; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    echo "FAIL: validate $* -> $st (want $want), /$pat/ not in: $(cat "$tmp/out" "$tmp/err")"
  fi
}
check 0 'acceptance \(mean <= 6%, every case <= 15%\): met' --cases "$tmp/ok.yaml"
check 1 'MISS \(known, within bound\)' --cases "$tmp/known.yaml"
check 0 'acceptance .*: MISSED' --bounds --cases "$tmp/known.yaml"
check 1 ' MISS$' --bounds --cases "$tmp/miss.yaml"
check 1 '^"miss.yaml","","nvlink3",busbw,GB/s,' --format csv --cases "$tmp/miss.yaml"
check 0 '"acceptance_met": true' --format json --cases "$tmp/ok.yaml"

echo "validate_errors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
