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

# ---- hostile and absurd values, rejected where they enter (issue 8: the record of inputs tried) --
hdr='collective,algorithm,protocol,dtype,ranks,nodes,gpus_per_node,bytes,time_us,time_min_us,time_max_us,trials,algbw_GBps,busbw_GBps,in_place,launch,config,source'
row() { printf '# commscale measurements v1\n%s\n%s\n' "$hdr" "$2" >"$tmp/$1.csv"; }
row zero-time 'all_reduce,auto,auto,float,2,1,2,1048576,0,,,,1,1,0,process,,x'
row nan-time 'all_reduce,auto,auto,float,2,1,2,8,nan,,,,1,1,0,process,,x'
row inf-time 'all_reduce,auto,auto,float,2,1,2,8,inf,,,,1,1,0,process,,x'
row neg-bw 'all_reduce,auto,auto,float,2,1,2,1048576,10,,,,-1,1,0,process,,x'
row zero-ranks 'all_reduce,auto,auto,float,0,1,2,1048576,10,,,,1,1,0,process,,x'
row zero-gpus 'all_reduce,auto,auto,float,2,1,0,1048576,10,,,,1,1,0,process,,x'
row huge-bytes 'all_reduce,auto,auto,float,2,1,2,1e30,10,,,,1,1,0,process,,x'
row ranks-mismatch 'all_reduce,auto,auto,float,16,1,2,8,10,,,,1,1,0,process,,x'
: >"$tmp/empty.log"
printf 'version: 1\nparameters:\n  bw.net: {value: 1e9GBps, source: default}\n' >"$tmp/absurd-bw.yaml"
printf '\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV4\t X \n' >"$tmp/asym.smi"
printf 'version: 1\nsystem:\n  algorithms: [riqg, tree]\n' >"$tmp/bad-algo.yaml"
expect 1 "zero-time.csv:3:42: column time_us: expected a time in microseconds > 0" -- fit "$tmp/zero-time.csv"
expect 1 "nan-time.csv:3:.*column time_us" -- fit "$tmp/nan-time.csv"
expect 1 "inf-time.csv:3:.*column time_us" -- fit "$tmp/inf-time.csv"
expect 1 "neg-bw.csv:3:.*column algbw_GBps: expected a bandwidth" -- fit "$tmp/neg-bw.csv"
expect 1 "zero-ranks.csv:3:.*column ranks: expected a rank count >= 1" -- fit "$tmp/zero-ranks.csv"
expect 1 "zero-gpus.csv:3:.*column gpus_per_node" -- fit "$tmp/zero-gpus.csv"
expect 1 "huge-bytes.csv:3:.*up to 2\^50" -- fit "$tmp/huge-bytes.csv"
expect 1 "expected ranks = nodes x gpus_per_node" -- fit "$tmp/ranks-mismatch.csv"
expect 1 "empty.log: expected nccl-tests results" -- import "$tmp/empty.log" -o "$tmp/o.csv"
expect 1 "Is a directory" -- import "$tmp" -o "$tmp/o.csv"
expect 1 "negative-time.log:16: expected a positive time" -- import "$data/nccltests/negative-time.log" -o "$tmp/o.csv"
expect 1 "nan-time.log:14: expected a positive time" -- import "$data/nccltests/nan-time.log" -o "$tmp/o.csv"
expect 1 "unknown-coll.log:3: expected a known collective" -- import "$data/nccltests/unknown-coll.log" -o "$tmp/o.csv"
expect 1 "cannot create" -- import "$data/nccltests/old-columns.log" -o "$tmp/no-such-dir/o.csv"
expect 1 "negative_bw.yaml:3:19: bw.net: expected a non-negative bandwidth" -- coll --cal "$data/calfile/negative_bw.yaml"
expect 1 "nan_value.yaml:3:24: .*expected a finite number" -- coll --cal "$data/calfile/nan_value.yaml"
expect 1 "huge_number.yaml:3:22" -- coll --cal "$data/calfile/huge_number.yaml"
expect 1 "absurd-bw.yaml:3:.*beyond any real system" -- coll --cal "$tmp/absurd-bw.yaml"
expect 1 "bad-algo.yaml:3:16: system.algorithms: expected ring, tree" -- coll --cal "$tmp/bad-algo.yaml"
expect 2 "--net-bw must be greater than 0" -- coll --net-bw 0Gbps
expect 2 "--net-bw: expected a bandwidth" -- coll --net-bw -5Gbps
expect 2 "--net-bw: expected a bandwidth" -- coll --net-bw nanGbps
expect 2 "--net-bw: expected a bandwidth" -- coll --net-bw infGbps
expect 2 "--net-bw: .*beyond any real system" -- coll --net-bw 1e300Gbps
expect 2 "--net-lat: .*beyond any real system" -- coll --net-lat 1e300s
expect 2 "--sizes: message size \"1e30\" is larger than 1 PiB" -- coll --sizes 1e30
expect 2 "--sizes: .*larger than 1 PiB" -- coll --sizes 1000000000000000000000000000000
expect 2 "--sizes: expected a size range" -- coll --sizes 0:8
expect 2 "--sizes: expected a step factor" -- coll --sizes 8:8G:1
expect 2 "--gpus-per-node: expected an integer from 1" -- coll -g 0
expect 2 "--nodes: expected an integer from 1" -- coll --nodes -1
expect 2 "dp: expected an integer from 1" -- workload -w llama3-8b -g h100-sxm -p dp=0
expect 2 "gbs: expected an integer from 0" -- workload -w llama3-8b -g h100-sxm -p gbs=-8
expect 2 "dp: expected an integer from 1 to" -- workload -w llama3-8b -g h100-sxm -p dp=99999999999
expect 2 "not divisible by tp=3" -- workload -w llama3-8b -g h100-sxm -p tp=3
expect 2 "plan item 2 is empty" -- workload -w llama3-8b -g h100-sxm -p tp=8,,pp=2
expect 2 "bucket: .*beyond any real system" -- workload -w llama3-8b -g h100-sxm -p bucket=1e30B
expect 1 "measured step time must be positive" -- workload -w llama3-8b -g h100-sxm --measured 0s
expect 2 "--measured: .*beyond any real system" -- workload -w llama3-8b -g h100-sxm --measured 1e30s
expect 2 "needs seq >= 1" -- workload -w llama3-8b -g h100-sxm --set seq=0
expect 2 "needs layers >= 1" -- workload -w llama3-8b -g h100-sxm --set layers=0
expect 2 "hidden: expected an integer from 0" -- workload -w llama3-8b -g h100-sxm --set hidden=1000000000
expect 1 "syntax.yaml:4:10: YAML syntax" -- workload -w "$data/calfile/syntax.yaml" -g h100-sxm
expect 1 "empty.log: nvidia-smi topo -m: no GPU matrix found" -- topology import-smi "$tmp/empty.log"
expect 1 "asym.smi: .*entries 0,1 and 1,0 differ" -- topology import-smi "$tmp/asym.smi"
expect 2 "--link-bw: .*too large" -- topology import-smi "$data/h200x2/machine.txt" --link-bw 1e300GBps
expect 2 "tp needs a positive integer" -- topology map dgx-h100 --sizes tp=0
expect 2 "more than 1073741824 ranks" -- topology map dgx-h100 --sizes tp=8,dp=999999999 --group dp

echo "cli errors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
