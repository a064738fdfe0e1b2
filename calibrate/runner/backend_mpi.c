/* backend_mpi.c — the MPI backend: collectives of CPU processes, timed with MPI_Wtime.
 *
 * For CPU clusters, for checking a fabric before GPUs are on it, and for the CI test that builds a
 * small cluster out of network namespaces. Each group is an MPI_Comm_split of MPI_COMM_WORLD; in
 * the harness's timed batch (runner.c), prepare is a barrier, the warm-up operations follow, the
 * clock starts after a second barrier with an MPI_Wtime reading, the timed operations run back to
 * back and a second reading stops it; the maximum over the group is an MPI_MAX reduction.
 * MPI picks its own algorithms. A variant with mpi_alg set forces Open MPI's all_reduce or
 * all_gather algorithm (model/mpicoll.h) for its group: the control variable
 * coll_tuned_allreduce_algorithm (coll_tuned_allgather_algorithm) is written
 * through MPI_T just before the group's communicator is created, which is when Open MPI's tuned
 * component reads it (coll_tuned_module.c, 4.1), and put back right after; the executable turns
 * coll_tuned_use_dynamic_rules on before MPI_Init, without which the variable is ignored. The
 * harness tags those rows with the setting (runner.c). Blocking MPI calls cannot be timed out from
 * inside: the executable's watchdog ends a process whose peer is dead or hung.
 */
#include "runner.h"

#include "mpicoll.h"

#ifdef CS_HAVE_MPI

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mpi_state {
  MPI_Comm world;
  int rank;
  int mpit;        /* MPI_T initialised by us */
  int alg_cvar[2]; /* index of coll_tuned_allreduce_algorithm, coll_tuned_allgather_algorithm;
                    * -1 when this MPI has none */
  /* index of the eager limit of each tier's transport: btl_vader_eager_limit (Open MPI 4) or
   * btl_sm_eager_limit (5) within a node, btl_tcp_eager_limit across; -1 when none */
  int eager_cvar[CS_MPI_TIER_COUNT];
  const char *placement; /* how the launch placed ranks on nodes: "block", "cyclic" or "mixed" */
};

struct mpi_group {
  MPI_Comm comm;
  int rank, size;
  void *sendbuf, *recvbuf;
  size_t cap;
  /* the prepared operation */
  enum cs_coll coll;
  MPI_Datatype dt;
  int count, in_place;
  size_t es;
  double t0; /* MPI_Wtime() at clock_start */
};

#define AR CS_COLL_ALL_REDUCE
#define AG CS_COLL_ALL_GATHER
static const struct cs_run_variant mpi_variants[] = {{CS_ALGO_AUTO, CS_PROTO_AUTO, 0, AR}};
/* --algos all: the library's choice, the all_reduce algorithms Open MPI's fixed decision uses for
 * commutative operations below 128 ranks, and the all_gather algorithms it uses on 3 ranks or
 * more (model/mpicoll.h) */
static const struct cs_run_variant mpi_variants_all[] = {
    {CS_ALGO_AUTO, CS_PROTO_AUTO, 0, AR},
    {CS_ALGO_AUTO, CS_PROTO_AUTO, CS_MPI_RECURSIVE_DOUBLING, AR},
    {CS_ALGO_AUTO, CS_PROTO_AUTO, CS_MPI_RING, AR},
    {CS_ALGO_AUTO, CS_PROTO_AUTO, CS_MPI_RABENSEIFNER, AR},
    {CS_ALGO_AUTO, CS_PROTO_AUTO, CS_MPI_AG_BRUCK, AG},
    {CS_ALGO_AUTO, CS_PROTO_AUTO, CS_MPI_AG_RECURSIVE_DOUBLING, AG},
    {CS_ALGO_AUTO, CS_PROTO_AUTO, CS_MPI_AG_RING, AG},
    {CS_ALGO_AUTO, CS_PROTO_AUTO, CS_MPI_AG_NEIGHBOR, AG}};
#undef AR
#undef AG

static enum cs_status mpi_fail(struct cs_error *err, int rc, const char *what, int rank) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
  char host[MPI_MAX_PROCESSOR_NAME];
  int hl = 0;
  MPI_Get_processor_name(host, &hl);
  return cs_error_set(err, CS_ERR_EXTERNAL, "rank %d on %s: %s failed: %s", rank, host, what, msg);
}

static enum cs_status mpi_init(const struct cs_run_opts *o, int by_mpi, void **state, int *nlocal,
                               enum cs_launch *launch, struct cs_error *err) {
  if (!by_mpi)
    return cs_error_set(err, CS_ERR_USAGE, "the mpi backend needs MPI to be initialised");
  if (o->dtype == CS_DTYPE_HALF || o->dtype == CS_DTYPE_BFLOAT16)
    return cs_error_set(err, CS_ERR_USAGE, "the mpi backend has no %s reductions; use float",
                        cs_dtype_name(o->dtype));
  struct mpi_state *s = calloc(1, sizeof *s);
  if (s == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  s->world = MPI_COMM_WORLD;
  MPI_Comm_rank(s->world, &s->rank);
  /* errors come back as codes so that they reach the caller with rank and host */
  MPI_Comm_set_errhandler(s->world, MPI_ERRORS_RETURN);
  *state = s;
  *nlocal = 1;
  *launch = CS_LAUNCH_PROCESS;
  return CS_OK;
}

/* The launch's placement of ranks on nodes, which decides which of an algorithm's messages cross
 * the network (model/mpicoll.h): "block" when node indices never decrease with the rank (mpirun's
 * default, --map-by slot, core or socket; also one node, or one rank per node), "cyclic" when rank
 * r sits on node r % nodes (--map-by node), else "mixed". A group's communicator orders its
 * members by world rank, so it inherits the pattern. */
static const char *placement(const struct cs_run_world *w) {
  int block = 1, cyclic = w->nnodes > 1;
  for (int r = 0; r < w->nranks; r++) {
    if (r > 0 && w->node_of[r] < w->node_of[r - 1]) block = 0;
    if (w->node_of[r] != r % (w->nnodes > 0 ? w->nnodes : 1)) cyclic = 0;
  }
  return block || cyclic ? cs_mpi_placement_name(!block) : "mixed";
}

static enum cs_status mpi_start(void *state, const struct cs_run_world *w, struct cs_error *err) {
  struct mpi_state *s = state;
  (void)err;
  s->placement = placement(w);
  return CS_OK;
}

/* Finds the control variables this backend reads or writes (MPI_T initialised on first use). */
static void mpit_scan(struct mpi_state *s) {
  static const char *const algs[2] = {"coll_tuned_allreduce_algorithm",
                                      "coll_tuned_allgather_algorithm"};
  static const char *const eager[] = {"btl_vader_eager_limit", "btl_sm_eager_limit",
                                      "btl_tcp_eager_limit"};
  static const int eager_tier[] = {CS_MPI_LOCAL, CS_MPI_LOCAL, CS_MPI_NET};
  if (s->mpit) return;
  int provided;
  s->alg_cvar[0] = s->alg_cvar[1] = -1;
  for (int t = 0; t < CS_MPI_TIER_COUNT; t++)
    s->eager_cvar[t] = -1;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return;
  s->mpit = 1;
  int n = 0;
  MPI_T_cvar_get_num(&n);
  for (int i = 0; i < n; i++) {
    char name[256], desc[8];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    if (MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) != MPI_SUCCESS)
      continue;
    for (int k = 0; k < 2; k++)
      if (dt == MPI_INT && strcmp(name, algs[k]) == 0) s->alg_cvar[k] = i;
    for (size_t k = 0; k < sizeof eager / sizeof eager[0]; k++)
      if ((dt == MPI_UNSIGNED_LONG || dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_UNSIGNED) &&
          strcmp(name, eager[k]) == 0)
        s->eager_cvar[eager_tier[k]] = i;
  }
}

/* The index of Open MPI's control variable that forces collective c's algorithm
 * (coll_tuned_allreduce_algorithm, coll_tuned_allgather_algorithm), -1 when this MPI has none (not
 * Open MPI, or no tuned component). */
static int alg_cvar(struct mpi_state *s, enum cs_coll c) {
  mpit_scan(s);
  if (!s->mpit) return -1;
  return c == CS_COLL_ALL_REDUCE ? s->alg_cvar[0] : c == CS_COLL_ALL_GATHER ? s->alg_cvar[1] : -1;
}

/* The value of the size_t-like control variable i (bytes), 0 when it cannot be read. */
static double read_size_cvar(int i) {
  MPI_T_cvar_handle h;
  int count = 0;
  if (i < 0 || MPI_T_cvar_handle_alloc(i, NULL, &h, &count) != MPI_SUCCESS) return 0;
  char name[256], desc[8];
  int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
  MPI_Datatype dt;
  MPI_T_enum en;
  double v = 0;
  if (count == 1 &&
      MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) == MPI_SUCCESS) {
    unsigned long long u = 0;
    unsigned long ul = 0;
    unsigned ui = 0;
    if (dt == MPI_UNSIGNED_LONG_LONG && MPI_T_cvar_read(h, &u) == MPI_SUCCESS) v = (double)u;
    if (dt == MPI_UNSIGNED_LONG && MPI_T_cvar_read(h, &ul) == MPI_SUCCESS) v = (double)ul;
    if (dt == MPI_UNSIGNED && MPI_T_cvar_read(h, &ui) == MPI_SUCCESS) v = (double)ui;
  }
  MPI_T_cvar_handle_free(&h);
  return v;
}

/* Provenance the MPI laws need (model/mpicoll.h): the eager limits this run's transports use
 * ("mpi_eager: local=4096,net=65536"; none when this MPI exposes neither; within a node the TCP
 * limit when no shared-memory transport is loaded) and the ranks' placement ("mpi_placement:
 * block"). */
static void mpi_describe(void *state, struct cs_meas_set *set) {
  struct mpi_state *s = state;
  if (s == NULL) return;
  if (s->placement) cs_meas_set_meta(set, "mpi_placement", s->placement, NULL);
  mpit_scan(s);
  if (!s->mpit) return;
  char buf[96] = "";
  size_t len = 0;
  for (int t = 0; t < CS_MPI_TIER_COUNT; t++) {
    /* no shared-memory transport loaded (mpirun --mca btl tcp,self): ranks of one node talk
     * through the network's, at its limit */
    int cv =
        t == CS_MPI_LOCAL && s->eager_cvar[t] < 0 ? s->eager_cvar[CS_MPI_NET] : s->eager_cvar[t];
    double v = read_size_cvar(cv);
    if (v > 0)
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s=%.0f", len ? "," : "",
                              t == CS_MPI_LOCAL ? "local" : "net", v);
  }
  if (len) cs_meas_set_meta(set, "mpi_eager", buf, NULL);
}

/* Writes collective c's forced algorithm (0 = none); the previous value into *old when old. */
static int write_alg(struct mpi_state *s, enum cs_coll c, int alg, int *old) {
  MPI_T_cvar_handle h;
  int count = 0, rc;
  if ((rc = MPI_T_cvar_handle_alloc(alg_cvar(s, c), NULL, &h, &count)) != MPI_SUCCESS) return rc;
  if (old) rc = MPI_T_cvar_read(h, old);
  if (rc == MPI_SUCCESS) rc = MPI_T_cvar_write(h, &alg);
  MPI_T_cvar_handle_free(&h);
  return rc;
}

static enum cs_status mpi_group_open(void *state, const int *members, struct cs_run_variant v,
                                     double max_bytes, void **grp, struct cs_error *err) {
  struct mpi_state *s = state;
  *grp = NULL;
  int old = 0;
  if (v.mpi_alg != 0) {
    /* the same answer on every rank: the library is the same */
    if (alg_cvar(s, v.mpi_coll) < 0)
      return cs_error_set(err, CS_ERR_UNSUPPORTED,
                          "this MPI has no control variable for Open MPI's %s algorithm "
                          "(coll/tuned): it cannot force %s",
                          cs_coll_name(v.mpi_coll), cs_mpi_coll_alg_name(v.mpi_coll, v.mpi_alg));
    int rc = write_alg(s, v.mpi_coll, v.mpi_alg, &old);
    if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_T_cvar_write", s->rank);
  }
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_Comm_split(s->world, members[s->rank] ? 0 : MPI_UNDEFINED, s->rank, &comm);
  if (v.mpi_alg != 0) write_alg(s, v.mpi_coll, old, NULL); /* read at creation */
  if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Comm_split", s->rank);
  if (comm == MPI_COMM_NULL) return CS_OK;
  struct mpi_group *g = calloc(1, sizeof *g);
  size_t cap = (size_t)max_bytes + 64;
  if (g) {
    g->sendbuf = malloc(cap);
    g->recvbuf = malloc(cap);
  }
  if (g == NULL || g->sendbuf == NULL || g->recvbuf == NULL) {
    if (g) free(g->sendbuf), free(g->recvbuf);
    free(g);
    MPI_Comm_free(&comm);
    return cs_error_set(err, CS_ERR_NOMEM, "rank %d: cannot allocate 2 x %.0f bytes", s->rank,
                        max_bytes);
  }
  /* non-zero data: some reductions short-cut zeros */
  for (size_t i = 0; i < cap; i++) {
    ((unsigned char *)g->sendbuf)[i] = (unsigned char)(1 + i % 7);
    ((unsigned char *)g->recvbuf)[i] = (unsigned char)(1 + i % 5);
  }
  g->comm = comm;
  g->cap = cap;
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &g->rank);
  MPI_Comm_size(comm, &g->size);
  *grp = g;
  return CS_OK;
}

static MPI_Datatype mpi_dtype(enum cs_dtype d) {
  switch (d) {
  case CS_DTYPE_INT8:
    return MPI_INT8_T;
  case CS_DTYPE_UINT8:
    return MPI_UINT8_T;
  case CS_DTYPE_INT32:
    return MPI_INT32_T;
  case CS_DTYPE_UINT32:
    return MPI_UINT32_T;
  case CS_DTYPE_INT64:
    return MPI_INT64_T;
  case CS_DTYPE_UINT64:
    return MPI_UINT64_T;
  case CS_DTYPE_DOUBLE:
    return MPI_DOUBLE;
  case CS_DTYPE_FLOAT:
    return MPI_FLOAT;
  default:
    return MPI_DATATYPE_NULL;
  }
}

/* One operation of c; the MPI return code. count is the nccl-tests element count of the size. */
static int one_op(struct mpi_group *g, enum cs_coll c, MPI_Datatype dt, int count, int in_place,
                  size_t es) {
  int n = g->size, per = count / n;
  void *sb = g->sendbuf, *rb = g->recvbuf;
  switch (c) {
  case CS_COLL_ALL_REDUCE:
    return MPI_Allreduce(in_place ? MPI_IN_PLACE : sb, rb, count, dt, MPI_SUM, g->comm);
  case CS_COLL_ALL_GATHER:
    return MPI_Allgather(in_place ? MPI_IN_PLACE : sb, per, dt, rb, per, dt, g->comm);
  case CS_COLL_REDUCE_SCATTER:
    if (in_place) return MPI_Reduce_scatter_block(MPI_IN_PLACE, sb, per, dt, MPI_SUM, g->comm);
    return MPI_Reduce_scatter_block(sb, rb, per, dt, MPI_SUM, g->comm);
  case CS_COLL_BROADCAST:
    return MPI_Bcast(rb, count, dt, 0, g->comm);
  case CS_COLL_REDUCE:
    if (in_place && g->rank == 0)
      return MPI_Reduce(MPI_IN_PLACE, rb, count, dt, MPI_SUM, 0, g->comm);
    return MPI_Reduce(sb, rb, count, dt, MPI_SUM, 0, g->comm);
  case CS_COLL_ALL_TO_ALL:
    return MPI_Alltoall(sb, per, dt, rb, per, dt, g->comm);
  case CS_COLL_SEND_RECV:
    (void)es;
    return MPI_Sendrecv(sb, count, dt, (g->rank + 1) % n, 7, rb, count, dt, (g->rank + n - 1) % n,
                        7, g->comm, MPI_STATUS_IGNORE);
  case CS_COLL_COUNT:
    break;
  }
  return MPI_ERR_OTHER;
}

static enum cs_status mpi_prepare(void *grp, enum cs_coll c, enum cs_dtype d, double bytes,
                                  int in_place, struct cs_error *err) {
  struct mpi_group *g = grp;
  MPI_Datatype dt = mpi_dtype(d);
  size_t es = cs_dtype_size(d);
  if (dt == MPI_DATATYPE_NULL)
    return cs_error_set(err, CS_ERR_UNSUPPORTED, "no MPI type for %s", cs_dtype_name(d));
  if (bytes / (double)es > 2147483647.0 || (size_t)bytes > g->cap)
    return cs_error_set(err, CS_ERR_UNSUPPORTED, "%.0f bytes is beyond this backend's counts",
                        bytes);
  g->coll = c;
  g->dt = dt;
  g->es = es;
  g->count = (int)(bytes / (double)es);
  g->in_place = in_place;
  int rc = MPI_Barrier(g->comm);
  if (rc != MPI_SUCCESS) return mpi_fail(err, rc, cs_coll_name(c), g->rank);
  return CS_OK;
}

static enum cs_status mpi_issue(void *grp, int k, struct cs_error *err) {
  struct mpi_group *g = grp;
  int rc = MPI_SUCCESS, cls = 0;
  for (int i = 0; i < k && rc == MPI_SUCCESS; i++)
    rc = one_op(g, g->coll, g->dt, g->count, g->in_place, g->es);
  /* an algorithm forced where Open MPI cannot run it (two_proc on 3 ranks) is refused on every
   * rank before any message moves: the harness skips it, as NCCL's refusals */
  if (rc != MPI_SUCCESS && MPI_Error_class(rc, &cls) == MPI_SUCCESS &&
      cls == MPI_ERR_UNSUPPORTED_OPERATION)
    return cs_error_set(err, CS_ERR_UNSUPPORTED, "the MPI library does not run it on %d ranks",
                        g->size);
  if (rc != MPI_SUCCESS) return mpi_fail(err, rc, cs_coll_name(g->coll), g->rank);
  return CS_OK;
}

static enum cs_status mpi_clock_start(void *grp, struct cs_error *err) {
  struct mpi_group *g = grp;
  int rc = MPI_Barrier(g->comm);
  if (rc != MPI_SUCCESS) return mpi_fail(err, rc, cs_coll_name(g->coll), g->rank);
  g->t0 = MPI_Wtime();
  return CS_OK;
}

static enum cs_status mpi_clock_stop(void *grp, double *sec, struct cs_error *err) {
  struct mpi_group *g = grp;
  (void)err;
  *sec = MPI_Wtime() - g->t0; /* blocking operations: they are complete */
  return CS_OK;
}

static enum cs_status mpi_group_max(void *grp, double *t, struct cs_error *err) {
  struct mpi_group *g = grp;
  double mine = *t;
  int rc = MPI_Allreduce(&mine, t, 1, MPI_DOUBLE, MPI_MAX, g->comm);
  if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Allreduce of the times", g->rank);
  return CS_OK;
}

static enum cs_status mpi_check(void *grp, struct cs_error *err) {
  struct mpi_group *g = grp;
  int64_t v[256], sum[256];
  for (int i = 0; i < 256; i++)
    v[i] = (int64_t)(g->rank + 1) * (i + 1);
  int rc = MPI_Allreduce(v, sum, 256, MPI_INT64_T, MPI_SUM, g->comm);
  if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Allreduce", g->rank);
  int64_t want = (int64_t)g->size * (g->size + 1) / 2;
  for (int i = 0; i < 256; i++)
    if (sum[i] != want * (i + 1))
      return cs_error_set(err, CS_ERR_EXTERNAL,
                          "rank %d: all_reduce gave %lld at element %d, expected %lld", g->rank,
                          (long long)sum[i], i, (long long)(want * (i + 1)));
  return CS_OK;
}

static void mpi_group_close(void *grp) {
  struct mpi_group *g = grp;
  if (g == NULL) return;
  MPI_Comm_free(&g->comm);
  free(g->sendbuf);
  free(g->recvbuf);
  free(g);
}

static void mpi_fini(void *state) {
  struct mpi_state *s = state;
  if (s && s->mpit) MPI_T_finalize();
  free(state);
}

const struct cs_backend cs_backend_mpi = {
    .name = "mpi",
    .variants_default = mpi_variants,
    .nvariants_default = 1,
    .variants_all = mpi_variants_all,
    .nvariants_all = 8,
    .init = mpi_init,
    .start = mpi_start,
    .group_open = mpi_group_open,
    .prepare = mpi_prepare,
    .issue = mpi_issue,
    .clock_start = mpi_clock_start,
    .clock_stop = mpi_clock_stop,
    .group_max = mpi_group_max,
    .check = mpi_check,
    .group_close = mpi_group_close,
    .describe = mpi_describe,
    .fini = mpi_fini,
};

#else
/* Built without MPI: this translation unit is intentionally empty. */
typedef int cs_backend_mpi_absent;
#endif
