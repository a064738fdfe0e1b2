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
expect 2 "--placement: expected block or cyclic" -- coll --placement scattered
expect 2 "--placement applies to a calibration of MPI rows" -- coll --placement cyclic
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
expect 2 "--coll expects a collective" -- import "$data/nccltests/nan-time.log" --coll bogus -o "$tmp/o.csv"
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

# ---- the decision verbs: predict, search, sweep, size-network, report (and validate) ------------
W="-w gpt2-124m --gpu h100-sxm -t dgx-h100"
# shellcheck disable=SC2086 # $W splits into its options on purpose
{
expect 2 "--plan: plan item 1 \"bogus=1\": unknown key \"bogus\"" -- predict $W --plan bogus=1
expect 2 "--plan: plan item 1 \"dp=0\": dp: expected an integer from 1" -- predict $W --plan dp=0
expect 2 "--plan: plan item 2 is empty" -- predict $W --plan "tp=8,,pp=2"
expect 2 "--plan: expected at least one plan \(\"P1;P2\"\)" -- predict $W --plan ";"
expect 2 "--plan: plan 2 is empty \(expected \"P1;P2\"\)" -- predict $W --plan "dp=8; ;tp=2"
expect 2 "--plan: plan 2: plan item 1 \"tp=x\": tp: expected an integer" -- predict $W --plan "dp=8;tp=x"
expect 1 "no feasible plan: 8 GPUs are not a multiple of tp\*pp\*cp = 3" -- predict $W --plan tp=3 --gpus 8
expect 1 "no feasible plan: the plan occupies 8 GPUs, not 7" -- predict $W --plan dp=8 --gpus 7
expect 2 "--plan: framework: no frameworks file named \"nope\"" -- predict $W --plan framework=nope
expect 2 "--nodes: expected an integer from 1 to" -- predict $W --plan dp=8 --nodes 0
expect 2 "--nodes: expected an integer from 1 to .* got -2" -- predict $W --plan dp=8 --nodes -2
expect 2 "--net-gbps: expected an integer, got \"1e30\"" -- predict $W --plan dp=8 --net-gbps 1e30
expect 2 "--net-gbps: expected an integer from 1 to 1000000, got 0" -- predict $W --plan dp=8 --net-gbps 0
expect 2 "--interference expects a number from 1 to 10, got \"nan\"" -- predict $W --plan dp=8 --interference nan
expect 2 "--measured: expected a time" -- predict $W --plan dp=8 --measured -1s
expect 1 "nope.yaml: cannot open" -- predict $W --plan dp=8 --cal "$tmp/nope.yaml"
expect 1 "nope-w.yaml: cannot open" -- predict -w "$tmp/nope-w.yaml" --gpu h100-sxm -t dgx-h100 --plan dp=8
expect 1 "syntax.yaml:4:10: YAML syntax" -- predict -w "$data/calfile/syntax.yaml" --gpu h100-sxm -t dgx-h100 --plan dp=8
expect 2 "--gbs is required" -- search $W --gpus 8
expect 2 "--gpus expects an integer from 1 to 16777216, got \"0\"" -- search $W --gpus 0 --gbs 8
expect 2 "--gpus expects an integer from 1 to 16777216, got \"999999999\"" -- search $W --gpus 999999999 --gbs 8
expect 2 "--plan: tp is chosen by commscale search" -- search $W --gpus 8 --gbs 8 -p tp=2
expect 2 "--plan: zero is chosen by commscale size-network" -- size-network $W --nodes 2 --gbs 16 -p precision=bf16,zero=3
expect 2 "--nodes expects an integer from 1 to 1048576, got \"-1\"" -- search $W --nodes -1 --gbs 8
expect 2 "--gbs expects an integer from 1 to 1073741824, got \"0\"" -- search $W --gpus 8 --gbs 0
expect 2 "--net-gbps expects Gb/s per GPU from > 0 to 1000000, got \"1e30\"" -- search $W --gpus 8 --gbs 8 --net-gbps 1e30
expect 2 "--net-gbps expects Gb/s per GPU from > 0 to 1000000, got \"nan\"" -- search $W --gpus 8 --gbs 8 --net-gbps nan
expect 2 "--net-gbps expects Gb/s per GPU from > 0 to 1000000, got \"-5\"" -- search $W --gpus 8 --gbs 8 --net-gbps -5
expect 2 "--plan: plan item 1 \"bogus=1\": unknown key" -- search $W --gpus 8 --gbs 8 -p bogus=1
expect 2 "--family: unknown family \"bogus\"" -- search $W --gpus 8 --gbs 8 --family bogus
expect 2 "--max-tp expects an integer from 1" -- search $W --gpus 8 --gbs 8 --max-tp 0
expect 2 "--top expects an integer from 0" -- search $W --gpus 8 --gbs 8 -n -1
expect 2 "--rails expects an integer from 1 to 32" -- search $W --gpus 8 --gbs 8 --rails 0
expect 2 "--net-latency: .*beyond any real system" -- search $W --gpus 8 --gbs 8 --net-latency 1e30s
expect 2 "--oversub: \"0\": expected a ratio >= 1" -- search $W --gpus 8 --gbs 8 --oversub leaf=0
expect 1 "no feasible plan: 0 points" -- search $W --gpus 7 --gbs 8
expect 1 "nope-t.yaml: cannot open" -- search -w gpt2-124m --gpu h100-sxm -t "$tmp/nope-t.yaml" --gpus 8 --gbs 8
expect 2 "--nodes and --gbs are required" -- sweep $W --nodes 1
expect 2 "--nodes: expected an integer from 1 to 1048576, got 0" -- sweep $W --nodes 0,2 --gbs 16
expect 2 "--nodes: expected an integer from 1 to 1048576, got -2" -- sweep $W --nodes 1,-2 --gbs 16
expect 2 "--nodes: expected an integer from 1 to 1048576, got 100000000" -- sweep $W --nodes 1:100000000 --gbs 16
expect 2 "--gbs: expected an integer from 1 to 1073741824, got 0" -- sweep $W --nodes 1 --gbs 0
expect 2 "--net-gbps: expected an integer, got \"1e30\"" -- sweep $W --nodes 1,2 --gbs 16 --net-gbps 1e30
expect 2 "--net-gbps: expected an integer from 1 to 1000000, got 1000001" -- sweep $W --nodes 1 --gbs 16 --net-gbps 1000001
expect 2 "--plans: plan item 1 \"tp=x\": tp: expected an integer" -- sweep $W --nodes 1 --gbs 16 --plans tp=x
expect 2 "--plans: expected at least one plan" -- sweep $W --nodes 1 --gbs 16 --plans ";"
expect 2 "--families: no family given" -- sweep $W --nodes 1 --gbs 16 --families ,
expect 2 "--families: unknown family \"bogus\"" -- sweep $W --nodes 1 --gbs 16 --families bogus
# a family that never meets the target has no knee (0 like its least bandwidth), in CSV and JSON
# shellcheck disable=SC2086
"$cs" size-network $W --nodes 2 --gbs 64 --target eff=1 --family 'a=tp=1,zero=3;b=tp=2' --format csv \
  --quiet >"$tmp/knee.csv" 2>"$tmp/knee.err"
# (which of the two reaches eff=1 is the model's business: every row that does not has no knee,
# and at least one does not)
if awk -F, 'NR > 1 && $2 == 0 { n++; if ($3 != 0 || $9 != 0) bad = 1 } END { exit !(n >= 1 && !bad) }' \
  "$tmp/knee.csv" && [ "$(grep -c '^[ab],[01],' "$tmp/knee.csv")" -eq 2 ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  echo "FAIL: size-network CSV gives a knee to a family that never meets the target: $(cat "$tmp/knee.csv" "$tmp/knee.err")"
fi
# families as data in sweep (issue 18): every row of a NAME=KEYS family is a plan of that filter
# shellcheck disable=SC2086
"$cs" sweep $W --nodes 1,2 --gbs 64 --net-gbps 100 --families 'tp2=tp=2;z3=zero=3,tp=1' --format csv \
  >"$tmp/fam.csv" 2>"$tmp/fam.err"
if [ "$(grep -c '^[12],100,800,64,"tp2",ok,"dp=[0-9]*,tp=2,' "$tmp/fam.csv")" -eq 2 ] &&
  [ "$(grep -c '^[12],100,800,64,"z3",ok,"dp=[0-9]*,tp=1,pp=1,zero=3,' "$tmp/fam.csv")" -eq 2 ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  echo "FAIL: sweep --families NAME=KEYS rows are not of their filters: $(cat "$tmp/fam.csv" "$tmp/fam.err")"
fi
expect 2 "--metric expects tokens, mfu or samples" -- sweep $W --nodes 1 --gbs 16 --metric bogus
expect 1 "no-such-dir/x-net.dat: cannot create" -- sweep $W --nodes 1 --gbs 16 --families dp+tp --net-gbps 100 --plot "$tmp/no-such-dir/x"
expect 2 "--nodes expects an integer from 1 to 1048576, got \"0\"" -- size-network $W --nodes 0 --gbs 16
expect 2 "--gbs expects an integer from 1 to 1073741824, got \"-16\"" -- size-network $W --nodes 1 --gbs -16
expect 2 "--range expects LO:HI Gb/s per GPU with HI > 2 LO" -- size-network $W --nodes 1 --gbs 16 --range 5:1
expect 2 "--range expects LO:HI" -- size-network $W --nodes 1 --gbs 16 --range nan:10
expect 2 "target \"eff=2\": expected a value in \(0, 1\]" -- size-network $W --nodes 1 --gbs 16 --target eff=2
expect 2 "target \"eff=nan\": expected a value in" -- size-network $W --nodes 1 --gbs 16 --target eff=nan
expect 2 "target \"mfu=-1\": expected a value in" -- size-network $W --nodes 1 --gbs 16 --target mfu=-1
expect 2 "target \"bogus=1\": unknown kind" -- size-network $W --nodes 1 --gbs 16 --target bogus=1
expect 2 "--family: unknown family \"bogus\"" -- size-network $W --nodes 1 --gbs 16 --family bogus
expect 2 "--family: family \"a\": unknown key \"tq\"" -- size-network $W --nodes 1 --gbs 16 --family "a=tq=1"
expect 2 "--family: family \"a\": tp: expected a whole number or node, got \"x\"" -- size-network $W --nodes 1 --gbs 16 --family "a=tp=x"
expect 2 "--family: family \"fsdp\" given twice" -- size-network $W --nodes 1 --gbs 16 --family "fsdp;fsdp"
expect 2 "--plan: plan item 1 \"precision=fp7\"" -- size-network $W --nodes 1 --gbs 16 -p precision=fp7
expect 1 "nope-prices.yaml: cannot open" -- size-network $W --nodes 1 --gbs 16 --prices "$tmp/nope-prices.yaml"
}
# report scenarios: each bad value is named at its file:line:col before any verb runs
scen='version: 1\nworkload: gpt2-124m\ngpu: h100-sxm\ntopology: dgx-h100\nnodes: 1\ngbs: 16\ntarget: eff=0.8\nsweep_net_gbps: "100"\n'
# shellcheck disable=SC2059 # the scenario text carries the escapes
{
printf "$scen"'bogus: 1\n' >"$tmp/sc-unknown.yaml"
printf 'version: 1\nworkload: [gpt2\n' >"$tmp/sc-syntax.yaml"
printf 'version: 1\nworkload: gpt2-124m\n' >"$tmp/sc-missing.yaml"
printf "$scen"'plan: "tp=x"\n' >"$tmp/sc-plan.yaml"
printf "$scen" | sed 's/nodes: 1/nodes: 0/' >"$tmp/sc-zero-nodes.yaml"
printf "$scen" | sed 's/nodes: 1/nodes: -3/' >"$tmp/sc-neg-nodes.yaml"
printf "$scen" | sed 's/gbs: 16/gbs: 1,2/' >"$tmp/sc-two-gbs.yaml"
printf "$scen" | sed 's/"100"/"1e30"/' >"$tmp/sc-absurd-net.yaml"
printf "$scen" | sed 's/version: 1/version: 7/' >"$tmp/sc-version.yaml"
printf "$scen" | sed 's/eff=0.8/eff=7/' >"$tmp/sc-target.yaml"
printf "$scen"'cal: nope-cal.yaml\n' >"$tmp/sc-nocal.yaml"
printf "$scen" | sed 's/gpt2-124m/nope-wl/' >"$tmp/sc-noworkload.yaml"
printf 'bogus: 1\n' >"$tmp/sc-bad-prices.yaml"
printf "$scen"'plan: "tp=4"\nprices: sc-bad-prices.yaml\n' >"$tmp/sc-prices.yaml"
printf -- '- a\n- b\n' >"$tmp/sc-seq.yaml"
: >"$tmp/sc-empty.yaml"
}
expect 1 "sc-unknown.yaml:9:1: unknown key \"bogus\"; expected one of: version, title" -- report "$tmp/sc-unknown.yaml" -o "$tmp/rep"
expect 1 "sc-syntax.yaml:3:1: YAML syntax" -- report "$tmp/sc-syntax.yaml" -o "$tmp/rep"
expect 1 "sc-missing.yaml:1:1: missing required key \"gpu\"" -- report "$tmp/sc-missing.yaml" -o "$tmp/rep"
expect 1 "sc-plan.yaml:9:7: plan: plan item 1 \"tp=x\": tp: expected an integer" -- report "$tmp/sc-plan.yaml" -o "$tmp/rep"
expect 1 "sc-zero-nodes.yaml:5:8: nodes: expected an integer from 1 to 1048576, got 0" -- report "$tmp/sc-zero-nodes.yaml" -o "$tmp/rep"
expect 1 "sc-neg-nodes.yaml:5:8: nodes: expected an integer from 1 to 1048576, got -3" -- report "$tmp/sc-neg-nodes.yaml" -o "$tmp/rep"
expect 1 "sc-two-gbs.yaml:6:6: gbs: expected one integer" -- report "$tmp/sc-two-gbs.yaml" -o "$tmp/rep"
expect 1 "sc-absurd-net.yaml:8:17: sweep_net_gbps: expected an integer, got \"1e30\"" -- report "$tmp/sc-absurd-net.yaml" -o "$tmp/rep"
expect 1 "sc-version.yaml:1:10: version: expected 1, got \"7\"" -- report "$tmp/sc-version.yaml" -o "$tmp/rep"
expect 1 "sc-seq.yaml:1:1: expected a mapping of scenario keys" -- report "$tmp/sc-seq.yaml" -o "$tmp/rep"
expect 1 "sc-empty.yaml:1:1: expected a YAML mapping" -- report "$tmp/sc-empty.yaml" -o "$tmp/rep"
expect 1 "nope-sc.yaml: cannot open" -- report "$tmp/nope-sc.yaml" -o "$tmp/rep"
expect 2 "expected one scenario file" -- report
# every value is checked at load, and a bad one is named once, before any part runs
rm -rf "$tmp/rep"
expect 1 "sc-target.yaml:7:9: target: target \"eff=7\": expected a value in \(0, 1\]" -- report "$tmp/sc-target.yaml" -o "$tmp/rep"
expect 1 "sc-nocal.yaml:9:6: cal: nope-cal.yaml: cannot open" -- report "$tmp/sc-nocal.yaml" -o "$tmp/rep"
expect 1 "sc-noworkload.yaml:2:11: workload: no workloads file named \"nope-wl\"" -- report "$tmp/sc-noworkload.yaml" -o "$tmp/rep"
if [ -e "$tmp/rep" ]; then fail=$((fail + 1)); echo "FAIL: a report that failed at load left $tmp/rep"; else pass=$((pass + 1)); fi
# leftovers NAME: how many entries beside $tmp/NAME carry its name (a temporary left behind)
leftovers() {
  local n=0 f
  for f in "$tmp/$1"?* "$tmp/.$1"*; do [ -e "$f" ] && n=$((n + 1)); done
  echo "$n"
}
# a part that fails (a price file that does not parse) leaves the old report as it was, whole
mkdir -p "$tmp/rep-old" && echo old >"$tmp/rep-old/report.md" && : >"$tmp/rep-old/.commscale-output"
err=$(cd "$tmp" && timeout 120 "$cs" report sc-prices.yaml -o rep-old 2>&1 >>"$tmp/discard")
st=$?
if [ "$st" -eq 1 ] && printf '%s' "$err" | grep -q "part.* of the report failed.*rep-old is left as it was" &&
  [ "$(cat "$tmp/rep-old/report.md")" = old ] && [ "$(leftovers rep-old)" -eq 0 ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  echo "FAIL: report with a failing part: status $st, stderr: $err; rep-old/report.md: $(cat "$tmp/rep-old/report.md"); $(leftovers rep-old) left beside"
fi
# two reports into one folder at once: one whole scenario wins, never a mix of two
# shellcheck disable=SC2059 # the scenario text carries the escapes
printf "$scen"'plan: "tp=4"\n' >"$tmp/sc-g16.yaml"
# shellcheck disable=SC2059
printf "$scen"'plan: "tp=4"\n' | sed 's/gbs: 16/gbs: 32/' >"$tmp/sc-g32.yaml"
# (the folder of an earlier run of this test may hold its leftovers: start clean)
rm -rf "$tmp/rep-two" "$tmp"/rep-two.* "$tmp"/.rep-two*
(cd "$tmp" && { timeout 120 "$cs" report sc-g16.yaml -o rep-two 2>"$tmp/two-16.err" &
  timeout 120 "$cs" report sc-g32.yaml -o rep-two 2>"$tmp/two-32.err"; wait; })
g=$(grep -o -- '--gbs [0-9]*' "$tmp/rep-two/report.md" 2>>"$tmp/discard" | sort -u)
if [ "$(printf '%s\n' "$g" | grep -c .)" -eq 1 ] && grep -q "global batch ${g#--gbs }," "$tmp/rep-two/report.md" &&
  [ "$(leftovers rep-two)" -eq 0 ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  echo "FAIL: two reports into one folder mixed or left a folder beside: $g; $(leftovers rep-two) left beside:" \
    "$(cd "$tmp" && ls -d rep-two?* .rep-two* 2>&1 | tr '\n' ' ')stderr: $(cat "$tmp/two-16.err" "$tmp/two-32.err")"
fi
# a report killed (SIGTERM) mid-run leaves the old folder as it was and no temporary beside it
rep=$(cd "$(dirname "$0")/../.." && pwd)/sim/scenarios/gpt3-175b-400n.yaml
sum=$(cksum <"$tmp/rep-two/report.md")
# Under heavy load a killed report once left a temporary beside the folder: a signal between
# gnuplot's posix_spawn and naming the child let the handler empty the folder while gnuplot went
# on writing into it (closed by cs_wfile_spawn, test_wfile sigterm_stops_spawned_writer). The
# case still passes when one of three kills leaves nothing, naming what the others left, so that
# it fails on a systematic leak and a race not yet seen cannot block a good tree.
kills=0 clean=0 left=""
while [ "$kills" -lt 3 ] && [ "$clean" -eq 0 ]; do
  kills=$((kills + 1))
  (cd "$tmp" && exec timeout -s TERM 1 "$cs" report "$rep" -o rep-two 2>"$tmp/kill.err")
  st=$?
  if [ "$st" -eq 124 ] && [ "$(cksum <"$tmp/rep-two/report.md")" = "$sum" ] &&
    [ "$(leftovers rep-two)" -eq 0 ]; then
    clean=1
  else
    left="$left [kill $kills: status $st, left: $(cd "$tmp" && find . -maxdepth 1 \( -name 'rep-two?*' -o -name '.rep-two*' \) | tr '\n' ' ')]"
    (cd "$tmp" && rm -rf rep-two?* .rep-two*)
  fi
done
if [ "$clean" -eq 1 ]; then
  pass=$((pass + 1))
  [ -n "$left" ] && echo "NOTE: a killed report left a temporary before a clean kill:$left"
else
  fail=$((fail + 1))
  echo "FAIL: report killed mid-run, three times:$left"
fi
expect 2 "unknown option" -- validate --bogus
expect 2 "--format expects table, csv or json" -- validate --format xml
expect 1 "sc-syntax.yaml:3:1: YAML syntax" -- validate --cases "$tmp/sc-syntax.yaml"

# ---- resource limits (ux-review 4.1 #18, #19, #49, #69, #88; P14): every reader stops at its cap
# at once. "quick" also bounds the wall time: 10 s holds at any load and under valgrind, where the
# readers before the caps took 20 s (import /dev/zero, killed) and 27 s (100,000 nested brackets).
quick() {
  local t0=$SECONDS
  expect "$@"
  if [ $((SECONDS - t0)) -gt 10 ]; then
    fail=$((fail + 1)) pass=$((pass - 1))
    echo "FAIL: commscale ${*:4} took $((SECONDS - t0)) s (want under 10 s)"
  fi
}
{ printf 'version: 1\nparameters: '; head -c 100000 /dev/zero | tr '\0' '['; echo; } >"$tmp/deep.yaml"
{ printf 'version: 1\nname: deep\nnode: '; head -c 50000 /dev/zero | tr '\0' '['; echo; } >"$tmp/deep-topo.yaml"
{ printf 'version: 1\nparameters:\n'; for i in $(seq 1 70); do printf "%*sk$i:\n" $((2 * i)) ''; done; } >"$tmp/deep-map.yaml"
{ printf '{"results": '; head -c 100000 /dev/zero | tr '\0' '['; echo; } >"$tmp/deep.json"
head -c 2000000 /dev/zero | tr '\0' 'x' >"$tmp/longline.csv"
quick 1 "^commscale import: /dev/zero:1: line longer than 1048576 bytes$" -- import /dev/zero -o "$tmp/o.csv"
quick 1 "^commscale fit: /dev/zero:1: line longer than 1048576 bytes$" -- fit /dev/zero -o "$tmp/o.yaml"
quick 1 "/dev/zero: input larger than 67108864 bytes" -- topology import-smi /dev/zero
# a framework log named by a steps file (fit --steps) goes through the same caps: it read
# /dev/zero forever in 4 KiB pieces
printf 'version: 1\ndefaults: {workload: %s, gpu: h200}\nsteps:\n  - {topology: h200x2, gpus: 1, log: /dev/zero, plan: "dp=1,mbs=8,gbs=8"}\n' \
  "$data/h200x2-steps/gpt-1b.yaml" >"$tmp/steps-zero.yaml"
quick 1 "steps-zero.yaml:4:5: /dev/zero:1: line longer than 1048576 bytes$" -- fit --steps "$tmp/steps-zero.yaml" -o "$tmp/o.yaml"
quick 1 "/dev/zero: input larger than 67108864 bytes" -- coll --cal /dev/zero
quick 1 "longline.csv:1: line longer than 1048576 bytes" -- fit "$tmp/longline.csv"
quick 1 "deep.yaml:2:.*: nesting deeper than 64 levels" -- coll --cal "$tmp/deep.yaml"
quick 1 "deep-topo.yaml:3:.*: nesting deeper than 64 levels" -- predict $W --plan dp=8 -t "$tmp/deep-topo.yaml"
quick 1 "deep-map.yaml:.*: nesting deeper than 64 levels" -- coll --cal "$tmp/deep-map.yaml"
quick 1 "deep.json:1:.*nested at most 64 levels" -- import "$tmp/deep.json" -o "$tmp/o.csv"
expect 1 "$tmp: read error: Is a directory" -- coll --cal "$tmp"
# "-" is standard input (#19): import reads a log from it, fit a measurements CSV
if "$cs" import - -o "$tmp/stdin.csv" <"$data/h200x2/nccl-tests-mpirun.log" 2>>"$tmp/discard" &&
   [ "$(grep -vc '^#' "$tmp/stdin.csv")" -gt 10 ] && "$cs" fit - -q -o "$tmp/stdin.yaml" <"$tmp/stdin.csv"; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: import - / fit - did not read standard input"
fi
expect 1 "^commscale import: -: input larger than 67108864 bytes$" -- import - -o "$tmp/o.csv" </dev/zero
# a pipe (process substitution) cannot rewind: the bytes import looks at to tell JSON from text
# must be read again, so every row (the source column aside: it names the path) equals the
# file's, text and JSON, with and without leading blank lines
for f in "$data/h200x2/nccl-tests-mpirun.log" "$data/nccltests/all_reduce.json"; do
  { printf '\n \n\t\n'; cat "$f"; } >"$tmp/lead.${f##*.}"
  for g in "$f" "$tmp/lead.${f##*.}"; do
    "$cs" import "$g" -o "$tmp/file.csv" 2>"$tmp/file.err"
    "$cs" import <(cat "$g") -o "$tmp/pipe.csv" 2>"$tmp/pipe.err"
    if [ "$(grep -vc '^#' "$tmp/file.csv")" -gt 1 ] &&
       cmp -s <(cut -d, -f1-17 "$tmp/file.csv") <(cut -d, -f1-17 "$tmp/pipe.csv"); then
      pass=$((pass + 1))
    else
      fail=$((fail + 1)); echo "FAIL: import <(cat $g) differs from import $g: $(cat "$tmp/file.err" "$tmp/pipe.err")"
    fi
  done
done

# ---- the ux review's hostile-input table (section 4.1) and ranked items P10-P16: each case
# carries the review's number; every one listed there as wrong, partial, slow or minor is here
# (the output-write cases F1-F29, P1, P2, P7, P9 are the write tests'; the fit-quality ones, #42
# and P3/P6, the collective model's).
# ok DESC STDOUT-PATTERN STDERR-PATTERN -- ARGS...: exit 0, stdout and stderr match
ok() {
  local desc=$1 opat=$2 epat=$3
  shift 4
  local err st
  err=$(timeout 60 "$cs" "$@" 2>&1 >"$tmp/stdout")
  st=$?
  if [ "$st" -eq 0 ] && { [ -z "$opat" ] || grep -qE -- "$opat" "$tmp/stdout"; } &&
     { [ -z "$epat" ] || printf '%s\n' "$err" | grep -qE -- "$epat"; }; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $desc: commscale $* -> status $st, stderr: $err; stdout: $(head -c 300 "$tmp/stdout")"
  fi
}
nrows() { grep -vc '^#' "$tmp/stdout"; }
printf '# commscale measurements v1\n%s\n' "$hdr" >"$tmp/header-only.csv"
row t1e300 'all_reduce,auto,auto,float,2,1,2,1048576,1e300,,,,1,1,0,process,,x'
row one-row 'all_reduce,auto,auto,float,2,1,2,1048576,10,,,,1,1,0,process,,x'
printf 'version: 1\nparameters:\n  eff.ring.ll: {value: 1e9, source: default}\n' >"$tmp/eff1e9.yaml"
printf 'version: 1\nparameters:\n  bw.nvlink: {value: 1e-300GBps, source: default}\n' >"$tmp/tiny-bw.yaml"
# 22: a header-only CSV is a file without rows (exit 1), not "no configuration" (exit 2)
expect 1 "header-only.csv: the file has no data rows" -- fit "$tmp/header-only.csv"
# 32: an absurd time is refused where it enters, with its position
expect 1 "t1e300.csv:3:42: column time_us: expected a time in microseconds > 0 \(at most 1e11" -- fit "$tmp/t1e300.csv"
# 41: too few rows is a data problem: exit 1
expect 1 "only 1 usable row for configuration" -- fit "$tmp/one-row.csv"
# 62, 66: calibration values that make predictions infinite or absurd are refused at file:line:col
expect 1 "tiny-bw.yaml:3:22: bw.nvlink: expected a bandwidth of at least 1kBps" -- coll --cal "$tmp/tiny-bw.yaml"
expect 1 "eff1e9.yaml:3:24: eff.ring.ll: expected an efficiency from" -- coll --cal "$tmp/eff1e9.yaml"
# 92: a plan key given twice is refused, as in a plan file
expect 2 "--plan: plan item 2 \"tp=4\": tp given twice" -- predict $W --plan "tp=8,tp=4"
# 106: an empty list item is refused
expect 2 "--nodes: expected a list of integers, got an empty item 2 in \"1,,4\"" -- predict $W --plan dp=8 --nodes 1,,4
expect 2 "--sizes: expected a list of message sizes, got an empty item 3" -- coll --sizes 8,16,
# 126 (P16): an empty space says why
expect 1 "no feasible plan: 0 points.*greatest common divisor is 1\).*nearest global batch with a split is 3200" -- search -w gpt3-175b --gpu h100-sxm -t dgx-h100 --nodes 400 --gbs 3201
# the same when the two share large divisors but the rest does not split: 3200 / dp must be
# tp x pp, both dividing 96 (2^5 x 3), so dp holds the 25: a gbs that 25 divides (1525, not 1550)
# or a GPU count of 2s and 3s only (384 nodes = 3072 GPUs; 432 is further)
expect 1 "greatest common divisor is 128\).*nearest global batch with a split is 1525, the nearest node count 384 \(3072 GPUs\)" -- search -w gpt3-175b --gpu h100-sxm -t dgx-h100 --nodes 400 --gbs 1536
expect 1 "no feasible plan for gpt3-175b on 3200 GPUs with gbs=1536.*nearest global batch with a split is 1525" -- size-network -w gpt3-175b --gpu h100-sxm -t dgx-h100 -N 400 --gbs 1536 --family tp+pp -q
# P13: node ranges: a:b doubles (said in --help), a:b:+k steps, a:b:xf multiplies
ok "P13 help" "a:b:\+k steps by k" "" -- coll --help
ok "P13 step" "" "" -- coll --nodes 50:400:+50 -g 8 --sizes 1G --format csv
[ "$(grep -v '^#' "$tmp/stdout" | cut -d, -f2 | tail -n +2 | paste -sd, -)" = "50,100,150,200,250,300,350,400" ] &&
  pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: P13: --nodes 50:400:+50 gave $(cut -d, -f2 "$tmp/stdout" | paste -sd, -)"; }
ok "P13 factor" "" "" -- coll --nodes 1:400:x4 -g 8 --sizes 1G --format csv
[ "$(grep -v '^#' "$tmp/stdout" | cut -d, -f2 | tail -n +2 | paste -sd, -)" = "1,4,16,64,256,400" ] &&
  pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: P13: --nodes 1:400:x4 gave $(cut -d, -f2 "$tmp/stdout" | paste -sd, -)"; }
expect 2 "--nodes: expected a range step" -- coll --nodes 1:400:+0
# P10: search -n 1 prints one plan (the front only with --front); no band, no step_lo/step_hi
S="-w gpt2-124m --gpu h100-sxm -t dgx-h100 --gpus 16 --gbs 64"
# shellcheck disable=SC2086
{
ok "P10 -n 1" "# front: [0-9]+ plans \(P\)" "" -- search $S -n 1
[ "$(nrows)" -eq 1 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: P10: search -n 1 printed $(nrows) rows"; }
ok "P10 --front" "" "" -- search $S -n 1 --front --format csv
front=$(awk -F, 'NR > 1 && $2 == 1' "$tmp/stdout" | wc -l)
[ "$front" -ge 1 ] && [ "$(($(wc -l <"$tmp/stdout") - 1))" -le "$((front + 1))" ] && pass=$((pass + 1)) ||
  { fail=$((fail + 1)); echo "FAIL: P10: search -n 1 --front printed more than the first row and the front"; }
ok "P10 no band" "" "" -- search $S -n 2 --format csv
# (fields counted from the end: the quoted plan holds commas)
awk -F, 'NR > 1 && ($(NF - 8) != "" || $(NF - 7) != "") { bad = 1 } END { exit bad }' "$tmp/stdout" && pass=$((pass + 1)) ||
  { fail=$((fail + 1)); echo "FAIL: P10: step_lo/step_hi filled without --band"; }
ok "P10 band" "" "" -- search $S -n 2 --band --format csv
awk -F, 'NR > 1 && ($(NF - 8) == "" || $(NF - 7) == "" || $(NF - 8) > $(NF - 9) || $(NF - 7) < $(NF - 9)) { bad = 1 }
          END { exit bad }' "$tmp/stdout" &&
  pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: P10: --band rows without a band around step"; }
}
# P15: validate's failure says that the misses are known, and what --bounds does
expect 1 "1 case over tolerance, all known misses within their bounds.*--bounds" -- validate --section 5
# P16
ok "P16 import -" "" "" -- import - -o "$tmp/stdin2.csv" <"$data/h200x2/nccl-tests-mpirun.log"
ok "P16 topology --list" "dgx-h100" "" -- topology --list
expect 1 "no gpus file named \"h100\" \(did you mean \"h100-sxm\"" -- predict -w gpt2-124m --gpu h100 -t dgx-h100 --plan dp=8
expect 1 "no topology \"dgx-h10\" \(did you mean \"dgx-h100\"" -- predict -w gpt2-124m --gpu h100-sxm -t dgx-h10 --plan dp=8
expect 2 "give --plans or --families, not both" -- sweep $W --nodes 1 --gbs 16 --plans tp=2 --families dp+tp
ok "P16 fit twice" "" "warning: .*nccl-tests-mpirun.log given twice: read once" -- fit "$data/h200x2/nccl-tests-mpirun.log" "$data/h200x2/nccl-tests-mpirun.log" -q -o "$tmp/twice.yaml"
ln -sf "$(cd "$data/h200x2" && pwd)/nccl-tests-mpirun.log" "$tmp/link.log"
ok "P16 import twice" "" "link.log is the same file as .*nccl-tests-mpirun.log: read once" -- import "$data/h200x2/nccl-tests-mpirun.log" "$tmp/link.log" -o "$tmp/twice.csv"
expect 1 "no feasible plan" -- predict $W --plan tp=3 --gpus 8
ok "P16 coll -g" "" "2 GPUs per node, as in the calibration \(give -g N" -- coll --cal "$tmp/twice.yaml" --sizes 1M
ok "P16 coll -b/-e/-f" "" "" -- coll -b 8 -e 1M -f 4 -g 8 --format csv
[ "$(grep -v '^#' "$tmp/stdout" | tail -n +2 | cut -d, -f5 | paste -sd, -)" = "8,32,128,512,2048,8192,32768,131072,524288" ] &&
  pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: P16: coll -b 8 -e 1M -f 4 gave sizes $(cut -d, -f5 "$tmp/stdout" | paste -sd, -)"; }
expect 2 "give --sizes or -b/-e/-f, not both" -- coll -b 8 --sizes 8
ok "P16 grammar" "" "60 rows, 1 test, 1 shape, 1 config$" -- import "$data/h200x2/nccl-tests-mpirun.log" -o "$tmp/g.csv"
ok "P16 verb list" "^  size-network least" "" -- --help
"$cs" --help | awk '/^  [a-z]/ { match($0, /^  [a-z-]+ +/); if (p && RLENGTH != p) bad = 1; p = RLENGTH }
                    END { exit bad }' &&
  pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: P16: the verb list is not aligned"; }

echo "cli errors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
