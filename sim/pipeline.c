/* pipeline.c — see pipeline.h.
 *
 * The order of operations and who waits for whom do not depend on the durations, so
 * cs_sim_pipe_alloc compiles the schedule once: it walks it as a sweep over the stages (each
 * stage keeps a cursor into its fixed operation order and starts every operation whose input has
 * arrived, until all have run), which yields a valid order of all operations, then sorts them by
 * depth in the dependency graph (stable, so each stage keeps its own order), so that neighbouring
 * operations in the list are mostly independent and the processor overlaps them. Each operation
 * becomes four numbers: its stage, the slot of its duration, the operation it waits for and the
 * slot of the delay on that edge. A run is then one pass over a flat array:
 *     end[i] = max(end[dep] + delay, end of the stage's previous operation) + duration,
 * for up to four independent sets of durations at once (the lanes: the band's levels), with no
 * branch on the schedule and no allocation.
 */
#include "pipeline.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
_Static_assert(CS_SIM_PIPE_LANES == 4, "replay4 handles four lanes as two pairs");
#endif

#define LANES CS_SIM_PIPE_LANES

struct pop {
  int32_t stage;
  int32_t dur; /* duration slot: k forward, nc + k backward, 2 nc + k last micro-batch's backward */
  int32_t dep; /* the operation waited for: its position + 1; 0 = none (a zero end) */
  int32_t edge; /* delay slot on that edge: 0 none, 1 one transfer, 2 + k the transfer after chunk
                   k's last backward */
};

struct cs_sim_pipe {
  int pp, v;
  long m;
  long n;               /* operations: 2 m v pp */
  int shared;           /* op, lb_pos and lb_prev belong to the schedule cache, not to this pipe */
  struct pop *op;       /* [n] in replay order */
  int32_t *lb_pos;      /* [pp v] position + 1 of each chunk's last backward (0 = none) */
  int32_t *lb_prev;     /* [pp v] position + 1 of the operation before it on its stage (0 = none) */
  double *end;          /* [(n + 1) * LANES]: end of each operation, [0] = 0 */
  double *dur, *delay;  /* [3 nc * LANES], [(2 + nc) * LANES] */
  double *clock, *busy; /* [pp * LANES] */
  long resume;          /* the first position whose operation an extra can touch (n = none) */
  double *snap;         /* [2 * pp * LANES]: clock and busy before it, from the last run */
  int last_lanes;       /* lanes of the last run (0 = none yet) */
};

/* The o-th operation of stage s: *fwd 1 for a forward; *chunk and *mb what it runs. */
static void decode(const struct cs_sim_pipe *p, int s, long o, int *fwd, int *chunk, long *mb) {
  const long total = p->m * p->v, pv = (long)p->pp * p->v;
  long warm = p->v == 1 ? p->pp - s - 1 : (long)(p->pp - s - 1) * 2 + (long)(p->v - 1) * p->pp;
  if (warm > total) warm = total;
  const long rest = total - warm;
  long k;
  if (o < warm)
    *fwd = 1, k = o;
  else if (o < warm + 2 * rest) {
    long i = (o - warm) / 2;
    if ((o - warm) % 2 == 0)
      *fwd = 1, k = warm + i;
    else
      *fwd = 0, k = i;
  } else
    *fwd = 0, k = rest + (o - warm - 2 * rest);
  if (p->v == 1) {
    *chunk = 0;
    *mb = k;
    return;
  }
  int c = (int)((k % pv) / p->pp);
  *chunk = *fwd ? c : p->v - 1 - c;
  *mb = (k / pv) * p->pp + k % p->pp;
}

/* Builds p->op: the sweep order, then sorted by depth. Returns 0 when out of memory. */
static int compile(struct cs_sim_pipe *p) {
  const int pp = p->pp, v = p->v;
  const long m = p->m, total = 2 * m * v, nvs = (long)pp * v, n = p->n;
  const int nc = pp * v;
  /* positions (+1) of the forward and backward of each (virtual stage, micro-batch) */
  int32_t *fpos = calloc((size_t)(nvs * m), sizeof *fpos);
  int32_t *bpos = calloc((size_t)(nvs * m), sizeof *bpos);
  int32_t *depth = malloc((size_t)n * sizeof *depth);
  int32_t *prev = malloc((size_t)n * sizeof *prev);
  long *cursor = calloc((size_t)pp, sizeof *cursor);
  struct pop *tmp = malloc((size_t)n * sizeof *tmp);
  long *count = NULL;
  int ok = fpos && bpos && depth && prev && cursor && tmp;
  long pos = 0;
  int progress = 1;
  while (ok && progress) {
    progress = 0;
    for (int s = 0; s < pp; s++) {
      while (cursor[s] < total) {
        int f, c;
        long j;
        decode(p, s, cursor[s], &f, &c, &j);
        long u = (long)c * pp + s; /* virtual stage */
        int32_t dep = 0, edge = 0;
        if (f) {
          if (u > 0) {
            if (!fpos[(u - 1) * m + j]) break;
            dep = fpos[(u - 1) * m + j], edge = 1;
          }
        } else if (u == nvs - 1) {
          if (!fpos[u * m + j]) break;
          dep = fpos[u * m + j];
        } else {
          if (!bpos[(u + 1) * m + j]) break;
          dep = bpos[(u + 1) * m + j];
          edge = j == m - 1 ? 2 + (int32_t)(((u + 1) % pp) * v + (u + 1) / pp) : 1;
        }
        int k = s * v + c;
        struct pop o = {s, f ? k : j == m - 1 ? 2 * nc + k : nc + k, dep, edge};
        tmp[pos++] = o;
        (f ? fpos : bpos)[u * m + j] = (int32_t)pos;
        if (!f) p->lb_pos[k] = (int32_t)pos; /* the last one written is the last backward */
        cursor[s]++;
        progress = 1;
      }
    }
  }
  ok = ok && pos == n;
  /* the previous operation on each stage, and the depth: the longest chain of waits before */
  if (ok) {
    long *lastpos = cursor; /* reuse: position + 1 of each stage's latest operation */
    memset(lastpos, 0, (size_t)pp * sizeof *lastpos);
    /* positions are in a valid order, so one pass in position order sees every predecessor */
    for (long i = 0; i < n; i++) {
      int s = tmp[i].stage;
      prev[i] = (int32_t)lastpos[s];
      int32_t d = tmp[i].dep ? depth[tmp[i].dep - 1] + 1 : 0;
      if (prev[i] && depth[prev[i] - 1] + 1 > d) d = depth[prev[i] - 1] + 1;
      depth[i] = d;
      lastpos[s] = i + 1;
    }
    for (int k = 0; k < nc; k++)
      p->lb_prev[k] = p->lb_pos[k] ? prev[p->lb_pos[k] - 1] : 0;
  }
  int32_t maxd = 0;
  for (long i = 0; ok && i < n; i++)
    if (depth[i] > maxd) maxd = depth[i];
  if (ok) ok = (count = calloc((size_t)maxd + 2, sizeof *count)) != NULL;
  if (ok) {
    /* stable counting sort by depth: operations of one depth never wait for each other */
    for (long i = 0; i < n; i++)
      count[depth[i] + 1]++;
    for (int32_t d = 0; d <= maxd; d++)
      count[d + 1] += count[d];
    int32_t *newpos = prev; /* prev is no longer needed: lb_prev holds what is */
    for (long i = 0; i < n; i++)
      newpos[i] = (int32_t)(count[depth[i]]++ + 1);
    for (long i = 0; i < n; i++) {
      struct pop o = tmp[i];
      if (o.dep) o.dep = newpos[o.dep - 1];
      p->op[newpos[i] - 1] = o;
    }
    for (int k = 0; k < nc; k++) {
      if (p->lb_pos[k]) p->lb_pos[k] = newpos[p->lb_pos[k] - 1];
      if (p->lb_prev[k]) p->lb_prev[k] = newpos[p->lb_prev[k] - 1];
    }
    p->resume = n;
    for (long i = n; i-- > 0;)
      if (p->op[i].dur >= 2 * nc || p->op[i].edge >= 2) p->resume = i;
  }
  free(fpos);
  free(bpos);
  free(depth);
  free(prev);
  free(cursor);
  free(tmp);
  free(count);
  return ok;
}

/* The compiled schedules of this process, by (pp, v, m): compiling one costs several runs, and
 * a sweep, a search or a series of predictions asks for the same few shapes again and again. A
 * compiled schedule is read-only, so pipes of one shape share it. Kept for the life of the
 * process: at most SCHED_MAX of at most SCHED_OPS operations each (about 16 MiB in all); a larger
 * or later shape is compiled for its own pipe. */
#define SCHED_MAX 64
#define SCHED_OPS 16384
struct sched {
  int pp, v;
  long m;
  struct pop *op;
  int32_t *lb_pos, *lb_prev;
  long resume;
};
static struct sched sched_cache[SCHED_MAX];
static int sched_n;
static pthread_mutex_t sched_mu = PTHREAD_MUTEX_INITIALIZER;

/* Points p at a cached schedule of its shape (1), or at none (0): p then compiles its own. */
static int sched_get(struct cs_sim_pipe *p) {
  int found = 0;
  pthread_mutex_lock(&sched_mu);
  for (int i = 0; i < sched_n && !found; i++) {
    const struct sched *c = &sched_cache[i];
    if (c->pp == p->pp && c->v == p->v && c->m == p->m) {
      p->op = c->op, p->lb_pos = c->lb_pos, p->lb_prev = c->lb_prev, p->resume = c->resume;
      p->shared = found = 1;
    }
  }
  pthread_mutex_unlock(&sched_mu);
  return found;
}

/* Hands p's freshly compiled schedule to the cache when there is room (p then shares it). */
static void sched_put(struct cs_sim_pipe *p) {
  if (p->n > SCHED_OPS) return;
  pthread_mutex_lock(&sched_mu);
  if (sched_n < SCHED_MAX) {
    sched_cache[sched_n++] =
        (struct sched){p->pp, p->v, p->m, p->op, p->lb_pos, p->lb_prev, p->resume};
    p->shared = 1;
  }
  pthread_mutex_unlock(&sched_mu);
}

enum cs_status cs_sim_pipe_alloc(int pp, int vpp, long m, struct cs_sim_pipe **out,
                                 struct cs_error *err) {
  *out = NULL;
  if (pp < 1 || vpp < 1 || m < 1 || (double)pp * vpp * m > 1e8)
    return cs_error_set(err, CS_ERR_USAGE,
                        "pipeline of %d stages x %d chunks x %ld micro-batches "
                        "is out of range",
                        pp, vpp, m);
  if (vpp > 1 && m % pp != 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "the interleaved schedule needs the micro-batches (%ld) "
                        "to be a multiple of pp (%d)",
                        m, pp);
  struct cs_sim_pipe *p = calloc(1, sizeof *p);
  size_t nc = (size_t)pp * (size_t)vpp, n = 2 * nc * (size_t)m;
  int cached = 0;
  if (p) {
    p->pp = pp, p->v = vpp, p->m = m, p->n = (long)n;
    cached = sched_get(p);
    if (!cached) {
      p->op = malloc(n * sizeof *p->op);
      p->lb_pos = calloc(nc, sizeof *p->lb_pos);
      p->lb_prev = calloc(nc, sizeof *p->lb_prev);
    }
    p->end = calloc((n + 1) * LANES, sizeof *p->end);
    p->dur = calloc(3 * nc * LANES, sizeof *p->dur);
    p->delay = calloc((2 + nc) * LANES, sizeof *p->delay);
    p->clock = calloc((size_t)pp * LANES, sizeof *p->clock);
    p->busy = calloc((size_t)pp * LANES, sizeof *p->busy);
    p->snap = calloc(2 * (size_t)pp * LANES, sizeof *p->snap);
  }
  if (!p || !p->op || !p->lb_pos || !p->lb_prev || !p->end || !p->dur || !p->delay || !p->clock ||
      !p->busy || !p->snap || (!cached && !compile(p))) {
    cs_sim_pipe_free(p);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory for a %zu-pass pipeline schedule", n);
  }
  if (!cached) sched_put(p);
  *out = p;
  return CS_OK;
}

void cs_sim_pipe_free(struct cs_sim_pipe *p) {
  if (!p) return;
  if (!p->shared) {
    free(p->op);
    free(p->lb_pos);
    free(p->lb_prev);
  }
  free(p->end);
  free(p->dur);
  free(p->delay);
  free(p->clock);
  free(p->busy);
  free(p->snap);
  free(p);
}

/* One lane, operations [from, to): the tables have stride 1. */
static void replay1(struct cs_sim_pipe *p, long from, long to) {
  const struct pop *restrict op = p->op;
  double *restrict end = p->end, *restrict clock = p->clock, *restrict busy = p->busy;
  const double *restrict dur = p->dur, *restrict delay = p->delay;
  for (long i = from; i < to; i++) {
    const struct pop o = op[i];
    const double ready = end[o.dep] + delay[o.edge], c = clock[o.stage], d = dur[o.dur];
    const double e = (ready > c ? ready : c) + d;
    clock[o.stage] = e;
    busy[o.stage] += d;
    end[i + 1] = e;
  }
}

/* Four lanes, operations [from, to): the tables have stride LANES. With SSE2 two lanes share one
 * instruction; _mm_max_pd(a, b) is a > b ? a : b, exactly as the scalar form. */
static void replay4(struct cs_sim_pipe *p, long from, long to) {
  const struct pop *restrict op = p->op;
  double *restrict end = p->end, *restrict clock = p->clock, *restrict busy = p->busy;
  const double *restrict dur = p->dur, *restrict delay = p->delay;
  for (long i = from; i < to; i++) {
    const struct pop o = op[i];
    const double *e = end + (size_t)o.dep * LANES, *dl = delay + (size_t)o.edge * LANES;
    const double *du = dur + (size_t)o.dur * LANES;
    double *ck = clock + (size_t)o.stage * LANES, *bz = busy + (size_t)o.stage * LANES;
    double *out = end + (size_t)(i + 1) * LANES;
#ifdef __SSE2__
    const __m128d d0 = _mm_loadu_pd(du), d1 = _mm_loadu_pd(du + 2);
    __m128d r0 = _mm_add_pd(_mm_loadu_pd(e), _mm_loadu_pd(dl));
    __m128d r1 = _mm_add_pd(_mm_loadu_pd(e + 2), _mm_loadu_pd(dl + 2));
    r0 = _mm_add_pd(_mm_max_pd(r0, _mm_loadu_pd(ck)), d0);
    r1 = _mm_add_pd(_mm_max_pd(r1, _mm_loadu_pd(ck + 2)), d1);
    _mm_storeu_pd(ck, r0);
    _mm_storeu_pd(ck + 2, r1);
    _mm_storeu_pd(out, r0);
    _mm_storeu_pd(out + 2, r1);
    _mm_storeu_pd(bz, _mm_add_pd(_mm_loadu_pd(bz), d0));
    _mm_storeu_pd(bz + 2, _mm_add_pd(_mm_loadu_pd(bz + 2), d1));
#else
    for (int l = 0; l < LANES; l++) {
      double ready = e[l] + dl[l];
      double r = (ready > ck[l] ? ready : ck[l]) + du[l];
      ck[l] = r;
      bz[l] += du[l];
      out[l] = r;
    }
#endif
  }
}

/* Replays operations [from, n) at stride S, keeping the stage clocks at p->resume when the
 * replay passes it. */
static void replay(struct cs_sim_pipe *p, int S, long from) {
  const size_t ns = (size_t)p->pp * (size_t)S;
  long mid = p->resume > from ? p->resume : from;
  if (S == 1)
    replay1(p, from, mid);
  else
    replay4(p, from, mid);
  if (mid == p->resume) {
    memcpy(p->snap, p->clock, ns * sizeof *p->snap);
    memcpy(p->snap + ns, p->busy, ns * sizeof *p->snap);
  }
  if (S == 1)
    replay1(p, mid, p->n);
  else
    replay4(p, mid, p->n);
}

/* Fills the duration and delay tables of a run (stride S). */
static void tables(struct cs_sim_pipe *p, int S, int lanes, const double *fwd, const double *bwd,
                   const double *p2p, const double *bwd_extra, const double *send_extra) {
  const int pp = p->pp, nc = pp * p->v;
  for (int k = 0; k < nc; k++)
    for (int l = 0; l < lanes; l++) {
      double f = fwd[k * lanes + l], b = bwd[k * lanes + l];
      p->dur[k * S + l] = f;
      p->dur[(nc + k) * S + l] = b;
      p->dur[(2 * nc + k) * S + l] = bwd_extra ? b + bwd_extra[k * lanes + l] : b;
    }
  for (int l = 0; l < lanes; l++) {
    double x = pp == 1 ? 0 : p2p[l];
    p->delay[l] = 0;
    p->delay[S + l] = x;
    for (int k = 0; k < nc; k++)
      p->delay[(2 + k) * S + l] = send_extra ? x + send_extra[k * lanes + l] : x;
  }
}

/* The results of the run in the tables, for lanes lanes at stride S. */
static double results(struct cs_sim_pipe *p, int S, int lanes, struct cs_sim_pipe_stage *st,
                      double *last_bwd) {
  const int pp = p->pp, nc = pp * p->v;
  if (last_bwd)
    for (int k = 0; k < nc; k++) {
      int32_t i = p->lb_pos[k], pv = p->lb_prev[k];
      if (!i) continue;
      const struct pop *o = &p->op[i - 1];
      for (int l = 0; l < lanes; l++) { /* the start of that backward, as the replay had it */
        double ready = p->end[(size_t)o->dep * S + l] + p->delay[(size_t)o->edge * S + l];
        double c = p->end[(size_t)pv * S + l];
        last_bwd[k * lanes + l] = ready > c ? ready : c;
      }
    }
  double end = 0;
  for (int s = 0; s < pp; s++)
    for (int l = 0; l < lanes; l++) {
      struct cs_sim_pipe_stage *x = &st[s * lanes + l];
      x->end = p->clock[s * S + l];
      x->busy = p->busy[s * S + l];
      x->idle = x->end - x->busy;
      if (l == 0 && x->end > end) end = x->end;
    }
  return end;
}

double cs_sim_pipe_run_lanes(struct cs_sim_pipe *p, int lanes, const double *fwd, const double *bwd,
                             const double *p2p, const double *bwd_extra, const double *send_extra,
                             struct cs_sim_pipe_stage *st, double *last_bwd) {
  if (lanes < 1) lanes = 1;
  if (lanes > LANES) lanes = LANES;
  const int S = lanes == 1 ? 1 : LANES; /* stride of the tables */
  tables(p, S, lanes, fwd, bwd, p2p, bwd_extra, send_extra);
  for (int i = 0; i < p->pp * S; i++)
    p->clock[i] = p->busy[i] = 0;
  for (int l = 0; l < S; l++)
    p->end[l] = 0;
  replay(p, S, 0);
  p->last_lanes = lanes;
  return results(p, S, lanes, st, last_bwd);
}

double cs_sim_pipe_rerun_lanes(struct cs_sim_pipe *p, int lanes, const double *fwd,
                               const double *bwd, const double *p2p, const double *bwd_extra,
                               const double *send_extra, struct cs_sim_pipe_stage *st,
                               double *last_bwd) {
  if (lanes < 1) lanes = 1;
  if (lanes > LANES) lanes = LANES;
  if (p->last_lanes != lanes)
    return cs_sim_pipe_run_lanes(p, lanes, fwd, bwd, p2p, bwd_extra, send_extra, st, last_bwd);
  const int S = lanes == 1 ? 1 : LANES;
  const size_t ns = (size_t)p->pp * (size_t)S;
  tables(p, S, lanes, fwd, bwd, p2p, bwd_extra, send_extra);
  if (p->resume < p->n) { /* everything before it is as the last run left it */
    memcpy(p->clock, p->snap, ns * sizeof *p->snap);
    memcpy(p->busy, p->snap + ns, ns * sizeof *p->snap);
    replay(p, S, p->resume);
  }
  return results(p, S, lanes, st, last_bwd);
}

double cs_sim_pipe_run(struct cs_sim_pipe *p, const double *fwd, const double *bwd, double p2p,
                       struct cs_sim_pipe_stage *st, double *last_bwd) {
  return cs_sim_pipe_run_lanes(p, 1, fwd, bwd, &p2p, NULL, NULL, st, last_bwd);
}

double cs_sim_pipe_run_ext(struct cs_sim_pipe *p, const double *fwd, const double *bwd, double p2p,
                           const double *bwd_extra, const double *send_extra,
                           struct cs_sim_pipe_stage *st, double *last_bwd) {
  return cs_sim_pipe_run_lanes(p, 1, fwd, bwd, &p2p, bwd_extra, send_extra, st, last_bwd);
}
