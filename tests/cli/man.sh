#!/usr/bin/env bash
# man.sh -- commscale --man: the man page written from the same option tables as --help. Every
# verb that `commscale --help` lists has its section, every option that a verb's --help prints
# appears in that section, and groff (when installed) reads the page without a warning.
# usage: man.sh COMMSCALE TMP_DIR
set -u
cs=$1 tmp=$2
mkdir -p "$tmp"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

"$cs" --man >"$tmp/commscale.1" 2>"$tmp/man.err" && ok || bad "commscale --man failed: $(cat "$tmp/man.err")"
head -1 "$tmp/commscale.1" | grep -q '^\.TH COMMSCALE 1 ' && ok || bad "no .TH line"
verbs=$("$cs" --help | awk '/^verbs:/ { on = 1; next } on && NF == 0 { on = 0 } on { print $1 }')
[ "$(echo "$verbs" | wc -w)" -ge 14 ] && ok || bad "commscale --help lists only: $verbs"
for v in $verbs; do
  grep -q "^\.SS \"$v\"" "$tmp/commscale.1" && ok || { bad "no section for $v"; continue; }
  [ "$v" = calibrate ] && continue # its options are commscale-run's, which the page points to
  # the section: from its .SS line to the next .SS or .SH
  awk -v v="$v" '$0 == ".SS \"" v "\"" { on = 1; next } on && /^\.S[SH] / { on = 0 } on' \
    "$tmp/commscale.1" | sed 's/\\-/-/g' >"$tmp/sec-$v.txt"
  for o in $("$cs" "$v" --help | grep -oE -- '--[a-z][a-z0-9-]*' | grep -vx -- --help | sort -u); do
    grep -q -- "$o" "$tmp/sec-$v.txt" || bad "$v: option $o of --help missing from the man page"
  done
  ok
done
if command -v groff >>"$tmp/discard"; then
  warn=$(groff -man -ww -z "$tmp/commscale.1" 2>&1)
  [ -z "$warn" ] && ok || bad "groff warnings: $(echo "$warn" | head -3)"
fi
echo "man: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
