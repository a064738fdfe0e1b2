#!/usr/bin/env bash
# sizes.sh -- the largest functions and source files outside tests/, against issue 13's limits:
# every verb (cs_cmd_* in sim/cli) <= 100 lines, every function <= 120 lines, every source file
# <= 1000 lines. Function extents come from universal-ctags (--fields=+ne: line and end).
# usage: sizes.sh SOURCE_DIR [N] [--check]   (N largest of each, default 5; --check: exit 1 over a
# limit, listing each). SIZES_DIRS (space-separated folders, default all) limits what is read;
# SIZES_EXEMPT (space-separated) lists what is printed but not held to the limits: FILE exempts the
# file and every function in it, FILE:FUNCTION that one function. An exemption that is no longer
# needed is named on a "note:" line (not a failure), so that it can be dropped.
set -u
src=${1:?usage: sizes.sh SOURCE_DIR [N] [--check]}
n=${2:-5}
check=0
[ "${3:-}" = --check ] && check=1
ctags=$(command -v ctags || true)
[ -n "$ctags" ] && "$ctags" --version 2>&1 | grep -q Universal ||
  { echo "sizes: universal-ctags not installed: skipped"; exit 77; }
cd "$src" || exit 1
if [ "$(git rev-parse --is-inside-work-tree 2>&1)" = true ]; then
  files=$(git ls-files '*.c' '*.h' | grep -v '^tests/')
else
  files=$(find calibrate model sim topologies plots -name '*.c' -o -name '*.h')
fi
if [ -n "${SIZES_DIRS:-}" ]; then
  keep=""
  for f in $files; do for d in $SIZES_DIRS; do case $f in "$d"/*) keep="$keep $f" ;; esac; done; done
  files=$keep
fi
EXEMPT=${SIZES_EXEMPT:-}
funcs=$("$ctags" --c-kinds=f --fields=+ne -o - $files |
  awk -F'\t' '{ l = e = 0; for (i = 4; i <= NF; i++) { if ($i ~ /^line:/) l = substr($i, 6);
    if ($i ~ /^end:/) e = substr($i, 5) } if (l && e) printf "%d\t%s\t%s:%d\n", e - l + 1, $1, $2, l }' |
  sort -rn)
sizes=$(wc -l $files | grep -v ' total$' | sort -rn)
echo "largest $n functions (lines, name, file:line):"
printf '%s\n' "$funcs" | head -n "$n" | sed 's/^/  /'
echo "largest $n source files (lines, file):"
printf '%s\n' "$sizes" | head -n "$n" | sed 's/^ */  /'
[ "$check" -eq 1 ] || exit 0
bad=0
used=" "
exempt() { for x in $EXEMPT; do [ "$1" = "$x" ] && { used="$used$x "; return 0; }; done; return 1; }
while IFS=$'\t' read -r len name where; do
  [ -n "$len" ] || continue
  f=${where%:*}
  lim=120
  case "$f:$name" in sim/cli/*:cs_cmd_*) lim=100 ;; esac
  [ "$len" -gt "$lim" ] || continue
  if exempt "$f" || exempt "$f:$name"; then
    echo "exempt: $name ($len lines, limit $lim) at $where"
  else
    echo "over $lim lines: $name ($len) at $where"
    bad=1
  fi
done <<<"$funcs"
while read -r len f; do
  [ -n "$len" ] && [ "$len" -gt 1000 ] || continue
  if exempt "$f"; then
    echo "exempt: $f ($len lines, limit 1000)"
  else
    echo "over 1000 lines: $f ($len)"
    bad=1
  fi
done <<<"$sizes"
for x in $EXEMPT; do
  case $used in *" $x "*) ;; *) echo "note: SIZES_EXEMPT names $x, which is within the limits: drop it" ;; esac
done
exit "$bad"
