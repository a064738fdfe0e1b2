#!/usr/bin/env bash
# mpi_search.sh — `commscale search` spread over MPI ranks (mpirun -np 2 and -np 4 on this machine,
# oversubscribed) gives the same ranking as the serial search: the same CSV byte for byte (every
# plan, its rank, Pareto flag, step time and memory), and the same point counts in the table's
# header (points, invalid, feasible; a rank prunes by the memory bound of its own points, so the
# split between "do not fit" and "pruned" may move), which says the space was split. Two spaces: GPT-3 175B on 16 DGX H100 nodes (thousands
# of feasible plans, many ties broken by the merge) and Llama 3 8B on 4 nodes.
# usage: mpi_search.sh COMMSCALE. Exit 0 pass, 1 fail, 77 skipped (no mpirun).
set -u
cs=${1:?usage: mpi_search.sh COMMSCALE}
[ -n "$(command -v mpirun)" ] || { echo "mpi_search: skipped: no mpirun"; exit 77; }
W=$(mktemp -d "${TMPDIR:-/tmp}/cs-mpisearch.XXXXXX")
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI=(mpirun --oversubscribe --bind-to none --mca btl self,tcp --mca btl_tcp_if_include lo
     --mca oob_tcp_if_include lo)
fail=0
# points, invalid, (do not fit + pruned: the split moves points between these two), feasible
counts() {
  grep '^# space' "$1" | tr -c '0-9\n' ' ' | awk '{ print $1, $2, $3 + $4, $5 }'
}
check() { # NAME ARGS...
  local name=$1
  shift
  "$cs" search "$@" -n 0 --format csv >"$W/$name.1.csv" 2>"$W/err" || { echo "FAIL: serial search $name: $(cat "$W/err")"; fail=1; return; }
  "$cs" search "$@" -n 0 >"$W/$name.1.txt" 2>>"$W/discard"
  for np in 2 4; do
    timeout 120 "${MPI[@]}" -np "$np" "$cs" search "$@" -n 0 --format csv >"$W/$name.$np.csv" 2>"$W/err" ||
      { echo "FAIL: mpirun -np $np search $name: $(tail -3 "$W/err")"; fail=1; continue; }
    timeout 120 "${MPI[@]}" -np "$np" "$cs" search "$@" -n 0 >"$W/$name.$np.txt" 2>>"$W/discard"
    if ! cmp -s "$W/$name.1.csv" "$W/$name.$np.csv"; then
      echo "FAIL: $name: mpirun -np $np ranking differs from the serial search"
      diff "$W/$name.1.csv" "$W/$name.$np.csv" | head -5
      fail=1
    elif ! grep -q "split over MPI ranks" "$W/$name.$np.txt"; then
      echo "FAIL: $name: mpirun -np $np did not split the space (no \"split over MPI ranks\")"
      fail=1
    elif [ "$(counts "$W/$name.1.txt")" != "$(counts "$W/$name.$np.txt")" ]; then
      echo "FAIL: $name: mpirun -np $np point counts differ: $(grep '^# space' "$W/$name.$np.txt")"
      fail=1
    else
      echo "mpi_search: $name: -np $np: the same $(($(wc -l <"$W/$name.1.csv") - 1)) ranked plans as serial"
    fi
  done
}
check gpt3-16n -w gpt3-175b --gpu h100-sxm -t dgx-h100 --nodes 16 --gbs 256
check llama3-4n -w llama3-8b --gpu h100-sxm -t dgx-h100 --nodes 4 --gbs 64
exit $fail
