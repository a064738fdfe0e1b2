/* pipeline.c — see pipeline.h. Each stage keeps a cursor into its fixed operation order; sweeps
 * over the stages start every operation whose input has arrived, until all have run. Each sweep
 * starts at least one operation, and every operation is decoded from its index, so the only state
 * is the end time of each (virtual stage, micro-batch) pass. */
#include "pipeline.h"

#include <stdlib.h>

struct cs_sim_pipe {
  int pp, v;
  long m;
  double *fend, *bend; /* [(c * pp + s) * m + j]: end of forward / backward, < 0 = not yet */
  long *cursor;        /* [pp] next operation of each stage */
  double *clock;       /* [pp] when each stage is free */
};

enum cs_status cs_sim_pipe_alloc(int pp, int vpp, long m, struct cs_sim_pipe **out,
                                 struct cs_error *err) {
  *out = NULL;
  if (pp < 1 || vpp < 1 || m < 1 || (double)pp * vpp * m > 1e8)
    return cs_error_set(err, CS_ERR_USAGE, "pipeline of %d stages x %d chunks x %ld micro-batches "
                        "is out of range", pp, vpp, m);
  if (vpp > 1 && m % pp != 0)
    return cs_error_set(err, CS_ERR_USAGE, "the interleaved schedule needs the micro-batches (%ld) "
                        "to be a multiple of pp (%d)", m, pp);
  struct cs_sim_pipe *p = calloc(1, sizeof *p);
  size_t n = (size_t)pp * (size_t)vpp * (size_t)m;
  if (p) {
    p->fend = malloc(n * sizeof *p->fend);
    p->bend = malloc(n * sizeof *p->bend);
    p->cursor = malloc((size_t)pp * sizeof *p->cursor);
    p->clock = malloc((size_t)pp * sizeof *p->clock);
  }
  if (!p || !p->fend || !p->bend || !p->cursor || !p->clock) {
    cs_sim_pipe_free(p);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory for a %zu-pass pipeline schedule", n);
  }
  p->pp = pp, p->v = vpp, p->m = m;
  *out = p;
  return CS_OK;
}

void cs_sim_pipe_free(struct cs_sim_pipe *p) {
  if (!p) return;
  free(p->fend);
  free(p->bend);
  free(p->cursor);
  free(p->clock);
  free(p);
}

/* The o-th operation of stage s: *fwd 1 for a forward; *chunk and *mb what it runs. */
static void decode(const struct cs_sim_pipe *p, int s, long o, int *fwd, int *chunk, long *mb) {
  const long total = p->m * p->v, pv = (long)p->pp * p->v;
  long warm = p->v == 1 ? p->pp - s - 1 : (long)(p->pp - s - 1) * 2 + (long)(p->v - 1) * p->pp;
  if (warm > total) warm = total;
  const long rest = total - warm;
  long k;
  if (o < warm) *fwd = 1, k = o;
  else if (o < warm + 2 * rest) {
    long i = (o - warm) / 2;
    if ((o - warm) % 2 == 0) *fwd = 1, k = warm + i;
    else *fwd = 0, k = i;
  } else *fwd = 0, k = rest + (o - warm - 2 * rest);
  if (p->v == 1) {
    *chunk = 0;
    *mb = k;
    return;
  }
  int c = (int)((k % pv) / p->pp);
  *chunk = *fwd ? c : p->v - 1 - c;
  *mb = (k / pv) * p->pp + k % p->pp;
}

double cs_sim_pipe_run(struct cs_sim_pipe *p, const double *fwd, const double *bwd, double p2p,
                       struct cs_sim_pipe_stage *st, double *last_bwd) {
  const int pp = p->pp, v = p->v;
  const long m = p->m, total = 2 * m * v, nvs = (long)pp * v;
  for (long i = 0; i < nvs * m; i++) p->fend[i] = p->bend[i] = -1;
  for (int s = 0; s < pp; s++) {
    p->cursor[s] = 0;
    p->clock[s] = 0;
    st[s].busy = 0;
  }
  if (pp == 1) p2p = 0;
  int progress = 1;
  while (progress) {
    progress = 0;
    for (int s = 0; s < pp; s++) {
      while (p->cursor[s] < total) {
        int f, c;
        long j;
        decode(p, s, p->cursor[s], &f, &c, &j);
        long u = (long)c * pp + s; /* virtual stage */
        double ready;
        if (f) ready = u == 0 ? 0 : p->fend[(u - 1) * m + j] < 0 ? -1 : p->fend[(u - 1) * m + j] + p2p;
        else if (u == nvs - 1) ready = p->fend[u * m + j];
        else ready = p->bend[(u + 1) * m + j] < 0 ? -1 : p->bend[(u + 1) * m + j] + p2p;
        if (ready < 0) break;
        double start = ready > p->clock[s] ? ready : p->clock[s];
        double d = f ? fwd[s * v + c] : bwd[s * v + c];
        p->clock[s] = start + d;
        st[s].busy += d;
        if (f) p->fend[u * m + j] = start + d;
        else {
          p->bend[u * m + j] = start + d;
          if (last_bwd) last_bwd[s * v + c] = start;
        }
        p->cursor[s]++;
        progress = 1;
      }
    }
  }
  double end = 0;
  for (int s = 0; s < pp; s++) {
    st[s].end = p->clock[s];
    st[s].idle = st[s].end - st[s].busy;
    if (st[s].end > end) end = st[s].end;
  }
  return end;
}
