#!/usr/bin/env bash
# The command-line tests again with every commscale run under valgrind memcheck: invalid reads and
# writes, uses of uninitialised values and definite or possible leaks make that run exit 99, which
# fails the script that ran it. Exits 77 (skipped) when valgrind is not installed.
# usage: valgrind.sh COMMSCALE SCRIPTS_DIR DATA_DIR TMP_DIR
set -u
cs=$1 scripts=$2 data=$3 tmp=$4
mkdir -p "$tmp"
command -v valgrind >>"$tmp/discard" 2>&1 || { echo "valgrind not installed: skipped"; exit 77; }
wrap=$tmp/commscale-memcheck
cat >"$wrap" <<WRAP
#!/usr/bin/env bash
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,possible \\
  "$cs" "\$@"
WRAP
chmod +x "$wrap"
status=0
for s in errors pipeline; do
  bash "$scripts/$s.sh" "$wrap" "$data" "$tmp/$s" || status=1
done
exit $status
