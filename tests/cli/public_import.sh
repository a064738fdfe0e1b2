#!/usr/bin/env bash
# public_import.sh -- every public multi-node log of tests/data/public imports with the shape its
# source states (nodes told apart by the host names of nccl-tests' rank lines; ranks = nodes x
# GPUs per node), the configuration tag of its ### line, a sweep of sizes, and without the results
# that nccl-tests' own check counted wrong (#wrong > 0), as each cluster's README lists them:
#   alcf-polaris        all_reduce, all_gather at 2, 8, 256, 540 nodes x 4 GPUs, none wrong
#   cscs-alps-clariden  all_reduce at 1-512 nodes x 4 GPUs; out-of-place and in-place wrong at one
#                       size at 8 and 16 nodes, out-of-place only at 256 and 512 nodes
#   abci2-a100          all_reduce at 1-16 nodes x 8 GPUs (old "error" column: nothing left out)
#   abci2-v100          all_reduce at 1-32 nodes x 4 GPUs (likewise)
# usage: public_import.sh COMMSCALE DATA_DIR TMP_DIR
set -u
cs=$1 data=$2 tmp=$3
mkdir -p "$tmp"
fail=0 logs=0

# check DIR COLLECTIVE NODES GPN CONFIG MIN_ROWS LEFT_OUT
check() {
  local dir=$1 c=$2 n=$3 gpn=$4 config=$5 min=$6 left=$7
  local f=$data/public/$dir/$c-${n}n.log out=$tmp/$dir-$c-$n.csv
  logs=$((logs + 1))
  if ! "$cs" import "$f" -o "$out" 2>"$tmp/err"; then
    echo "FAIL: $f does not import: $(cat "$tmp/err")"
    fail=1
    return
  fi
  local got want rows said
  got=$(awk -F, '!/^#/ && $1 != "collective" { print $1, $5, $6, $7, $17 }' "$out" | sort -u)
  want="$c $((gpn * n)) $n $gpn $config"
  if [ "$got" != "$want" ]; then
    echo "FAIL: $f: collective ranks nodes gpus_per_node config = '$got', expected '$want'"
    fail=1
  fi
  rows=$(awk -F, '!/^#/ && $1 != "collective" && $15 == 0' "$out" | wc -l)
  if [ "$rows" -lt "$min" ]; then
    echo "FAIL: $f: $rows out-of-place rows, expected a sweep of at least $min sizes"
    fail=1
  fi
  said=$(sed -n 's/.*warning: \([0-9]*\) results\{0,1\} left out: nccl-tests counted wrong.*/\1/p' "$tmp/err")
  if [ "${said:-0}" != "$left" ]; then
    echo "FAIL: $f: import left out '${said:-0}' results with wrong elements, expected $left"
    fail=1
  fi
  # ... and the CSV's provenance keeps it (none when nothing was left out)
  kept=$(sed -n 's/^# left_out: \([0-9]*\) with wrong elements from .*/\1/p' "$out")
  if [ "${kept:-0}" != "$left" ]; then
    echo "FAIL: $f: the CSV's left_out provenance says '${kept:-0}', expected $left"
    fail=1
  fi
}

polaris="NCCL_COLLNET_ENABLE=1;NCCL_CROSS_NIC=1;NCCL_NET=AWS Libfabric;NCCL_NET_GDR_LEVEL=PHB"
for c in all_reduce all_gather; do
  for n in 2 8 256 540; do check alcf-polaris "$c" "$n" 4 "$polaris" 15 0; done
done
alps="NCCL_CROSS_NIC=0;NCCL_NET=AWS Libfabric;NCCL_NET_GDR_LEVEL=PHB"
for n in 1 2 4 32 64 128; do check cscs-alps-clariden all_reduce "$n" 4 "$alps" 30 0; done
for n in 8 16; do check cscs-alps-clariden all_reduce "$n" 4 "$alps" 29 2; done
for n in 256 512; do check cscs-alps-clariden all_reduce "$n" 4 "$alps" 29 1; done
for n in 1 2 4 8 16; do check abci2-a100 all_reduce "$n" 8 "NCCL_NET_GDR_LEVEL=2" 24 0; done
for n in 1 2 4 8 16 32; do check abci2-v100 all_reduce "$n" 4 "NCCL_NET_GDR_LEVEL=2" 24 0; done

[ "$fail" -eq 0 ] && echo "public_import: $logs logs, shapes, configuration and left-out results as their sources state"
exit $fail
