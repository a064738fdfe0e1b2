#!/usr/bin/env bash
# hostid_tuning.sh -- NCCL's algorithm/protocol choice and timing across "nodes" on one host
# (issue 16 item 2): NCCL_HOSTID gives each group of ranks its own host identity, so NCCL counts
# them as nodes (nNodes in its INIT line), cannot use P2P or SHM between them and goes through its
# network transport. One process per GPU under mpirun; the public nccl-tests' all_reduce,
# all_gather, reduce_scatter and broadcast, 8 B..256 MiB in x2 steps, NCCL_DEBUG_SUBSYS=INIT,TUNING,NET,
# at N/G nodes of G GPUs for each G dividing the GPU count (G = N is one node, the reference), and
# all_gather with Ring/LL forced (8 B..1 MiB, 50 timed iterations) at every shape: the ring's
# small-message latency with 0, 1 or 3 network steps of 3. NCCL's TUNING subsystem prints a line
# per call inside the timed loop, which costs host time, so every run is repeated without it
# (NCCL_DEBUG=WARN, 20 timed iterations): the tuning logs give the choices, the time_* logs the
# times.
#
# usage: tests/gpu/hostid_tuning.sh NCCL_TESTS_BUILD_DIR (built with MPI=1) OUTDIR [NGPU]
# Each log starts with a "### ENV command" line (the form calibrate/import/nccl_tuning.c reads,
# with mpirun's -np). Logs: OUTDIR/[time_]{default_<coll>,ringll_all_gather}_<nodes>x<gpus>.log.
set -u
NT=${1:?usage: hostid_tuning.sh NCCL_TESTS_BUILD_DIR OUTDIR [NGPU]}
OUT=${2:?usage}
N=${3:-4}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
DBG="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,NET"
one() { # name gpus_per_node env... -- args...
  local name=$1 g=$2
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local hostid=""
  [ "$g" -lt "$N" ] && hostid="NCCL_HOSTID=node\$((OMPI_COMM_WORLD_RANK/$g))"
  local t0; t0=$(date +%s.%N)
  { echo "### NCCL_NVLS_ENABLE=0 $DBG ${envs[*]} $hostid mpirun -np $N ./build/$* -g 1"
    mpirun --allow-run-as-root -np "$N" --bind-to none bash -c \
      "export $DBG NCCL_NVLS_ENABLE=0 ${envs[*]}; ${hostid:+export $hostid;} exec timeout 150 $NT/$* -g 1" 2>&1
    echo "### exit $?"; } >"$OUT/$name.log"
  awk -v a="$t0" -v b="$(date +%s.%N)" -v n="$name" 'BEGIN { printf "%s: %.1f s\n", n, b - a }'
}
IT="-n 5 -w 2"
for pre in "" time_; do
  [ -n "$pre" ] && DBG="NCCL_DEBUG=WARN" IT="-n 20 -w 5"
  for g in $(seq "$N" -1 1); do
    [ $((N % g)) -eq 0 ] || continue
    shape="$((N / g))x$g"
    for c in all_reduce all_gather reduce_scatter broadcast; do
      one "${pre}default_${c}_$shape" "$g" -- "${c}_perf" -b 8 -e 256M -f 2 $IT -c 0
    done
    one "${pre}ringll_all_gather_$shape" "$g" NCCL_ALGO=Ring NCCL_PROTO=LL -- \
      all_gather_perf -b 8 -e 1M -f 2 -n 50 -w 10 -c 0
  done
done
