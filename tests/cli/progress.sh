#!/usr/bin/env bash
# The progress line of the long verbs: drawn on stderr only when it is a terminal (script(1)
# gives the verb one), never with --quiet, never into a file or a pipe.
# usage: progress.sh COMMSCALE TMP_DIR
set -u
cs=$1 tmp=$2
rm -rf "$tmp" && mkdir -p "$tmp"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
W="-w gpt3-13b --gpu h100-sxm -t dgx-h100"
size="$cs size-network $W --nodes 8 --gbs 256 --family tp+pp -o $tmp/size.txt"
sweep="$cs sweep $W --nodes 4,8 --gbs 256 --net-gbps 100 --families tp+pp -o $tmp/sweep.txt"

# stderr to a file: no progress line (the notes only)
for v in size sweep; do
  ${!v} 2>"$tmp/$v.err" && ok || bad "$v failed: $(cat "$tmp/$v.err")"
  ! grep -q $'\r' "$tmp/$v.err" && ! grep -q '[0-9]/[0-9]' "$tmp/$v.err" && ok ||
    bad "$v drew progress into a file: $(cat -v "$tmp/$v.err")"
done

if command -v script >>"$tmp/discard" 2>&1; then
  # a terminal: the line is drawn, then erased
  script -qec "${size}" "$tmp/ts1" >"$tmp/size.tty" 2>&1 && ok || bad "size-network under script"
  grep -q 'size-network: 1/2' "$tmp/size.tty" && grep -q $'\r\033\\[K$' "$tmp/size.tty" && ok ||
    bad "size-network drew no progress on a terminal: $(cat -v "$tmp/size.tty")"
  script -qec "${sweep}" "$tmp/ts2" >"$tmp/sweep.tty" 2>&1 && ok || bad "sweep under script"
  grep -q 'sweep: 1/2 8 nodes' "$tmp/sweep.tty" && ok ||
    bad "sweep drew no progress on a terminal: $(cat -v "$tmp/sweep.tty")"
  script -qec "$cs search $W --nodes 8 --gbs 256 -n 1 -o $tmp/search.txt" "$tmp/ts4" \
    >"$tmp/search.tty" 2>&1 && ok || bad "search under script"
  grep -q 'search: 0/8 tp=1' "$tmp/search.tty" && ok ||
    bad "search drew no progress on a terminal: $(cat -v "$tmp/search.tty")"
  # --quiet: nothing
  script -qec "${size} --quiet" "$tmp/ts3" >"$tmp/quiet.tty" 2>&1 && ok || bad "--quiet run"
  ! grep -q 'size-network: [0-9]' "$tmp/quiet.tty" && ok ||
    bad "--quiet still drew progress: $(cat -v "$tmp/quiet.tty")"
fi

echo "cli progress: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
