#!/usr/bin/env bash
# public_import.sh -- every public multi-node log of tests/data/public imports with the shape its
# source states: ALCF Polaris, 4 GPUs per node at 2, 8, 256 and 540 nodes (nodes told apart by the
# host names of nccl-tests' rank lines), and the configuration tag of its ### line, quoted value
# with a space included.
# usage: public_import.sh COMMSCALE DATA_DIR TMP_DIR
set -u
cs=$1 data=$2 tmp=$3
mkdir -p "$tmp"
fail=0
for c in all_reduce all_gather; do
  for n in 2 8 256 540; do
    f=$data/public/alcf-polaris/$c-${n}n.log
    if ! "$cs" import "$f" -o "$tmp/$c-$n.csv" 2>"$tmp/err"; then
      echo "FAIL: $f does not import: $(cat "$tmp/err")"
      fail=1
      continue
    fi
    got=$(awk -F, '!/^#/ && $1 != "collective" { print $1, $5, $6, $7, $17 }' "$tmp/$c-$n.csv" | sort -u)
    want="$c $((4 * n)) $n 4 NCCL_COLLNET_ENABLE=1;NCCL_CROSS_NIC=1;NCCL_NET=AWS Libfabric;NCCL_NET_GDR_LEVEL=PHB"
    if [ "$got" != "$want" ]; then
      echo "FAIL: $f: collective ranks nodes gpus_per_node config = '$got', expected '$want'"
      fail=1
    fi
    rows=$(awk -F, '!/^#/ && $1 != "collective" && $15 == 0' "$tmp/$c-$n.csv" | wc -l)
    if [ "$rows" -lt 15 ]; then
      echo "FAIL: $f: $rows out-of-place rows, expected a sweep of at least 15 sizes"
      fail=1
    fi
  done
done
[ "$fail" -eq 0 ] && echo "public_import: 8 logs, shapes and configuration as their sources state"
exit $fail
