#!/usr/bin/env bash
# The fit's quality gate and degenerate data (ux-review P3, P12), end to end:
#  - a fit of real data passes the gate (median and cross-validation) and writes no gate line;
#  - the same data with every time scaled by a random factor of 0.3-3 (fixed seed) fails it:
#    exit 1, advice, no file; --force writes it with quality.gate and forced: true, and `coll`
#    with it warns on stderr and in the table header;
#  - a header-only file, 40 identical rows and time_us = 1e300 each give one located line, exit 1;
#  - fit --prior nccl|FILE: the network values of a one-node fit are the prior's centre;
#  - import counts nodes from NCCL_HOSTID lines, takes --nodes, and warns when it cannot tell.
# usage: fit_gates.sh COMMSCALE DATA_DIR TMP_DIR
set -u
cs=$1 data=$2 tmp=$3
mkdir -p "$tmp"
fail=0
no() { echo "FAIL: $*"; fail=1; }

# the 2-GPU rows of the 4 x H200 measurements, one launch: a small real data set
src=$tmp/n2.csv
awk -F, '/^#/ || !h++ { print; next } $5 == 2 && $16 == "process" { print }' \
  "$data/h200x4/calib_n4.csv" >"$src"
"$cs" fit "$src" -o "$tmp/good.yaml" -q || no "fit of the real data"
grep -q '^  gate:' "$tmp/good.yaml" && no "the real fit carries a gate line"

awk -F, 'BEGIN { OFS = ","; srand(7) } /^#/ || !n++ { print; next }
         { $9 = $9 * exp(log(10) * (rand() - 0.5)); print }' "$src" >"$tmp/noisy.csv"
rm -f "$tmp/noisy.yaml"
err=$("$cs" fit "$tmp/noisy.csv" -o "$tmp/noisy.yaml" -q --no-cv 2>&1); st=$?
[ "$st" -eq 1 ] || no "noisy fit: exit $st, want 1"
printf '%s' "$err" | grep -q 'fails the quality gate' || no "noisy fit: no gate message: $err"
printf '%s' "$err" | grep -q -- '--force' || no "noisy fit: no advice: $err"
[ -e "$tmp/noisy.yaml" ] && no "noisy fit wrote its calibration"
"$cs" fit "$tmp/noisy.csv" -o "$tmp/noisy.yaml" -q --no-cv --force 2>"$tmp/force.err" ||
  no "--force failed"
grep -q 'written anyway' "$tmp/force.err" || no "--force: no warning"
grep -q '^  gate: ' "$tmp/noisy.yaml" || no "--force: no gate line in the file"
grep -q '^  forced: true' "$tmp/noisy.yaml" || no "--force: not marked forced"
"$cs" coll --cal "$tmp/noisy.yaml" --nodes 1 -g 2 --sizes 1M >"$tmp/coll.out" 2>"$tmp/coll.err" ||
  no "coll with a forced calibration"
grep -q 'quality gate' "$tmp/coll.err" || no "coll: no stderr warning for a forced calibration"
grep -q '^# warning.*quality gate' "$tmp/coll.out" || no "coll: no header warning"

hdr=$tmp/header.csv
grep '^#' "$src" >"$hdr"
grep -v '^#' "$src" | head -1 >>"$hdr"
err=$("$cs" fit "$hdr" -o "$tmp/x.yaml" 2>&1); st=$?
[ "$st" -eq 1 ] && printf '%s' "$err" | grep -q "header.csv: the file has no data rows" ||
  no "header-only: exit $st: $err"
{ cat "$hdr"; for i in $(seq 40); do grep -v '^#' "$src" | sed -n 5p; done; } >"$tmp/same.csv"
err=$("$cs" fit "$tmp/same.csv" -o "$tmp/x.yaml" 2>&1); st=$?
[ "$st" -eq 1 ] && printf '%s' "$err" | grep -q "only 1 distinct message size" ||
  no "40 identical rows: exit $st: $err"
awk -F, 'BEGIN { OFS = "," } /^#/ || !n++ { print; next } { if (++k == 5) $9 = "1e300"; print }' \
  "$src" >"$tmp/huge.csv"
err=$("$cs" fit "$tmp/huge.csv" -o "$tmp/x.yaml" 2>&1); st=$?
[ "$st" -eq 1 ] && printf '%s' "$err" | grep -qE "huge.csv:[0-9]+:[0-9]+: column time_us" ||
  no "time_us 1e300: exit $st: $err"

# --prior: a fit of one node cannot see the network; its network values are the prior's centre:
# NCCL's own tree latency across nodes with --prior nccl (14 us for Simple, NCCL 2.28's tuning.cc),
# a calibration file's value with --prior FILE; the fitted parameters still come from the data
val() { awk -v p="  $2:" 'index($0, p) == 1 { v = $3; sub(",", "", v); print v; exit }' "$1"; }
src_of() { awk -v p="  $2:" 'index($0, p) == 1 { print $NF; exit }' "$1"; }
"$cs" fit "$src" --no-cv -q --prior nccl -o "$tmp/pn.yaml" || no "fit --prior nccl"
[ "$(val "$tmp/pn.yaml" tree_hop.net.simple)" = 14us ] ||
  no "--prior nccl: tree_hop.net.simple $(val "$tmp/pn.yaml" tree_hop.net.simple), want 14us"
[ "$(src_of "$tmp/pn.yaml" tree_hop.net.simple)" = "default}" ] || no "--prior nccl: not a default"
printf 'version: 1\nparameters:\n  tree_hop.net.simple: {value: 99us}\n  hop.net.ll: {value: 7us}\n' \
  >"$tmp/big.yaml"
"$cs" fit "$src" --no-cv -q --prior "$tmp/big.yaml" -o "$tmp/pf.yaml" || no "fit --prior FILE"
[ "$(val "$tmp/pf.yaml" tree_hop.net.simple)" = 99us ] && [ "$(val "$tmp/pf.yaml" hop.net.ll)" = 7us ] ||
  no "--prior FILE: the file's values not kept where the data says nothing"
[ "$(src_of "$tmp/pf.yaml" bw.nvlink)" = "fit}" ] && [ "$(src_of "$tmp/good.yaml" bw.nvlink)" = "fit}" ] ||
  no "--prior FILE: bw.nvlink not fitted"
for f in pn pf; do
  awk -v a="$(val "$tmp/good.yaml" bw.nvlink)" -v b="$(val "$tmp/$f.yaml" bw.nvlink)" \
    'BEGIN { x = a + 0; y = b + 0; exit !(x > 0 && y / x > 0.98 && y / x < 1.02) }' ||
    no "--prior ($f): the fitted NVLink rate moved with a prior the data overrides"
done
err=$("$cs" fit "$src" --prior "$tmp/absent.yaml" -o "$tmp/x.yaml" 2>&1); st=$?
[ "$st" -eq 1 ] && printf '%s' "$err" | grep -q "absent.yaml" || no "--prior absent file: exit $st: $err"
printf 'version: 1\nparameters:\n  tree_hop.net.simple: {value: fast}\n' >"$tmp/badprior.yaml"
err=$("$cs" fit "$src" --prior "$tmp/badprior.yaml" -o "$tmp/x.yaml" 2>&1); st=$?
[ "$st" -ne 0 ] && printf '%s' "$err" | grep -qE "badprior.yaml:3:[0-9]+" ||
  no "--prior malformed file: exit $st: $err"

# import knows the nodes: NCCL_HOSTID in the log, --nodes, a warning when it cannot tell
"$cs" import "$data/nccltests/hostid.log" -o "$tmp/hid.csv" 2>"$tmp/hid.err" || no "import hostid.log"
awk -F, '!/^#/ && $1 != "collective" && ($6 != 2 || $7 != 1) { bad = 1 } END { exit bad }' \
  "$tmp/hid.csv" || no "hostid.log: rows not 2 nodes x 1 GPU"
grep -q warning "$tmp/hid.err" && no "hostid.log: a warning although the log names the nodes"
log=$data/h200x2/nccl-tests-mpirun.log
"$cs" import "$log" -o "$tmp/one.csv" 2>"$tmp/one.err" || no "import mpirun log"
grep -q "warning: every rank ran on one host" "$tmp/one.err" || no "no warning for one host"
"$cs" import "$log" --nodes 2 -o "$tmp/two.csv" 2>>"$tmp/discard" || no "import --nodes 2"
awk -F, '!/^#/ && $1 != "collective" && ($6 != 2 || $7 != 1) { bad = 1 } END { exit bad }' \
  "$tmp/two.csv" || no "--nodes 2: rows not 2 nodes x 1 GPU"
err=$("$cs" import "$log" --nodes 3 -o "$tmp/three.csv" 2>&1); st=$?
[ "$st" -eq 2 ] && printf '%s' "$err" | grep -q "is not 3 nodes" || no "--nodes 3: exit $st: $err"
[ "$fail" -eq 0 ] && echo "fit gates: all cases passed"
exit $fail
