#!/usr/bin/env bash
# deps.sh -- the include graph keeps the layering that the build relies on:
#   1. no include cycle between modules (a module is NAME.c + NAME.h, and a private NAME_impl.h
#      shared by its files counts as NAME; tsort finds the loops);
#   2. the measurement runner and the measurement CSVs (calibrate/runner, calibrate/meas), which
#      build on GPU nodes with nothing but libc, CUDA, NCCL and MPI, include no header of the
#      models: only their own folders' headers and those of cs_core (passed in, from its sources);
#      the CSVs, below the runner, include none of the runner's.
# usage: deps.sh SOURCE_DIR "CORE_SOURCE;CORE_SOURCE;..."
set -u
src=${1:?usage: deps.sh SOURCE_DIR CORE_SOURCES}
core=${2:?usage: deps.sh SOURCE_DIR CORE_SOURCES}
cd "$src" || exit 1
if [ "$(git rev-parse --is-inside-work-tree 2>&1)" = true ]; then
  files=$(git ls-files '*.c' '*.h' | grep -v '^tests/')
else
  files=$(find calibrate model sim topologies plots -name '*.c' -o -name '*.h')
fi
bad=0

# 1. module cycles
edges=$(for f in $files; do
  m=$(basename "${f%.*}")
  m=${m%_impl}
  sed -n 's/^#include "\([^"]*\)\.h".*/\1/p' "$f" | while read -r d; do
    d=$(basename "$d")
    d=${d%_impl}
    [ "$d" != "$m" ] && echo "$m $d"
  done
done | sort -u)
if ! sorted=$(printf '%s\n' "$edges" | tsort 2>&1); then
  out=$(printf '%s\n' "$sorted" | grep '^tsort:')
  echo "deps: include cycle between modules:"
  printf '%s\n' "$out" | sed 's/^/  /'
  bad=1
fi

# 2. the measurement CSVs: their own folder and cs_core; the runner: those and its own folder
core_h=" "
for s in ${core//;/ }; do
  b=$(basename "$s")
  core_h+="${b%.*}.h "
done
names() { for f in "$@"; do printf '%s ' "$(basename "$f")"; done; }
meas_h="$core_h$(names calibrate/meas/*.[ch])"
runner_h="$meas_h$(names calibrate/runner/*.[ch])"
check_dir() { # DIR ALLOWED WHAT
  for f in "$1"/*.[ch]; do
    while IFS=: read -r line inc; do
      case "$2" in
      *" $(basename "$inc") "*) ;;
      *)
        echo "deps: $f:$line: includes \"$inc\", which is not in $3"
        bad=1
        ;;
      esac
    done < <(grep -n '^#include "' "$f" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/')
  done
}
check_dir calibrate/meas "$meas_h" "calibrate/meas or cs_core"
check_dir calibrate/runner "$runner_h" "calibrate/runner, calibrate/meas or cs_core"
n=$(printf '%s\n' "$edges" | grep -c .)
echo "deps: $(echo "$files" | wc -w) files, $n module edges, cs_core headers:$core_h"
exit $bad
