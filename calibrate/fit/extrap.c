/* extrap.c — how far a calibration's own data says it extrapolates in node count (fit.h,
 * cs_fit_extrapolation). */
#include <math.h>
#include <stdlib.h>

#include "fit.h"
#include "stats.h"

/* Whether the fit of o (o->launch: the one the fit chose) used row r. */
static int counts(const struct cs_meas_row *r, const struct cs_fit_opts *o) {
  return cs_fit_row_selected(r, o, o->launch);
}

enum cs_status cs_fit_extrapolation(const struct cs_meas_set *meas, const struct cs_fit_opts *opts,
                                    struct cs_cal *cal, struct cs_error *err) {
  cal->quality.extrap_sd = NAN;
  cal->quality.extrap_from = cal->quality.extrap_to = 0;
  /* the rows of the launch the fit chose (its provenance), for the counts and the refit alike */
  struct cs_fit_opts o = *opts;
  o.cross_validate = 0;
  enum cs_launch launch;
  if (cs_meas_launch_parse(cal->prov.launch, &launch) == 0) o.launch = (int)launch;
  opts = &o;
  /* the largest node count, the one below it and at least one more below that, so that the rows
   * held in still span two node counts */
  int top = 0, next = 0, distinct = 0;
  for (size_t i = 0; i < meas->n; i++)
    if (counts(&meas->rows[i], opts) && meas->rows[i].nodes > top) top = meas->rows[i].nodes;
  for (int below = top, k = 0; k < 3 && below > 1; k++) {
    int best = 0;
    for (size_t i = 0; i < meas->n; i++) {
      const struct cs_meas_row *r = &meas->rows[i];
      if (counts(r, opts) && r->nodes < below && r->nodes > best) best = r->nodes;
    }
    if (best == 0) break;
    if (k == 0) next = best;
    distinct = k + 2;
    below = best;
  }
  if (top < 2 || distinct < 3) return CS_OK; /* the held-in rows must span two node counts */

  struct cs_meas_set sub;
  cs_meas_set_init(&sub);
  enum cs_status st = CS_OK;
  for (size_t i = 0; i < meas->n && st == CS_OK; i++)
    if (meas->rows[i].nodes < top) st = cs_meas_set_push(&sub, &meas->rows[i], err);
  struct cs_cal held;
  cs_cal_init(&held);
  struct cs_error sub_err = {0};
  if (st == CS_OK && cs_fit_run(&sub, &o, &held, NULL, &sub_err) == CS_OK) {
    /* |ln(predicted / measured)| of the top count's rows */
    double *e = malloc((meas->n ? meas->n : 1) * sizeof *e);
    if (e == NULL) st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; e != NULL && i < meas->n; i++) {
      const struct cs_meas_row *r = &meas->rows[i];
      if (!counts(r, opts) || r->nodes != top) continue;
      struct cs_coll_query q = {r->coll,  r->algo,          r->proto, r->ranks,
                                r->nodes, r->gpus_per_node, r->bytes};
      struct cs_coll_pred pr;
      double lo, hi;
      if (cs_cal_predict(&held, &q, &pr, &lo, &hi, NULL) != CS_OK || !(pr.time > 0)) continue;
      e[n++] = fabs(log(pr.time / (r->time_us * 1e-6)));
    }
    if (n > 0) {
      /* the rms over the rows within three robust scales (1.4826 x the median miss), as the fit
       * treats outliers (a few erratic rows do not set the band at every size), net of the noise
       * the band adds anyway (the held-in fit's overall noise) */
      double cut = 3 * cs_stats_robust_scale(e, n), ss = 0;
      size_t kept = 0;
      for (size_t i = 0; i < n; i++)
        if (e[i] <= cut) ss += e[i] * e[i], kept++;
      double s = kept ? sqrt(ss / (double)kept) : 0;
      double g = isfinite(held.quality.noise_rel) ? log1p(held.quality.noise_rel) : 0;
      s = s > g ? sqrt(s * s - g * g) : 0;
      cal->quality.extrap_sd = s / sqrt(log2((double)top / next));
      cal->quality.extrap_from = next;
      cal->quality.extrap_to = top;
    }
    free(e);
  }
  cs_cal_fini(&held);
  cs_meas_set_fini(&sub);
  return st;
}
