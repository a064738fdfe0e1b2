# run_lib.sh -- sourced by the node scripts of tests/gpu: one logged, time-limited run.
#
# run_logged DIR SECONDS NAME COMMAND...: runs COMMAND under `timeout SECONDS` with its output in
# DIR/NAME.log; appends to DIR/summary.txt (and prints) the command, the log's `# result` lines,
# on failure its exit status and the log's last 25 lines, and the time it took.
now() { date +%s.%N; }
run_logged() {
  local dir=$1 lim=$2 name=$3
  shift 3
  local t0
  t0=$(now)
  echo "## $name: $*" | tee -a "$dir/summary.txt"
  timeout "$lim" "$@" >"$dir/$name.log" 2>&1
  local rc=$?
  grep -h '^# result' "$dir/$name.log" | tee -a "$dir/summary.txt"
  [ $rc -eq 0 ] || { echo "## $name failed rc=$rc"; tail -25 "$dir/$name.log"; } | tee -a "$dir/summary.txt"
  awk -v a="$t0" -v b="$(now)" -v n="$name" 'BEGIN { printf "## %s took %.1f s\n", n, b - a }' |
    tee -a "$dir/summary.txt"
}

# node_init DIR: what every GPU node script starts with: NVLink multicast off (shared machines),
# unbuffered Python, four OpenMP threads, Open MPI allowed as root, DIR made, the GPUs' names and
# driver in DIR/machine.txt, and `run NAME SECONDS COMMAND...` logging into DIR.
node_init() {
  NODE_OUT=$1
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mkdir -p "$NODE_OUT"
  nvidia-smi --query-gpu=name,driver_version --format=csv >"$NODE_OUT/machine.txt" 2>&1
}
run() { local name=$1 lim=$2; shift 2; run_logged "$NODE_OUT" "$lim" "$name" "$@"; } # name, seconds, command...
