#!/usr/bin/env bash
# The long fuzzing run (not part of CI): after smoke.sh has built BUILD_DIR and seeded its corpora,
# runs each target, one at a time on one core, until it has executed RUNS inputs or spent SECONDS,
# restarting after a crash (each crashing input is kept as BUILD_DIR/crash-TARGET-*). Prints one
# line per target: executions, seconds, crashes.
# usage: long.sh BUILD_DIR RUNS SECONDS TARGET...   (LONG_ARGS adds libFuzzer flags, e.g.
#   LONG_ARGS=-max_len=4096 to keep the inputs of the log parsers small and the runs fast)
set -uo pipefail
dir=$(cd "$1" && pwd) runs=$2 secs=$3
shift 3
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "$@"; do
  exe=$dir/tests/fuzz/fuzz_$t
  done_runs=0 crashes=0 start=$SECONDS
  while [ "$done_runs" -lt "$runs" ] && [ $((SECONDS - start)) -lt "$secs" ]; do
    left=$((secs - (SECONDS - start)))
    "$exe" -runs=$((runs - done_runs)) -max_total_time=$left -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$dir/crash-$t-" ${LONG_ARGS:-} "$dir/corpus/$t" >"$dir/long-$t.log" 2>&1
    rc=$?
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/long-$t.log" | tail -1)
    done_runs=$((done_runs + ${n:-0}))
    if [ $rc -ne 0 ]; then
      crashes=$((crashes + 1))
      cp "$dir/long-$t.log" "$dir/long-$t.crash$crashes.log"
      [ "$crashes" -ge 20 ] && break
    fi
  done
  echo "fuzz $t: $done_runs executions in $((SECONDS - start)) s, $crashes crashes"
done
