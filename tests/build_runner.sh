#!/usr/bin/env bash
# build_runner.sh -- builds the measurement runner alone, as it is built on GPU nodes
# (-DCS_RUNNER_ONLY=ON: no GSL, libyaml or gnuplot), warnings as errors, then runs it once with the
# null backend (--check and a two-point measurement) to show the executable works.
#   mode plain: libc + MPI where found, CUDA and NCCL off. Must always pass.
#   mode cuda:  CUDA and NCCL required (-DCS_WITH_CUDA=ON -DCS_WITH_NCCL=ON): compiles
#               backend_nccl.c and probe_cuda.c. Without a CUDA toolkit and nccl.h this test says
#               "skipped: no CUDA toolkit" (exit 77), unless CS_REQUIRE_CUDA=1, when it fails.
#               (Debian 12 has no NCCL package: libnccl-dev is in trixie contrib; the CUDA toolkit
#               is in bookworm non-free.) Point it at a toolkit with CUDAToolkit_ROOT / NCCL_HOME.
# usage: build_runner.sh plain|cuda SOURCE_DIR BUILD_DIR
set -u
mode=${1:?usage: build_runner.sh plain|cuda SOURCE_DIR BUILD_DIR}
src=${2:?usage} bld=${3:?usage}
flags=(-DCS_RUNNER_ONLY=ON -DCS_WERROR=ON)
if [ "$mode" = cuda ]; then
  nvcc=$(command -v nvcc || true)
  for d in "${CUDAToolkit_ROOT:-}" /usr/local/cuda /usr; do
    [ -z "$nvcc" ] && [ -n "$d" ] && [ -x "$d/bin/nvcc" ] && nvcc=$d/bin/nvcc
  done
  inc=$([ -n "$nvcc" ] && dirname "$(dirname "$nvcc")")/include
  nccl_h=""
  for d in "${NCCL_HOME:-/nonexistent}/include" "$inc" /usr/include; do
    [ -f "$d/nccl.h" ] && nccl_h=$d/nccl.h && break
  done
  if [ -z "$nvcc" ] || [ -z "$nccl_h" ]; then
    if [ "${CS_REQUIRE_CUDA:-0}" = 1 ]; then
      echo "build_runner: FAILED: CUDA was required (CS_REQUIRE_CUDA=1) but no toolkit was found" \
        "(nvcc: ${nvcc:-none}, nccl.h: ${nccl_h:-none})"
      exit 1
    fi
    echo "build_runner: skipped: no CUDA toolkit (nvcc: ${nvcc:-none}, nccl.h: ${nccl_h:-none})"
    exit 77
  fi
  echo "build_runner: CUDA toolkit: $nvcc, $nccl_h"
  flags+=(-DCS_WITH_CUDA=ON -DCS_WITH_NCCL=ON -DCUDAToolkit_ROOT="$(dirname "$(dirname "$nvcc")")")
else
  flags+=(-DCS_WITH_CUDA=OFF -DCS_WITH_NCCL=OFF)
fi
rm -rf "$bld"
if ! cmake -S "$src" -B "$bld" "${flags[@]}" >"$bld.configure.log" 2>&1; then
  tail -20 "$bld.configure.log"
  echo "build_runner: FAILED: the $mode runner-only build does not configure"
  exit 1
fi
grep -E "runner only|MPI |CUDA |NCCL " "$bld.configure.log"
if ! cmake --build "$bld" -j2 >"$bld.build.log" 2>&1; then
  grep -E "error|warning" "$bld.build.log" | head -20
  echo "build_runner: FAILED: the $mode runner-only build does not compile"
  exit 1
fi
run=$bld/calibrate/commscale-run
export CS_NULL_BACKEND=nodes=2,gpus=2
"$run" --backend null --check || { echo "build_runner: FAILED: commscale-run --check"; exit 1; }
"$run" --backend null --colls all_reduce --sizes 1K,1M --nodes 2 --gpus-per-node 2 -q \
  -o "$bld/null.csv" --overwrite || { echo "build_runner: FAILED: a null-backend run"; exit 1; }
rows=$(grep -vc '^#' "$bld/null.csv")
[ "$rows" = 3 ] || { echo "build_runner: FAILED: $((rows - 1)) rows, want 2"; exit 1; }
echo "build_runner: the $mode runner-only build compiles and runs"
