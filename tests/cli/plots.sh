#!/usr/bin/env bash
# The figures of sweep, predict --plot and size-network: every .gp is checked for its axis
# settings (log axes, the swept values as tick labels, shares for the breakdown) and the ideal
# line's values (n / n0 at every swept node count, computed here); --png writes a PNG beside
# each SVG when gnuplot is there.
# usage: plots.sh COMMSCALE TMP_DIR
set -u
cs=$1 tmp=$2
rm -rf "$tmp" && mkdir -p "$tmp"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
gp() { grep -q "^$2\$" "$tmp/$1.gp" && ok || bad "$1.gp: no line '$2' ($(grep "^${2%% *}" "$tmp/$1.gp"))"; }
png() { if command -v gnuplot >>"$tmp/discard" 2>&1; then
          [ "$(head -c 4 "$tmp/$1.png" 2>>"$tmp/discard" | tail -c 3)" = PNG ] && ok || bad "$1.png missing"
        fi; }
W=(-w gpt3-13b --gpu h100-sxm -t dgx-h100)

"$cs" sweep "${W[@]}" --nodes 4,8,16,32 --gbs 512 --net-gbps 50,100,400 --families zero3,tp+pp \
  --plot "$tmp/sw" --png >>"$tmp/discard" 2>"$tmp/sw.err" && ok || bad "sweep --plot: $(cat "$tmp/sw.err")"
gp sw-nodes "cs_xlog = 1"
gp sw-nodes "cs_ylog = 1"
gp sw-nodes "cs_xtics = '4 8 16 32'"
gp sw-nodes "cs_ytics = '1 2 4 8'"
gp sw-net "cs_xlog = 1"
gp sw-net "cs_xtics = '50 100 400'"
# the ideal block: every swept node count, y = n / 4
awk '/^# index/ { ideal = /ideal/; next } /^#/ || NF == 0 { next }
  ideal { n++; if (($2 - $1 / 4) ^ 2 > 1e-18) bad = 1; seen[$1] = 1 }
  END { exit !(n == 4 && !bad && seen[4] && seen[8] && seen[16] && seen[32]) }' "$tmp/sw-nodes.dat" &&
  ok || bad "sweep ideal line is not n / n0 at 4,8,16,32"
grep -q '(the fastest swept)' "$tmp/sw-nodes.gp" && grep -q "400 Gb/s per GPU" "$tmp/sw-nodes.gp" &&
  ok || bad "the nodes figure is not drawn at the fastest swept speed"
png sw-nodes
png sw-net

"$cs" predict "${W[@]}" --nodes 2,4,8 --plan "tp=8,mbs=1,gbs=512;zero=3,mbs=1,gbs=512" \
  --plot "$tmp/pr" --png >>"$tmp/discard" 2>"$tmp/pr.err" && ok || bad "predict --plot: $(cat "$tmp/pr.err")"
gp pr-speedup "cs_xlog = 1"
gp pr-speedup "cs_ylog = 1"
gp pr-speedup "cs_xtics = '2 4 8'"
gp pr-speedup "cs_ytics = '1 2 4'"
gp pr-breakdown "cs_share = 1"
png pr-speedup
png pr-breakdown

"$cs" size-network "${W[@]}" --nodes 8 --gbs 256 --family "tp+pp;zero3" --plot "$tmp/sz" --png -q \
  >>"$tmp/discard" 2>"$tmp/sz.err" && ok || bad "size-network --plot: $(cat "$tmp/sz.err")"
gp sz "cs_xlog = 1"
gp sz "cs_xtics = '12.5 50 200 800 3200 12800'"
# each answer (a measured block) lies on its family's curve (the predicted block of its group)
awk '/^# index/ { kind = $4; grp = $6 + 0; next } /^#/ || NF == 0 { next }
  kind == "predicted," { on[grp " " $1] = $2; next }
  kind == "measured," { n++; if (on[grp " " $1] == "" || on[grp " " $1] != $2) bad = 1 }
  END { exit !(n > 0 && !bad) }' "$tmp/sz.dat" && ok || bad "an answer is not on its curve"
png sz

echo "cli plots: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
