/* runner_opts.h — what a run of the measurement runner is told: the element type (coll.h's
 * vocabulary), the (algorithm, protocol) pairs to force, and struct cs_run_opts with its
 * command-line parser and --help (one table drives both). The harness that acts on them is
 * runner.h.
 */
#ifndef CS_RUNNER_OPTS_H
#define CS_RUNNER_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "coll.h"
#include "status.h"

/* One (algorithm, protocol) pair to force; CS_ALGO_AUTO/CS_PROTO_AUTO leave the choice to the
 * library. mpi_alg and mpi_coll are the MPI backend's: Open MPI's algorithm number to force for
 * collective mpi_coll (all_reduce or all_gather, in that collective's numbering, model/mpicoll.h),
 * 0 = the library's own choice. */
struct cs_run_variant {
  enum cs_algo algo;
  enum cs_proto proto;
  int mpi_alg;
  enum cs_coll mpi_coll;
};

#define CS_RUN_MAX_VARIANTS 32

/* Everything a run is told. cs_run_opts_parse() fills it from the command line; the caller may
 * then set the callbacks. Release with cs_run_opts_fini(). */
struct cs_run_opts {
  const char *backend;  /* "mpi", "nccl" or "null"; default: nccl when built in, else mpi */
  const char *out_path; /* measurements CSV; NULL writes none */
  int resume;           /* continue out_path, skipping rows it holds */
  int overwrite;        /* replace out_path if it exists */
  double *sizes;        /* message sizes in bytes (owned), ascending */
  size_t nsizes;
  int iters;  /* -n: timed operations per trial (fewer for long operations) */
  int warmup; /* -w: untimed operations before each trial */
  int min_trials, max_trials;
  double tol;          /* stop when (max - min) / median of the trials is at most tol */
  double trial_time_s; /* a trial lasts about this long at most (iters is cut to fit) */
  enum cs_dtype dtype;
  int colls[CS_COLL_COUNT]; /* 1 for each collective to measure */
  long *nodes;              /* node counts to measure (owned); NULL: every count 1..N */
  size_t nnodes;
  long *gpn; /* ranks per node to measure (owned); NULL: 1, 2, 4, .., G and G */
  size_t ngpn;
  struct cs_run_variant variants[CS_RUN_MAX_VARIANTS]; /* empty: the backend's default list */
  int nvariants;
  int all_variants;    /* --algos all: every pair (mpi: algorithm) the backend offers, plus auto */
  int in_place;        /* measure in-place operations instead of out-of-place */
  int host_timer;      /* --timer host: host clock around launch + synchronize, after a
                        * barrier, exactly as nccl-tests (default: device events) */
  int min_ranks;       /* shapes with fewer ranks are skipped (default 2) */
  const char *node_id; /* --node-id */
  int ngpus;           /* single-process NCCL: GPUs to drive, 0 = all visible */
  double timeout_s;    /* a blocking step that makes no progress this long fails */
  int check;           /* --check: verify the set-up and one small all_reduce, then stop */
  int dry_run; /* print the plan (shapes x variants x collectives x sizes), measure nothing */
  int quiet;   /* no table on stdout */
  /* Called with a short description before each blocking step and with NULL after it; may be
   * NULL. The executable uses it to feed its watchdog. */
  void (*progress)(void *ctx, const char *what);
  void *progress_ctx;
  FILE *table;         /* where rank 0 prints the table (stdout when NULL) */
  FILE *log;           /* where rank 0 prints progress and notes (NULL: nowhere) */
  int log_is_tty;      /* print a progress line with ETA on log */
  const char *cmdline; /* recorded in the CSV provenance; may be NULL */
  /* compute probes (probe.h): CS_PROBE_BIT(kind) set for each kind to run, 0 = none */
  unsigned probes;
  unsigned probe_dtypes; /* CS_PROBE_BIT(dtype) for each GEMM precision (default: all) */
  int probes_only;       /* run the probes and measure no collectives */
  const char *probe_out; /* the probe CSV [probes.csv] */
  int gemm_algos;        /* GEMM: time the heuristic's first N algorithms, keep the fastest [1] */
  double probe_settle_s; /* GEMM: seconds of back-to-back 8192^3 products before the first point,
                            so every point runs at settled clocks [1] */
};

/* Sets the defaults: all_reduce, all_gather, reduce_scatter, all_to_all and send_recv; -b 8 -e 1G
 * -f 2, -n 20 -w 5, 3..10 trials within 5%, 50 ms trials, float, 60 s timeout. Owns nothing yet. */
void cs_run_opts_init(struct cs_run_opts *o);

/* Parses the runner's options (argv[0] is the program or verb name) into o, which must have been
 * initialised. Returns CS_ERR_USAGE with a message on a bad option; sets *help for --help. On
 * failure o still owns what it allocated: call cs_run_opts_fini() in every case. */
enum cs_status cs_run_opts_parse(int argc, char **argv, struct cs_run_opts *o, int *help,
                                 struct cs_error *err);

void cs_run_opts_fini(struct cs_run_opts *o);

/* Prints the runner's usage and options to f. prog is the name shown ("commscale-run"). */
void cs_run_usage(FILE *f, const char *prog);

#endif
