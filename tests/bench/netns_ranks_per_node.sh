#!/usr/bin/env bash
# bench/netns_ranks_per_node.sh — "measure one rank per node, predict several": 4 network
# namespaces ("nodes", each eth0 shaped by tbf to CS_NETNS_RATE, default 100mbit) with 2 MPI ranks
# in each. One launch measures every shape of 1-4 nodes x 1-2 ranks (all_reduce and all_gather,
# 4 KiB-512 KiB, Open MPI's own choice and all_reduce's recursive_doubling, ring and rabenseifner
# forced). The fit takes the rows of one rank per node and of one node; the 2-, 3- and 4-node
# shapes of 2 ranks per node, never fitted, are predicted at Open MPI's own choice (commscale coll
# -g 2) and compared. Prints median and max |error|, the band's coverage and the conditions;
# asserts the median against CS_NETNS_TARGET (default 0.10). CS_NETNS_PLACEMENT=cyclic numbers the
# ranks round robin over the namespaces (as mpirun --map-by node), block (default) node by node;
# the runner records the placement and the MPI laws follow it. Not in ctest: 8 spinning ranks share
# the machine's cores (about 5 minutes on 2 cores). Run as root on an idle machine:
#   sudo tests/bench/netns_ranks_per_node.sh build/calibrate/commscale-run build/sim/commscale
# Exit 0 met, 1 missed or failed, 77 skipped (not root, or no `ip netns`).
set -u
RUN=${1:?usage: netns_ranks_per_node.sh COMMSCALE_RUN COMMSCALE [WORKDIR]}
CS=${2:?usage: netns_ranks_per_node.sh COMMSCALE_RUN COMMSCALE [WORKDIR]}
RATE=${CS_NETNS_RATE:-100mbit}
TARGET=${CS_NETNS_TARGET:-0.10}
PLACEMENT=${CS_NETNS_PLACEMENT:-block}
case $PLACEMENT in block | cyclic) ;; *) echo "netns_ranks_per_node: CS_NETNS_PLACEMENT: expected block or cyclic"; exit 2 ;; esac
if [ "$(id -u)" != 0 ]; then echo "netns_ranks_per_node: skipped: needs root"; exit 77; fi
WORK=${3:-$(mktemp -d /tmp/cs-rpn.XXXXXX)}
mkdir -p "$WORK"
ip netns list >>"$WORK/discard" 2>&1 || { echo "netns_ranks_per_node: skipped: no 'ip netns'"; exit 77; }
. "$(dirname "$0")/../netns_lib.sh"
trap netns_teardown EXIT
trap 'exit 1' INT TERM
netns_setup 4 "$RATE" 214 "$WORK/discard" || { echo "netns_ranks_per_node: namespace set-up failed"; exit 1; }
NET=$NETNS_NET
ns() { netns_name "$1"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=$NET.0/24
t0=$(date +%s)
args=()
# mpirun numbers ranks in the order of its app contexts: a context per namespace gives ranks placed
# in blocks (0 and 1 on the first node), one context per rank taken round robin gives the placement
# of --map-by node (0 on the first node, 1 on the second, ...); the runner records which
for k in 0 1 2 3 4 5 6 7; do
  if [ "$PLACEMENT" = cyclic ]; then i=$((k % 4)); np=1; else i=$k; np=2; fi
  [ "$i" -lt 4 ] || continue
  [ ${#args[@]} -gt 0 ] && args+=(:)
  # trials of up to 500 operations or 100 ms: long beside tbf's 64 KB burst (netns_lib.sh)
  args+=(-np $np ip netns exec "$(ns "$i")" "$RUN" --node-id "$(ns "$i")" --backend mpi
         --colls all_reduce,all_gather --sizes 4K:512K -n 500 -w 2 --trials 3:7 --tol 0.05
         --trial-time 100ms --timeout 60s --algos auto,recursive_doubling,ring,rabenseifner
         --nodes 1,2,3,4 --gpus-per-node 1,2 -o "$WORK/all.csv" --overwrite -q)
done
timeout 900 mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl tcp,self \
  --mca btl_tcp_if_include "$NET.0/24" --mca oob_tcp_if_include "$NET.0/24" \
  --mca mpi_yield_when_idle 1 "${args[@]}" || { echo "netns_ranks_per_node: the run failed"; exit 1; }
# the fitted rows: one rank per node or one node; the checked ones: 2 ranks on 2-4 nodes at Open
# MPI's own choice (the runner tags every row once it forces any algorithm)
{ grep '^#' "$WORK/all.csv"; grep '^collective' "$WORK/all.csv"
  awk -F, '/^all_/ && ($6 == 1 || $7 == 1)' "$WORK/all.csv"; } >"$WORK/calib.csv"
awk -F, '/^all_/ && $6 > 1 && $7 == 2 && $17 !~ /_algorithm=/ { print $1, $6, $8, $9 }' \
  "$WORK/all.csv" >"$WORK/check.txt"
"$CS" fit "$WORK/calib.csv" -o "$WORK/cal.yaml" -q || { echo "netns_ranks_per_node: fit failed"; exit 1; }
: >"$WORK/pred.txt"
for c in all_reduce all_gather; do
  sizes=$(awk -v c=$c '$1 == c { print $3 }' "$WORK/check.txt" | sort -un | paste -sd, -)
  "$CS" coll --cal "$WORK/cal.yaml" --coll $c --nodes 2,3,4 -g 2 --sizes "$sizes" --format csv \
    2>>"$WORK/discard" | awk -F, 'NR > 1 { print $1, $2, $5, $8, $9, $10, $6 }' >>"$WORK/pred.txt"
done
awk -v target="$TARGET" 'NR == FNR { p[$1 " " $2 " " $3] = $0; next }
  ($1 " " $2 " " $3) in p {
    split(p[$1 " " $2 " " $3], x, " ")
    e = x[4] / $4 - 1; ae = e < 0 ? -e : e; err[++n] = ae
    inb += $4 >= x[5] && $4 <= x[6]
    printf "%-10s %d nodes x 2 %8d B  %-18s measured %10.1f us  predicted %10.1f us  error %+6.1f%%\n", $1, $2, $3, x[7], $4, x[4], 100 * e
  }
  END {
    if (n == 0) { print "netns_ranks_per_node: nothing to compare"; exit 1 }
    for (i = 2; i <= n; i++) { v = err[i]; for (j = i - 1; j >= 1 && err[j] > v; j--) err[j + 1] = err[j]; err[j + 1] = v }
    med = n % 2 ? err[(n + 1) / 2] : (err[n / 2] + err[n / 2 + 1]) / 2
    printf "netns_ranks_per_node: %d points of 2 ranks per node: median |error| %.1f%%, max %.1f%%, %d inside the band (target median %.0f%%)\n", n, 100 * med, 100 * err[n], inb, 100 * target
    exit med > target
  }' "$WORK/pred.txt" "$WORK/check.txt"
rc=$?
echo "netns_ranks_per_node: conditions: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), tbf $RATE per node, ranks placed $PLACEMENT, $(( $(date +%s) - t0 )) s, $(date -u '+%Y-%m-%d %H:%M UTC'); data in $WORK"
exit $rc
