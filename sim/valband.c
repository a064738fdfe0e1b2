/* valband.c — the band of validation cases (see valband.h). */
#include "valband.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute.h"
#include "stats.h"

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double cs_valband_quantile(const double *x, const int *group, size_t n, int skip, double p) {
  double *v = n ? malloc(n * sizeof *v) : NULL;
  size_t k = 0;
  for (size_t i = 0; v && i < n; i++)
    if (skip < 0 || group[i] != skip) v[k++] = x[i];
  double q = NAN;
  if (k > 0) {
    qsort(v, k, sizeof *v, cmp_dbl);
    double at = p * (double)(k - 1);
    size_t lo = (size_t)at;
    q = lo + 1 < k ? v[lo] + (v[lo + 1] - v[lo]) * (at - (double)lo) : v[k - 1];
  }
  free(v);
  return q;
}

/* A collective's model band widened by the relative residual term q (NAN: none). */
static void coll_band(struct cs_valband *c, double q) {
  if (!isfinite(q)) return;
  double dl = c->pred - c->lo, dh = c->hi - c->pred, u = q * c->pred;
  c->lo = c->pred - sqrt(dl * dl + u * u), c->hi = c->pred + sqrt(dh * dh + u * u);
  if (c->lo < 0) c->lo = 0;
}

enum cs_status cs_valband_pass(struct cs_valband *const *c, size_t n, struct cs_error *err) {
  size_t m = n ? n : 1;
  double *e = malloc(m * sizeof *e), *ec = malloc(m * sizeof *ec);
  int *g = malloc(m * sizeof *g), *gc = malloc(m * sizeof *gc), *id = malloc(m * sizeof *id);
  enum cs_status st =
      e && ec && g && gc && id ? CS_OK : cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  size_t ns = 0, nc = 0;
  for (size_t i = 0; st == CS_OK && i < n; i++) {
    size_t j = 0; /* the section's number: the index of its first case */
    while (strcmp(c[j]->section, c[i]->section) != 0)
      j++;
    id[i] = (int)j;
    if (c[i]->kind == CS_VALBAND_SPEEDUP) e[ns] = fabs(c[i]->err), g[ns++] = id[i];
    if (c[i]->kind == CS_VALBAND_COLL) ec[nc] = fabs(c[i]->err), gc[nc++] = id[i];
  }
  for (size_t i = 0; st == CS_OK && i < n; i++) {
    struct cs_valband *x = c[i];
    if (x->kind == CS_VALBAND_COLL) {
      if (x->coll_default)
        coll_band(x, cs_valband_quantile(ec, gc, nc, id[i], CS_VALBAND_COVERAGE));
      continue;
    }
    double q = 0;
    if (x->multi) {
      q = cs_valband_quantile(e, g, ns, id[i], CS_VALBAND_COVERAGE);
      if (!isfinite(q)) q = CS_COMPUTE_BAND_FW;
    }
    double lo, hi;
    cs_sim_band(&x->sim, x->u_compute, q * x->sim.step, &lo, &hi);
    if (x->kind == CS_VALBAND_STEP)
      x->lo = lo, x->hi = hi;
    else
      x->lo = x->pred * x->sim.step / hi, x->hi = lo > 0 ? x->pred * x->sim.step / lo : INFINITY;
  }
  free(e), free(ec), free(g), free(gc), free(id);
  return st;
}
