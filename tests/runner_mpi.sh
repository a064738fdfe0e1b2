#!/usr/bin/env bash
# runner_mpi.sh — commscale-run's MPI backend on this machine (3 processes, shared memory/loopback):
#   resume   a run stopped after 5 rows and continued with --resume holds the same rows as an
#            uninterrupted run (apart from timings)
#   watchdog a rank frozen with SIGSTOP makes the job end, with a message naming rank and host,
#            within the --timeout plus a margin that holds on a loaded machine (90 s)
#   check    --check verifies an all_reduce over every rank
#   lock     a second run on a CSV another run is writing is refused, the first run's rows kept
#   forced   --algos forces Open MPI's algorithms: all_gather's two_proc on 3 ranks is refused by
#            Open MPI itself (so the forcing reached it) and skipped with a note, the forced ring
#            and the library's own choice are measured, each row tagged with what was forced
#   eager    the transport's eager limit a run sets (mpirun --mca btl_tcp_eager_limit) is read
#            back through MPI_T into the provenance (the MPI laws price rendezvous with it)
#   placement ranks numbered round robin over two node keys (--node-id a, b, a) are recorded as
#            placed cyclic, node by node (a, a, b) as block
# usage: runner_mpi.sh COMMSCALE_RUN. Exit 0 pass, 1 fail, 77 skipped (no mpirun).
set -u
RUN=${1:?usage: runner_mpi.sh COMMSCALE_RUN}
[ -n "$(command -v mpirun)" ] || { echo "runner_mpi: skipped: no mpirun"; exit 77; }
W=$(mktemp -d /tmp/cs-runner.XXXXXX)
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
MPI=(mpirun -np 3 --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
ARGS=(--backend mpi --colls all_reduce,all_gather,send_recv --sizes 1K:256K -n 3 -w 1 --trials 2:3 -q)
fail=0

echo "== check"
"${MPI[@]}" "$RUN" --backend mpi --check || { echo "runner_mpi: --check failed"; fail=1; }

echo "== resume"
"${MPI[@]}" "$RUN" "${ARGS[@]}" -o "$W/full.csv" || { echo "runner_mpi: full run failed"; fail=1; }
CS_RUN_FAIL_AFTER=5 "${MPI[@]}" "$RUN" "${ARGS[@]}" -o "$W/part.csv" >>"$W/discard" 2>&1
n1=$(grep -vc '^#' "$W/part.csv")
if "${MPI[@]}" "$RUN" "${ARGS[@]}" -o "$W/part.csv" >>"$W/discard" 2>&1; then
  echo "runner_mpi: an existing file was written without --resume or --overwrite"; fail=1
fi
"${MPI[@]}" "$RUN" "${ARGS[@]}" -o "$W/part.csv" --resume || { echo "runner_mpi: resume failed"; fail=1; }
key() { grep -v '^#' "$1" | tail -n +2 | cut -d, -f1-8,15-17 | sort; }
n2=$(key "$W/full.csv" | wc -l)
if [ "$n1" != 6 ] || ! diff <(key "$W/full.csv") <(key "$W/part.csv") >>"$W/discard"; then
  echo "runner_mpi: resumed file differs (interrupted file had $((n1 - 1)) rows, want 5)"
  diff <(key "$W/full.csv") <(key "$W/part.csv") | head
  fail=1
else
  echo "runner_mpi: stopped after 5 rows, resumed: same $n2 rows as the uninterrupted run"
fi

echo "== watchdog"
t0=$(date +%s)
CS_RUN_STOP_RANK=1 timeout 120 "${MPI[@]}" "$RUN" "${ARGS[@]}" --timeout 5s >"$W/wd.out" 2>&1
rc=$?
dt=$(( $(date +%s) - t0 ))
grep "commscale-run: rank" "$W/wd.out"
if [ $rc = 0 ] || [ $rc = 124 ] || [ $dt -gt 90 ] || ! grep -q "commscale-run: rank [0-9]* on " "$W/wd.out"; then
  echo "runner_mpi: a frozen rank did not end the job cleanly (exit $rc after $dt s)"
  cat "$W/wd.out"
  fail=1
else
  echo "runner_mpi: frozen rank 1: job ended with exit $rc after $dt s"
fi
echo "== lock"
# a run frozen by the watchdog test's hook holds its CSV; a second run on the same file, even with
# --overwrite, is refused and leaves the first run's rows as they were
CS_RUN_STOP_RANK=1 timeout 120 "${MPI[@]}" "$RUN" "${ARGS[@]}" --timeout 8s -o "$W/lock.csv" >>"$W/discard" 2>&1 &
first=$!
for _ in $(seq 200); do
  [ -s "$W/lock.csv" ] && break
  sleep 0.1
done
before=$(cat "$W/lock.csv")
"${MPI[@]}" "$RUN" "${ARGS[@]}" --overwrite -o "$W/lock.csv" >"$W/lock.out" 2>&1
rc=$?
wait $first
if [ $rc = 0 ] || ! grep -q "lock.csv: another run is writing it" "$W/lock.out" || [ -z "$before" ] ||
  [ "$(head -c ${#before} "$W/lock.csv")" != "$before" ]; then
  echo "runner_mpi: a second run on a CSV being written was not refused (exit $rc), or the rows changed"
  fail=1
else
  echo "runner_mpi: a second run on the same CSV refused: another run is writing it"
fi
echo "== forced"
"${MPI[@]}" "$RUN" --backend mpi --colls all_reduce,all_gather --sizes 96K -n 2 -w 1 --trials 2:2 -q \
  --gpus-per-node 3 \
  --algos auto,all_gather:two_proc,all_gather:ring,rabenseifner -o "$W/forced.csv" >"$W/forced.out" 2>&1
rc=$?
rows=$(grep -v '^#' "$W/forced.csv" | tail -n +2 | cut -d, -f1,17 | sort)
want=$(printf '%s\n' "all_gather,OMPI_MCA_coll_tuned_allgather_algorithm=4;OMPI_MCA_coll_tuned_use_dynamic_rules=1" \
  "all_gather,OMPI_MCA_coll_tuned_use_dynamic_rules=1" \
  "all_reduce,OMPI_MCA_coll_tuned_allreduce_algorithm=6;OMPI_MCA_coll_tuned_use_dynamic_rules=1" \
  "all_reduce,OMPI_MCA_coll_tuned_use_dynamic_rules=1" | sort)
if [ $rc != 0 ] || ! grep -q "two_proc.*not available here" "$W/forced.out" || [ "$rows" != "$want" ]; then
  echo "runner_mpi: forced algorithms: exit $rc; rows (collective, tag):"
  echo "$rows"
  cat "$W/forced.out"
  fail=1
else
  echo "runner_mpi: two_proc on 3 ranks refused by Open MPI and skipped; forced rows tagged"
fi
echo "== eager"
"${MPI[@]}" --mca btl_tcp_eager_limit 131072 "$RUN" --backend mpi --colls all_reduce --sizes 1K \
  -n 2 -w 1 --trials 2:2 -q -o "$W/eager.csv" >"$W/eager.out" 2>&1
rc=$?
if [ $rc != 0 ] || ! grep -Eq '^# mpi_eager: (.*,)?net=131072(,|$)' "$W/eager.csv"; then
  echo "runner_mpi: eager limit set to 131072 not recorded (exit $rc):"
  grep '^#' "$W/eager.csv"
  cat "$W/eager.out"
  fail=1
else
  echo "runner_mpi: $(grep '^# mpi_eager' "$W/eager.csv" | cut -c3-) recorded"
fi
echo "== placement"
P=(--backend mpi --colls all_reduce --sizes 1K -n 2 -w 1 --trials 2:2 -q --overwrite)
mpirun --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
  -np 1 "$RUN" --node-id a "${P[@]}" -o "$W/cyc.csv" : -np 1 "$RUN" --node-id b "${P[@]}" -o "$W/cyc.csv" : \
  -np 1 "$RUN" --node-id a "${P[@]}" -o "$W/cyc.csv" >"$W/cyc.out" 2>&1
rc1=$?
mpirun --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
  -np 2 "$RUN" --node-id a "${P[@]}" -o "$W/blk.csv" : -np 1 "$RUN" --node-id b "${P[@]}" -o "$W/blk.csv" \
  >"$W/blk.out" 2>&1
rc2=$?
if [ $rc1 != 0 ] || [ $rc2 != 0 ] || ! grep -q '^# mpi_placement: cyclic$' "$W/cyc.csv" ||
  ! grep -q '^# mpi_placement: block$' "$W/blk.csv"; then
  echo "runner_mpi: placement not recorded as cyclic / block (exit $rc1 / $rc2):"
  grep -h 'mpi_placement' "$W/cyc.csv" "$W/blk.csv"
  cat "$W/cyc.out" "$W/blk.out"
  fail=1
else
  echo "runner_mpi: ranks on nodes a, b, a recorded as cyclic; a, a, b as block"
fi
exit $fail
