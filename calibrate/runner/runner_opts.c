/* runner_opts.c — the runner's options: one table that drives parsing and --help; see
 * runner_opts.h.
 */
#include "runner_opts.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpicoll.h"
#include "probe.h"
#include "units.h"

/* ---- element types ------------------------------------------------------------------------- */

/* ---- options: one table drives parsing and --help ------------------------------------------ */

enum opt_id {
  O_MINB,
  O_MAXB,
  O_FACTOR,
  O_SIZES,
  O_ITERS,
  O_WARMUP,
  O_DTYPE,
  O_COLLS,
  O_BACKEND,
  O_OUT,
  O_RESUME,
  O_OVERWRITE,
  O_NODES,
  O_GPN,
  O_MINRANKS,
  O_ALGOS,
  O_TRIALS,
  O_TOL,
  O_TRIALTIME,
  O_NGPUS,
  O_NODEID,
  O_TIMEOUT,
  O_INPLACE,
  O_TIMER,
  O_CHECK,
  O_DRYRUN,
  O_QUIET,
  O_PROBES,
  O_PROBES_ONLY,
  O_PROBE_OUT,
  O_PROBE_DTYPES,
  O_GEMM_ALGOS,
  O_PROBE_SETTLE,
  O_HELP,
  O_COUNT
};

static const struct run_opt {
  enum opt_id id;
  const char *name;
  char shortc;
  const char *arg;
  const char *help;
} run_opts[] = {
    {O_MINB, "minbytes", 'b', "SIZE", "smallest message size (8, 64K, 1M; binary suffixes) [8]"},
    {O_MAXB, "maxbytes", 'e', "SIZE", "largest message size [1G]"},
    {O_FACTOR, "stepfactor", 'f', "F", "multiply the size by F each step (F >= 2) [2]"},
    {O_SIZES, "sizes", 0, "LIST", "explicit sizes instead of -b/-e/-f: 8,1K,64K:1G (a:b doubles)"},
    {O_ITERS, "iters", 'n', "N",
     "timed operations per trial (cut so a trial fits --trial-time) [20]"},
    {O_WARMUP, "warmup_iters", 'w', "N",
     "untimed operations before the first trial of a point [5]"},
    {O_DTYPE, "datatype", 'd', "TYPE", "float, half, bfloat16, double, int32, int8, ... [float]"},
    {O_COLLS, "colls", 0, "LIST",
     "all_reduce,all_gather,reduce_scatter,broadcast,reduce,all_to_all,send_recv or all "
     "[all_reduce,all_gather,reduce_scatter,all_to_all,send_recv]"},
    {O_BACKEND, "backend", 0, "NAME",
     "nccl (GPUs), mpi (CPU processes) or null (a timing model, for tests) [nccl if built in]"},
    {O_OUT, "output", 'o', "FILE", "append rows to this measurements CSV (rank 0 writes)"},
    {O_RESUME, "resume", 0, NULL, "continue FILE: skip the rows it already holds"},
    {O_OVERWRITE, "overwrite", 0, NULL, "replace FILE if it exists"},
    {O_NODES, "nodes", 0, "LIST", "node counts to measure: 1,2,4 or 1:8 [every count 1..N]"},
    {O_GPN, "gpus-per-node", 0, "LIST", "ranks per node to measure: 1,2,8 or 1:8 [1,2,4..G]"},
    {O_MINRANKS, "min-ranks", 0, "N", "skip shapes with fewer ranks than N [2]"},
    {O_ALGOS, "algos", 0, "LIST",
     "auto, all, or pairs such as ring/simple,tree/ll,ring (= ring/auto); mpi: Open MPI's "
     "all_reduce algorithms, e.g. auto,ring,rabenseifner, and all_gather:ring etc. [nccl: all; "
     "mpi: auto]"},
    {O_TRIALS, "trials", 0, "MIN:MAX", "trials per point: at least MIN, at most MAX [3:10]"},
    {O_TOL, "tol", 0, "FRAC", "stop once (max-min)/median of the trials <= FRAC [0.05]"},
    {O_TRIALTIME, "trial-time", 0, "TIME", "longest trial, with a unit (50ms) [50ms]"},
    {O_NGPUS, "ngpus", 'g', "N", "without MPI: GPUs one process drives [all visible]"},
    {O_NODEID, "node-id", 0, "ID", "this process's node key [$CS_NODE_ID, $NCCL_HOSTID, host]"},
    {O_TIMEOUT, "timeout", 0, "TIME", "a step silent this long fails the run (60s) [60s]"},
    {O_INPLACE, "in-place", 0, NULL, "measure in-place operations (nccl-tests' right columns)"},
    {O_TIMER, "timer", 0, "KIND",
     "nccl: event (device events, launch skew excluded) or host (as nccl-tests) [event]"},
    {O_CHECK, "check", 0, NULL, "check set-up: ranks, nodes, one verified all_reduce; then stop"},
    {O_DRYRUN, "dry-run", 0, NULL,
     "print the plan and the points --resume would skip; measure nothing"},
    {O_QUIET, "quiet", 'q', NULL, "no table on stdout"},
    {O_PROBES, "probes", 0, "LIST",
     "compute probes after the collectives: gemm,membw,interference or all (GPU)"},
    {O_PROBES_ONLY, "probes-only", 0, NULL,
     "run the probes (all unless --probes) and no collectives"},
    {O_PROBE_OUT, "probe-output", 0, "FILE", "append probe rows to this CSV [probes.csv]"},
    {O_PROBE_DTYPES, "probe-dtypes", 0, "LIST", "GEMM precisions: bf16,fp16,tf32,fp32,fp8 [all]"},
    {O_GEMM_ALGOS, "gemm-algos", 0, "N",
     "GEMM probe: time cuBLASLt's first N heuristic algorithms, keep the fastest [1]"},
    {O_PROBE_SETTLE, "probe-settle", 0, "TIME",
     "GEMM probe: run GEMMs this long before the first point (settled clocks) [1s]"},
    {O_HELP, "help", 'h', NULL, "this help"},
};
#define NRUN_OPTS (sizeof run_opts / sizeof run_opts[0])

void cs_run_usage(FILE *f, const char *prog) {
  fprintf(f,
          "usage: %s [options]\n\n"
          "Measure collectives on every rank of this launch and on sub-groups of 1..N nodes and\n"
          "1, 2, 4, .. G ranks per node; append one row per point to a measurements CSV.\n\n"
          "options:\n",
          prog);
  for (size_t i = 0; i < NRUN_OPTS; i++) {
    const struct run_opt *p = &run_opts[i];
    char lhs[64];
    if (p->shortc)
      snprintf(lhs, sizeof lhs, "-%c, --%s%s%s", p->shortc, p->name, p->arg ? " " : "",
               p->arg ? p->arg : "");
    else
      snprintf(lhs, sizeof lhs, "    --%s%s%s", p->name, p->arg ? " " : "", p->arg ? p->arg : "");
    fprintf(f, "  %-30s %s\n", lhs, p->help);
  }
  fprintf(f,
          "\nOne process per GPU or CPU rank under mpirun/srun; without an MPI launcher the nccl\n"
          "backend drives every local GPU from one process. NCCL_ALGO/NCCL_PROTO are set per\n"
          "communicator for forced pairs. Exit status: 0 done, 1 failure, 2 usage.\n");
}

void cs_run_opts_init(struct cs_run_opts *o) {
  memset(o, 0, sizeof *o);
#ifdef CS_HAVE_NCCL
  o->backend = "nccl";
#else
  o->backend = "mpi";
#endif
  o->iters = 20;
  o->warmup = 5;
  o->min_trials = 3;
  o->max_trials = 10;
  o->tol = 0.05;
  o->trial_time_s = 0.05;
  o->dtype = CS_DTYPE_FLOAT;
  /* the collectives a training step uses: DP/ZeRO, TP, EP and PP */
  o->colls[CS_COLL_ALL_REDUCE] = o->colls[CS_COLL_ALL_GATHER] = 1;
  o->colls[CS_COLL_REDUCE_SCATTER] = o->colls[CS_COLL_ALL_TO_ALL] = 1;
  o->colls[CS_COLL_SEND_RECV] = 1;
  o->min_ranks = 2;
  o->timeout_s = 60.0;
  o->probe_dtypes = CS_PROBE_ALL_DTYPES;
  o->probe_out = "probes.csv";
  o->gemm_algos = 1;
  o->probe_settle_s = 1.0;
}

void cs_run_opts_fini(struct cs_run_opts *o) {
  if (o == NULL) return;
  free(o->sizes);
  free(o->nodes);
  free(o->gpn);
  o->sizes = NULL;
  o->nodes = o->gpn = NULL;
}

static enum cs_status parse_long(const char *opt, const char *s, long min, long max, long *out,
                                 struct cs_error *err) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v < min || v > max)
    return cs_error_set(err, CS_ERR_USAGE, "--%s: expected an integer in [%ld, %ld], got \"%s\"",
                        opt, min, max, s);
  *out = v;
  return CS_OK;
}

static enum cs_status parse_colls(const char *s, int colls[CS_COLL_COUNT], struct cs_error *err) {
  int sel[CS_COLL_COUNT] = {0};
  char buf[512];
  snprintf(buf, sizeof buf, "%s", s);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (strcmp(t, "all") == 0) {
      for (int c = 0; c < CS_COLL_COUNT; c++)
        sel[c] = 1;
      continue;
    }
    enum cs_coll c;
    if (cs_coll_parse(t, &c) != 0)
      return cs_error_set(err, CS_ERR_USAGE,
                          "--colls: unknown collective \"%s\" (expected all_reduce, all_gather, "
                          "reduce_scatter, broadcast, reduce, all_to_all, send_recv or all)",
                          t);
    sel[c] = 1;
  }
  memcpy(colls, sel, sizeof sel);
  return CS_OK;
}

/* --algos for the MPI backend: Open MPI's algorithm names or numbers (mpicoll.h), for all_reduce
 * or, as COLL:ALG, for all_gather. */
static enum cs_status parse_mpi_algo(char *t, struct cs_run_variant *v, struct cs_error *err) {
  enum cs_coll c = CS_COLL_ALL_REDUCE;
  char *colon = strchr(t, ':');
  if (colon) {
    *colon = '\0';
    if (cs_coll_parse(t, &c) != 0 || (c != CS_COLL_ALL_REDUCE && c != CS_COLL_ALL_GATHER))
      return cs_error_set(err, CS_ERR_USAGE,
                          "--algos: with --backend mpi, COLL:ALG forces all_reduce or all_gather, "
                          "got \"%s\"",
                          t);
    t = colon + 1;
  }
  int a;
  if (cs_mpi_coll_alg_parse(c, t, &a) != 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "--algos: with --backend mpi, expected auto, all, Open MPI's all_reduce "
                        "algorithms (basic_linear, nonoverlapping, recursive_doubling, ring, "
                        "segmented_ring, rabenseifner, or 1-6) or all_gather:ALG (linear, bruck, "
                        "recursive_doubling, ring, neighbor, two_proc), got \"%s\"",
                        t);
  *v = (struct cs_run_variant){CS_ALGO_AUTO, CS_PROTO_AUTO, a, a ? c : CS_COLL_ALL_REDUCE};
  return CS_OK;
}

static enum cs_status parse_algos(const char *s, struct cs_run_opts *o, struct cs_error *err) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", s);
  o->nvariants = 0;
  o->all_variants = 0;
  int mpi = strcmp(o->backend, "mpi") == 0;
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (strcmp(t, "all") == 0) {
      o->all_variants = 1;
      continue;
    }
    struct cs_run_variant v = {CS_ALGO_AUTO, CS_PROTO_AUTO, 0, CS_COLL_ALL_REDUCE};
    if (o->nvariants == CS_RUN_MAX_VARIANTS)
      return cs_error_set(err, CS_ERR_USAGE, "--algos: at most %d pairs", CS_RUN_MAX_VARIANTS);
    if (mpi) {
      enum cs_status st = parse_mpi_algo(t, &v, err);
      if (st != CS_OK) return st;
      o->variants[o->nvariants++] = v;
      continue;
    }
    char *slash = strchr(t, '/');
    if (slash) *slash = '\0';
    if (cs_algo_parse(t, &v.algo) != 0 || (slash && cs_proto_parse(slash + 1, &v.proto) != 0))
      return cs_error_set(err, CS_ERR_USAGE,
                          "--algos: expected auto, all or ALGO[/PROTO] such as ring/simple, got "
                          "\"%s%s%s\"",
                          t, slash ? "/" : "", slash ? slash + 1 : "");
    o->variants[o->nvariants++] = v;
  }
  return CS_OK;
}

static const struct run_opt *find_long(const char *name, size_t len) {
  for (size_t i = 0; i < NRUN_OPTS; i++)
    if (strlen(run_opts[i].name) == len && strncmp(run_opts[i].name, name, len) == 0)
      return &run_opts[i];
  if (len == 14 && strncmp(name, "ranks-per-node", 14) == 0) return &run_opts[O_GPN];
  return NULL;
}

/* Reads argv[1..argc) into val: each option's value by its id ("1" for a flag), the last one
 * given winning; values point into argv. Errors: CS_ERR_USAGE for an unknown option, a value given
 * to a flag, or a missing value. */
static enum cs_status scan_args(int argc, char **argv, const char *val[O_COUNT],
                                struct cs_error *err) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const struct run_opt *p = NULL;
    const char *v = NULL;
    if (a[0] == '-' && a[1] == '-') {
      const char *eq = strchr(a + 2, '=');
      size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
      p = find_long(a + 2, len);
      if (eq) v = eq + 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      for (size_t k = 0; k < NRUN_OPTS; k++)
        if (run_opts[k].shortc == a[1]) p = &run_opts[k];
      if (p && a[2] != '\0') v = a + 2;
    }
    if (p == NULL) return cs_error_set(err, CS_ERR_USAGE, "unknown option \"%s\" (see --help)", a);
    if (p->arg == NULL) {
      if (v) return cs_error_set(err, CS_ERR_USAGE, "--%s takes no value", p->name);
      v = "1";
    } else if (v == NULL) {
      if (i + 1 >= argc) return cs_error_set(err, CS_ERR_USAGE, "--%s needs %s", p->name, p->arg);
      v = argv[++i];
    }
    val[p->id] = v;
  }
  return CS_OK;
}

/* The message sizes from --sizes, or from -b/-e/-f (8 to 1G doubling by default), into o->sizes
 * (replacing what it held; the caller frees it with cs_run_opts_fini). Errors: CS_ERR_USAGE for
 * --sizes with -b/-e/-f, a factor outside [2, 1024] or an empty range; the units parser's for a
 * bad size, prefixed with the option; CS_ERR_NOMEM. */
static enum cs_status parse_size_opts(const char *const val[O_COUNT], struct cs_run_opts *o,
                                      struct cs_error *err) {
  free(o->sizes);
  o->sizes = NULL;
  o->nsizes = 0;
  if (val[O_SIZES]) {
    if (val[O_MINB] || val[O_MAXB] || val[O_FACTOR])
      return cs_error_set(err, CS_ERR_USAGE, "--sizes excludes -b, -e and -f");
    if (cs_units_parse_sizes(val[O_SIZES], &o->sizes, &o->nsizes, err) != CS_OK)
      return cs_error_prefix(err, "--sizes");
  } else {
    double b = 8, e = 1073741824.0, f = 2;
    if (val[O_MINB] && cs_units_parse_size(val[O_MINB], &b, err) != CS_OK)
      return cs_error_prefix(err, "-b");
    if (val[O_MAXB] && cs_units_parse_size(val[O_MAXB], &e, err) != CS_OK)
      return cs_error_prefix(err, "-e");
    if (val[O_FACTOR]) {
      char *end;
      f = strtod(val[O_FACTOR], &end);
      if (end == val[O_FACTOR] || *end || !(f >= 2 && f <= 1024))
        return cs_error_set(err, CS_ERR_USAGE, "-f: expected a factor in [2, 1024], got \"%s\"",
                            val[O_FACTOR]);
    }
    if (b < 1 || e < b)
      return cs_error_set(err, CS_ERR_USAGE, "-b/-e: expected 1 <= minbytes <= maxbytes");
    size_t cap = 0;
    for (double s = b; s <= e; s *= f)
      cap++;
    o->sizes = malloc(cap * sizeof *o->sizes);
    if (o->sizes == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    for (double s = b; s <= e; s *= f)
      o->sizes[o->nsizes++] = floor(s);
  }
  return CS_OK;
}

static enum cs_status parse_opts(int argc, char **argv, struct cs_run_opts *o, int *help,
                                 struct cs_error *err) {
  const char *val[O_COUNT] = {0};
  *help = 0;
  enum cs_status st = scan_args(argc, argv, val, err);
  if (st != CS_OK) return st;
  if (val[O_HELP]) {
    *help = 1;
    return CS_OK;
  }

  long l = 0;
  if (val[O_BACKEND]) o->backend = val[O_BACKEND];
  if (val[O_OUT]) o->out_path = val[O_OUT];
  o->resume = val[O_RESUME] != NULL;
  o->overwrite = val[O_OVERWRITE] != NULL;
  o->in_place = val[O_INPLACE] != NULL;
  if (val[O_TIMER]) {
    if (strcmp(val[O_TIMER], "host") == 0)
      o->host_timer = 1;
    else if (strcmp(val[O_TIMER], "event") == 0)
      o->host_timer = 0;
    else
      return cs_error_set(err, CS_ERR_USAGE, "--timer: expected event or host, got \"%s\"",
                          val[O_TIMER]);
  }
  o->check = val[O_CHECK] != NULL;
  o->dry_run = val[O_DRYRUN] != NULL;
  o->quiet = val[O_QUIET] != NULL;
  o->node_id = val[O_NODEID];
  if (o->resume && o->overwrite)
    return cs_error_set(err, CS_ERR_USAGE, "--resume and --overwrite exclude each other");
  o->probes_only = val[O_PROBES_ONLY] != NULL;
  if (val[O_PROBES] && (st = cs_probe_parse_kinds(val[O_PROBES], &o->probes, err))) return st;
  if (o->probes_only && !val[O_PROBES]) o->probes = CS_PROBE_ALL_KINDS;
  if (val[O_PROBE_OUT]) o->probe_out = val[O_PROBE_OUT];
  if (val[O_PROBE_DTYPES] &&
      (st = cs_probe_parse_dtypes(val[O_PROBE_DTYPES], &o->probe_dtypes, err)))
    return st;
  if (val[O_GEMM_ALGOS]) {
    if ((st = parse_long("gemm-algos", val[O_GEMM_ALGOS], 1, 16, &l, err))) return st;
    o->gemm_algos = (int)l;
  }
  if (val[O_PROBE_SETTLE] && (cs_units_parse_quantity(val[O_PROBE_SETTLE], CS_UNIT_TIME,
                                                      &o->probe_settle_s, err) != CS_OK ||
                              !(o->probe_settle_s >= 0 && o->probe_settle_s <= 600)))
    return cs_error_set(err, CS_ERR_USAGE,
                        "--probe-settle: expected a time from 0s to 600s such as 1s or 250ms, "
                        "got \"%s\"",
                        val[O_PROBE_SETTLE]);
  if ((o->resume || o->overwrite) && o->out_path == NULL && !o->probes)
    return cs_error_set(err, CS_ERR_USAGE, "--resume and --overwrite need -o FILE");

  if (val[O_ITERS]) {
    if ((st = parse_long("iters", val[O_ITERS], 1, 1000000, &l, err))) return st;
    o->iters = (int)l;
  }
  if (val[O_WARMUP]) {
    if ((st = parse_long("warmup_iters", val[O_WARMUP], 0, 1000000, &l, err))) return st;
    o->warmup = (int)l;
  }
  if (val[O_MINRANKS]) {
    if ((st = parse_long("min-ranks", val[O_MINRANKS], 1, 1 << 24, &l, err))) return st;
    o->min_ranks = (int)l;
  }
  if (val[O_NGPUS]) {
    if ((st = parse_long("ngpus", val[O_NGPUS], 1, 1024, &l, err))) return st;
    o->ngpus = (int)l;
  }
  if (val[O_DTYPE] && cs_dtype_parse(val[O_DTYPE], &o->dtype) != 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "--datatype: unknown type \"%s\" (expected float, half, bfloat16, double, "
                        "int8, uint8, int32, uint32, int64 or uint64)",
                        val[O_DTYPE]);
  if (val[O_COLLS] && (st = parse_colls(val[O_COLLS], o->colls, err))) return st;
  if (val[O_ALGOS] && (st = parse_algos(val[O_ALGOS], o, err))) return st;
  if (val[O_TRIALS]) {
    int a = 0, b = 0, n = 0;
    if (sscanf(val[O_TRIALS], "%d:%d%n", &a, &b, &n) == 2 && val[O_TRIALS][n] == '\0' && a >= 1 &&
        b >= a && b <= 1000) {
      o->min_trials = a;
      o->max_trials = b;
    } else if (sscanf(val[O_TRIALS], "%d%n", &a, &n) == 1 && val[O_TRIALS][n] == '\0' && a >= 1 &&
               a <= 1000) {
      o->min_trials = o->max_trials = a;
    } else {
      return cs_error_set(err, CS_ERR_USAGE,
                          "--trials: expected N or MIN:MAX (1..1000), got \"%s\"", val[O_TRIALS]);
    }
  }
  if (val[O_TOL]) {
    char *end;
    double t = strtod(val[O_TOL], &end);
    if (end == val[O_TOL] || *end || !(t >= 0 && t < 10))
      return cs_error_set(err, CS_ERR_USAGE, "--tol: expected a fraction such as 0.05, got \"%s\"",
                          val[O_TOL]);
    o->tol = t;
  }
  if (val[O_TRIALTIME] &&
      cs_units_parse_quantity(val[O_TRIALTIME], CS_UNIT_TIME, &o->trial_time_s, err) != CS_OK)
    return cs_error_prefix(err, "--trial-time");
  if (val[O_TIMEOUT]) {
    if (cs_units_parse_quantity(val[O_TIMEOUT], CS_UNIT_TIME, &o->timeout_s, err) != CS_OK)
      return cs_error_prefix(err, "--timeout");
    if (o->timeout_s < 1.0) return cs_error_set(err, CS_ERR_USAGE, "--timeout: at least 1s");
  }
  if (val[O_NODES] &&
      cs_units_parse_ints(val[O_NODES], 1, 1 << 20, &o->nodes, &o->nnodes, err) != CS_OK)
    return cs_error_prefix(err, "--nodes");
  if (val[O_GPN] && cs_units_parse_ints(val[O_GPN], 1, 1 << 12, &o->gpn, &o->ngpn, err) != CS_OK)
    return cs_error_prefix(err, "--gpus-per-node");
  return parse_size_opts(val, o, err);
}

enum cs_status cs_run_opts_parse(int argc, char **argv, struct cs_run_opts *o, int *help,
                                 struct cs_error *err) {
  struct cs_error e = {0};
  enum cs_status st = parse_opts(argc, argv, o, help, &e);
  /* an option's value that does not read (a time, a count) is a usage error like any other: the
   * value parsers report CS_ERR_PARSE or CS_ERR_RANGE; out of memory stays what it is */
  if (st != CS_OK && st != CS_ERR_NOMEM) st = CS_ERR_USAGE;
  return st == CS_OK ? CS_OK : cs_error_set(err, st, "%s", e.msg);
}
