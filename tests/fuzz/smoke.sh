#!/usr/bin/env bash
# Builds the libFuzzer targets in their own clang tree (CS_FUZZ=ON: coverage + ASan + UBSan) and
# runs each one for a bounded time on its seed corpus — the real files that parser meets — then
# replays the regression corpus tests/fuzz/regress/<target>/ (inputs that once crashed). Any crash,
# sanitizer report, leak or broken invariant fails the run. Exits 77 (skipped) only when clang or
# libFuzzer is missing.
# usage: smoke.sh SOURCE_DIR BUILD_DIR [SECONDS_PER_TARGET]
#   FUZZ_TARGETS="units plan" limits the run to some targets; FUZZ_ARGS adds libFuzzer flags.
set -euo pipefail
src=$(cd "$1" && pwd) dir=$2 secs=${3:-10}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

cc=${FUZZ_CC:-clang}
probe=$dir/probe
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)(n & 0); }\n' \
  >"$probe.c"
if ! command -v "$cc" >>"$dir/discard" 2>&1 ||
   ! "$cc" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" >"$probe.log" 2>&1; then
  echo "fuzz smoke: skipped ($cc with libFuzzer unavailable; Debian: clang libclang-rt-14-dev)"
  exit 77
fi

CC=$cc cmake -S "$src" -B "$dir" -DCS_FUZZ=ON -DCS_SANITIZER_TEST=OFF -DCS_WITH_MPI=OFF \
  -DCS_WITH_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$dir/configure.log" 2>&1 ||
  { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j2 --target fuzz >"$dir/build.log" 2>&1 || { tail -50 "$dir/build.log"; exit 1; }

# seed corpora: the project's real inputs for each parser
seeds() {
  local d=$src/tests/data
  case $1 in
    nccltests) echo "$d/h200x2/*.log $d/nccltests/* $d/h200x2-commscale/*.log" ;;
    meas) echo "$d/h200x2-commscale/*.csv $d/h200x2/pytorch-collectives.csv" ;;
    calfile) echo "$d/calfile/*.yaml $src/tests/fuzz/seeds/calfile/*" ;;
    topology) echo "$src/topologies/*.yaml" ;;
    smi) echo "$d/h200x2/machine.txt $src/tests/fuzz/seeds/smi/*" ;;
    workload) echo "$src/model/workloads/*.yaml" ;;
    gpu) echo "$src/model/gpus/*.yaml" ;;
    plan) echo "$src/tests/fuzz/seeds/plan/*" ;;
    units) echo "$src/tests/fuzz/seeds/units/*" ;;
    framework) echo "$src/model/frameworks/*.yaml" ;;
    probe) echo "$d/h200-compute/*.csv $d/h100-compute/*.csv $d/h100-compute/run2/*.csv" ;;
    scenario) echo "$src/sim/scenarios/*.yaml" ;;
    # fuzz_steps: first byte even = a steps file, odd = a framework log (see fuzz_steps.c)
    steps) echo "$src/tests/fuzz/seeds/steps/*" ;;
  esac
}

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
targets=${FUZZ_TARGETS:-nccltests meas calfile topology smi workload gpu plan units framework probe scenario steps}
status=0
for t in $targets; do
  exe=$dir/tests/fuzz/fuzz_$t
  corpus=$dir/corpus/$t
  mkdir -p "$corpus"
  # each seed under a name made of its path: seeds of two folders may share a file name
  # shellcheck disable=SC2046 # the globs expand here on purpose
  for f in $(eval echo $(seeds "$t")); do
    cp "$f" "$corpus/$(printf '%s' "${f#"$src"/}" | tr '/' '_')"
  done
  reg=$src/tests/fuzz/regress/$t
  if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
    if ! "$exe" "$reg"/* >"$dir/$t.regress.log" 2>&1; then
      echo "fuzz $t: a regression input fails again"; tail -40 "$dir/$t.regress.log"; status=1; continue
    fi
  fi
  # shellcheck disable=SC2086
  if "$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$dir/crash-$t-" ${FUZZ_ARGS:-} "$corpus" >"$dir/$t.log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$t.log")
    echo "fuzz $t: ${runs:-?} executions in ${secs} s, no crash"
  else
    echo "fuzz $t: FAILED (input saved as $dir/crash-$t-*)"; tail -40 "$dir/$t.log"; status=1
  fi
done
exit $status
