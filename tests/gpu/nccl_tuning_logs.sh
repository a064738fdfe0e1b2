#!/usr/bin/env bash
# nccl_tuning_logs.sh -- NCCL's own algorithm/protocol choice per size (issue 16 item 2): the
# public nccl-tests' all_reduce, all_gather, reduce_scatter and broadcast, 8 B..1 GiB in x2 steps,
# one process driving every local GPU (-g NGPU), with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING;
# once with NCCL's defaults, once on the socket path (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1), and
# all_reduce with NCCL_ALGO / NCCL_PROTO forced (to 64 MiB).
#
# usage: tests/gpu/nccl_tuning_logs.sh NCCL_TESTS_BUILD_DIR OUTDIR [NGPU]
# Each log starts with a "### ENV command" line (the form calibrate/import/nccl_tuning.c reads).
set -u
NT=${1:?usage: nccl_tuning_logs.sh NCCL_TESTS_BUILD_DIR OUTDIR [NGPU]}
OUT=${2:?usage}
G=${3:-2}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
one() { # name, env..., -- , args...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local t0; t0=$(date +%s.%N)
  { echo "### NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING ${envs[*]} ./build/$*"
    env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING "${envs[@]}" timeout 150 "$NT/$@" 2>&1
    echo "### exit $?"; } >"$OUT/$name.log"
  awk -v a="$t0" -v b="$(date +%s.%N)" -v n="$name" 'BEGIN { printf "%s: %.1f s\n", n, b - a }'
}
for c in all_reduce all_gather reduce_scatter broadcast; do
  one "default_$c" -- "${c}_perf" -b 8 -e 1G -f 2 -g "$G" -n 5 -w 2 -c 0
done
for c in all_reduce all_gather reduce_scatter broadcast; do
  one "socket_$c" NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 -- "${c}_perf" -b 8 -e 1G -f 2 -g "$G" -n 5 -w 2 -c 0
done
for v in NCCL_ALGO=Tree NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_PROTO=LL128; do
  n=${v#NCCL_}; one "forced_${n/=/_}_all_reduce" "$v" -- all_reduce_perf -b 8 -e 64M -f 2 -g "$G" -n 5 -w 2 -c 0
done
