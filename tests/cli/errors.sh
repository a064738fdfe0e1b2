#!/usr/bin/env bash
# The command line on bad input: every case must end with exit status 2 (usage) or 1 (failure) and
# one line on stderr that names the file (and line/column where there is one) and what was
# expected — never a crash, a hang or output on stdout that looks like a result.
# usage: errors.sh COMMSCALE DATA_DIR TMP_DIR
set -u
cs=$1 data=$2 tmp=$3
mkdir -p "$tmp"
pass=0 fail=0

# expect STATUS PATTERN -- ARGS...
expect() {
  local want=$1 pat=$2
  shift 3
  local err out st
  err=$(timeout 60 "$cs" "$@" 2>&1 >"$tmp/stdout")
  st=$?
  local lines
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$st" -eq "$want" ] && printf '%s' "$err" | grep -qE -- "$pat" && [ "$lines" -le 2 ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: commscale $* -> status $st (want $want), stderr: $err (want /$pat/)"
  fi
}

printf '# commscale measurements v1\ncollective,algorithm\n' >"$tmp/short.csv"
printf 'version: 1\nparameters:\n  bw.nvlink: {value: 300GBps, source: default}\n  bogus: 1\n' >"$tmp/unknown.yaml"
printf 'version: 1\nparameters:\n  bw.nvlink: {value: 300, source: default}\n' >"$tmp/bare.yaml"
printf '#  Rank  0 Group  0 Pid 1 on h device 0 [0] NVIDIA H200\n#  Rank  1 Group  0 Pid 1 on h device 1 [1] NVIDIA H200\n# Collective test starting: all_reduce_perf\n#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n           8             2     float     sum      -1    15.84    0.00    0.00       0    12.60\n' >"$tmp/trunc.log"

expect 2 "unknown verb" -- frobnicate
expect 2 "unknown option" -- fit --frobnicate x.csv
expect 2 "expected at least one" -- fit
expect 1 "nope.csv: cannot open" -- fit "$tmp/nope.csv"
expect 1 "short.csv:2:1: expected a header with column" -- fit "$tmp/short.csv"
expect 1 "trunc.log:5" -- import "$tmp/trunc.log" -o "$tmp/out.csv"
expect 1 "unknown key \"bogus\"" -- coll --cal "$tmp/unknown.yaml"
expect 1 "unknown.yaml:4:3" -- coll --cal "$tmp/unknown.yaml"
expect 1 "bare.yaml:3" -- coll --cal "$tmp/bare.yaml"
expect 2 "--sizes" -- coll --sizes 8G:8
expect 2 "--nodes" -- coll --nodes 0
expect 2 "--nodes" -- coll --nodes x
expect 2 "--net-bw.*no unit" -- coll --net-bw 400
expect 2 "unknown collective" -- coll --coll all_smoosh
expect 2 "cannot run broadcast" -- coll --coll broadcast --algo tree
expect 2 "--format" -- coll --format xml
expect 2 "no multi-rank measurement has configuration" -- fit --config NCCL_NOPE=1 "$data/h200x2/nccl-tests-mpirun.log" -o "$tmp/c.yaml"

echo "cli errors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
