#!/usr/bin/env bash
# netns_cluster.sh — a small real cluster on one machine, for CI: one network namespace per
# "node", each joined to a Linux bridge (the switch) by a veth pair whose namespace end (eth0) is
# shaped with a token-bucket filter, so every node has a NIC of known speed. Open MPI starts one
# commscale-run per namespace with an MPMD command line and talks TCP over the 10.x subnet only.
#
#   1. calibrate 2, 3 and 4 nodes from one launch (4 namespaces): all_reduce at Open MPI's own
#      choice and with each of the algorithms that choice uses forced (--algos, default all)
#   2. fit them                       (commscale fit: Open MPI's laws, model/mpicoll.h)
#   3. predict 6 and 8 nodes          (commscale coll: Open MPI's choice, priced by the laws)
#   4. measure 6 and 8 nodes          (8 namespaces, one launch, Open MPI's own choice)
#   5. compare: relative error of prediction vs measurement
#
# Two modes. The default (ctest) asserts only what holds on a loaded 2-core machine (load average
# 6 or more: 8 spinning ranks then wait for a core, so measured times grow, never shrink): for
# every point >= 64 KiB, the measured time is at least 0.8 x the shaped link's floor (no
# all-reduce moves less than 2(n-1)/n x bytes through each NIC) and within a factor
# CS_NETNS_FACTOR (default 10) of the prediction either way (the calibration runs under load too,
# so a loaded calibration can over-predict an unloaded check); and the largest message is slower
# than the 64 KiB one at each node count. The errors are printed, not asserted.
# CS_NETNS_STRICT=1 (tests/bench/netns_cluster.sh, on demand, on an idle machine) asserts the
# median |error| over every measured size <= CS_NETNS_TARGET (default 0.10), measured once.
#
# usage: netns_cluster.sh COMMSCALE_RUN [COMMSCALE] [WORKDIR]
# Environment: CS_NETNS_RATE (tbf rate, default 200mbit), CS_NETNS_SIZES (default 4K:512K: on a
# 2-core machine 8 spinning ranks make larger messages CPU-bound rather than link-bound),
# CS_NETNS_ALGOS (the calibration's --algos; default all with CS_NETNS_STRICT=1: Open MPI's own
# choice and its all_reduce and all_gather algorithms forced; else auto and all_reduce's
# recursive_doubling, ring and rabenseifner), CS_NETNS_COLLS (default all_reduce,all_gather),
# CS_NETNS_KEEP=1 keeps WORKDIR. Exit 0 pass, 1 fail, 77 skipped (not root, or no `ip netns`).
# The namespaces, veths and bridge are removed on every exit, failures included (trap).
set -u
RUN=${1:?usage: netns_cluster.sh COMMSCALE_RUN [COMMSCALE] [WORKDIR]}
CS=${2:-}
KEEPWORK=${CS_NETNS_KEEP:-0}
if [ -n "${3:-}" ]; then WORK=$3; KEEPWORK=1; else WORK=$(mktemp -d /tmp/cs-netns.XXXXXX); fi
RATE=${CS_NETNS_RATE:-200mbit}
SIZES=${CS_NETNS_SIZES:-4K:512K}
TARGET=${CS_NETNS_TARGET:-0.10}
# the benchmark forces every algorithm Open MPI's choice uses (all); the ctest sanity run, to stay
# within its time, only all_reduce's
ALGOS=${CS_NETNS_ALGOS:-$([ "$STRICT" = 1 ] && echo all || echo auto,recursive_doubling,ring,rabenseifner)}
COLLS=${CS_NETNS_COLLS:-all_reduce,all_gather}
STRICT=${CS_NETNS_STRICT:-0}
FACTOR=${CS_NETNS_FACTOR:-10}

if [ "$(id -u)" != 0 ]; then echo "netns_cluster: skipped: needs root"; exit 77; fi
mkdir -p "$WORK"
if ! ip netns list >>"$WORK/discard" 2>&1; then echo "netns_cluster: skipped: no 'ip netns'"; exit 77; fi
command -v mpirun >>"$WORK/discard" || { echo "netns_cluster: mpirun not found"; exit 1; }
[ -x "$RUN" ] || { echo "netns_cluster: $RUN is not executable"; exit 1; }

MAXN=8
. "$(dirname "$0")/netns_lib.sh"
cleanup() {
  netns_teardown
  [ "$KEEPWORK" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

netns_setup "$MAXN" "$RATE" 213 "$WORK/discard" || { echo "netns_cluster: namespace set-up failed"; exit 1; }
NET=$NETNS_NET BR=$NETNS_BR
ns() { netns_name "$1"; }
echo "netns_cluster: $MAXN namespaces on bridge $BR, subnet $NET.0/24, each eth0 shaped to $RATE"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=$NET.0/24
export OMPI_MCA_btl_tcp_if_include=$NET.0/24 OMPI_MCA_oob_tcp_if_include=$NET.0/24
# Open MPI picks its algorithms itself; the runner forces them one communicator at a time.
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl tcp,self
        --mca btl_tcp_if_include "$NET.0/24" --mca oob_tcp_if_include "$NET.0/24"
        --mca mpi_yield_when_idle 1)
# Trials of up to 500 operations or 100 ms: the token bucket passes its 64 KB burst at the veth's
# speed, so trials of 5 small operations ran faster than the shaped rate (2 nodes at 100 Mbit/s,
# all_gather of 2 KiB: 20 us an operation at -n 5, 89 us, the rate, at -n 20; 2026-11-27).
COMMON=(--backend mpi --colls "$COLLS" --sizes "$SIZES" -n 500 -w 2 --trials 3:7 --tol 0.05
        --trial-time 100ms --timeout 60s)

# launch NODES NODE-LIST CSV ALGOS: one rank in each of the first NODES namespaces
launch() {
  local nodes=$1 list=$2 csv=$3 algos=$4 args=() i
  for i in $(seq 0 $((nodes - 1))); do
    [ "$i" -gt 0 ] && args+=(:)
    args+=(-np 1 ip netns exec "$(ns "$i")" "$RUN" --node-id "$(ns "$i")" "${COMMON[@]}"
           --algos "$algos" --nodes "$list" -o "$csv" --overwrite)
  done
  timeout 600 "${MPIRUN[@]}" "${args[@]}"
}

t0=$(date +%s)
echo "== 1. calibrate 2, 3, 4 nodes (one launch of 4 namespaces)"
launch 4 2,3,4 "$WORK/calib.csv" "$ALGOS" || { echo "netns_cluster: calibration run failed"; exit 1; }
echo "== 4. measure 6 and 8 nodes (one launch of 8 namespaces)"
launch 8 6,8 "$WORK/check.csv" auto || { echo "netns_cluster: 6/8-node run failed"; exit 1; }
echo "netns_cluster: measurements took $(( $(date +%s) - t0 )) s"

if [ -z "$CS" ] || ! "$CS" fit --help >>"$WORK/discard" 2>&1 || ! "$CS" coll --help >>"$WORK/discard" 2>&1; then
  echo "netns_cluster: commscale fit/coll not available: measured only (fit and prediction skipped)"
  exit 0
fi
echo "== 2. fit"
# Under heavy load the 2-4 node data can be too noisy for the fit's quality gate (median error
# over 25%): a strict run fails then; the sanity run writes the fit anyway (--force, marked in the
# file) and keeps asserting only what load cannot break (link floor, ordering), not the factor.
if ! "$CS" fit "$WORK/calib.csv" -o "$WORK/cal.yaml"; then
  [ "$STRICT" = 1 ] && { echo "netns_cluster: fit failed"; exit 1; }
  echo "netns_cluster: the fit fails its quality gate on this run's data (load average $(cut -d' ' -f1-3 /proc/loadavg 2>>"$WORK/discard")): written with --force; the ${FACTOR}x check is printed, not asserted"
  "$CS" fit --force "$WORK/calib.csv" -o "$WORK/cal.yaml" || { echo "netns_cluster: fit failed"; exit 1; }
  FACTOR=1e300
fi
echo "== 3. predict 6 and 8 nodes"
SZ=$(grep -v '^#' "$WORK/check.csv" | awk -F, 'NR > 1 { print $8 }' | sort -un | paste -sd, -)
for c in ${COLLS//,/ }; do
  "$CS" coll --cal "$WORK/cal.yaml" --coll "$c" --nodes 6,8 --gpus-per-node 1 \
    --sizes "$SZ" --format csv -o "$WORK/pred_$c.csv" || { echo "netns_cluster: coll failed"; exit 1; }
  if [ -s "$WORK/pred.csv" ]; then tail -n +2 "$WORK/pred_$c.csv"; else cat "$WORK/pred_$c.csv"; fi >>"$WORK/pred.csv"
done
# compare PRED.csv MEASURED.csv: relative error per point. Strict: fails when the median |error|
# over every point is over the target. Sanity: fails when a point >= 64 KiB is under the link
# floor or off its prediction by more than FACTOR either way, or when the largest message is not
# slower than the 64 KiB one at some node count.
# the tbf rate in bit/s (200mbit, 1gbit, 500kbit)
rate_bps=$(echo "$RATE" | awk '{ v = $0 + 0; u = tolower($0); sub(/^[0-9.]+/, "", u)
  print v * (u ~ /^g/ ? 1e9 : u ~ /^m/ ? 1e6 : u ~ /^k/ ? 1e3 : 1) }')
compare() {
awk -F, -v target="$TARGET" -v strict="$STRICT" -v factor="$FACTOR" -v bps="$rate_bps" '
  FNR == 1 { file++ }
  /^#/ { next }
  !hdr[file]++ { for (i = 1; i <= NF; i++) col[file, $i] = i; next }
  file == 1 { c = $col[1, "collective"]; pred[c, $col[1, "nodes"], $col[1, "bytes"]] = $col[1, "time_us"]
              alg[c, $col[1, "nodes"], $col[1, "bytes"]] = $col[1, "algorithm"]; next }
  {
    c = $col[2, "collective"]; n = $col[2, "nodes"]; b = $col[2, "bytes"]; m = $col[2, "time_us"]
    if (!((c, n, b) in pred)) { printf "no prediction for %s on %d nodes, %d bytes\n", c, n, b; bad++; next }
    e = (pred[c, n, b] - m) / m; ae = e < 0 ? -e : e
    # the least bytes a NIC carries: 2(n-1)/n of the buffer for all_reduce, (n-1)/n for all_gather
    floor = (c == "all_reduce" ? 2 : 1) * (n - 1) / n * b * 8 / bps * 1e6
    r = m / pred[c, n, b]; off = b >= 65536 && (r > factor || r < 1 / factor || m < 0.8 * floor)
    flag = ""
    if (b >= 65536 && m < 0.8 * floor) flag = sprintf("  <-- under the link floor %.0f us", floor)
    else if (off) flag = "  <-- off by more than " factor "x"
    printf "%-10s %2d nodes %7d B  %-18s measured %10.1f us  predicted %10.1f us  error %+6.1f%%%s\n", c, n, b, alg[c, n, b], m, pred[c, n, b], 100 * e, flag
    err[++k] = ae; if (ae > mx) mx = ae
    if (!strict && off) bad++
    if (b >= 65536) { if (!((c, n) in lo) || b < lob[c, n]) { lob[c, n] = b; lo[c, n] = m }
                      if (b > hib[c, n]) { hib[c, n] = b; hi[c, n] = m } }
  }
  END {
    if (k == 0) { print "netns_cluster: nothing to compare"; exit 1 }
    for (k2 in lo) if (hib[k2] > lob[k2] && !(hi[k2] > lo[k2])) {
      split(k2, kk, SUBSEP)
      printf "netns_cluster: %s on %d nodes: %d B measured %.1f us, not slower than %d B (%.1f us)\n", kk[1], kk[2], hib[k2], hi[k2], lob[k2], lo[k2]
      bad++ }
    for (i = 2; i <= k; i++) { v = err[i]; for (j = i - 1; j >= 1 && err[j] > v; j--) err[j + 1] = err[j]; err[j + 1] = v }
    med = k % 2 ? err[(k + 1) / 2] : (err[k / 2] + err[k / 2 + 1]) / 2
    if (strict && med > target) bad++
    printf "netns_cluster: %d points: median |error| %.1f%%, max %.1f%% (target median %.0f%%: %s)\n", k, 100 * med, 100 * mx, 100 * target, strict ? "asserted" : "printed, not asserted; asserted: link floor, within " factor "x, ordered"
    exit bad > 0
  }' "$WORK/pred.csv" "$1"
}
load() { cut -d' ' -f1-3 /proc/loadavg 2>>"$WORK/discard"; }
echo "== 5. compare (Open MPI's own choice; $([ "$STRICT" = 1 ] && echo "target median error <= $TARGET" || echo "sanity: link floor, within ${FACTOR}x, ordered"))"
compare "$WORK/check.csv"
rc=$?
echo "netns_cluster: conditions: $(nproc) cores, load average $(load), tbf $RATE per node, sizes $SIZES, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "netns_cluster: total $(( $(date +%s) - t0 )) s"
exit $rc
