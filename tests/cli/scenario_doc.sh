#!/usr/bin/env bash
# docs/scenario.md lists exactly the scenario keys of report's schema table (report --help prints
# the table), and an unknown key is an error at its file:line:col.
# usage: scenario_doc.sh COMMSCALE DOC TMP_DIR
set -u
cs=$1 doc=$2 tmp=$3
rm -rf "$tmp" && mkdir -p "$tmp"
fail=0
"$cs" report --help 2>&1 | sed -n '/Scenario keys/,$p' | awk 'NR > 1 && NF { print $1 }' | sort >"$tmp/schema"
sed -n '/^| key |/,/^$/p' "$doc" | sed -n 's/^| `\([a-z_]*\)` |.*/\1/p' | sort >"$tmp/doc"
[ -s "$tmp/schema" ] || { echo "FAIL: no keys in report --help"; fail=1; }
if ! diff "$tmp/schema" "$tmp/doc" >"$tmp/diff"; then
  echo "FAIL: docs/scenario.md and the schema differ (< schema, > doc):"; cat "$tmp/diff"; fail=1
fi
printf 'version: 1\nworkload: gpt2-124m\ngpu: h100-sxm\ntopology: dgx-h100\nnodes: 1\ngbs: 16\ntarget: eff=0.8\nfamilys: "fsdp"\n' >"$tmp/s.yaml"
"$cs" report "$tmp/s.yaml" -o "$tmp/rep" 2>"$tmp/err"
grep -q "s.yaml:8:1: unknown key \"familys\"" "$tmp/err" || { echo "FAIL: $(cat "$tmp/err")"; fail=1; }
printf 'version: 1\nworkload: gpt2-124m\ngpu: h100-sxm\ntopology: dgx-h100\nnodes: 1\ngbs: 16\ntarget: eff=0.8\nfamilies: "a=tq=1"\n' >"$tmp/f.yaml"
"$cs" report "$tmp/f.yaml" -o "$tmp/rep" 2>"$tmp/err2"
grep -q "f.yaml:8:11: families: family \"a\": unknown key \"tq\"" "$tmp/err2" || { echo "FAIL: $(cat "$tmp/err2")"; fail=1; }
[ "$fail" -eq 0 ] && echo "scenario doc: ok"
[ "$fail" -eq 0 ]
