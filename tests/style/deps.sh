#!/usr/bin/env bash
# deps.sh -- the include graph keeps the layering that the build relies on:
#   1. no include cycle between modules (a module is NAME.c + NAME.h; tsort finds the loops);
#   2. the measurement runner and the measurement CSVs (calibrate/runner, calibrate/meas), which
#      build on GPU nodes with nothing but libc, CUDA, NCCL and MPI, include no header of the
#      models: only their own folders' headers and those of cs_core (passed in, from its sources).
# usage: deps.sh SOURCE_DIR "CORE_SOURCE;CORE_SOURCE;..."
set -u
src=${1:?usage: deps.sh SOURCE_DIR CORE_SOURCES}
core=${2:?usage: deps.sh SOURCE_DIR CORE_SOURCES}
cd "$src" || exit 1
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files '*.c' '*.h' | grep -v '^tests/')
else
  files=$(find calibrate model sim topologies plots -name '*.c' -o -name '*.h')
fi
bad=0

# 1. module cycles
edges=$(for f in $files; do
  m=$(basename "${f%.*}")
  sed -n 's/^#include "\([^"]*\)\.h".*/\1/p' "$f" | while read -r d; do
    d=$(basename "$d")
    [ "$d" != "$m" ] && echo "$m $d"
  done
done | sort -u)
if ! out=$(printf '%s\n' "$edges" | tsort 2>&1 >/dev/null); then
  echo "deps: include cycle between modules:"
  printf '%s\n' "$out" | sed 's/^/  /'
  bad=1
fi

# 2. runner and measurement CSVs: own folders and cs_core only
allowed=" "
for s in ${core//;/ }; do
  b=$(basename "$s")
  allowed+="${b%.*}.h "
done
core_h=$allowed
for d in calibrate/meas calibrate/runner; do
  for f in "$d"/*.[ch]; do
    allowed+="$(basename "$f") "
  done
done
for f in calibrate/meas/*.[ch] calibrate/runner/*.[ch]; do
  while IFS=: read -r line inc; do
    h=$(basename "$inc")
    case "$allowed" in
    *" $h "*) ;;
    *)
      echo "deps: $f:$line: includes \"$inc\", which is neither in calibrate/meas, calibrate/runner nor cs_core"
      bad=1
      ;;
    esac
  done < <(grep -n '^#include "' "$f" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/')
done
n=$(printf '%s\n' "$edges" | grep -c .)
echo "deps: $(echo "$files" | wc -w) files, $n module edges, cs_core headers:$core_h"
exit $bad
