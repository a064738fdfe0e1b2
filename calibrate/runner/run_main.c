/* run_main.c — commscale-run, the measurement runner executable.
 *
 * It builds with the C library, and optionally MPI, CUDA and NCCL: nothing else, so that it can be
 * built on the GPU nodes themselves. It starts MPI when an MPI launcher started it (or when the mpi
 * backend is asked for), runs the harness (runner.h), and watches it: a watchdog thread ends the
 * process when a blocking step has made no progress for --timeout, naming its rank, its host and
 * the step, so that a dead or hung peer makes every other rank exit within a bounded time (mpirun
 * ends the rest of the job when one process exits with an error). With --probes it then runs the
 * compute probes (probe.h) under the same watchdog; --probes-only runs them alone.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "runner.h"

#ifdef CS_HAVE_MPI
#include <mpi.h>
#endif

struct watchdog {
  pthread_mutex_t mu;
  double since; /* when the current step began */
  int busy;     /* inside a blocking step */
  char what[192];
  double timeout_s;
  int rank;
  char host[128];
  int stop;
};

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void wd_progress(void *ctx, const char *what) {
  struct watchdog *w = ctx;
  pthread_mutex_lock(&w->mu);
  w->since = mono_s();
  w->busy = what != NULL;
  if (what) snprintf(w->what, sizeof w->what, "%s", what);
  pthread_mutex_unlock(&w->mu);
}

static void *wd_main(void *arg) {
  struct watchdog *w = arg;
  for (;;) {
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&w->mu);
    int stop = w->stop;
    int fire = w->busy && mono_s() - w->since > w->timeout_s;
    char what[192];
    snprintf(what, sizeof what, "%s", w->what);
    pthread_mutex_unlock(&w->mu);
    if (stop) return NULL;
    if (fire) {
      fprintf(stderr,
              "commscale-run: rank %d on %s: no progress for %.0f s while %s; a peer rank is dead "
              "or hung (or --timeout is too short); giving up\n",
              w->rank, w->host, w->timeout_s, what);
      fflush(stderr);
      _exit(1);
    }
  }
}

#ifdef CS_HAVE_MPI
static int launched_by_mpi(void) {
  static const char *const vars[] = {
      "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",           "PMIX_RANK", "PMI_RANK",
      "MPI_LOCALNRANKS",      "MV2_COMM_WORLD_SIZE"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    if (getenv(vars[i])) return 1;
  return 0;
}
#endif

int main(int argc, char **argv) {
  struct cs_run_opts o;
  struct cs_error err = {0};
  int help = 0, rank = 0, nprocs = 1, mpi = 0;
  cs_run_opts_init(&o);
  enum cs_status st = cs_run_opts_parse(argc, argv, &o, &help, &err);

#ifdef CS_HAVE_MPI
  if (st == CS_OK && !help && (launched_by_mpi() || strcmp(o.backend, "mpi") == 0)) {
    int provided = 0;
    /* Open MPI reads a forced algorithm (backend_mpi.c) only with dynamic rules on, a setting it
     * reads once, at MPI_Init */
    int forces = o.all_variants && strcmp(o.backend, "mpi") == 0;
    for (int i = 0; i < o.nvariants; i++)
      forces |= o.variants[i].mpi_alg != 0;
    if (forces) setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 1);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    mpi = 1;
  }
#endif
  if (help) {
    cs_run_usage(stdout, "commscale-run");
    cs_run_opts_fini(&o);
    return 0;
  }
  if (st != CS_OK) {
    fprintf(stderr, "commscale-run: %s\n", err.msg);
    cs_run_opts_fini(&o);
    return cs_status_exit_code(st);
  }

  char cmd[1024];
  size_t used = 0;
  cmd[0] = '\0';
  for (int i = 0; i < argc && used < sizeof cmd; i++)
    used += (size_t)snprintf(cmd + used, sizeof cmd - used, "%s%s", i ? " " : "", argv[i]);
  o.cmdline = cmd;
  o.log = rank == 0 ? stderr : NULL;
  o.log_is_tty = rank == 0 && isatty(STDERR_FILENO);

  static struct watchdog wd = {.mu = PTHREAD_MUTEX_INITIALIZER};
  wd.timeout_s = o.timeout_s;
  wd.rank = rank;
  if (o.node_id)
    snprintf(wd.host, sizeof wd.host, "%s", o.node_id);
  else if (getenv("CS_NODE_ID"))
    snprintf(wd.host, sizeof wd.host, "%s", getenv("CS_NODE_ID"));
  else if (gethostname(wd.host, sizeof wd.host) != 0)
    snprintf(wd.host, sizeof wd.host, "?");
  o.progress = wd_progress;
  o.progress_ctx = &wd;
  pthread_t th;
  int have_wd = pthread_create(&th, NULL, wd_main, &wd) == 0;

  st = o.probes_only ? CS_OK : cs_run(&o, &err);
  if (st == CS_OK && o.probes) st = cs_probe_run(&o, nprocs, rank, &err);

  if (have_wd) {
    pthread_mutex_lock(&wd.mu);
    wd.stop = 1;
    pthread_mutex_unlock(&wd.mu);
    pthread_join(th, NULL);
  }
  int code = cs_status_exit_code(st);
  if (st != CS_OK && err.msg[0] != '\0') {
    if (strstr(err.msg, "rank ") == err.msg)
      fprintf(stderr, "commscale-run: %s\n", err.msg);
    else
      fprintf(stderr, "commscale-run: rank %d on %s: %s\n", rank, wd.host, err.msg);
    fflush(stderr);
  }
  cs_run_opts_fini(&o);
#ifdef CS_HAVE_MPI
  if (mpi) {
    if (st != CS_OK && nprocs > 1 && st != CS_ERR_USAGE) MPI_Abort(MPI_COMM_WORLD, code);
    MPI_Finalize();
  }
#else
  (void)mpi, (void)nprocs;
#endif
  return code;
}
