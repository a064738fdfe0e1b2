/* backend_nccl.c — the NCCL backend: collectives on GPUs, timed with CUDA events.
 *
 * Two ways to start. Under MPI (mpirun/srun, one process per GPU) the world communicator is made
 * with ncclCommInitRank from a unique id that rank 0 broadcasts over MPI, as nccl-tests does, and
 * every group is an ncclCommSplit of it (plus an MPI_Comm_split that carries the time reduction).
 * Without MPI one process drives all its GPUs: each group is an ncclCommInitAll over the member
 * devices and every operation is issued for all of them inside ncclGroupStart/End.
 *
 * Forcing an (algorithm, protocol) pair sets NCCL_ALGO/NCCL_PROTO just before the communicator is
 * created (NCCL reads them when it tunes a new communicator) and restores the user's values after.
 * Setting CS_NCCL_INIT=rank makes every group a fresh ncclCommInitRank instead of a split, for
 * NCCL builds where a split child does not re-read them.
 *
 * Timing as nccl-tests does it, with device events instead of the host clock: in the harness's
 * timed batch (runner.c) the warm-up operations and the timed ones are queued back to back on one
 * stream, clock_start recording the start event between them, so the first timed operation does
 * not carry the ranks' launch skew; clock_stop records the stop event, waits for it and reads the
 * interval, and the maximum over the group's ranks goes through MPI. With --timer host the
 * warm-up is completed and the ranks meet at a barrier before the host clock starts. Completion is
 * polled together with ncclCommGetAsyncError; a batch that does not finish within the timeout
 * aborts its communicators (ncclCommAbort) and fails with the rank, host and operation named.
 */
#include "runner.h"

#ifdef CS_HAVE_NCCL

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef CS_HAVE_MPI
#include <mpi.h>
#endif

#define MAXDEV 64

extern char **environ;

struct nccl_state {
  int by_mpi;
  int ndev; /* devices this process drives */
  int dev[MAXDEV];
  int proc, nprocs;
  char host[64];
  double timeout_s;
  int init_rank;    /* CS_NCCL_INIT=rank: fresh communicators instead of splits */
  int host_timer;   /* --timer host */
  ncclComm_t world; /* MPI mode: the parent of every split */
#ifdef CS_HAVE_MPI
  MPI_Comm mworld;
#endif
};

struct nccl_group {
  struct nccl_state *s;
  int n;    /* communicators (devices) of this process in the group */
  int size; /* ranks in the group */
  ncclComm_t comm[MAXDEV];
  int dev[MAXDEV], rank[MAXDEV];
  cudaStream_t stream[MAXDEV];
  cudaEvent_t e0[MAXDEV], e1[MAXDEV];
  void *sb[MAXDEV], *rb[MAXDEV];
  size_t cap;
#ifdef CS_HAVE_MPI
  MPI_Comm mcomm;
#endif
  /* the prepared operation and the clock */
  enum cs_coll coll;
  ncclDataType_t dt;
  size_t count, es;
  int in_place;
  char what[96]; /* "all_reduce of 1048576 bytes", for messages */
  int clock_on;  /* between clock_start and clock_stop */
  double h0;     /* --timer host: the host clock at clock_start */
};

static const struct cs_run_variant nccl_all[] = {
    {CS_ALGO_AUTO, CS_PROTO_AUTO, 0, CS_COLL_ALL_REDUCE},
    {CS_ALGO_RING, CS_PROTO_LL, 0, CS_COLL_ALL_REDUCE},
    {CS_ALGO_RING, CS_PROTO_LL128, 0, CS_COLL_ALL_REDUCE},
    {CS_ALGO_RING, CS_PROTO_SIMPLE, 0, CS_COLL_ALL_REDUCE},
    {CS_ALGO_TREE, CS_PROTO_LL, 0, CS_COLL_ALL_REDUCE},
    {CS_ALGO_TREE, CS_PROTO_LL128, 0, CS_COLL_ALL_REDUCE},
    {CS_ALGO_TREE, CS_PROTO_SIMPLE, 0, CS_COLL_ALL_REDUCE},
    {CS_ALGO_PAT, CS_PROTO_SIMPLE, 0, CS_COLL_ALL_REDUCE},
};

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static enum cs_status cuda_fail(struct cs_error *err, const struct nccl_state *s, cudaError_t e,
                                const char *what) {
  return cs_error_set(err, CS_ERR_EXTERNAL, "rank %d on %s: %s: CUDA error %s (%s)", s->proc,
                      s->host, what, cudaGetErrorName(e), cudaGetErrorString(e));
}

static enum cs_status nccl_fail(struct cs_error *err, const struct nccl_state *s, ncclResult_t r,
                                const char *what) {
  const char *last = ncclGetLastError(NULL);
  /* a forced algorithm/protocol NCCL cannot run here is reported as an internal error by 2.28 */
  int refused = r == ncclInvalidUsage || r == ncclInvalidArgument ||
                (last && strstr(last, "no algorithm/protocol available"));
  return cs_error_set(err, refused ? CS_ERR_UNSUPPORTED : CS_ERR_EXTERNAL,
                      "rank %d on %s: %s: NCCL error %s%s%s", s->proc, s->host, what,
                      ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
}

#define CUDA_TRY(call, what)                                                                       \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) return cuda_fail(err, s, e_, what);                                     \
  } while (0)

static enum cs_status nccl_init(const struct cs_run_opts *o, int by_mpi, void **state, int *nlocal,
                                enum cs_launch *launch, struct cs_error *err) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  char host[64];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
  host[sizeof host - 1] = '\0';
  if (e != cudaSuccess || count == 0)
    return cs_error_set(err, CS_ERR_EXTERNAL, "%s: no CUDA device visible (%s)", host,
                        e != cudaSuccess ? cudaGetErrorString(e) : "count is 0");
#ifndef CS_HAVE_MPI
  if (by_mpi) return cs_error_set(err, CS_ERR_UNSUPPORTED, "this runner was built without MPI");
#endif
  struct nccl_state *s = calloc(1, sizeof *s);
  if (s == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  s->by_mpi = by_mpi;
  s->timeout_s = o->timeout_s;
  s->host_timer = o->host_timer;
  snprintf(s->host, sizeof s->host, "%s", host);
  const char *ini = getenv("CS_NCCL_INIT");
  s->init_rank = ini && strcmp(ini, "rank") == 0;
  if (by_mpi) {
    s->ndev = 1;
  } else {
    s->ndev = o->ngpus > 0 ? o->ngpus : count;
    if (s->ndev > count || s->ndev > MAXDEV) {
      free(s);
      return cs_error_set(err, CS_ERR_USAGE, "%s: %d GPUs asked for, %d visible", host, o->ngpus,
                          count);
    }
    for (int i = 0; i < s->ndev; i++)
      s->dev[i] = i;
  }
  *state = s;
  *nlocal = s->ndev;
  *launch = by_mpi ? CS_LAUNCH_PROCESS : CS_LAUNCH_THREAD;
  return CS_OK;
}

static enum cs_status nccl_start(void *state, const struct cs_run_world *w, struct cs_error *err) {
  struct nccl_state *s = state;
  s->proc = w->proc;
  s->nprocs = w->nprocs;
  snprintf(s->host, sizeof s->host, "%s", w->node_name[w->node_of[w->first]]);
  if (!s->by_mpi) return CS_OK;
#ifdef CS_HAVE_MPI
  int count = 0;
  cudaGetDeviceCount(&count);
  s->dev[0] = w->local_of[w->first] % count;
  CUDA_TRY(cudaSetDevice(s->dev[0]), "cudaSetDevice");
  s->mworld = *(MPI_Comm *)w->mpi_world;
  ncclUniqueId id;
  if (s->proc == 0) {
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) memset(&id, 0, sizeof id);
  }
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, s->mworld);
  cs_run_force_env((struct cs_run_variant){CS_ALGO_AUTO, CS_PROTO_AUTO, 0, CS_COLL_ALL_REDUCE});
  ncclResult_t r = ncclCommInitRank(&s->world, s->nprocs, id, s->proc);
  if (r != ncclSuccess) return nccl_fail(err, s, r, "ncclCommInitRank of the world");
  return CS_OK;
#else
  return cs_error_set(err, CS_ERR_UNSUPPORTED, "built without MPI");
#endif
}

static void group_free(struct nccl_group *g, int abort_comms) {
  for (int i = 0; i < g->n; i++) {
    cudaSetDevice(g->dev[i]);
    if (g->comm[i]) {
      if (abort_comms)
        ncclCommAbort(g->comm[i]);
      else
        ncclCommDestroy(g->comm[i]);
    }
    if (g->sb[i]) cudaFree(g->sb[i]);
    if (g->rb[i]) cudaFree(g->rb[i]);
    if (g->e0[i]) cudaEventDestroy(g->e0[i]);
    if (g->e1[i]) cudaEventDestroy(g->e1[i]);
    if (g->stream[i]) cudaStreamDestroy(g->stream[i]);
  }
#ifdef CS_HAVE_MPI
  if (g->mcomm != MPI_COMM_NULL) MPI_Comm_free(&g->mcomm);
#endif
  free(g);
}

static enum cs_status nccl_group_open(void *state, const int *members, struct cs_run_variant v,
                                      double max_bytes, void **grp, struct cs_error *err) {
  struct nccl_state *s = state;
  *grp = NULL;
  struct nccl_group *g = calloc(1, sizeof *g);
  if (g == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  g->s = s;
#ifdef CS_HAVE_MPI
  g->mcomm = MPI_COMM_NULL;
#endif
  ncclResult_t r = ncclSuccess;
  enum cs_status st = CS_OK;
  cs_run_force_env(v);
  if (s->by_mpi) {
#ifdef CS_HAVE_MPI
    int member = members[s->proc] != 0;
    MPI_Comm_split(s->mworld, member ? 0 : MPI_UNDEFINED, s->proc, &g->mcomm);
    if (s->init_rank) {
      if (member) {
        int grank = 0, gsize = 0;
        MPI_Comm_rank(g->mcomm, &grank);
        MPI_Comm_size(g->mcomm, &gsize);
        ncclUniqueId id;
        if (grank == 0) ncclGetUniqueId(&id);
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, g->mcomm);
        cudaSetDevice(s->dev[0]);
        r = ncclCommInitRank(&g->comm[0], gsize, id, grank);
      }
    } else {
      r = ncclCommSplit(s->world, member ? 0 : NCCL_SPLIT_NOCOLOR, s->proc, &g->comm[0], NULL);
    }
    if (r == ncclSuccess && member) {
      g->n = 1;
      g->dev[0] = s->dev[0];
    }
#endif
  } else {
    int devs[MAXDEV], n = 0;
    for (int i = 0; i < s->ndev; i++)
      if (members[i]) devs[n++] = s->dev[i];
    r = ncclCommInitAll(g->comm, n, devs);
    if (r == ncclSuccess) {
      g->n = n;
      memcpy(g->dev, devs, (size_t)n * sizeof *devs);
    }
  }
  cs_run_force_env((struct cs_run_variant){CS_ALGO_AUTO, CS_PROTO_AUTO, 0, CS_COLL_ALL_REDUCE});
  if (r != ncclSuccess) {
    st = nccl_fail(err, s, r, "creating a communicator");
    if (st == CS_ERR_UNSUPPORTED) st = err->status = CS_ERR_EXTERNAL;
    group_free(g, 1);
    return st;
  }
  if (g->n == 0) {
    group_free(g, 0);
    return CS_OK;
  }
  g->cap = (size_t)max_bytes + 256;
  for (int i = 0; i < g->n; i++) {
    CUDA_TRY(cudaSetDevice(g->dev[i]), "cudaSetDevice");
    ncclCommCount(g->comm[i], &g->size);
    ncclCommUserRank(g->comm[i], &g->rank[i]);
    cudaError_t e;
    if ((e = cudaStreamCreateWithFlags(&g->stream[i], cudaStreamNonBlocking)) != cudaSuccess ||
        (e = cudaEventCreate(&g->e0[i])) != cudaSuccess ||
        (e = cudaEventCreate(&g->e1[i])) != cudaSuccess ||
        (e = cudaMalloc(&g->sb[i], g->cap)) != cudaSuccess ||
        (e = cudaMalloc(&g->rb[i], g->cap)) != cudaSuccess ||
        (e = cudaMemset(g->sb[i], 0x3c, g->cap)) != cudaSuccess ||
        (e = cudaMemset(g->rb[i], 0x3b, g->cap)) != cudaSuccess) {
      group_free(g, 1);
      return cuda_fail(err, s, e, "allocating the group's buffers");
    }
  }
  for (int i = 0; i < g->n; i++) {
    cudaSetDevice(g->dev[i]);
    cudaDeviceSynchronize();
  }
  *grp = g;
  return CS_OK;
}

static ncclDataType_t nccl_dtype(enum cs_dtype d) {
  switch (d) {
  case CS_DTYPE_INT8:
    return ncclInt8;
  case CS_DTYPE_UINT8:
    return ncclUint8;
  case CS_DTYPE_INT32:
    return ncclInt32;
  case CS_DTYPE_UINT32:
    return ncclUint32;
  case CS_DTYPE_INT64:
    return ncclInt64;
  case CS_DTYPE_UINT64:
    return ncclUint64;
  case CS_DTYPE_HALF:
    return ncclFloat16;
  case CS_DTYPE_DOUBLE:
    return ncclFloat64;
  case CS_DTYPE_BFLOAT16:
    return ncclBfloat16;
  default:
    return ncclFloat32;
  }
}

/* Enqueues one operation of c for local communicator i. */
static ncclResult_t one_op(struct nccl_group *g, int i, enum cs_coll c, ncclDataType_t dt,
                           size_t count, size_t es, int in_place) {
  int n = g->size, me = g->rank[i];
  size_t per = count / (size_t)n;
  char *sb = g->sb[i], *rb = g->rb[i];
  cudaStream_t st = g->stream[i];
  ncclComm_t comm = g->comm[i];
  ncclResult_t r = ncclSuccess;
  switch (c) {
  case CS_COLL_ALL_REDUCE:
    return ncclAllReduce(sb, in_place ? sb : rb, count, dt, ncclSum, comm, st);
  case CS_COLL_ALL_GATHER:
    return ncclAllGather(in_place ? rb + (size_t)me * per * es : sb, rb, per, dt, comm, st);
  case CS_COLL_REDUCE_SCATTER:
    return ncclReduceScatter(sb, in_place ? sb + (size_t)me * per * es : rb, per, dt, ncclSum, comm,
                             st);
  case CS_COLL_BROADCAST:
    return ncclBroadcast(sb, in_place ? sb : rb, count, dt, 0, comm, st);
  case CS_COLL_REDUCE:
    return ncclReduce(sb, in_place ? sb : rb, count, dt, ncclSum, 0, comm, st);
  case CS_COLL_ALL_TO_ALL:
    if ((r = ncclGroupStart()) != ncclSuccess) return r;
    for (int p = 0; p < n && r == ncclSuccess; p++) {
      r = ncclSend(sb + (size_t)p * per * es, per, dt, p, comm, st);
      if (r == ncclSuccess) r = ncclRecv(rb + (size_t)p * per * es, per, dt, p, comm, st);
    }
    {
      ncclResult_t r2 = ncclGroupEnd();
      return r != ncclSuccess ? r : r2;
    }
  case CS_COLL_SEND_RECV:
    if ((r = ncclGroupStart()) != ncclSuccess) return r;
    r = ncclSend(sb, count, dt, (me + 1) % n, comm, st);
    if (r == ncclSuccess) r = ncclRecv(rb, count, dt, (me + n - 1) % n, comm, st);
    {
      ncclResult_t r2 = ncclGroupEnd();
      return r != ncclSuccess ? r : r2;
    }
  case CS_COLL_COUNT:
    break;
  }
  return ncclInvalidArgument;
}

/* Enqueues k operations on every local communicator (grouped when there are several). */
static ncclResult_t enqueue(struct nccl_group *g, int k, enum cs_coll c, ncclDataType_t dt,
                            size_t count, size_t es, int in_place) {
  ncclResult_t r = ncclSuccess;
  for (int it = 0; it < k && r == ncclSuccess; it++) {
    if (g->n > 1 && (r = ncclGroupStart()) != ncclSuccess) return r;
    for (int i = 0; i < g->n && r == ncclSuccess; i++) {
      cudaSetDevice(g->dev[i]);
      r = one_op(g, i, c, dt, count, es, in_place);
    }
    if (g->n > 1) {
      ncclResult_t r2 = ncclGroupEnd();
      if (r == ncclSuccess) r = r2;
    }
  }
  return r;
}

/* Waits for the stop events of every local communicator, polling NCCL's asynchronous errors. */
static enum cs_status wait_done(struct nccl_group *g, const char *what, struct cs_error *err) {
  struct nccl_state *s = g->s;
  double t0 = mono_s(), limit = 0.9 * s->timeout_s;
  for (;;) {
    int pending = 0;
    for (int i = 0; i < g->n; i++) {
      cudaSetDevice(g->dev[i]);
      cudaError_t e = cudaEventQuery(g->e1[i]);
      if (e == cudaErrorNotReady)
        pending = 1;
      else if (e != cudaSuccess)
        return cuda_fail(err, s, e, what);
      ncclResult_t ar = ncclSuccess;
      ncclCommGetAsyncError(g->comm[i], &ar);
      if (ar != ncclSuccess && ar != ncclInProgress) {
        for (int k = 0; k < g->n; k++)
          ncclCommAbort(g->comm[k]), g->comm[k] = NULL;
        return cs_error_set(err, CS_ERR_EXTERNAL,
                            "rank %d on %s: %s: NCCL reported %s (a peer failed); communicator "
                            "aborted",
                            s->proc, s->host, what, ncclGetErrorString(ar));
      }
    }
    if (!pending) return CS_OK;
    if (mono_s() - t0 > limit) {
      for (int k = 0; k < g->n; k++)
        ncclCommAbort(g->comm[k]), g->comm[k] = NULL;
      return cs_error_set(err, CS_ERR_EXTERNAL,
                          "rank %d on %s: %s did not complete within %.0f s: a peer rank is dead "
                          "or hung; communicator aborted",
                          s->proc, s->host, what, limit);
    }
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
}

static enum cs_status nccl_prepare(void *grp, enum cs_coll c, enum cs_dtype d, double bytes,
                                   int in_place, struct cs_error *err) {
  struct nccl_group *g = grp;
  if ((size_t)bytes > g->cap)
    return cs_error_set(err, CS_ERR_RANGE, "%.0f bytes exceed the group's buffers", bytes);
  g->coll = c;
  g->dt = nccl_dtype(d);
  g->es = cs_dtype_size(d);
  g->count = (size_t)(bytes / (double)g->es);
  g->in_place = in_place;
  g->clock_on = 0;
  snprintf(g->what, sizeof g->what, "%s of %.0f bytes", cs_coll_name(c), bytes);
  return CS_OK;
}

static enum cs_status nccl_issue(void *grp, int k, struct cs_error *err) {
  struct nccl_group *g = grp;
  struct nccl_state *s = g->s;
  /* the host timer needs one completed operation before the clock, as nccl-tests does */
  if (s->host_timer && !g->clock_on && k < 1) k = 1;
  ncclResult_t r = enqueue(g, k, g->coll, g->dt, g->count, g->es, g->in_place);
  if (r != ncclSuccess) {
    /* the enqueue was refused; make sure nothing is left queued before the next point */
    for (int i = 0; i < g->n; i++) {
      cudaSetDevice(g->dev[i]);
      cudaStreamSynchronize(g->stream[i]);
    }
    return nccl_fail(err, s, r, g->what);
  }
  return CS_OK;
}

static enum cs_status nccl_clock_start(void *grp, struct cs_error *err) {
  struct nccl_group *g = grp;
  struct nccl_state *s = g->s;
  if (s->host_timer) {
    /* nccl-tests: complete the warm-up, barrier, then the host clock around launch + sync */
    for (int i = 0; i < g->n; i++) {
      cudaSetDevice(g->dev[i]);
      CUDA_TRY(cudaEventRecord(g->e1[i], g->stream[i]), "cudaEventRecord");
    }
    enum cs_status st = wait_done(g, g->what, err);
    if (st != CS_OK) return st;
#ifdef CS_HAVE_MPI
    if (g->mcomm != MPI_COMM_NULL) MPI_Barrier(g->mcomm);
#endif
    g->h0 = mono_s();
  }
  for (int i = 0; i < g->n; i++) {
    cudaSetDevice(g->dev[i]);
    CUDA_TRY(cudaEventRecord(g->e0[i], g->stream[i]), "cudaEventRecord");
  }
  g->clock_on = 1;
  return CS_OK;
}

static enum cs_status nccl_clock_stop(void *grp, double *sec, struct cs_error *err) {
  struct nccl_group *g = grp;
  struct nccl_state *s = g->s;
  g->clock_on = 0;
  for (int i = 0; i < g->n; i++) {
    cudaSetDevice(g->dev[i]);
    CUDA_TRY(cudaEventRecord(g->e1[i], g->stream[i]), "cudaEventRecord");
  }
  enum cs_status st = wait_done(g, g->what, err);
  if (st != CS_OK) return st;
  double tmax = 0;
  if (s->host_timer) tmax = mono_s() - g->h0;
  for (int i = 0; i < g->n && !s->host_timer; i++) {
    float ms = 0;
    cudaSetDevice(g->dev[i]);
    CUDA_TRY(cudaEventElapsedTime(&ms, g->e0[i], g->e1[i]), "cudaEventElapsedTime");
    double t = 1e-3 * ms;
    if (t > tmax) tmax = t;
  }
  *sec = tmax;
  return CS_OK;
}

static enum cs_status nccl_group_max(void *grp, double *t, struct cs_error *err) {
  struct nccl_group *g = grp;
  (void)err;
#ifdef CS_HAVE_MPI
  if (g->mcomm != MPI_COMM_NULL) {
    double mine = *t;
    MPI_Allreduce(&mine, t, 1, MPI_DOUBLE, MPI_MAX, g->mcomm);
  }
#else
  (void)g, (void)t;
#endif
  return CS_OK;
}

static enum cs_status nccl_check(void *grp, struct cs_error *err) {
  struct nccl_group *g = grp;
  struct nccl_state *s = g->s;
  enum { N = 1024 };
  static float host[N];
  for (int i = 0; i < g->n; i++) {
    for (int k = 0; k < N; k++)
      host[k] = (float)(g->rank[i] + 1) * (float)(k % 13 + 1);
    cudaSetDevice(g->dev[i]);
    CUDA_TRY(cudaMemcpy(g->sb[i], host, sizeof host, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ncclResult_t r = enqueue(g, 1, CS_COLL_ALL_REDUCE, ncclFloat32, N, 4, 0);
  if (r != ncclSuccess) return nccl_fail(err, s, r, "all_reduce (check)");
  for (int i = 0; i < g->n; i++) {
    cudaSetDevice(g->dev[i]);
    CUDA_TRY(cudaEventRecord(g->e1[i], g->stream[i]), "cudaEventRecord");
  }
  enum cs_status st = wait_done(g, "all_reduce (check)", err);
  if (st != CS_OK) return st;
  float want = (float)g->size * (float)(g->size + 1) / 2.0f;
  for (int i = 0; i < g->n; i++) {
    cudaSetDevice(g->dev[i]);
    CUDA_TRY(cudaMemcpy(host, g->rb[i], sizeof host, cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (int k = 0; k < N; k++)
      if (host[k] != want * (float)(k % 13 + 1))
        return cs_error_set(err, CS_ERR_EXTERNAL,
                            "rank %d on %s (GPU %d): all_reduce gave %g at element %d, expected "
                            "%g",
                            g->rank[i], s->host, g->dev[i], host[k], k, want * (float)(k % 13 + 1));
  }
  return CS_OK;
}

static void nccl_group_close(void *grp) {
  if (grp) group_free(grp, 0);
}

static void nccl_describe(void *state, struct cs_meas_set *set) {
  struct nccl_state *s = state;
  char buf[256];
  int v = 0;
  ncclGetVersion(&v);
  snprintf(buf, sizeof buf, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
  cs_meas_set_meta(set, "nccl", buf, NULL);
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  snprintf(buf, sizeof buf, "driver API %d.%d, runtime %d.%d", drv / 1000, (drv % 1000) / 10,
           rt / 1000, (rt % 1000) / 10);
  cs_meas_set_meta(set, "cuda", buf, NULL);
  int count = 0;
  cudaGetDeviceCount(&count);
  struct cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, s->dev[0]) == cudaSuccess) {
    snprintf(buf, sizeof buf, "%.128s, %.0f GiB, sm_%d%d, %d visible on %.60s", p.name,
             (double)p.totalGlobalMem / 1073741824.0, p.major, p.minor, count, s->host);
    cs_meas_set_meta(set, "gpu", buf, NULL);
  }
  /* GPU-to-GPU peer access and its performance rank, as far as CUDA reports it */
  size_t used = 0;
  buf[0] = '\0';
  for (int a = 0; a < count && used < sizeof buf; a++)
    for (int b = a + 1; b < count && used < sizeof buf; b++) {
      int can = 0, rank = 0;
      cudaDeviceCanAccessPeer(&can, a, b);
      cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b);
      used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%d-%d:%s(rank %d)",
                               used ? " " : "", a, b, can ? "p2p" : "no-p2p", rank);
    }
  if (buf[0]) cs_meas_set_meta(set, "gpu_links", buf, NULL);
  used = 0;
  buf[0] = '\0';
  for (char **e = environ; e && *e && used < sizeof buf; e++)
    if (strncmp(*e, "NCCL_", 5) == 0 && strncmp(*e, "NCCL_ALGO=", 10) != 0 &&
        strncmp(*e, "NCCL_PROTO=", 11) != 0)
      used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", used ? ";" : "", *e);
  cs_meas_set_meta(set, "nccl_env", buf, NULL);
}

static void nccl_fini(void *state) {
  struct nccl_state *s = state;
  if (s == NULL) return;
  if (s->world) ncclCommDestroy(s->world);
  free(s);
}

const struct cs_backend cs_backend_nccl = {
    .name = "nccl",
    .variants_default = nccl_all,
    .nvariants_default = (int)(sizeof nccl_all / sizeof nccl_all[0]),
    .variants_all = nccl_all,
    .nvariants_all = (int)(sizeof nccl_all / sizeof nccl_all[0]),
    .init = nccl_init,
    .start = nccl_start,
    .group_open = nccl_group_open,
    .prepare = nccl_prepare,
    .issue = nccl_issue,
    .clock_start = nccl_clock_start,
    .clock_stop = nccl_clock_stop,
    .group_max = nccl_group_max,
    .check = nccl_check,
    .group_close = nccl_group_close,
    .describe = nccl_describe,
    .fini = nccl_fini,
};

#else
/* Built without NCCL: this translation unit is intentionally empty. */
typedef int cs_backend_nccl_absent;
#endif
