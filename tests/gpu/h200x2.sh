#!/usr/bin/env bash
# h200x2.sh — issue 3's GPU acceptance on a 2-GPU machine, in one call: build commscale-run
# (runner only), run nccl-tests' all_reduce_perf and commscale-run on the same sizes, a full
# default calibration (timed), every algorithm x protocol, the single-process launch, a two-"node"
# run through NCCL_HOSTID (NCCL's socket transport), and the kill/hang/resume checks.
#
# usage (repository root): tests/gpu/h200x2.sh OUTDIR
# Needs: CUDA, NCCL, Open MPI (mpirun), cmake, and NCCL_TESTS_ALL_REDUCE naming an all_reduce_perf
# binary of the public nccl-tests built with MPI=1 (not part of this repository).
set -u
OUT=${1:?usage: h200x2.sh OUTDIR}
mkdir -p "$OUT"
R=$OUT/r
mkdir -p "$R"
export NCCL_NVLS_ENABLE=0        # NVLink multicast stays off on shared machines
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI=(mpirun --allow-run-as-root -np 2 --bind-to none -x NCCL_NVLS_ENABLE)
log() { echo "## $*" | tee -a "$R/summary.txt"; }
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

log "machine"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvidia-smi topo -m;
  mpirun --version | head -1; nproc; } >"$R/machine.txt" 2>&1
cat "$R/machine.txt" | head -12

log "build commscale-run"
NH=$(dirname "$(dirname "$(find /usr/local/cuda/include /usr/include /usr/local -maxdepth 3 -name nccl.h 2>>"$OUT/discard" | head -1)")")
t0=$(now)
cmake -S . -B build-gpu -DCS_RUNNER_ONLY=ON -DCS_WITH_NCCL=ON -DCS_WITH_MPI=ON -DCS_WERROR=ON \
  -DCMAKE_BUILD_TYPE=Release >"$R/build.log" 2>&1 && \
  NCCL_HOME=$NH cmake --build build-gpu -j16 --target commscale-run >>"$R/build.log" 2>&1 || {
  tail -30 "$R/build.log"; exit 1; }
RUN=$PWD/build-gpu/calibrate/commscale-run
log "built in $(el "$t0") s (NCCL headers under $NH)"

# nccl-tests is not part of commscale: bring your own build of its all_reduce_perf
NT=${NCCL_TESTS_ALL_REDUCE:-}
if [ -z "$NT" ] || ! [ -x "$NT" ]; then
  log "set NCCL_TESTS_ALL_REDUCE to a built nccl-tests all_reduce_perf (MPI=1) to compare"
  exit 2
fi

log "nccl-tests all_reduce_perf 8B-4GiB, mpirun -np 2"
"${MPI[@]}" "$NT" -b 8 -e 4G -f 2 -g 1 -n 20 -w 5 >"$R/nccltests_allreduce.log" 2>&1
tail -5 "$R/nccltests_allreduce.log"

log "commscale-run all_reduce 8B-4GiB, NCCL's choice, mpirun -np 2 (-n 20 -w 5, whole 20-op trials)"
"${MPI[@]}" "$RUN" --backend nccl --algos auto --colls all_reduce -b 8 -e 4G -f 2 -n 20 -w 5 \
  --trial-time 1s -o "$R/cs_allreduce_auto.csv" --overwrite >"$R/cs_allreduce_auto.txt" 2>&1
tail -3 "$R/cs_allreduce_auto.txt"
log "commscale-run the same with --timer host (nccl-tests' host-clock method)"
"${MPI[@]}" "$RUN" --backend nccl --algos auto --colls all_reduce -b 8 -e 4G -f 2 -n 20 -w 5 \
  --trial-time 1s --timer host -o "$R/cs_allreduce_host.csv" --overwrite >"$R/cs_allreduce_host.txt" 2>&1
tail -2 "$R/cs_allreduce_host.txt"
log "--check (doctor)"
"${MPI[@]}" "$RUN" --check 2>&1 | tee -a "$R/summary.txt"

log "full default calibration of the 2 GPUs (default collectives, every algorithm x protocol)"
t0=$(now)
"${MPI[@]}" "$RUN" -o "$R/calib_default.csv" --overwrite >"$R/calib_default.txt" 2>&1
rc=$?
log "default calibration: exit $rc, $(el "$t0") s, $(grep -vc '^#' "$R/calib_default.csv") lines"
grep "not available\|error" "$R/calib_default.txt" | head -10

log "single process, ncclCommInitAll over both GPUs (thread launch)"
"$RUN" --backend nccl --algos auto -b 8 -e 1G -f 4 -o "$R/cs_thread.csv" --overwrite \
  >"$R/cs_thread.txt" 2>&1; echo "exit $?"; tail -2 "$R/cs_thread.txt"

log "two nodes through NCCL_HOSTID (socket transport over lo)"
t0=$(now)
mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE -x NCCL_SOCKET_IFNAME=lo \
  -np 1 -x NCCL_HOSTID=nodeA "$RUN" --backend nccl --algos auto,ring/simple,tree/simple \
    -b 8 -e 256M -f 4 --timeout 120s -o "$R/cs_hostid2.csv" --overwrite : \
  -np 1 -x NCCL_HOSTID=nodeB "$RUN" --backend nccl --algos auto,ring/simple,tree/simple \
    -b 8 -e 256M -f 4 --timeout 120s -o "$R/cs_hostid2.csv" --overwrite >"$R/cs_hostid2.txt" 2>&1
log "hostid run: exit $?, $(el "$t0") s"
tail -3 "$R/cs_hostid2.txt"

log "kill one rank mid-run (SIGKILL rank 1 after 6 s), then --resume"
rm -f /tmp/cs_pid.*
ARGS=(--backend nccl --colls all_reduce,all_gather --algos auto,ring/simple -b 8 -e 1G -f 2 --timeout 20s -q
      --trials 10:10 --trial-time 200ms)
t0=$(now)
"${MPI[@]}" sh -c 'echo $$ > /tmp/cs_pid.$OMPI_COMM_WORLD_RANK; exec "$0" "$@"' "$RUN" "${ARGS[@]}" \
  -o "$R/kill.csv" --overwrite >"$R/kill.txt" 2>&1 &
MPID=$!
sleep 6
kill -KILL "$(cat /tmp/cs_pid.1)"
tk=$(now)
wait $MPID
log "killed rank 1: job exit $?, rank 0 gone $(el "$tk") s after the kill"
grep -i "commscale-run\|mpirun\|exited" "$R/kill.txt" | head -6
rows1=$(grep -vc '^#' "$R/kill.csv")
"${MPI[@]}" "$RUN" "${ARGS[@]}" -o "$R/kill.csv" --resume >"$R/resume.txt" 2>&1
log "resume: exit $?, rows $((rows1 - 1)) -> $(( $(grep -vc '^#' "$R/kill.csv") - 1 ))"
"${MPI[@]}" "$RUN" "${ARGS[@]}" -o "$R/nokill.csv" --overwrite >>"$R/discard" 2>&1
key() { grep -v '^#' "$1" | tail -n +2 | cut -d, -f1-8,15-17 | sort; }
if diff <(key "$R/kill.csv") <(key "$R/nokill.csv") >>"$R/discard"; then log "resumed CSV has the same rows as an uninterrupted run"; else log "resumed CSV DIFFERS"; fi

log "hang one rank (SIGSTOP before its first measurement), --timeout 10s"
t0=$(now)
CS_RUN_STOP_RANK=1 timeout 120 "${MPI[@]}" -x CS_RUN_STOP_RANK "$RUN" "${ARGS[@]}" --timeout 10s \
  >"$R/hang.txt" 2>&1
log "hung rank: job exit $?, after $(el "$t0") s"
grep "commscale-run: rank" "$R/hang.txt" | head -3

log "compare with nccl-tests: device-event timer (default)"
python3 tests/gpu/compare_nccltests.py "$R/nccltests_allreduce.log" "$R/cs_allreduce_auto.csv" \
  | tee -a "$R/summary.txt"
log "compare with nccl-tests: --timer host"
python3 tests/gpu/compare_nccltests.py "$R/nccltests_allreduce.log" "$R/cs_allreduce_host.csv" \
  | tee -a "$R/summary.txt"

for f in calib_default cs_allreduce_auto cs_allreduce_host cs_hostid2 cs_thread kill; do
  cp "$R/$f.csv" "$OUT/"
done
cp "$R/summary.txt" "$OUT/"
tar -czf "$OUT/logs.tar.gz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
