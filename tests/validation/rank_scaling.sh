#!/usr/bin/env bash
# rank_scaling.sh -- issue 9, item 1, off the GPU machine: a calibration fitted on the 2-rank rows
# of tests/data/h200x4/calib_n4.csv (commscale-run on one 4 x H200 NVSwitch node, the 2- and
# 4-rank shapes from one launch) predicts the 4-rank rows of the same file (NCCL's own choice of
# algorithm, every collective measured) and nccl-tests' 4-rank all_reduce, all_gather and
# reduce_scatter logs (an independent harness). Prints the error per size and the median and
# max per collective for sizes >= MIN_BYTES (default 64 KiB; smaller messages are printed too).
#
# The assertion is a bound that holds today (TOL, default 0.50 on the max per collective over
# sizes >= 64 KiB, and TOL_MEDIAN 0.20 on the median; today's medians are 4-16%, the maxima
# 19-46%), so that a model that lost the rank-dependence of bus bandwidth fails (the model
# without its own-share term gave medians up to 29%).
#
# usage: rank_scaling.sh COMMSCALE DATA_DIR TMP_DIR [NODE]
# NODE names the data set under DATA_DIR (default h200x4; h100x4: the same measurement on one
# 4 x H100 node, 2026-11-27: medians 5-19%, maxima 22-46%).
set -u
cs=$1 data=$2 tmp=$3
d=$data/${4:-h200x4}
mkdir -p "$tmp"
minb=${MIN_BYTES:-65536} tolmax=${TOL:-0.50} tolmed=${TOL_MEDIAN:-0.20}
fail=0
awk -F, 'BEGIN { h = 0 } /^#/ { print; next } !h { print; h = 1; next } $5 == 2 { print }' \
  "$d/calib_n4.csv" >"$tmp/n2.csv"
"$cs" fit "$tmp/n2.csv" --launch process --no-cv -o "$tmp/cal2.yaml" >"$tmp/fit.out" 2>&1 ||
  { echo "FAIL: fit: $(tail -1 "$tmp/fit.out")"; exit 1; }

# rows: source coll bytes measured_us
{
  awk -F, '!/^#/ && $2 == "auto" && $5 == 4 && $15 == 0 { print "commscale-run", $1, $8, $9 }' \
    "$d/calib_n4.csv"
  for c in all_reduce all_gather reduce_scatter; do
    awk -v c="$c" '!/^#/ && NF >= 12 && $1 ~ /^[0-9]+$/ && $1 > 0 { print "nccl-tests", c, $1, $6 }' \
      "$d/nccltests_${c}_n4.log"
  done
} >"$tmp/measured.txt"

printf '%-14s %-15s %12s %12s %12s %8s\n' "#source" coll bytes meas_us pred_us err
while read -r src coll bytes meas; do
  pred=$("$cs" coll --cal "$tmp/cal2.yaml" -g 4 --coll "$coll" --sizes "$bytes" --format csv |
    awk -F, 'NR == 2 { print $8 }')
  [ -n "$pred" ] || { echo "FAIL: no prediction for $coll $bytes"; fail=1; continue; }
  awk -v s="$src" -v c="$coll" -v b="$bytes" -v m="$meas" -v p="$pred" \
    'BEGIN { printf "%-14s %-15s %12.0f %12.2f %12.2f %+7.1f%%\n", s, c, b, m, p, 100 * (p - m) / m }'
done <"$tmp/measured.txt" | tee "$tmp/errors.txt"

awk -v minb="$minb" -v tmax="$tolmax" -v tmed="$tolmed" '
  !/^#/ { e = $6; sub(/%/, "", e); e += 0; e = e < 0 ? -e : e; k = $1 " " $2
          if ($3 + 0 >= minb) { n[k]++; v[k, n[k]] = e; if (e > mx[k]) mx[k] = e } }
  END { bad = 0
        for (k in n) { m = n[k]
          for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[k, j] < v[k, i]) {
            t = v[k, i]; v[k, i] = v[k, j]; v[k, j] = t }
          med = m % 2 ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2
          printf "# %-30s %3d sizes >= %d B: median %5.1f%%, max %5.1f%%\n", k, m, minb, med, mx[k]
          if (mx[k] > 100 * tmax || med > 100 * tmed) { bad = 1; print "FAIL: " k " over the bound" } }
        exit bad }' "$tmp/errors.txt" || fail=1
echo "rank_scaling: $([ $fail -eq 0 ] && echo passed || echo FAILED)"
exit $fail
