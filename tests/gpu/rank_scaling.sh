#!/usr/bin/env bash
# rank_scaling.sh -- issue 9, item 1 on one NVSwitch node of N GPUs (4 or 8), in one call: build
# commscale-run (runner only), run the default calibration over every rank of one launch (the
# runner splits it into the 2-, 4- (and 8-) rank shapes itself), the same with NVLink peer access
# off (NCCL_P2P_DISABLE=1: traffic through host memory) on 2 ranks, the compute probes, and the
# public nccl-tests all_reduce/all_gather/reduce_scatter at N ranks for an independent reference.
# The fit on the 2-rank rows and its prediction of N is done afterwards, off the GPU machine
# (tests/validation/rank_scaling.sh).
#
# usage (repository root): tests/gpu/rank_scaling.sh OUTDIR NGPUS
# Needs: CUDA, NCCL, Open MPI (mpirun), cmake; NCCL_TESTS_SRC naming a checkout of the public
# nccl-tests (not part of this repository; built here with MPI=1 for sm_90 only). Without it
# the nccl-tests part is skipped.
set -u
OUT=${1:?usage: rank_scaling.sh OUTDIR NGPUS}
N=${2:?usage: rank_scaling.sh OUTDIR NGPUS}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0        # NVLink multicast stays off on shared machines
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi() { local np=$1; shift; mpirun --allow-run-as-root -np "$np" --bind-to none -x NCCL_NVLS_ENABLE "$@"; }
log() { echo "## $*" | tee -a "$OUT/summary.txt"; }
now() { date +%s.%N; }
el() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvidia-smi topo -m; mpirun --version | head -1; nproc; } >"$OUT/machine.txt" 2>&1
head -6 "$OUT/machine.txt"

log "build commscale-run"
NH=$(dirname "$(dirname "$(find /usr/local/cuda/include /usr/include /usr/local -maxdepth 3 -name nccl.h 2>>"$OUT/discard" | head -1)")")
t0=$(now)
cmake -S . -B build-gpu -DCS_RUNNER_ONLY=ON -DCS_WITH_NCCL=ON -DCS_WITH_MPI=ON -DCS_WERROR=ON \
  -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
  NCCL_HOME=$NH cmake --build build-gpu -j16 --target commscale-run >>"$OUT/build.log" 2>&1 || {
  tail -30 "$OUT/build.log"; exit 1; }
RUN=$PWD/build-gpu/calibrate/commscale-run
log "built in $(el "$t0") s"

NT=""
if [ -n "${NCCL_TESTS_SRC:-}" ] && [ -d "$NCCL_TESTS_SRC" ]; then
  t0=$(now)
  MH=$(dirname "$(mpicc --showme:incdirs | tr ' ' '\n' | grep -m1 openmpi)")
  [ -f "$MH/include/mpi.h" ] || MH=/usr/lib/x86_64-linux-gnu/openmpi
  make -C "$NCCL_TESTS_SRC" -j16 MPI=1 MPI_HOME="$MH" CUDA_HOME=/usr/local/cuda NCCL_HOME="$NH" \
    NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" >"$OUT/nccltests-build.log" 2>&1 &&
    NT=$NCCL_TESTS_SRC/build
  log "nccl-tests build: ${NT:-FAILED} ($(el "$t0") s)"
  [ -n "$NT" ] || tail -20 "$OUT/nccltests-build.log"
fi

log "default calibration over $N ranks (shapes 2..$N from one launch) with probes"
t0=$(now)
mpi "$N" "$RUN" -o "$OUT/calib_n$N.csv" --overwrite --probes all --probe-output "$OUT/probes.csv" \
  >"$OUT/calib_n$N.txt" 2>&1
log "calibration: exit $?, $(el "$t0") s, $(grep -vc '^#' "$OUT/calib_n$N.csv") lines"
tail -3 "$OUT/calib_n$N.txt"

log "NCCL_P2P_DISABLE=1 on 2 ranks (host-memory path), NCCL's choice"
t0=$(now)
NCCL_P2P_DISABLE=1 mpi 2 -x NCCL_P2P_DISABLE "$RUN" --algos auto -o "$OUT/calib_p2poff.csv" --overwrite \
  >"$OUT/calib_p2poff.txt" 2>&1
log "p2p-off calibration: exit $?, $(el "$t0") s"
tail -2 "$OUT/calib_p2poff.txt"

if [ -n "$NT" ]; then
  for c in all_reduce all_gather reduce_scatter; do
    t0=$(now)
    mpi "$N" "$NT/${c}_perf" -b 8 -e 4G -f 2 -g 1 -n 20 -w 5 >"$OUT/nccltests_${c}_n$N.log" 2>&1
    log "nccl-tests $c at $N ranks: exit $?, $(el "$t0") s"
    grep -E "Avg bus|^ +(1073741824|4294967296) " "$OUT/nccltests_${c}_n$N.log" | tee -a "$OUT/summary.txt"
  done
fi
ls -la "$OUT"
