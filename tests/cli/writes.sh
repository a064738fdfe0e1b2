#!/usr/bin/env bash
# Output that never loses data (docs/outputs.md), end to end on the real commscale binary: one
# block per rule, each over several verbs.
#   full device      -o DEV (a private `mknod c 1 7`, never the system's /dev/full) and stdout
#                    redirected to it: exit 1, "PATH: cannot write: No space left on device", the
#                    node still a character device
#   full file system a 64 KiB tmpfs filled up (root and a working `mount` only, else skipped with
#                    the reason): exit 1, the old file byte for byte, no temporary left
#   symlink          the link kept, its target holding the new output, nothing left beside either
#   FIFO             written through (a reader gets exactly the output), the FIFO still a FIFO
#   unwritable dir   a read-only tmpfs (root) or a 0555 directory (not root), and a missing one:
#                    exit 1 naming the path
#   SIGTERM          a slow predict killed mid-run: dies of SIGTERM, old file intact, no temporary
#   two writers      two coll runs into one file, three times: the file is one run's complete
#                    output, never a mix
#   formats          every JSON output parses (python3 -m json.tool, and no NaN/Infinity), every
#                    CSV has one width (python3's csv module)
# usage: writes.sh COMMSCALE DATA_DIR TMP_DIR
set -u
cs=$1 data=$2 tmp=$3
mkdir -p "$tmp"
umount "$tmp/small" "$tmp/ro" 2>>"$tmp/discard" # left mounted by a run that was killed
rm -rf "$tmp"
mkdir -p "$tmp"
pass=0 fail=0 skipped=0
ok() { pass=$((pass + 1)); }
bad() {
  fail=$((fail + 1))
  echo "FAIL: $*"
}
skip() {
  skipped=$((skipped + 1))
  echo "SKIP: $*"
}
h=$data/h200x2
W=(-w gpt2-124m --gpu h100-sxm -t dgx-h100)
P=(--plan "tp=4,mbs=1,gbs=64")

# the verbs under test, each as "name|arguments before -o"; the output name's suffix picks a format
verbs=(
  "coll|coll --nodes 1:64 --sizes 8:1G"
  "predict|predict ${W[*]} --plan tp=4,mbs=1,gbs=64 --nodes 1,2,4"
  "search|search ${W[*]} --nodes 2 --gbs 64 -n 0"
  "sweep|sweep ${W[*]} --nodes 1,2 --gbs 16"
  "workload|workload --workload gpt3-175b --plan tp=8,pp=8,dp=16,zero=1 --gpu a100-80gb"
  "topology-show|topology show dgx-h100"
  "topology-map|topology map dgx-h100 --sizes tp=8,dp=4 --group dp"
  "validate|validate --section 5 --bounds"
  "fit|fit $h/nccl-tests-mpirun.log -q --no-cv"
  "import|import $h/nccl-tests-mpirun.log"
  "import-smi|topology import-smi $h/machine.txt"
  "size-network|size-network -w gpt3-1.3b --gpu h100-sxm -t dgx-h100 --nodes 2 --gbs 32"
)
# run VERBSPEC OUT [extra args]: runs the verb with -o OUT; stderr in $tmp/err, status in $rc
run() {
  local spec=$1 out=$2
  shift 2
  # shellcheck disable=SC2086 # the arguments split on purpose
  timeout 120 "$cs" ${spec#*|} -o "$out" "$@" >"$tmp/stdout" 2>"$tmp/err"
  rc=$?
}
name() { printf '%s' "${1%%|*}"; }
# leftovers DIR: prints the temporaries commscale left in DIR
leftovers() { find "$1" -maxdepth 1 \( -name '*.tmp*' -o -name '*.old*' \) -print; }

# ---- references: every verb into a regular file, then the format checks ----------------------
mkdir -p "$tmp/ref"
for v in "${verbs[@]}"; do
  n=$(name "$v")
  run "$v" "$tmp/ref/$n.out"
  [ "$rc" -eq 0 ] && [ -s "$tmp/ref/$n.out" ] && ok || bad "$n: reference run: status $rc: $(cat "$tmp/err")"
done
[ -z "$(leftovers "$tmp/ref")" ] && ok || bad "temporaries left: $(leftovers "$tmp/ref")"
n_verbs=${#verbs[@]}

json_ok() { # FILE: parses, and holds no NaN or Infinity (JSON has no such numbers)
  python3 -m json.tool "$1" >>"$tmp/discard" 2>"$tmp/json.err" &&
    python3 -c 'import json, sys
def no(c): sys.exit("non-finite number " + c)
json.load(open(sys.argv[1]), parse_constant=no)' "$1" 2>>"$tmp/json.err"
}
csv_ok() { # FILE: one width over every row that is not a # comment
  python3 -c 'import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1], newline="") if not l.startswith("#"))]
w = {len(r) for r in rows}
sys.exit(0 if len(w) == 1 and len(rows) > 1 else "widths %s over %d rows" % (w, len(rows)))' "$1" 2>"$tmp/csv.err"
}
js() { # SPEC FILE.json [extra]: runs the verb into a JSON file and checks it
  run "$1" "$2" "${@:3}"
  [ "$rc" -eq 0 ] && json_ok "$2" && ok || bad "$(name "$1") ${*:3} JSON: status $rc $(cat "$tmp/err" "$tmp/json.err")"
}
cv() { # SPEC FILE.csv [extra]
  run "$1" "$2" "${@:3}"
  [ "$rc" -eq 0 ] && csv_ok "$2" && ok || bad "$(name "$1") ${*:3} CSV: status $rc $(cat "$tmp/err" "$tmp/csv.err")"
}
f=$tmp/fmt
mkdir -p "$f"
for v in "${verbs[@]:0:5}" "${verbs[7]}" "${verbs[11]}"; do # coll predict search sweep workload validate size-network
  js "$v" "$f/$(name "$v").json"
  cv "$v" "$f/$(name "$v").csv"
done
js "${verbs[6]}" "$f/map.json" --format json
js "${verbs[4]}" "$f/layers.json" --layers
cv "${verbs[4]}" "$f/w.csv" --layers
csv_ok "$f/w.layers.csv" && ok || bad "workload --layers: the layer CSV: $(cat "$tmp/csv.err")"
grep -q '^"gpt3-175b"' "$f/w.csv" && ! grep -q '^"layer"\|^layer' "$f/w.csv" && ok ||
  bad "workload --layers -o w.csv: the summary CSV holds the layer table too"
"$cs" workload --workload gpt2-124m --gpu h100-sxm --layers --format csv >>"$tmp/discard" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'needs -o FILE.csv' "$tmp/err" && ok || bad "workload --layers --format csv to stdout: $(cat "$tmp/err")"
fit=(fit "$h/nccl-tests-single-process.log" "$h/nccl-tests-mpirun.log" --no-cv -o "$f/cal.yaml")
"$cs" "${fit[@]}" --report --nccl-log "$h/nccl-tests-tuning-debug.log" --format json >"$f/fit.json" 2>>"$tmp/discard"
json_ok "$f/fit.json" && python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["parameters"] and d["points"] and d["shapes"] and "quality" in d else "fields")' "$f/fit.json" &&
  ok || bad "fit --format json: $(cat "$tmp/json.err")"
"$cs" "${fit[@]}" --report --format csv >"$f/fit.csv" 2>>"$tmp/discard" && csv_ok "$f/fit.csv" && ok ||
  bad "fit --report --format csv: $(cat "$tmp/csv.err")"
"$cs" "${fit[@]}" --format csv >"$f/fitp.csv" 2>>"$tmp/discard" && csv_ok "$f/fitp.csv" &&
  head -1 "$f/fitp.csv" | grep -q '^parameter,value,unit,rel_se$' && ok || bad "fit --format csv: $(cat "$tmp/csv.err")"
# validate's status holds a comma ("MISS (known, within bound)"): quoted, so the widths hold
"$cs" validate --section 5 -o "$f/v5.csv" 2>>"$tmp/discard"
csv_ok "$f/v5.csv" && ok || bad "validate --section 5 CSV: $(cat "$tmp/csv.err")"

# ---- full device: a private node, never the system's /dev/full --------------------------------
d=$tmp/dev
mkdir -p "$d"
if mknod "$d/full" c 1 7 2>"$tmp/err"; then
  for v in "${verbs[@]}"; do
    run "$v" "$d/full"
    [ "$rc" -eq 1 ] && grep -q "$d/full: cannot write: No space left on device" "$tmp/err" &&
      [ -c "$d/full" ] && ok || bad "$(name "$v") -o full device: status $rc, $(cat "$tmp/err"), $(stat -c %F "$d/full")"
  done
  # stdout on the full device: the verbs, --help, --man and the lists
  for args in "coll --nodes 1:64 --sizes 8:1G" "predict ${W[*]} ${P[*]} --nodes 1,2" "search ${W[*]} --nodes 2 --gbs 64 -n 0" \
    "--help" "--man" "coll --help" "workload --list" "topology list" "validate --section 5 --bounds"; do
    # shellcheck disable=SC2086
    timeout 120 "$cs" $args >"$d/full" 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 1 ] && grep -q "standard output: cannot write: No space left on device" "$tmp/err" && ok ||
      bad "commscale $args > full device: status $rc, $(cat "$tmp/err")"
  done
  "$cs" fit "$h/nccl-tests-mpirun.log" --no-cv -o "$d/cal.yaml" --report >"$d/full" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -q "standard output: cannot write" "$tmp/err" && ok || bad "fit --report > full: status $rc"
  [ -z "$(leftovers "$d")" ] && ok || bad "temporaries left beside the device: $(leftovers "$d")"
else
  skip "full device: mknod needs root ($(cat "$tmp/err"))"
fi

# ---- full file system: a 64 KiB tmpfs ---------------------------------------------------------
s=$tmp/small
mkdir -p "$s"
if [ "$(id -u)" -ne 0 ]; then
  skip "full file system: mounting a tmpfs needs root"
elif ! mount -t tmpfs -o size=64k tmpfs "$s" 2>"$tmp/err"; then
  skip "full file system: mount -t tmpfs failed: $(cat "$tmp/err")"
else
  trap 'umount "$s" 2>>"$tmp/discard"' EXIT
  for v in "${verbs[0]}" "${verbs[1]}" "${verbs[2]}" "${verbs[4]}" "${verbs[5]}" "${verbs[8]}" "${verbs[9]}"; do
    n=$(name "$v")
    rm -f "$s"/*
    printf 'OLD %s output\n' "$n" >"$s/old.$n"
    cp "$s/old.$n" "$tmp/old.copy"
    dd if=/dev/zero of="$s/filler" bs=1k count=200 2>>"$tmp/discard" # fills it: ENOSPC expected
    # coll's output is far larger than what is left; the others too once the filler takes it all
    run "$v" "$s/old.$n"
    [ "$rc" -eq 1 ] && grep -q "$s/old.$n: cannot write: No space left on device" "$tmp/err" &&
      cmp -s "$s/old.$n" "$tmp/old.copy" && [ -z "$(leftovers "$s")" ] && ok ||
      bad "$n on a full file system: status $rc, $(cat "$tmp/err"), old file $(cmp "$s/old.$n" "$tmp/old.copy" 2>&1 && echo kept), left: $(leftovers "$s")"
  done
  rm -f "$s"/*
  dd if=/dev/zero of="$s/filler" bs=1k count=200 2>>"$tmp/discard"
  "$cs" coll --nodes 1:64 --sizes 8:1G >"$s/stdout.txt" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -q "standard output: cannot write: No space left on device" "$tmp/err" && ok ||
    bad "coll > file on a full file system: status $rc, $(cat "$tmp/err")"
  umount "$s"
  trap - EXIT
fi

# ---- symlinks: kept, the target replaced ------------------------------------------------------
l=$tmp/link
for v in "${verbs[@]}"; do
  n=$(name "$v")
  mkdir -p "$l/$n/target"
  printf 'OLD\n' >"$l/$n/target/file"
  ln -s target/file "$l/$n/link"
  run "$v" "$l/$n/link"
  [ "$rc" -eq 0 ] && [ -L "$l/$n/link" ] && ! grep -q '^OLD$' "$l/$n/target/file" &&
    [ -s "$l/$n/target/file" ] && [ -z "$(leftovers "$l/$n")$(leftovers "$l/$n/target")" ] && ok ||
    bad "$n -o symlink: status $rc, link $(stat -c %F "$l/$n/link"), target $(head -c 40 "$l/$n/target/file")"
done

# plots (.dat, .gp and the image) follow the same rules: a symlinked image is kept, its target
# redrawn; an image on the full device fails with the path
mkdir -p "$l/plot/t"
printf 'OLD\n' >"$l/plot/t/img.svg"
ln -s t/img.svg "$l/plot/p-speedup.svg"
"$cs" predict "${W[@]}" "${P[@]}" --nodes 1,2,4 --plot "$l/plot/p" >>"$tmp/discard" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] && [ -L "$l/plot/p-speedup.svg" ] && grep -q '<svg' "$l/plot/t/img.svg" &&
  [ -z "$(leftovers "$l/plot")" ] && ok || bad "predict --plot onto a symlinked image: status $rc, $(cat "$tmp/err")"
if [ -c "$d/full" ]; then
  rm -f "$l/plot/p-breakdown.svg"
  ln -s "$(cd "$d" && pwd)/full" "$l/plot/p-breakdown.svg"
  "$cs" predict "${W[@]}" "${P[@]}" --nodes 1,2,4 --plot "$l/plot/p" >>"$tmp/discard" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 1 ] && grep -q "p-breakdown.svg: cannot write: No space left on device" "$tmp/err" && [ -c "$d/full" ] &&
    [ -z "$(leftovers "$l/plot")" ] && ok || bad "predict --plot, image on the full device: status $rc, $(cat "$tmp/err")"
fi

# ---- FIFOs: written through --------------------------------------------------------------------
q=$tmp/fifo
mkdir -p "$q"
for v in "${verbs[@]}"; do
  n=$(name "$v")
  mkfifo "$q/$n"
  cat "$q/$n" >"$q/$n.got" &
  reader=$!
  run "$v" "$q/$n"
  wait "$reader"
  # as many lines as the reference run into a regular file (a date or path inside may differ)
  [ "$rc" -eq 0 ] && [ -p "$q/$n" ] && [ -s "$q/$n.got" ] &&
    [ "$(wc -l <"$q/$n.got")" = "$(wc -l <"$tmp/ref/$n.out")" ] && ok ||
    bad "$n -o FIFO: status $rc, $(stat -c %F "$q/$n"), $(wc -c <"$q/$n.got") bytes read, $(cat "$tmp/err")"
done

# ---- unwritable and missing directories --------------------------------------------------------
u=$tmp/ro
mkdir -p "$u"
ro_ok=0
if [ "$(id -u)" -ne 0 ]; then
  chmod 555 "$u" && ro_ok=1
elif mount -t tmpfs -o ro,size=16k tmpfs "$u" 2>"$tmp/err"; then
  ro_ok=2
  trap 'umount "$u" 2>>"$tmp/discard"' EXIT
else
  skip "unwritable directory: root writes anywhere and mount -t tmpfs -o ro failed: $(cat "$tmp/err")"
fi
if [ "$ro_ok" -ne 0 ]; then
  for v in "${verbs[@]}"; do
    run "$v" "$u/out"
    [ "$rc" -eq 1 ] && grep -qE "$u/out: cannot create: (Permission denied|Read-only file system)" "$tmp/err" && ok ||
      bad "$(name "$v") -o unwritable dir: status $rc, $(cat "$tmp/err")"
  done
  [ "$ro_ok" -eq 2 ] && umount "$u" && trap - EXIT
  [ "$ro_ok" -eq 1 ] && chmod 755 "$u"
fi
for v in "${verbs[@]}"; do
  run "$v" "$tmp/no/such/dir/out"
  [ "$rc" -eq 1 ] && grep -q "$tmp/no/such/dir/out: cannot create: No such file or directory" "$tmp/err" && ok ||
    bad "$(name "$v") -o missing dir: status $rc, $(cat "$tmp/err")"
done
run "${verbs[0]}" "$tmp/ref" # a directory
[ "$rc" -eq 1 ] && grep -q "$tmp/ref: cannot create: Is a directory" "$tmp/err" && ok || bad "coll -o DIR: status $rc, $(cat "$tmp/err")"

# ---- SIGTERM and SIGHUP mid-run: predict opens its output first, then simulates 884,736 points
# (about 8 s on an idle machine; 147,456 before, about a second, which a loaded machine could let
# finish between the test seeing its temporary and its kill). SIGINT is the same handler, but a
# non-interactive shell starts background jobs with SIGINT ignored, and an ignored signal is left
# ignored (test_wfile sends it in-process).
k=$tmp/sig
mkdir -p "$k"
nodes=$(seq -s, 1 4096)
nets=$(seq -s, 100 100 7200)
for sig in TERM HUP; do
  printf 'OLD\n' >"$k/p.csv"
  "$cs" predict -w gpt3-175b --gpu h100-sxm -t dgx-h100 --nodes "$nodes" \
    --plan "tp=8,pp=8,zero=1,mbs=1,gbs=1536;tp=4,pp=8,zero=1,mbs=1,gbs=1536;tp=8,pp=4,mbs=1,gbs=1536" \
    --net-gbps "$nets" -o "$k/p.csv" 2>>"$tmp/discard" &
  pid=$!
  for _ in $(seq 3000); do # until its temporary exists (at most 30 s on a loaded machine)
    [ -n "$(leftovers "$k")" ] && break
    sleep 0.01
  done
  had=$(leftovers "$k")
  kill -$sig "$pid"
  wait "$pid"
  rc=$?
  want=$((128 + $(kill -l $sig)))
  [ -n "$had" ] && [ "$rc" -eq "$want" ] && [ "$(cat "$k/p.csv")" = OLD ] && [ -z "$(leftovers "$k")" ] && ok ||
    bad "predict killed with SIG$sig: temporary seen: ${had:-none}, status $rc (want $want), file $(head -c 20 "$k/p.csv"), left: $(leftovers "$k")"
done

# ---- two writers at once: one complete output, never a mix -------------------------------------
c=$tmp/two
mkdir -p "$c"
a=(coll --coll all_reduce --nodes 1:400 --sizes 8:8G)
b=(coll --coll all_gather --nodes 1:400 --sizes 8:8G)
"$cs" "${a[@]}" -o "$c/a.csv" 2>>"$tmp/discard"
"$cs" "${b[@]}" -o "$c/b.csv" 2>>"$tmp/discard"
for try in 1 2 3; do
  "$cs" "${a[@]}" -o "$c/same.csv" 2>>"$tmp/discard" &
  p1=$!
  "$cs" "${b[@]}" -o "$c/same.csv" 2>>"$tmp/discard" &
  p2=$!
  wait $p1
  r1=$?
  wait $p2
  r2=$?
  { cmp -s "$c/same.csv" "$c/a.csv" || cmp -s "$c/same.csv" "$c/b.csv"; } && [ $r1 -eq 0 ] && [ $r2 -eq 0 ] &&
    [ -z "$(leftovers "$c")" ] && ok || bad "two coll -o same.csv, try $try: status $r1 $r2, a mix or a partial file"
done

echo "writes: $pass passed, $fail failed, $skipped skipped; $n_verbs verb forms (topology show, map and import-smi count apart)"
[ "$fail" -eq 0 ]
