#!/usr/bin/env bash
# The public C API as a user meets it: `cmake --install` into a temporary prefix, the C example
# compiled against the installed tree with pkg-config (shared and static library), the Python
# ctypes example run on the installed .so, and their step time compared with the installed
# `commscale predict` for the same inputs (its CSV step_s). The workload is a copy placed only in
# the installed share/commscale, so the library must find its data there (not in the source tree).
# check_api.py then compares collective and search predictions with `commscale coll`/`search`
# and checks the error contract.
# usage: install.sh BUILD_DIR SOURCE_DIR TMP_DIR
set -u
build=$1 src=$2 tmp=$3
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
rm -rf "$tmp"
mkdir -p "$tmp"
cd "$tmp" || exit 1
unset COMMSCALE_DATA_DIR
prefix=$tmp/prefix
if ! cmake --install "$build" --prefix "$prefix" >install.log 2>&1; then
  cat install.log
  exit 1
fi
for f in include/commscale.h bin/commscale share/man/man1/commscale.1 \
  share/commscale/workloads/gpt3-175b.yaml share/commscale/gpus/h100-sxm.yaml \
  share/commscale/topologies/dgx-h100.yaml; do
  [ -f "$prefix/$f" ] || bad "cmake --install did not install $f"
done
pc=$(find "$prefix" -name commscale.pc | head -1)
[ -n "$pc" ] || { bad "no commscale.pc installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir commscale)
for f in libcommscale.so libcommscale.a; do
  [ -f "$libdir/$f" ] || bad "no $f in $libdir"
done
# only the API is exported from the shared library
extra=$(nm -D --defined-only "$libdir/libcommscale.so" | awk '{print $3}' | grep -v '^commscale_')
[ -z "$extra" ] || bad "libcommscale.so exports more than commscale_*: $(echo $extra | head -c 200)"

# a sanitized build (tests/sanitize.sh): the programs using the library need the same runtime
san="" py=python3
if ldd "$libdir/libcommscale.so" | grep -q libasan; then
  san="-fsanitize=address,undefined"
  py="env LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so):$(${CC:-cc} -print-file-name=libubsan.so) ASAN_OPTIONS=detect_leaks=0 python3"
fi
cp "$prefix/share/commscale/workloads/gpt3-175b.yaml" \
  "$prefix/share/commscale/workloads/api-install-check.yaml"
cc=${CC:-cc}
# shellcheck disable=SC2046 # pkg-config's flags are words
$cc -std=c11 -Wall -Wextra -Werror $san "$src/sim/examples/predict_step.c" -o predict_step \
  $(pkg-config --cflags --libs commscale) -Wl,-rpath,"$libdir" || bad "C example (shared) did not build"
# shellcheck disable=SC2046
$cc -std=c11 -Wall -Wextra -Werror $san "$src/sim/examples/predict_step.c" -o predict_step_static \
  $(pkg-config --cflags commscale) "$libdir/libcommscale.a" \
  $(pkg-config --static --libs-only-l commscale | sed 's/-lcommscale//') ||
  bad "C example (static) did not build"
ldd ./predict_step | grep -q "$libdir/libcommscale.so" || bad "predict_step does not load $libdir"
ldd ./predict_step_static | grep -q libcommscale && bad "predict_step_static loads libcommscale.so"

# a fitted calibration, made by the installed tool from the bundled 2 x H200 logs
d=$src/tests/data/h200x2
"$prefix/bin/commscale" import "$d/nccl-tests-single-process.log" "$d/nccl-tests-mpirun.log" \
  -o meas.csv 2>>"$tmp/discard" && "$prefix/bin/commscale" fit meas.csv -o cal.yaml >>"$tmp/discard" 2>&1 ||
  bad "import/fit for the calibration failed"

step_of() { # the step_s column of the first row of predict's CSV
  python3 -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))["step_s"])' "$1"
}
field() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
compare() { # plan nodes [cal]
  local plan=$1 nodes=$2 cal=${3:-} args=()
  [ -n "$cal" ] && args=(--cal "$cal")
  "$prefix/bin/commscale" predict -w api-install-check --gpu h100-sxm -t dgx-h100 --plan "$plan" \
    --nodes "$nodes" "${args[@]}" --format csv >predict.csv 2>>"$tmp/discard" || bad "predict $plan failed"
  local want
  want=$(step_of predict.csv)
  [ -n "$want" ] || bad "no step_s in predict's CSV for $plan"
  # a statically linked program finds the data beside its executable or through COMMSCALE_DATA_DIR
  for ex in ./predict_step "env COMMSCALE_DATA_DIR=$prefix/share/commscale ./predict_step_static" "$py $src/sim/examples/predict_step.py --lib $libdir/libcommscale.so"; do
    # shellcheck disable=SC2086 # ex holds a command and its arguments
    if ! $ex api-install-check h100-sxm dgx-h100 "$plan" "$nodes" $cal >out.txt 2>err.txt; then
      bad "$ex $plan $nodes $cal: $(cat err.txt)"
      continue
    fi
    local got
    got=$(field step_s out.txt)
    if [ "$got" != "$want" ]; then
      bad "$ex $plan on $nodes nodes ${cal:+($cal)}: step $got s, commscale predict says $want s"
    else
      echo "ok: ${ex##* ./} $plan, $nodes nodes${cal:+, $cal}: step $got s = commscale predict's"
    fi
  done
}
compare "tp=8,pp=8,zero=1,mbs=1,gbs=3200" 16
compare "tp=8,pp=8,zero=1,mbs=1,gbs=3200" 400 cal.yaml
compare "zero=3,recompute=full,mbs=1,gbs=3200" 100 cal.yaml

$py "$src/tests/api/check_api.py" "$libdir/libcommscale.so" "$prefix/bin/commscale" cal.yaml \
  "$src/sim/examples" || bad "check_api.py"
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "api install: all checks passed"
