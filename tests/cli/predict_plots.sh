#!/usr/bin/env bash
# predict with two plans side by side and --plot: the figures' data checked against the CSV of
# the same run and against hand-derived relations (ideal line = nodes / first nodes, bands around
# their values, breakdown parts adding up to the step), and the run without gnuplot.
# usage: predict_plots.sh COMMSCALE TMP_DIR
set -u
cs=$1 tmp=$2
rm -rf "$tmp" && mkdir -p "$tmp"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

nodes=1,2,4,8,16,32,64,128,256,400
args=(predict -w gpt3-175b --gpu h100-sxm -t dgx-h100 --nodes $nodes
      --plan "zero=3,recompute=full,mbs=1,gbs=1536; tp=8,pp=8,zero=1,mbs=1,gbs=1536")
"$cs" "${args[@]}" --format csv --plot "$tmp/p" >"$tmp/p.csv" 2>"$tmp/p.err" && ok ||
  bad "predict --plot: $(cat "$tmp/p.err")"
# the plan column holds commas: replace it, rows are plan-major (10 node counts per plan)
sed 's/"[^"]*"/plan/' "$tmp/p.csv" | awk -F, 'NR > 1 { print int((NR - 2) / 10), $1, $5, $6, $9 }' \
  >"$tmp/rows"
[ "$(wc -l <"$tmp/rows")" -eq 20 ] && ok || bad "expected 20 CSV rows, got $(wc -l <"$tmp/rows")"
for p in 0 1; do
  n=$(awk -v p=$p '$1 == p && $3 == "ok"' "$tmp/rows" | wc -l)
  [ "$n" -ge 3 ] && ok || bad "plan $p is feasible at $n node counts only"
done

# one reference for the table: the fastest feasible row at the fewest GPUs; ref_efficiency =
# (throughput / the reference's) x (the reference's GPUs / GPUs), computed here from the CSV
sed 's/"[^"]*"/X/g' "$tmp/p.csv" | awk -F, 'NR > 1 && $5 == "ok" { n++; g[n] = $2; t[n] = $9; e[n] = $30
    if (!g0 || $2 < g0 || ($2 == g0 && $9 > t0)) { g0 = $2; t0 = $9 } }
  END { for (i = 1; i <= n; i++) { w = t[i] / t0 * g0 / g[i]; if (((e[i] - w) / w) ^ 2 > 1e-8) bad = 1 }
        exit !(n > 0 && !bad) }' && ok || bad "ref_efficiency does not follow the common reference"
"$cs" "${args[@]}" >"$tmp/p.txt" 2>>"$tmp/discard"
grep -q '^# speedup, eff: against one reference' "$tmp/p.txt" && ok || bad "table header names no reference"
# an eff above 100% carries a * and a note under the table
awk '/^ / && $13 ~ /^[0-9.]+/ { v = $13; sub(/[w*]+$/, "", v); if (v + 0 > 100.05 && $13 !~ /\*/) bad = 1 }
  END { exit bad }' "$tmp/p.txt" && ok || bad "an eff above 100% without its reason"

# speedup: blocks plan 1, plan 2 (predicted), then the ideal line (fitted)
kinds=$(grep '^# index' "$tmp/p-speedup.dat" | awk '{ print $4 }' | tr -d , | tr '\n' ' ')
[ "$kinds" = "predicted predicted fitted " ] && ok || bad "speedup blocks: $kinds"
awk 'BEGIN { b = 0; bad = 0 }
  FNR == NR { if ($3 == "ok") { if (!n0 || $2 < n0) { n0 = $2; t0 = 0 }
                                if ($2 == n0 && $5 > t0) t0 = $5 }
              ok[$1 " " $2] = $5; next }
  /^# index/ { b = $3 + 0; next } /^#/ || NF == 0 { next }
  b == 2 { if (($2 - $1 / n0) ^ 2 > 1e-18 || $3 != $2 || $4 != $2) bad = 1; nid++; next }
  { if (!($3 <= $2 && $2 <= $4)) bad = 1
    s = ok[b " " $1]; if (s == "" || ((s / t0 - $2) / $2) ^ 2 > 1e-10) bad = 1; npt++ }
  END { exit !(bad == 0 && npt > 0 && nid > 0) }' "$tmp/rows" "$tmp/p-speedup.dat" && ok ||
  bad "speedup .dat: ideal line, bands or values off the CSV"

# breakdown: one block per plan; the parts of a row add up to the CSV's step of that row
[ "$(grep -c '^# index' "$tmp/p-breakdown.dat")" -eq 2 ] && ok || bad "breakdown blocks"
awk 'FNR == NR { if ($3 == "ok") step[$1 " " $2] = $4; next }
  /^# index/ { b = $3 + 0; next } /^#/ || NF == 0 { next }
  { sum = 0; for (j = 2; j <= 9; j++) sum += $j; s = step[b " " $1]; n++
    if (s == "" || ((sum - s) / s) ^ 2 > 1e-10 || ((sum - $10) / sum) ^ 2 > 1e-14) bad = 1 }
  END { exit !(bad == 0 && n > 0) }' "$tmp/rows" "$tmp/p-breakdown.dat" && ok ||
  bad "breakdown parts do not add up to the step"
npt=$(awk '/^# index/ { b = $3 + 0 } !/^#/ && NF > 0 { n[b]++ } END { print n[0] + 0, n[1] + 0 }' "$tmp/p-breakdown.dat")
want=$(awk '$3 == "ok" { n[$1]++ } END { print n[0] + 0, n[1] + 0 }' "$tmp/rows")
[ "$npt" = "$want" ] && ok || bad "breakdown rows per plan $npt, feasible rows $want"

if command -v gnuplot >>"$tmp/discard" 2>&1; then
  for f in speedup breakdown; do
    grep -q '<svg' "$tmp/p-$f.svg" 2>>"$tmp/discard" && ok || bad "p-$f.svg missing or not SVG"
  done
fi

# without gnuplot: .dat and .gp written, no image, a note on stderr, exit 0
COMMSCALE_GNUPLOT="$tmp/no-gnuplot" "$cs" "${args[@]}" --plot "$tmp/q" >>"$tmp/discard" 2>"$tmp/q.err" &&
  ok || bad "predict --plot without gnuplot failed: $(cat "$tmp/q.err")"
[ -s "$tmp/q-speedup.dat" ] && [ -s "$tmp/q-breakdown.gp" ] && [ ! -e "$tmp/q-speedup.svg" ] &&
  grep -q 'q-speedup.svg not rendered' "$tmp/q.err" && ok || bad "no-gnuplot run: $(cat "$tmp/q.err")"

echo "cli predict plots: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
