#!/usr/bin/env bash
# coll_public.sh -- "measure on a few nodes, predict many" on real, published multi-node data
# (tests/data/public: each cluster's README has the source and every caveat):
#   polaris  ALCF Polaris, 4 x A100-SXM4-40GB per node, 2 x 200 Gb/s Slingshot 11, NCCL 2.21.5,
#            all_reduce and all_gather at 2, 8, 256, 540 nodes
#   alps     CSCS Alps (Clariden), 4 x GH200 per node, 4 x 200 Gb/s Slingshot 11, NCCL 2.23.4,
#            all_reduce at 1, 2, 4, ..., 512 nodes
#   abci-a   ABCI 2.0 (A), 8 x A100-SXM4-40GB on NVSwitch, 4 x HDR 200 Gb/s, NCCL 2.8.4,
#            all_reduce at 1-16 nodes, sizes up to 32 MiB
#   abci-v   ABCI 2.0 (V), 4 x V100-SXM2-16GB, 2 x EDR 100 Gb/s, NCCL 2.8.4, all_reduce at 1-32 nodes
#
# Figures printed (sizes >= 1 KiB, out-of-place rows), per cluster and collective and pooled:
#  1. fit on the node counts up to 4 (Polaris: its two smallest, 2 and 8), predict the rest;
#  2. fit on one node count more, predict the rest;
#  3. no calibration: the defaults at the network's nominal rate, the node counts of 1 (what the
#     tool says before anything is measured);
#  4. the defaults' anchors (model/costmodel.c cs_model_defaults): each cluster fitted on all its
#     node counts with NCCL's constants as prior (--prior nccl); the tree's network side
#     (tree_hop.net.*, pipe.tree.*) of each and their geometric mean over the four, which the
#     defaults hold; then, cluster by cluster, the same anchors from the OTHER three clusters
#     only (leave one cluster out: no cluster's figures below use its own data):
#  5. no calibration with those anchors; 6. a calibration of one node (the cluster's 1-node rows,
#     where it has them; the network's nominal rate given) with the defaults as prior, with the
#     other three's anchors as prior (--prior FILE) and with NCCL's constants (--prior nccl);
#  7. fit on the node counts up to 4 with the other three's anchors as prior; and 1. again with
#     NCCL's constants as prior (--prior nccl: the fits before the anchors);
#  8. leave one node count out: each count but the smallest predicted from a fit on all the
#     cluster's other counts (the band's check the issue asks for);
# each: median and max |error| of time against the measurement, band coverage (share of
# measurements inside time_lo..time_hi) and median band half-width. Targets (issue 16): median
# <= 8%, max <= 20%, coverage >= 90%. The fit runs with --force (a calibration the quality gate
# refuses is still scored, marked so in its file). Nothing is asserted: this is a benchmark.
#
# usage: tests/bench/coll_public.sh [COMMSCALE] [TMP_DIR]
set -eu
cs=${1:-build/sim/commscale}
tmp=${2:-$(mktemp -d)}
mkdir -p "$tmp"
data=$(cd "$(dirname "$0")/../data/public" && pwd)

# "coll nodes bytes t lo hi" of calibration CAL's predictions (CAL "": the defaults) at the
# measured sizes (all_gather's are rounded to the rank count, so not powers of two) of the node
# counts given; with $pred_bw set, the network's rate given as a user would (what no calibration
# or a calibration of one node never measured)
predict() { # DIR CAL GPN COLLS NODES...
  local dir=$1 cal=$2 gpn=$3 colls=$4 c n sizes
  shift 4
  for c in $colls; do
    for n in "$@"; do
      sizes=$(awk -F, '!/^#/ && $1 != "collective" && $15 == 0 && $8 >= 1024 { printf "%s%s", s, $8; s = "," }' \
        "$dir/$c-$n.csv")
      [ -n "$sizes" ] || continue
      "$cs" coll ${cal:+--cal "$cal"} ${pred_bw:+--net-bw "$pred_bw"} --coll "$c" --nodes "$n" -g "$gpn" --sizes "$sizes" --format csv 2>>"$tmp/discard" |
        awk -F, 'NR > 1 { print $1, $2, $5, $8, $9, $10 }'
    done
  done
}

# "coll nodes bytes t" of the out-of-place measurements at the node counts given
measured() { # DIR COLLS NODES...
  local dir=$1 colls=$2 c n
  shift 2
  for c in $colls; do
    for n in "$@"; do
      awk -F, '!/^#/ && $1 != "collective" && $15 == 0 { print $1, $6, $8, $9 }' "$dir/$c-$n.csv"
    done
  done
}

# "err half_width inside" per scored point, appended to OUT
points() { # PRED MEAS OUT [COLL]
  awk -v want="${4:-}" 'NR == FNR { p[$1 " " $2 " " $3] = $4 " " $5 " " $6; next }
    ($1 " " $2 " " $3) in p && $3 >= 1024 && (want == "" || $1 == want) {
      split(p[$1 " " $2 " " $3], x, " ")
      e = x[1] / $4 - 1; e = e < 0 ? -e : e
      print e, (x[3] - x[2]) / 2 / x[1], ($4 >= x[2] && $4 <= x[3]) ? 1 : 0
    }' "$1" "$2" >>"$3"
}

score() { # LABEL POINTS
  sort -g "$2" | awk -v label="$1" '
    { err[++n] = $1; hw[n] = $2; in_band += $3 }
    END {
      if (n == 0) { printf "%-56s no points\n", label; exit }
      split("", h); for (i = 1; i <= n; i++) h[i] = hw[i]
      for (i = 2; i <= n; i++) { t = h[i]; for (j = i - 1; j >= 1 && h[j] > t; j--) h[j + 1] = h[j]; h[j + 1] = t }
      me = n % 2 ? err[(n + 1) / 2] : (err[n / 2] + err[n / 2 + 1]) / 2
      mh = n % 2 ? h[(n + 1) / 2] : (h[n / 2] + h[n / 2 + 1]) / 2
      printf "%-56s points %4d  median |error| %6.1f%%  max %6.1f%%  coverage %5.1f%%  median half-width %5.1f%%\n",
        label, n, 100 * me, 100 * err[n], 100 * in_band / n, 100 * mh
    }'
}

# the anchored parameters, and "name value_us" of those a calibration FILE fitted
anchored="tree_hop.net.ll tree_hop.net.ll128 tree_hop.net.simple pipe.tree.ll pipe.tree.ll128 pipe.tree.simple"
fitted_us() { # FILE
  awk -v want="$anchored" 'BEGIN { n = split(want, w, " "); for (i = 1; i <= n; i++) ok[w[i]] = 1 }
    /source: fit/ { name = $1; sub(":", "", name); v = $3; sub(",", "", v)
      if ((name in ok) && v ~ /us$/) { sub("us", "", v); print name, v } }' "$1"
}

# a partial calibration of the geometric means of the anchored parameters over the clusters given
anchor_file() { # OUT CLUSTER...
  local out=$1 c
  shift
  for c in "$@"; do fitted_us "$tmp/$c/full.yaml"; done |
    awk '{ s[$1] += log($2); k[$1]++ }
      END { print "version: 1"; print "parameters:"
        for (p in s) printf "  %s: {value: %.4gus, source: default}\n", p, exp(s[p] / k[p]) }' >"$out"
}

# load NAME DIR "COLLS" "NODES": imports a cluster's logs into $tmp/NAME and fits all its node
# counts with NCCL's constants as prior (the anchors' source)
load() {
  local name=$1 src=$data/$2 colls=$3 all=($4) dir=$tmp/$1 c n files=()
  mkdir -p "$dir"
  for c in $colls; do
    for n in "${all[@]}"; do
      "$cs" import "$src/$c-${n}n.log" -o "$dir/$c-$n.csv" 2>>"$tmp/discard"
      files+=("$dir/$c-$n.csv")
    done
  done
  awk -F, '!/^#/ && $1 != "collective" { print $17; exit }' "${files[0]}" >"$dir/tag"
  "$cs" fit "${files[@]}" --config "$(cat "$dir/tag")" --no-cv -q --force --prior nccl \
    -o "$dir/full.yaml" 2>>"$tmp/discard" || true
}

# fit_score LABEL POOL NAME GPN "COLLS" "FITNODES" "RESTNODES" [FIT OPTIONS...]: fits the
# cluster's rows at FITNODES, predicts RESTNODES, scores per collective, adds to POOL
fit_score() {
  local label=$1 pool=$2 name=$3 gpn=$4 colls=$5 fitn=($6) rest=($7) dir=$tmp/$3 c n files=()
  shift 7
  for c in $colls; do
    for n in "${fitn[@]}"; do files+=("$dir/$c-$n.csv"); done
  done
  local cal=$dir/cal.yaml
  rm -f "$cal"
  "$cs" fit "${files[@]}" --config "$(cat "$dir/tag")" --no-cv -q --force "$@" -o "$cal" \
    2>>"$tmp/discard" || true
  score_rest "$name: $label" "$pool" "$name" "$gpn" "$colls" "$cal" "${rest[@]}"
}

# score_rest LABEL POOL NAME GPN "COLLS" CAL RESTNODES...: CAL's predictions (predict) at the
# cluster's RESTNODES against the measurements, scored per collective, added to POOL
score_rest() {
  local label=$1 pool=$2 dir=$tmp/$3 gpn=$4 colls=$5 cal=$6 c
  shift 6
  predict "$dir" "$cal" "$gpn" "$colls" "$@" >"$dir/p.txt"
  measured "$dir" "$colls" "$@" >"$dir/m.txt"
  for c in $colls; do
    : >"$dir/s.txt"
    points "$dir/p.txt" "$dir/m.txt" "$dir/s.txt" "$c"
    score "$label: $c" "$dir/s.txt"
  done
  points "$dir/p.txt" "$dir/m.txt" "$tmp/pool-$pool.txt"
}

# nocal_score LABEL POOL NAME GPN "COLLS" NET_BW CAL "RESTNODES": no fit, the network's nominal
# rate given (CAL "": the defaults; else a partial calibration of default-sourced values)
nocal_score() {
  local pred_bw=$6 rest=($8)
  score_rest "$3: $1, $6 per node" "$2" "$3" "$4" "$5" "$7" "${rest[@]}"
}

# cluster NAME GPN "COLLS" "NODES" FIT1 FIT2 NET_BW: every figure of one cluster (header above)
cluster() {
  local name=$1 gpn=$2 colls=$3 all=($4) k1=$5 k2=$6 netbw=$7 dir=$tmp/$1 others=() o
  local fit1=("${all[@]:0:k1}") rest1=("${all[@]:k1}") fit2=("${all[@]:0:k2}") rest2=("${all[@]:k2}")
  for o in $clusters; do [ "$o" = "$name" ] || others+=("$o"); done
  anchor_file "$dir/loco.yaml" "${others[@]}"
  local r1="${rest1[*]}" f1 l1
  f1=$(IFS=,; echo "${fit1[*]}")
  l1=$(IFS=,; echo "${rest1[*]}")
  fit_score "fit $f1 -> $l1" 1 "$name" "$gpn" "$colls" "${fit1[*]}" "$r1"
  fit_score "fit $(IFS=,; echo "${fit2[*]}") -> $(IFS=,; echo "${rest2[*]}")" 2 "$name" "$gpn" \
    "$colls" "${fit2[*]}" "${rest2[*]}"
  nocal_score "no calibration" 0 "$name" "$gpn" "$colls" "$netbw" "" "$r1"
  nocal_score "no calibration, the other three's anchors" 5 "$name" "$gpn" "$colls" "$netbw" \
    "$dir/loco.yaml" "$r1"
  if [ "${all[0]}" = 1 ]; then
    pred_bw=$netbw
    fit_score "1-node calibration, $netbw per node -> $l1" 6 "$name" "$gpn" "$colls" 1 "$r1" --prior defaults
    fit_score "1-node calibration, the other three's anchors as prior -> $l1" 6l "$name" "$gpn" \
      "$colls" 1 "$r1" --prior "$dir/loco.yaml"
    fit_score "1-node calibration, NCCL's constants as prior -> $l1" 6n "$name" "$gpn" "$colls" 1 \
      "$r1" --prior nccl
    pred_bw=
  fi
  fit_score "fit $f1, the other three's anchors as prior" 7 "$name" "$gpn" "$colls" "${fit1[*]}" \
    "$r1" --prior "$dir/loco.yaml"
  fit_score "fit $f1, NCCL's constants as prior" 1n "$name" "$gpn" "$colls" "${fit1[*]}" "$r1" \
    --prior nccl
  # leave one node count out: every count but the smallest, fitted from all the others
  local n k rest
  for n in "${all[@]:1}"; do
    rest=()
    for k in "${all[@]}"; do [ "$k" = "$n" ] || rest+=("$k"); done
    fit_score "leave $n out (fit $(IFS=,; echo "${rest[*]}"))" L "$name" "$gpn" "$colls" \
      "${rest[*]}" "$n" >>"$tmp/loco-lines.txt"
  done
}

echo "# coll_public: published nccl-tests runs of four clusters (tests/data/public), sizes >= 1 KiB"
echo "# target: median <= 8%, max <= 20%, coverage >= 90% (issue 16)"
clusters="polaris alps abci-a abci-v"
pred_bw=
load polaris alcf-polaris "all_reduce all_gather" "2 8 256 540"
load alps cscs-alps-clariden all_reduce "1 2 4 8 16 32 64 128 256 512"
load abci-a abci2-a100 all_reduce "1 2 4 8 16"
load abci-v abci2-v100 all_reduce "1 2 4 8 16 32"
echo "# the defaults' anchors: each cluster fitted on all its node counts, prior NCCL's (us)"
for c in $clusters; do
  printf '%-8s %s\n' "$c" "$(fitted_us "$tmp/$c/full.yaml" | sort | awk '{ printf "%s %.3g  ", $1, $2 }')"
done
anchor_file "$tmp/anchors.yaml" $clusters
printf '%-8s %s\n' "geomean" "$(awk '/value/ { sub(":", "", $1); v = $3; sub(",", "", v); print $1, v }' \
  "$tmp/anchors.yaml" | sort | awk '{ printf "%s %s  ", $1, $2 }')"
for p in 0 1 2 5 6 6l 6n 7 1n L; do : >"$tmp/pool-$p.txt"; done
: >"$tmp/loco-lines.txt"
# nominal network rate per node: Polaris 2 x 200 Gb/s, Alps 4 x 200, ABCI (A) 4 x 200 HDR,
# ABCI (V) 2 x 100 EDR (each cluster's README)
cluster polaris 4 "all_reduce all_gather" "2 8 256 540" 2 3 400Gbps
cluster alps 4 all_reduce "1 2 4 8 16 32 64 128 256 512" 3 4 800Gbps
cluster abci-a 8 all_reduce "1 2 4 8 16" 3 4 800Gbps
cluster abci-v 4 all_reduce "1 2 4 8 16 32" 3 4 200Gbps
score "all four: fit on nodes <= 4 (Polaris 2, 8)" "$tmp/pool-1.txt"
score "all four: fit on one node count more" "$tmp/pool-2.txt"
score "all four: no calibration (nominal network rate)" "$tmp/pool-0.txt"
echo "# leave one cluster out: each cluster with the anchors of the other three"
score "all four: no calibration, the other three's anchors" "$tmp/pool-5.txt"
score "three with 1-node rows: 1-node calibration" "$tmp/pool-6.txt"
score "three with 1-node rows: 1-node, the others' anchors prior" "$tmp/pool-6l.txt"
score "three with 1-node rows: 1-node, NCCL's constants as prior" "$tmp/pool-6n.txt"
score "all four: fit nodes <= 4, the others' anchors as prior" "$tmp/pool-7.txt"
score "all four: fit nodes <= 4, NCCL's constants as prior" "$tmp/pool-1n.txt"
echo "# leave one node count out (issue 16's band check): each count but the smallest predicted"
echo "# from a fit on all the cluster's other counts"
cat "$tmp/loco-lines.txt"
score "all four: leave one node count out" "$tmp/pool-L.txt"
echo "# conditions: $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), data in $tmp"
