/* resid.c — the fit's residual scale by message size (fit.h, cs_fit_resid_table). */
#include <math.h>
#include <stdlib.h>

#include "fit.h"

struct rp {
  int coll, algo, proto;
  double l2; /* log2(bytes) */
  double lr; /* ln(predicted / measured) */
};

static int same_pair(const struct rp *x, const struct rp *y) {
  return x->coll == y->coll && x->algo == y->algo && x->proto == y->proto;
}

static int rp_cmp(const void *a, const void *b) {
  const struct rp *x = a, *y = b;
  if (x->coll != y->coll) return x->coll < y->coll ? -1 : 1;
  if (x->algo != y->algo) return x->algo < y->algo ? -1 : 1;
  if (x->proto != y->proto) return x->proto < y->proto ? -1 : 1;
  return x->l2 < y->l2 ? -1 : x->l2 > y->l2;
}

enum cs_status cs_fit_resid_table(const struct cs_model *m, const struct cs_coll_query *q,
                                  const double *t, size_t n, double noise_ln,
                                  struct cs_cal_quality *out, struct cs_error *err) {
  free(out->resid);
  out->resid = NULL;
  out->n_resid = 0;
  struct rp *p = malloc((n ? n : 1) * sizeof *p);
  struct cs_cal_resid *tab = malloc(CS_CAL_MAX_RESID * sizeof *tab);
  if (p == NULL || tab == NULL) {
    free(p);
    free(tab);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  out->resid = tab;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    struct cs_coll_pred pr;
    if (!(q[i].bytes >= 1) || !(t[i] > 0) || cs_model_predict(m, &q[i], &pr, NULL) != CS_OK ||
        !(pr.time > 0) || !isfinite(pr.time))
      continue;
    p[k++] = (struct rp){q[i].coll, pr.algo, pr.proto, log2(q[i].bytes), log(pr.time / t[i])};
  }
  qsort(p, k, sizeof *p, rp_cmp);
  /* each run of one collective, algorithm and protocol, its whole octaves in turn */
  for (size_t a = 0, b; a < k; a = b) {
    for (b = a; b < k && same_pair(&p[a], &p[b]); b++)
      ;
    long first = lround(p[a].l2), last = lround(p[b - 1].l2);
    if (first < 0) first = 0;
    if (last > 62) last = 62;
    for (long o = first; o <= last && out->n_resid < CS_CAL_MAX_RESID; o++) {
      double ss = 0;
      int cnt = 0;
      for (size_t i = a; i < b; i++)
        if (fabs(p[i].l2 - (double)o) <= 1.0 + 1e-9) ss += p[i].lr * p[i].lr, cnt++;
      if (cnt < CS_CAL_RESID_MIN_POINTS) continue;
      double rms = sqrt(ss / cnt);
      if (!(rms > noise_ln)) continue;
      out->resid[out->n_resid++] = (struct cs_cal_resid){(unsigned char)p[a].coll,
                                                         (unsigned char)p[a].algo,
                                                         (unsigned char)p[a].proto,
                                                         (signed char)o,
                                                         cnt,
                                                         rms};
    }
  }
  free(p);
  if (out->n_resid == 0) {
    free(out->resid);
    out->resid = NULL;
  }
  return CS_OK;
}
