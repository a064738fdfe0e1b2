#!/usr/bin/env bash
# parallel.sh -- the long fuzzing run spread over many cores (not part of CI): WORKERS libFuzzer
# processes per target, each on its own copy of the corpus that smoke.sh seeded, restarted after a
# crash until SECONDS pass. Prints per target the sum of the workers' stat::number_of_executed_units
# and the crashes; crashing inputs and their logs go to OUT_DIR.
# usage: parallel.sh DIR SECONDS TARGET:WORKERS...
#   DIR holds the fuzz binaries (DIR/bin/fuzz_TARGET, or DIR/tests/fuzz/fuzz_TARGET of a fuzz
#   build) and the seeded corpora (DIR/corpus/TARGET); DIR/lib, when present, is searched for
#   shared libraries first (libgsl, libyaml carried to a machine without them). OUT_DIR (default
#   $OUT, else DIR/parallel-out) receives summary.txt, crash-* inputs and crashlog-* logs.
set -uo pipefail
dir=$(cd "$1" && pwd) secs=$2
shift 2
bin=$dir/bin
[ -d "$bin" ] || bin=$dir/tests/fuzz
[ -d "$dir/lib" ] && export LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
out=${OUT_DIR:-${OUT:-$dir/parallel-out}}
work=$(mktemp -d)
mkdir -p "$out"
worker() { # TARGET W
  local t=$1 w=$2 start=$SECONDS k=0 rc n
  cp -r "$dir/corpus/$t" "$work/$t-$w"
  while [ $((SECONDS - start)) -lt "$secs" ]; do
    k=$((k + 1))
    "$bin/fuzz_$t" -max_total_time=$((secs - (SECONDS - start))) -timeout=10 -rss_limit_mb=2048 \
      -max_len=4096 -print_final_stats=1 -artifact_prefix="$out/crash-$t-$w-" "$work/$t-$w" \
      >"$work/$t-$w.$k.log" 2>&1
    rc=$?
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t-$w.$k.log" | tail -1)
    echo "$t $w ${n:-0} $rc" >>"$work/results"
    [ "$rc" -ne 0 ] && cp "$work/$t-$w.$k.log" "$out/crashlog-$t-$w-$k.log"
  done
}
for spec in "$@"; do
  t=${spec%%:*} n=${spec##*:}
  [ -x "$bin/fuzz_$t" ] && [ -d "$dir/corpus/$t" ] || { echo "parallel.sh: no fuzz_$t or corpus/$t in $dir"; exit 2; }
  for w in $(seq 1 "$n"); do worker "$t" "$w" & done
done
wait
awk -v secs="$secs" '{ e[$1] += $3; if ($4 != 0) c[$1]++; if ($2 > nw[$1]) nw[$1] = $2 } END {
  for (t in e) printf "fuzz %s: %d executions in %d s, %d workers, %d crashes\n", t, e[t], secs, nw[t], c[t] + 0 }' \
  "$work/results" | sort | tee "$out/summary.txt"
echo "# $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" | tee -a "$out/summary.txt"
rm -rf "$work"
