#!/usr/bin/env bash
# format.sh -- every C source and header of the repository is as .clang-format lays it out
# (STYLE.md: "A .clang-format checked in CI"). Prints the files that differ with the first lines
# of the difference, and how to fix them. Exit 77 (skipped) without clang-format.
# usage: format.sh SOURCE_DIR
set -u
src=${1:?usage: format.sh SOURCE_DIR}
cf=$(command -v clang-format || command -v clang-format-14 || true)
[ -n "$cf" ] || { echo "format: clang-format not installed: skipped"; exit 77; }
cd "$src" || exit 1
if [ "$(git rev-parse --is-inside-work-tree 2>&1)" = true ]; then
  files=$(git ls-files '*.c' '*.h')
else
  files=$(find calibrate model sim topologies plots tests -name '*.c' -o -name '*.h')
fi
# one clang-format process checks every file (--dry-run --Werror names each misformatted line);
# the per-file diff is printed only for the files it names
n=0 list=()
for f in $files; do
  [ -f "$f" ] && { list+=("$f"); n=$((n + 1)); }
done
report=$("$cf" --style=file --dry-run --Werror "${list[@]}" 2>&1)
bad_files=$(printf '%s\n' "$report" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
bad=0
for f in $bad_files; do
  bad=$((bad + 1))
  echo "format: $f differs from clang-format's layout:"
  "$cf" --style=file "$f" | diff "$f" - | head -8
done
if [ "$bad" -eq 0 ] && [ -n "$report" ]; then
  echo "format: clang-format failed: $(printf '%s\n' "$report" | head -3)"
  exit 1
fi
echo "format: $n files checked, $bad not formatted"
[ "$bad" -eq 0 ] || { echo "format: fix with: clang-format -i \$(git ls-files '*.c' '*.h')"; exit 1; }
