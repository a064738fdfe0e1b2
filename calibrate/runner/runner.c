/* runner.c — the measurement harness; see runner.h.
 *
 * The run is planned before anything is measured: shapes x variants x collectives x sizes become
 * a list of points that every process computes identically from the options and the exchanged node
 * keys. Rank 0 marks the points the output file already holds (--resume) and broadcasts the marks,
 * so resuming never needs a second exchange. Each group of points that share a shape and a variant
 * runs on one communicator; processes outside the group wait in a polled barrier that keeps their
 * watchdog fed, while the group's own members give up after opts->timeout_s of silence.
 */
#include "runner.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mpicoll.h"
#include "probe.h"
#include "runfile.h"
#include "stats.h"
#include "units.h"

#ifdef CS_HAVE_MPI
#include <mpi.h>
#endif

/* ---- environment --------------------------------------------------------------------------- */

/* The user's own NCCL_ALGO/NCCL_PROTO, saved before the first forced pair. */
static int env_saved;
static char user_algo[256], user_proto[256];
static int user_has_algo, user_has_proto;

static const char *nccl_algo_env(enum cs_algo a) {
  switch (a) {
  case CS_ALGO_RING:
    return "Ring";
  case CS_ALGO_TREE:
    return "Tree";
  case CS_ALGO_NVLS:
    return "NVLS";
  case CS_ALGO_COLLNET:
    return "CollnetDirect";
  case CS_ALGO_PAT:
    return "PAT";
  default:
    return NULL;
  }
}

void cs_run_force_env(struct cs_run_variant v) {
  if (!env_saved) {
    const char *a = getenv("NCCL_ALGO"), *p = getenv("NCCL_PROTO");
    user_has_algo = a != NULL;
    user_has_proto = p != NULL;
    snprintf(user_algo, sizeof user_algo, "%s", a ? a : "");
    snprintf(user_proto, sizeof user_proto, "%s", p ? p : "");
    env_saved = 1;
  }
  const char *a = nccl_algo_env(v.algo);
  if (a)
    setenv("NCCL_ALGO", a, 1);
  else if (user_has_algo)
    setenv("NCCL_ALGO", user_algo, 1);
  else
    unsetenv("NCCL_ALGO");
  const char *p = v.proto == CS_PROTO_LL       ? "LL"
                  : v.proto == CS_PROTO_LL128  ? "LL128"
                  : v.proto == CS_PROTO_SIMPLE ? "Simple"
                                               : NULL;
  if (p)
    setenv("NCCL_PROTO", p, 1);
  else if (user_has_proto)
    setenv("NCCL_PROTO", user_proto, 1);
  else
    unsetenv("NCCL_PROTO");
}

extern char **environ;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int tag_ignored(const char *kv) {
  static const char *const ign[] = {"NCCL_ALGO=",   "NCCL_PROTO=",       "NCCL_DEBUG",
                                    "NCCL_HOSTID=", "NCCL_NVLS_ENABLE=", "NCCL_SOCKET_IFNAME=",
                                    "NCCL_IB_HCA=", "NCCL_COMM_ID=",     "NCCL_VERSION=",
                                    "NCCL_TESTS_" /* a harness's own variables, not NCCL's */};
  for (size_t i = 0; i < sizeof ign / sizeof ign[0]; i++)
    if (strncmp(kv, ign[i], strlen(ign[i])) == 0) return 1;
  return 0;
}

/* Joins the n sorted settings kv into buf, ';'-separated. */
static void tag_join(const char **kv, size_t n, char *buf, size_t len) {
  qsort(kv, n, sizeof kv[0], cmp_str);
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ";" : "", kv[i]);
}

void cs_run_config_tag(char *buf, size_t len, const char *backend) {
  const char *keep[256];
  size_t n = 0;
  int mpi = backend && strcmp(backend, "mpi") == 0;
  for (char **e = environ; e && *e && n < 256; e++) {
    if (mpi ? strncmp(*e, "OMPI_MCA_coll_", 14) == 0
            : strncmp(*e, "NCCL_", 5) == 0 && !tag_ignored(*e))
      keep[n++] = *e;
  }
  tag_join(keep, n, buf, len);
}

void cs_run_tag_set(char *buf, size_t len, const char *key, const char *value) {
  char old[512], set[256];
  snprintf(old, sizeof old, "%s", buf);
  snprintf(set, sizeof set, "%s=%s", key, value);
  const char *kv[64];
  size_t n = 0, kl = strlen(key);
  char *save = NULL;
  for (char *t = strtok_r(old, ";", &save); t && n < 63; t = strtok_r(NULL, ";", &save))
    if (!(strncmp(t, key, kl) == 0 && t[kl] == '=')) kv[n++] = t;
  kv[n++] = set;
  tag_join(kv, n, buf, len);
}

/* ---- the backends compiled in -------------------------------------------------------------- */

#ifdef CS_HAVE_MPI
extern const struct cs_backend cs_backend_mpi;
#endif
#ifdef CS_HAVE_NCCL
extern const struct cs_backend cs_backend_nccl;
#endif
extern const struct cs_backend cs_backend_null;

const struct cs_backend *const cs_backends[] = {
#ifdef CS_HAVE_NCCL
    &cs_backend_nccl,
#endif
#ifdef CS_HAVE_MPI
    &cs_backend_mpi,
#endif
    &cs_backend_null, NULL};

const struct cs_backend *cs_backend_find(const char *name) {
  for (int i = 0; cs_backends[i]; i++)
    if (strcmp(cs_backends[i]->name, name) == 0) return cs_backends[i];
  return NULL;
}

/* ---- the world ----------------------------------------------------------------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress(const struct cs_run_opts *o, const char *what) {
  if (o->progress) o->progress(o->progress_ctx, what);
}

static void node_key(const struct cs_run_opts *o, char *key, size_t len) {
  const char *k = o->node_id;
  if (k == NULL || !*k) k = getenv("CS_NODE_ID");
  if (k == NULL || !*k) k = getenv("NCCL_HOSTID");
  if (k && *k) {
    snprintf(key, len, "%s", k);
    return;
  }
#ifdef CS_HAVE_MPI
  int init = 0;
  MPI_Initialized(&init);
  if (init) {
    char name[MPI_MAX_PROCESSOR_NAME];
    int nl = 0;
    MPI_Get_processor_name(name, &nl);
    size_t nk = strlen(name) < len ? strlen(name) : len - 1;
    memcpy(key, name, nk);
    key[nk] = '\0';
    return;
  }
#endif
  if (gethostname(key, len) != 0) snprintf(key, len, "localhost");
  key[len - 1] = '\0';
}

static void world_free(struct cs_run_world *w) {
  free(w->node_of);
  free(w->local_of);
  free(w->node_name);
  memset(w, 0, sizeof *w);
}

/* Builds the world from every rank's node key. keys holds nprocs * nlocal keys of 64 bytes; each
 * process drives nlocal ranks (1 when nprocs > 1). */
static enum cs_status world_build(struct cs_run_world *w, const char (*keys)[64], int nprocs,
                                  int proc, int nlocal, struct cs_error *err) {
  w->nprocs = nprocs;
  w->proc = proc;
  w->nranks = nprocs * nlocal;
  w->first = proc * nlocal;
  w->nlocal = nlocal;
  w->node_of = calloc((size_t)w->nranks, sizeof *w->node_of);
  w->local_of = calloc((size_t)w->nranks, sizeof *w->local_of);
  w->node_name = calloc((size_t)w->nranks, sizeof *w->node_name);
  int *count = calloc((size_t)w->nranks, sizeof *count);
  if (!w->node_of || !w->local_of || !w->node_name || !count) {
    free(count);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory describing %d ranks", w->nranks);
  }
  w->nnodes = 0;
  for (int r = 0; r < w->nranks; r++) {
    const char *k = keys[r];
    int n = 0;
    while (n < w->nnodes && strcmp(w->node_name[n], k) != 0)
      n++;
    if (n == w->nnodes) snprintf(w->node_name[w->nnodes++], 64, "%s", k);
    w->node_of[r] = n;
    w->local_of[r] = count[n]++;
  }
  w->max_gpn = count[0];
  for (int n = 1; n < w->nnodes; n++)
    if (count[n] < w->max_gpn) w->max_gpn = count[n];
  free(count);
  return CS_OK;
}

#ifdef CS_HAVE_MPI
static MPI_Comm world_comm = MPI_COMM_WORLD;
#endif

/* Waits until every process arrives. A member of the group that just ran gives up after the
 * timeout (its peers finish together with it); a process that sat the group out waits as long as
 * the group runs, feeding its watchdog. */
static enum cs_status world_sync(const struct cs_run_opts *o, const struct cs_run_world *w,
                                 int member, struct cs_error *err) {
#ifdef CS_HAVE_MPI
  if (w->mpi_world == NULL || w->nprocs == 1) return CS_OK;
  MPI_Request req;
  MPI_Ibarrier(world_comm, &req);
  double t0 = now_s();
  for (;;) {
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) return CS_OK;
    if (member && now_s() - t0 > o->timeout_s)
      return cs_error_set(err, CS_ERR_EXTERNAL,
                          "rank %d on %s: the other processes did not reach the barrier after the "
                          "group within %.0f s (a rank is dead or hung)",
                          w->proc, w->node_name[w->node_of[w->first]], o->timeout_s);
    if (!member) progress(o, "waiting while another group measures");
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
#else
  (void)o, (void)w, (void)member, (void)err;
  return CS_OK;
#endif
}

/* Every process learns rank 0's status; a failure on rank 0 (say, the output file) ends all. */
static enum cs_status share_status(const struct cs_run_world *w, enum cs_status st,
                                   struct cs_error *err) {
#ifdef CS_HAVE_MPI
  if (w->mpi_world && w->nprocs > 1) {
    int s = (int)st;
    MPI_Bcast(&s, 1, MPI_INT, 0, world_comm);
    if (s != CS_OK && w->proc != 0) /* rank 0 reports it; the others stay quiet */
      return cs_error_set(err, (enum cs_status)s, "%s", "");
    return (enum cs_status)s;
  }
#else
  (void)w, (void)err;
#endif
  return st;
}

/* ---- the plan ------------------------------------------------------------------------------ */

struct shape {
  int nodes, gpn, ranks;
};

struct point {
  int shape, var;
  enum cs_coll coll;
  double bytes;
  char skip; /* 1: in the file already (resume) */
};

struct plan {
  struct shape *shapes;
  int nshapes;
  struct cs_run_variant var[CS_RUN_MAX_VARIANTS];
  int nvar;
  struct point *pts;
  size_t npts, cap;
};

static void plan_free(struct plan *p) {
  free(p->shapes);
  free(p->pts);
  memset(p, 0, sizeof *p);
}

/* Bytes of c at nominal size s on n ranks, rounded as nccl-tests rounds counts; 0 to skip. */
static double actual_bytes(enum cs_coll c, double s, int n, size_t es) {
  double count = floor(s / (double)es);
  if (c == CS_COLL_ALL_GATHER || c == CS_COLL_REDUCE_SCATTER || c == CS_COLL_ALL_TO_ALL)
    count = floor(count / n) * n;
  return count * (double)es;
}

/* The algorithm a variant forces, as the table and the log name it. */
static const char *algo_word(struct cs_run_variant v) {
  return v.mpi_alg != 0 ? cs_mpi_coll_alg_name(v.mpi_coll, v.mpi_alg) : cs_algo_name(v.algo);
}

static int variant_fits(struct cs_run_variant v, enum cs_coll c) {
  int p2p = c == CS_COLL_ALL_TO_ALL || c == CS_COLL_SEND_RECV;
  if (v.mpi_alg != 0) return c == v.mpi_coll; /* Open MPI's algorithms of that collective */
  if (v.algo == CS_ALGO_AUTO) return !p2p || v.proto == CS_PROTO_AUTO;
  return cs_coll_algo_valid(c, v.algo);
}

static int has_long(const long *v, size_t n, long x) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

static enum cs_status plan_build(struct plan *p, const struct cs_run_opts *o,
                                 const struct cs_backend *be, const struct cs_run_world *w,
                                 struct cs_error *err) {
  memset(p, 0, sizeof *p);
  if (o->nvariants > 0) {
    memcpy(p->var, o->variants, sizeof p->var);
    p->nvar = o->nvariants;
  } else {
    const struct cs_run_variant *src = o->all_variants ? be->variants_all : be->variants_default;
    p->nvar = o->all_variants ? be->nvariants_all : be->nvariants_default;
    memcpy(p->var, src, (size_t)p->nvar * sizeof *src);
  }
  /* shapes: node counts x ranks per node, smallest first */
  p->shapes = calloc((size_t)w->nnodes * 32 + 1, sizeof *p->shapes);
  if (p->shapes == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory planning");
  for (int n = 1; n <= w->nnodes; n++) {
    if (o->nodes && !has_long(o->nodes, o->nnodes, n)) continue;
    for (int g = 1; g <= w->max_gpn; g++) {
      int pow2 = (g & (g - 1)) == 0;
      if (o->gpn ? !has_long(o->gpn, o->ngpn, g) : !(pow2 || g == w->max_gpn)) continue;
      if (n * g < o->min_ranks) continue;
      if (p->nshapes == w->nnodes * 32) break;
      p->shapes[p->nshapes++] = (struct shape){n, g, n * g};
    }
  }
  if (o->nodes)
    for (size_t i = 0; i < o->nnodes; i++)
      if (o->nodes[i] > w->nnodes)
        return cs_error_set(err, CS_ERR_USAGE, "--nodes: %ld nodes asked for, the launch has %d",
                            o->nodes[i], w->nnodes);
  if (o->gpn)
    for (size_t i = 0; i < o->ngpn; i++)
      if (o->gpn[i] > w->max_gpn)
        return cs_error_set(err, CS_ERR_USAGE,
                            "--gpus-per-node: %ld asked for, the smallest node has %d ranks",
                            o->gpn[i], w->max_gpn);
  size_t es = cs_dtype_size(o->dtype);
  for (int s = 0; s < p->nshapes; s++)
    for (int v = 0; v < p->nvar; v++)
      for (int c = 0; c < CS_COLL_COUNT; c++) {
        if (!o->colls[c] || !variant_fits(p->var[v], (enum cs_coll)c)) continue;
        double last = -1;
        for (size_t k = 0; k < o->nsizes; k++) {
          double b = actual_bytes((enum cs_coll)c, o->sizes[k], p->shapes[s].ranks, es);
          if (b <= 0 || b == last) continue;
          last = b;
          if (p->npts == p->cap) {
            size_t nc = p->cap ? 2 * p->cap : 256;
            struct point *q = realloc(p->pts, nc * sizeof *q);
            if (q == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory planning");
            p->pts = q;
            p->cap = nc;
          }
          p->pts[p->npts++] = (struct point){s, v, (enum cs_coll)c, b, 0};
        }
      }
  return CS_OK;
}

/* Fills the identifying fields of the row for point pt (timings left zero). */
static void row_ident(struct cs_meas_row *r, const struct plan *p, const struct point *pt,
                      const struct cs_run_opts *o, enum cs_launch launch, const char *config) {
  memset(r, 0, sizeof *r);
  const struct shape *s = &p->shapes[pt->shape];
  int p2p = pt->coll == CS_COLL_ALL_TO_ALL || pt->coll == CS_COLL_SEND_RECV;
  r->coll = pt->coll;
  r->algo = p2p && p->var[pt->var].algo == CS_ALGO_AUTO ? CS_ALGO_AUTO : p->var[pt->var].algo;
  r->proto = p->var[pt->var].proto;
  snprintf(r->dtype, sizeof r->dtype, "%s", cs_dtype_name(o->dtype));
  r->ranks = s->ranks;
  r->nodes = s->nodes;
  r->gpus_per_node = s->gpn;
  r->bytes = pt->bytes;
  r->in_place = o->in_place;
  r->launch = launch;
  snprintf(r->config, sizeof r->config, "%s", config);
  int alg = p->var[pt->var].mpi_alg;
  if (alg != 0) { /* the MPI backend forced Open MPI's algorithm (backend_mpi.c): say so */
    char v[16];
    snprintf(v, sizeof v, "%d", alg);
    cs_run_tag_set(r->config, sizeof r->config,
                   p->var[pt->var].mpi_coll == CS_COLL_ALL_GATHER
                       ? "OMPI_MCA_coll_tuned_allgather_algorithm"
                       : "OMPI_MCA_coll_tuned_allreduce_algorithm",
                   v);
    cs_run_tag_set(r->config, sizeof r->config, "OMPI_MCA_coll_tuned_use_dynamic_rules", "1");
  }
}

static int same_point(const struct cs_meas_row *a, const struct cs_meas_row *b) {
  return a->coll == b->coll && a->algo == b->algo && a->proto == b->proto &&
         strcmp(a->dtype, b->dtype) == 0 && a->ranks == b->ranks && a->nodes == b->nodes &&
         a->gpus_per_node == b->gpus_per_node && a->bytes == b->bytes &&
         a->in_place == b->in_place && a->launch == b->launch && strcmp(a->config, b->config) == 0;
}

/* ---- output -------------------------------------------------------------------------------- */

static void table_head(FILE *t, const struct cs_backend *be, const struct shape *s,
                       struct cs_run_variant v, const struct cs_run_opts *o) {
  fprintf(t,
          "#\n# backend %s  ranks %d = %d node(s) x %d  algo %s  proto %s  %s\n"
          "# %14s %12s %10s %8s %10s %10s %10s %6s %9s %9s\n"
          "# %14s %12s %10s %8s %10s %10s %10s %6s %9s %9s\n",
          be->name, s->ranks, s->nodes, s->gpn, algo_word(v), cs_proto_name(v.proto),
          o->in_place ? "in-place" : "out-of-place", "collective", "size", "count", "type", "time",
          "min", "max", "trials", "algbw", "busbw", "", "(B)", "(elements)", "", "(us)", "(us)",
          "(us)", "", "(GB/s)", "(GB/s)");
}

static void table_row(FILE *t, const struct cs_meas_row *r, size_t es) {
  fprintf(t, "  %14s %12.0f %10.0f %8s %10.2f %10.2f %10.2f %6d %9.2f %9.2f\n",
          cs_coll_name(r->coll), r->bytes, r->bytes / (double)es, r->dtype, r->time_us,
          r->time_min_us, r->time_max_us, r->trials, r->algbw_GBps, r->busbw_GBps);
  fflush(t);
}

static void fmt_dur(double s, char *buf, size_t len) {
  if (s < 60)
    snprintf(buf, len, "%.0fs", s);
  else if (s < 3600)
    snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
  else
    snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* ---- the run ------------------------------------------------------------------------------- */

struct run {
  const struct cs_run_opts *o;
  const struct cs_backend *be;
  void *state;
  enum cs_launch launch;
  struct cs_run_world w;
  struct plan plan;
  FILE *csv;
  FILE *table;
  char config[256];
  char source[256];
  double t_start;
  size_t todo, done;
  long fail_after, written; /* $CS_RUN_FAIL_AFTER: fail after that many rows (tests) */
  int stop_me;              /* $CS_RUN_STOP_RANK names this process: freeze (tests) */
};

/* --resume: marks the planned points that the file already holds. */
static enum cs_status scan_done(void *ctx, const char *path, struct cs_error *err) {
  struct run *R = ctx;
  const struct cs_run_opts *o = R->o;
  struct cs_meas_set old;
  cs_meas_set_init(&old);
  enum cs_status st = cs_meas_read_file(path, &old, err);
  if (st != CS_OK) {
    cs_meas_set_fini(&old);
    return cs_error_prefix(err, "--resume");
  }
  size_t skipped = 0;
  for (size_t i = 0; i < R->plan.npts; i++) {
    struct cs_meas_row key;
    row_ident(&key, &R->plan, &R->plan.pts[i], o, R->launch, R->config);
    for (size_t j = 0; j < old.n; j++)
      if (same_point(&key, &old.rows[j])) {
        R->plan.pts[i].skip = 1;
        skipped++;
        break;
      }
  }
  if (o->log)
    fprintf(o->log, "commscale-run: %s holds %zu rows; %zu of the %zu planned points are done\n",
            path, old.n, skipped, R->plan.npts);
  cs_meas_set_fini(&old);
  return CS_OK;
}

/* The provenance of a new measurements file, then its column header. */
static enum cs_status write_header(void *ctx, FILE *f, struct cs_error *err) {
  struct run *R = ctx;
  const struct cs_run_opts *o = R->o;
  struct cs_meas_set meta;
  cs_meas_set_init(&meta);
  char buf[256], tbuf[64];
  time_t now = time(NULL);
  struct tm tmv;
  strftime(tbuf, sizeof tbuf, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tmv));
  cs_meas_set_meta(&meta, "tool", "commscale-run " CS_VERSION, NULL);
  cs_meas_set_meta(&meta, "date", tbuf, NULL);
  cs_meas_set_meta(&meta, "run", R->source, NULL);
  cs_meas_set_meta(&meta, "backend", R->be->name, NULL);
  cs_meas_set_meta(&meta, "launch", cs_meas_launch_name(R->launch), NULL);
  size_t used = 0;
  buf[0] = '\0';
  for (int n = 0; n < R->w.nnodes && used < sizeof buf; n++)
    used +=
        (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", n ? "," : "", R->w.node_name[n]);
  cs_meas_set_meta(&meta, "hosts", buf, NULL);
  snprintf(buf, sizeof buf, "%d ranks on %d nodes, at least %d per node", R->w.nranks, R->w.nnodes,
           R->w.max_gpn);
  cs_meas_set_meta(&meta, "ranks", buf, NULL);
  if (o->cmdline) cs_meas_set_meta(&meta, "command", o->cmdline, NULL);
  snprintf(buf, sizeof buf,
           "median of %d..%d trials within %.0f%%, max over ranks, warm-up %d, %s timer",
           o->min_trials, o->max_trials, 100 * o->tol, o->warmup,
           o->host_timer || strcmp(R->be->name, "mpi") == 0 ? "host" : "device-event");
  cs_meas_set_meta(&meta, "timing", buf, NULL);
#ifdef CS_HAVE_MPI
  if (R->w.mpi_world) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl) *nl = '\0';
    cs_meas_set_meta(&meta, "mpi", lib, NULL);
  }
#endif
  if (R->be->describe) R->be->describe(R->state, &meta);
  enum cs_status st = cs_meas_write_header(f, &meta, err);
  cs_meas_set_fini(&meta);
  return st;
}

static enum cs_status open_output(struct run *R, struct cs_error *err) {
  const struct cs_run_opts *o = R->o;
  struct cs_runfile spec = {o->out_path, "--output",   o->resume, o->overwrite, 1, o->dry_run,
                            scan_done,   write_header, R};
  return cs_runfile_open(&spec, &R->csv, err);
}

/* One timed batch of pt, the same for every backend: `warmup` untimed operations, the clock
 * started, `iters` timed ones, the clock stopped; *sec is the time per operation, the maximum over
 * the group's ranks, identical on every rank. */
static enum cs_status timed_batch(const struct cs_backend *be, void *grp, const struct point *pt,
                                  const struct cs_run_opts *o, int warmup, int iters, double *sec,
                                  struct cs_error *err) {
  double t = 0;
  enum cs_status st = be->prepare(grp, pt->coll, o->dtype, pt->bytes, o->in_place, err);
  if (st == CS_OK) st = be->issue(grp, warmup, err);
  if (st == CS_OK) st = be->clock_start(grp, err);
  if (st == CS_OK) st = be->issue(grp, iters, err);
  if (st == CS_OK) st = be->clock_stop(grp, &t, err);
  if (st != CS_OK) return st;
  t /= iters;
  st = be->group_max(grp, &t, err);
  *sec = t;
  return st;
}

/* Measures one point: trials until the spread is small. Returns CS_ERR_UNSUPPORTED when the
 * backend refuses it. *est is the time of the last operation (seconds), used to size the next. */
static enum cs_status measure_point(struct run *R, void *grp, const struct point *pt, double *est,
                                    struct cs_meas_row *row, struct cs_error *err) {
  const struct cs_run_opts *o = R->o;
  double times[1000];
  int iters = o->iters;
  if (*est > 0) {
    double fit = floor(o->trial_time_s / *est);
    if (fit < iters) iters = fit < 1 ? 1 : (int)fit;
  }
  int warm = o->warmup < iters ? o->warmup : iters;
  if (o->warmup > 0 && warm < 1) warm = 1;
  int nt = 0;
  char what[160];
  char sz[32];
  cs_units_format_size(pt->bytes, sz, sizeof sz);
  const struct shape *s = &R->plan.shapes[pt->shape];
  snprintf(what, sizeof what, "%s %s on %d ranks (%d nodes x %d), %s/%s", cs_coll_name(pt->coll),
           sz, s->ranks, s->nodes, s->gpn, algo_word(R->plan.var[pt->var]),
           cs_proto_name(R->plan.var[pt->var].proto));
  if (R->stop_me) {
    /* fault injection for the watchdog test: this process freezes as a hung rank would */
    R->stop_me = 0;
    raise(SIGSTOP);
  }
  for (nt = 0; nt < o->max_trials; nt++) {
    double sec = 0;
    progress(o, what);
    enum cs_status st =
        timed_batch(R->be, grp, pt, o, nt == 0 ? warm : (o->warmup ? 1 : 0), iters, &sec, err);
    progress(o, NULL);
    if (st != CS_OK) return st;
    times[nt] = sec;
    if (nt + 1 >= o->min_trials) {
      double t[1000];
      memcpy(t, times, (size_t)(nt + 1) * sizeof *t);
      double med = cs_stats_median(t, (size_t)nt + 1); /* sorts t */
      if (med > 0 && (t[nt] - t[0]) / med <= o->tol) {
        nt++;
        break;
      }
    }
  }
  if (nt > o->max_trials) nt = o->max_trials;
  double med = cs_stats_median(times, (size_t)nt); /* sorts times: [0] is the minimum */
  *est = med;
  row_ident(row, &R->plan, pt, o, R->launch, R->config);
  row->time_us = med * 1e6;
  row->time_min_us = times[0] * 1e6;
  row->time_max_us = times[nt - 1] * 1e6;
  row->trials = nt;
  snprintf(row->source, sizeof row->source, "%s", R->source);
  cs_meas_row_derive(row);
  return CS_OK;
}

static void show_progress(struct run *R, int final) {
  const struct cs_run_opts *o = R->o;
  if (!o->log || !o->log_is_tty || R->w.proc != 0) return;
  double el = now_s() - R->t_start;
  char e1[32], e2[32];
  fmt_dur(el, e1, sizeof e1);
  if (R->done > 0)
    fmt_dur(el / (double)R->done * (double)(R->todo - R->done), e2, sizeof e2);
  else
    snprintf(e2, sizeof e2, "?");
  fprintf(o->log, "\r[%zu/%zu] elapsed %s, ETA %s   %s", R->done, R->todo, e1, e2,
          final ? "\n" : "");
  fflush(o->log);
}

/* Runs the points of one (shape, variant) group: [lo, hi) in the plan. */
static enum cs_status run_group(struct run *R, size_t lo, size_t hi, struct cs_error *err) {
  const struct cs_run_opts *o = R->o;
  const struct point *p0 = &R->plan.pts[lo];
  const struct shape *s = &R->plan.shapes[p0->shape];
  struct cs_run_variant v = R->plan.var[p0->var];
  int pending = 0;
  for (size_t i = lo; i < hi; i++)
    pending += !R->plan.pts[i].skip;
  if (pending == 0) return CS_OK;

  int *members = calloc((size_t)R->w.nranks, sizeof *members);
  if (members == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  int member = 0;
  for (int r = 0; r < R->w.nranks; r++) {
    members[r] = R->w.node_of[r] < s->nodes && R->w.local_of[r] < s->gpn;
    if (members[r] && r >= R->w.first && r < R->w.first + R->w.nlocal) member = 1;
  }
  double maxb = 0;
  for (size_t i = lo; i < hi; i++)
    if (R->plan.pts[i].bytes > maxb) maxb = R->plan.pts[i].bytes;

  void *grp = NULL;
  char what[128];
  snprintf(what, sizeof what, "creating the communicator of %d ranks (%s/%s)", s->ranks,
           algo_word(v), cs_proto_name(v.proto));
  progress(o, what);
  enum cs_status st = R->be->group_open(R->state, members, v, maxb, &grp, err);
  progress(o, NULL);
  free(members);
  if (st != CS_OK) return st;
  if (R->table && grp) table_head(R->table, R->be, s, v, o);

  double est = 0;
  enum cs_coll cur = CS_COLL_COUNT;
  int refused = 0;
  for (size_t i = lo; i < hi && grp; i++) {
    const struct point *pt = &R->plan.pts[i];
    if (pt->coll != cur) {
      cur = pt->coll;
      est = 0;
      refused = 0;
    }
    if (pt->skip || refused) {
      if (!pt->skip) R->done++;
      continue;
    }
    struct cs_meas_row row;
    st = measure_point(R, grp, pt, &est, &row, err);
    if (st == CS_ERR_UNSUPPORTED) {
      if (R->w.proc == 0 && o->log)
        fprintf(o->log, "%scommscale-run: %s %s/%s on %d ranks: not available here (%s); skipped\n",
                o->log_is_tty ? "\r" : "", cs_coll_name(pt->coll), algo_word(v),
                cs_proto_name(v.proto), s->ranks, err->msg);
      cs_error_set(err, CS_OK, " ");
      refused = 1;
      R->done++;
      st = CS_OK;
      continue;
    }
    if (st != CS_OK) break;
    R->done++;
    if (R->fail_after > 0 && ++R->written >= R->fail_after) {
      /* fault injection for the resume test: stop as a killed run would, rows flushed */
      if (R->w.proc == 0 && R->csv) cs_meas_write_row(R->csv, &row, err);
      st = cs_error_set(err, CS_ERR_EXTERNAL, "stopped after %ld rows (CS_RUN_FAIL_AFTER)",
                        R->fail_after);
      break;
    }
    if (R->w.proc == 0) {
      if (R->csv && (st = cs_meas_write_row(R->csv, &row, err)) != CS_OK) break;
      if (R->table) table_row(R->table, &row, cs_dtype_size(o->dtype));
      show_progress(R, 0);
    }
  }
  if (grp) R->be->group_close(grp);
  if (st != CS_OK) return st;
  if (!member) {
    for (size_t i = lo; i < hi; i++)
      R->done += !R->plan.pts[i].skip;
  }
  return CS_OK;
}

static enum cs_status run_check(struct run *R, struct cs_error *err) {
  int *members = calloc((size_t)R->w.nranks, sizeof *members);
  if (members == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  for (int r = 0; r < R->w.nranks; r++)
    members[r] = 1;
  void *grp = NULL;
  progress(R->o, "creating the communicator of every rank (--check)");
  enum cs_status st =
      R->be->group_open(R->state, members,
                        (struct cs_run_variant){CS_ALGO_AUTO, CS_PROTO_AUTO, 0, CS_COLL_ALL_REDUCE},
                        1 << 20, &grp, err);
  free(members);
  if (st == CS_OK && grp) {
    progress(R->o, "verifying one all_reduce of every rank (--check)");
    st = R->be->check(grp, err);
    R->be->group_close(grp);
  }
  progress(R->o, NULL);
  if (st == CS_OK && R->w.proc == 0) {
    FILE *t = R->table ? R->table : stdout;
    fprintf(t, "# check: backend %s, %d rank%s in %d process%s on %d node%s, %s launch\n",
            R->be->name, R->w.nranks, R->w.nranks == 1 ? "" : "s", R->w.nprocs,
            R->w.nprocs == 1 ? "" : "es", R->w.nnodes, R->w.nnodes == 1 ? "" : "s",
            cs_meas_launch_name(R->launch));
    for (int n = 0; n < R->w.nnodes; n++) {
      int c = 0;
      for (int r = 0; r < R->w.nranks; r++)
        c += R->w.node_of[r] == n;
      fprintf(t, "#   node %d  %-24s %d rank(s)\n", n, R->w.node_name[n], c);
    }
    struct cs_meas_set meta;
    cs_meas_set_init(&meta);
    if (R->be->describe) R->be->describe(R->state, &meta);
    for (size_t i = 0; i < meta.n_meta; i++)
      fprintf(t, "#   %s: %s\n", meta.meta[i].key, meta.meta[i].value);
    cs_meas_set_fini(&meta);
    fprintf(t, "# check: all_reduce over all %d ranks verified\n", R->w.nranks);
  }
  return st;
}

/* The error for a backend name that is not in this build, listing those that are. */
static enum cs_status no_backend(const char *name, struct cs_error *err) {
  char have[128] = "";
  for (int i = 0; cs_backends[i]; i++) {
    strcat(have, i ? ", " : "");
    strcat(have, cs_backends[i]->name);
  }
  return cs_error_set(err, CS_ERR_UNSUPPORTED, "backend \"%s\" is not in this build (it has: %s)",
                      name, have[0] ? have : "none");
}

/* Builds R->w from every rank's node key: under MPI (by_mpi) the keys of all nprocs processes,
 * gathered (this one is proc); else this process's nlocal ranks, each keyed by the backend when it
 * can say. Errors: CS_ERR_NOMEM; world_build's. R->w is world_free's to release either way. */
static enum cs_status gather_world(struct run *R, int by_mpi, int nprocs, int proc, int nlocal,
                                   struct cs_error *err) {
  char(*keys)[64] = calloc((size_t)nprocs * (size_t)nlocal, sizeof *keys);
  if (keys == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  char mine[64];
  node_key(R->o, mine, sizeof mine);
#ifdef CS_HAVE_MPI
  if (by_mpi) {
    MPI_Allgather(mine, 64, MPI_CHAR, keys, 64, MPI_CHAR, world_comm);
    R->w.mpi_world = &world_comm;
  } else
#else
  (void)by_mpi;
#endif
    for (int r = 0; r < nlocal; r++) {
      memcpy(keys[r], mine, 64);
      if (R->be->rank_node) R->be->rank_node(R->state, r, keys[r], sizeof keys[r]);
    }
  enum cs_status st = world_build(&R->w, (const char(*)[64])keys, nprocs, proc, nlocal, err);
  free(keys);
#ifdef CS_HAVE_MPI
  if (by_mpi) R->w.mpi_world = &world_comm;
#endif
  return st;
}

/* Sets R->source ("commscale-run:HOST:UTC time", rank 0's) and R->config (the NCCL_* tag) the
 * same on every process (by_mpi: broadcast from rank 0). */
static void stamp_run(struct run *R, int by_mpi) {
  char host[64], tbuf[32];
  time_t now = time(NULL);
  struct tm tmv;
  strftime(tbuf, sizeof tbuf, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tmv));
  snprintf(host, sizeof host, "%s", R->w.node_name[0]);
  snprintf(R->source, sizeof R->source, "commscale-run:%s:%s", host, tbuf);
#ifdef CS_HAVE_MPI
  if (by_mpi) MPI_Bcast(R->source, sizeof R->source, MPI_CHAR, 0, world_comm);
#endif
  cs_run_config_tag(R->config, sizeof R->config, R->be->name);
#ifdef CS_HAVE_MPI
  if (by_mpi) MPI_Bcast(R->config, sizeof R->config, MPI_CHAR, 0, world_comm);
#else
  (void)by_mpi;
#endif
}

/* Under an MPI launch of several processes (by_mpi, nprocs > 1), gives every process rank 0's
 * marks of the points --resume skips (rank 0 alone read the file). Errors: CS_ERR_NOMEM. */
static enum cs_status share_skips(struct run *R, int by_mpi, int nprocs, struct cs_error *err) {
#ifdef CS_HAVE_MPI
  if (by_mpi && nprocs > 1) {
    char *marks = malloc(R->plan.npts + 1);
    if (marks == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < R->plan.npts; i++)
      marks[i] = R->plan.pts[i].skip;
    MPI_Bcast(marks, (int)R->plan.npts, MPI_CHAR, 0, world_comm);
    for (size_t i = 0; i < R->plan.npts; i++)
      R->plan.pts[i].skip = marks[i];
    free(marks);
  }
#else
  (void)R, (void)by_mpi, (void)nprocs, (void)err;
#endif
  return CS_OK;
}

/* --dry-run: one line per planned point on the table (none with --quiet), "(done)" on those
 * --resume skips. */
static void print_plan(const struct run *R) {
  if (R->table == NULL) return;
  for (size_t i = 0; i < R->plan.npts; i++) {
    const struct point *pt = &R->plan.pts[i];
    const struct shape *s = &R->plan.shapes[pt->shape];
    fprintf(R->table, "%-14s %-5s %-6s ranks %3d nodes %3d gpn %2d bytes %.0f%s\n",
            cs_coll_name(pt->coll), algo_word(R->plan.var[pt->var]),
            cs_proto_name(R->plan.var[pt->var].proto), s->ranks, s->nodes, s->gpn, pt->bytes,
            pt->skip ? "  (done)" : "");
  }
}

/* Measures the plan, one (shape, variant) group of consecutive points at a time, every process
 * meeting the others after each group that has points left. Errors: run_group's, world_sync's. */
static enum cs_status run_groups(struct run *R, struct cs_error *err) {
  enum cs_status st = CS_OK;
  for (size_t lo = 0; lo < R->plan.npts;) {
    size_t hi = lo + 1;
    while (hi < R->plan.npts && R->plan.pts[hi].shape == R->plan.pts[lo].shape &&
           R->plan.pts[hi].var == R->plan.pts[lo].var)
      hi++;
    int pending = 0;
    for (size_t i = lo; i < hi; i++)
      pending += !R->plan.pts[i].skip;
    if (pending) {
      const struct shape *s = &R->plan.shapes[R->plan.pts[lo].shape];
      int member = 0;
      for (int r = R->w.first; r < R->w.first + R->w.nlocal; r++)
        member |= R->w.node_of[r] < s->nodes && R->w.local_of[r] < s->gpn;
      if ((st = run_group(R, lo, hi, err)) != CS_OK) break;
      if ((st = world_sync(R->o, &R->w, member, err)) != CS_OK) break;
    }
    lo = hi;
  }
  return st;
}

enum cs_status cs_run(const struct cs_run_opts *o, struct cs_error *err) {
  struct run R;
  memset(&R, 0, sizeof R);
  R.o = o;
  R.be = cs_backend_find(o->backend);
  if (R.be == NULL) return no_backend(o->backend, err);
  if (o->nsizes == 0) return cs_error_set(err, CS_ERR_USAGE, "no message sizes to measure");

  int by_mpi = 0, nprocs = 1, proc = 0;
#ifdef CS_HAVE_MPI
  MPI_Initialized(&by_mpi);
  if (by_mpi) {
    MPI_Comm_size(world_comm, &nprocs);
    MPI_Comm_rank(world_comm, &proc);
  }
#endif
  int nlocal = 1;
  enum cs_status st = R.be->init(o, by_mpi, &R.state, &nlocal, &R.launch, err);
  if (st != CS_OK) return st;
  if (nprocs > 1 && nlocal != 1) {
    R.be->fini(R.state);
    return cs_error_set(err, CS_ERR_UNSUPPORTED,
                        "under an MPI launch each process drives one rank");
  }

  st = gather_world(&R, by_mpi, nprocs, proc, nlocal, err);
  if (st == CS_OK) {
    progress(o, "starting the backend");
    st = R.be->start(R.state, &R.w, err);
    progress(o, NULL);
  }
  if (st != CS_OK) goto out;

  R.table = (R.w.proc == 0 && !o->quiet) ? (o->table ? o->table : stdout) : NULL;
  if (o->check) {
    st = run_check(&R, err);
    goto out;
  }

  stamp_run(&R, by_mpi);
  if ((st = plan_build(&R.plan, o, R.be, &R.w, err)) != CS_OK) goto out;
  if (R.w.proc == 0) st = open_output(&R, err);
  st = share_status(&R.w, st, err);
  if (st != CS_OK || (st = share_skips(&R, by_mpi, nprocs, err)) != CS_OK) goto out;
  for (size_t i = 0; i < R.plan.npts; i++)
    R.todo += !R.plan.pts[i].skip;
  if (R.w.proc == 0 && o->log)
    fprintf(o->log,
            "commscale-run: backend %s, %d ranks on %d node(s), %d shape(s) x %d variant(s): %zu "
            "points to measure%s\n",
            R.be->name, R.w.nranks, R.w.nnodes, R.plan.nshapes, R.plan.nvar, R.todo,
            o->dry_run ? " (dry run)" : "");
  if (o->dry_run) {
    print_plan(&R);
    goto out;
  }

  R.t_start = now_s();
  if (getenv("CS_RUN_FAIL_AFTER")) R.fail_after = atol(getenv("CS_RUN_FAIL_AFTER"));
  if (getenv("CS_RUN_STOP_RANK")) R.stop_me = atoi(getenv("CS_RUN_STOP_RANK")) == R.w.proc;
  st = run_groups(&R, err);
  show_progress(&R, 1);

out:
  if (R.csv) fclose(R.csv);
  plan_free(&R.plan);
  if (R.state) R.be->fini(R.state);
  world_free(&R.w);
  return st;
}
