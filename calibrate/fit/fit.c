/* fit.c — weighted, robust, prior-regularised nonlinear least squares of the cost model; the
 * method is described in fit.h.
 *
 * Layout: select rows -> build points -> find the parameters the points depend on -> IRLS loop
 * around gsl_multifit_nlinear -> covariance and quality -> the other network form (when the data
 * spans several node counts) -> leave-one-shape-out cross-validation.
 */
#include "fit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>

#define SENS_STEP 1.5 /* ln: a parameter counts if a factor of e^1.5 either way moves a point */
#define INITIAL_NOISE 0.05
#define MIN_NOISE 0.005
#define MAX_GROUPS 256
#define BOUND_SD 0.01 /* ln: a bound violated by 1% costs as much as a 1-sigma prior miss */

struct point {
  struct cs_coll_query q;
  double t;     /* measured seconds */
  double w;     /* robust weight */
  int group;    /* shape group for cross-validation */
  int held_out; /* excluded from the current fit */
  size_t row;   /* index in the measurement set */
};

struct problem {
  struct point *pts;
  size_t n;
  int np;                       /* fitted parameters */
  int idx[CS_MODEL_NPARAMS];    /* their model indices */
  double x0[CS_MODEL_NPARAMS];  /* prior centres (ln) */
  double sd[CS_MODEL_NPARAMS];  /* prior widths (ln) */
  double hi[CS_MODEL_NPARAMS];  /* physical upper bounds (ln), +inf where none */
  double noise;                 /* relative noise scale dividing data residuals */
  int not_converged;            /* the last solve ended on GSL_EMAXITER or GSL_ENOPROG */
  struct cs_model model;        /* working model; fitted entries overwritten from x */
  const struct cs_model *prior; /* the priors' centres (opts->prior or the defaults) */
};

void cs_fit_opts_default(struct cs_fit_opts *opts) {
  memset(opts, 0, sizeof *opts);
  opts->launch = -1;
  opts->cross_validate = 1;
  opts->huber_k = 1.345;
  opts->max_irls = 8;
  opts->max_iter = 300;
}

void cs_fit_result_fini(struct cs_fit_result *res) {
  if (res == NULL) return;
  free(res->row);
  free(res->pred_us);
  free(res->weight);
  memset(res, 0, sizeof *res);
}

static void note(struct cs_fit_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(struct cs_fit_result *res, const char *fmt, ...) {
  if (res == NULL || res->n_notes >= CS_FIT_MAX_NOTES) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->notes[res->n_notes++], sizeof res->notes[0], fmt, ap);
  va_end(ap);
}

static void set_params(struct problem *pb, const gsl_vector *x) {
  for (int k = 0; k < pb->np; k++)
    *cs_model_param(&pb->model, pb->idx[k]) = exp(gsl_vector_get(x, k));
}

/* ln(model) - ln(measured) for one point, or a large value when the model cannot price it. */
static double log_resid(const struct cs_model *m, const struct point *pt) {
  struct cs_coll_pred pr;
  if (cs_model_predict(m, &pt->q, &pr, NULL) != CS_OK || !(pr.time > 0) || !isfinite(pr.time))
    return 10.0;
  return log(pr.time) - log(pt->t);
}

static int resid_f(const gsl_vector *x, void *params, gsl_vector *f) {
  struct problem *pb = params;
  set_params(pb, x);
  size_t k = 0;
  for (size_t i = 0; i < pb->n; i++) {
    const struct point *pt = &pb->pts[i];
    double r = pt->held_out ? 0.0 : sqrt(pt->w) * log_resid(&pb->model, pt) / pb->noise;
    gsl_vector_set(f, k++, r);
  }
  for (int j = 0; j < pb->np; j++)
    gsl_vector_set(f, k++, (gsl_vector_get(x, j) - pb->x0[j]) / pb->sd[j]);
  /* physical bounds, one-sided: zero inside */
  for (int j = 0; j < pb->np; j++) {
    double over = gsl_vector_get(x, j) - pb->hi[j];
    gsl_vector_set(f, k++, over > 0 ? over / BOUND_SD : 0.0);
  }
  /* the own share is never slower than the link that carries the same bytes */
  double under = log(pb->model.bw[pb->model.intra]) - log(pb->model.local);
  gsl_vector_set(f, k++, under > 0 ? under / BOUND_SD : 0.0);
  return GSL_SUCCESS;
}

/* One weighted solve from the current parameters. Writes the ln-covariance to cov (np x np) when
 * non-NULL. Returns the GSL status; *iters receives the iteration count. */
static int solve(struct problem *pb, double *cov, int *iters, int max_iter) {
  size_t nres = pb->n + 2 * (size_t)pb->np + 1;
  gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
  fp.trs = gsl_multifit_nlinear_trs_lm;
  fp.scale = gsl_multifit_nlinear_scale_more;
  gsl_multifit_nlinear_workspace *w =
      gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, nres, (size_t)pb->np);
  gsl_vector *x = gsl_vector_alloc((size_t)pb->np);
  if (w == NULL || x == NULL) {
    if (w) gsl_multifit_nlinear_free(w);
    if (x) gsl_vector_free(x);
    return GSL_ENOMEM;
  }
  for (int k = 0; k < pb->np; k++)
    gsl_vector_set(x, k, log(*cs_model_param(&pb->model, pb->idx[k])));
  gsl_multifit_nlinear_fdf fdf = {0};
  fdf.f = resid_f;
  fdf.n = nres;
  fdf.p = (size_t)pb->np;
  fdf.params = pb;
  int info = 0;
  int st = gsl_multifit_nlinear_init(x, &fdf, w);
  if (st == GSL_SUCCESS)
    st = gsl_multifit_nlinear_driver((size_t)max_iter, 1e-9, 1e-9, 1e-12, NULL, NULL, &info, w);
  /* running out of iterations with a finite answer is still an answer, but not a converged one:
   * the flag becomes quality.converged. GSL's driver also answers GSL_EMAXITER (info
   * GSL_ENOPROG) when its first step finds no better point: the start, the previous IRLS pass's
   * answer, is already the least-squares point, which is convergence. */
  const int first_no_step =
      st == GSL_EMAXITER && info == GSL_ENOPROG && gsl_multifit_nlinear_niter(w) <= 1;
  pb->not_converged = (st == GSL_EMAXITER || st == GSL_ENOPROG) && !first_no_step;
  if (st == GSL_EMAXITER || st == GSL_ENOPROG) st = GSL_SUCCESS;
  if (st == GSL_SUCCESS) {
    set_params(pb, w->x);
    if (iters) *iters += (int)gsl_multifit_nlinear_niter(w);
    if (cov) {
      gsl_matrix *c = gsl_matrix_alloc((size_t)pb->np, (size_t)pb->np);
      if (c == NULL)
        st = GSL_ENOMEM;
      else {
        st = gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, c);
        for (int i = 0; i < pb->np; i++)
          for (int j = 0; j < pb->np; j++)
            cov[i * pb->np + j] = gsl_matrix_get(c, i, j);
        gsl_matrix_free(c);
      }
    }
  }
  gsl_vector_free(x);
  gsl_multifit_nlinear_free(w);
  return st;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of |v| over n values (v is reordered). */
static double median_abs(double *v, size_t n) {
  if (n == 0) return 0.0;
  for (size_t i = 0; i < n; i++)
    v[i] = fabs(v[i]);
  qsort(v, n, sizeof *v, cmp_double);
  return gsl_stats_median_from_sorted_data(v, 1, n);
}

/* IRLS: solve, re-estimate the robust scale and Huber weights, repeat until stable. */
static int irls(struct problem *pb, const struct cs_fit_opts *o, double *cov, int *iters,
                double *scale_out) {
  double *r = malloc((pb->n ? pb->n : 1) * sizeof *r);
  if (r == NULL) return GSL_ENOMEM;
  int st = GSL_SUCCESS;
  pb->noise = INITIAL_NOISE;
  double scale = INITIAL_NOISE;
  for (size_t i = 0; i < pb->n; i++)
    pb->pts[i].w = 1.0;
  for (int pass = 0; pass < o->max_irls; pass++) {
    int last = pass == o->max_irls - 1;
    st = solve(pb, NULL, iters, o->max_iter);
    if (st != GSL_SUCCESS) break;
    size_t m = 0;
    for (size_t i = 0; i < pb->n; i++)
      if (!pb->pts[i].held_out) r[m++] = log_resid(&pb->model, &pb->pts[i]);
    scale = 1.4826 * median_abs(r, m);
    if (scale < MIN_NOISE) scale = MIN_NOISE;
    double change = 0.0;
    for (size_t i = 0; i < pb->n; i++) {
      struct point *pt = &pb->pts[i];
      double e = fabs(log_resid(&pb->model, pt));
      double w = e <= o->huber_k * scale ? 1.0 : o->huber_k * scale / e;
      change = fmax(change, fabs(w - pt->w));
      pt->w = w;
    }
    pb->noise = scale;
    if (change < 1e-3 || last) break;
  }
  if (st == GSL_SUCCESS && cov) st = solve(pb, cov, iters, o->max_iter);
  free(r);
  *scale_out = scale;
  return st;
}

/* The physical upper bound of parameter i, +inf where none. Efficiencies are relative to the
 * tier's ring/Simple bus rate, which runs at about 0.8 of the links' physical rate (GTC 2024
 * S62129: NVLink4 370 of 450 GB/s, NVLink3 232 of 300), so no algorithm without an in-switch
 * reduction can exceed 1/0.8 = 1.25 with Simple; LL carries 8 bytes of data per 16-byte line (NCCL
 * src/device/prims_ll.h), at most 0.5/0.8 = 0.625, rounded to 0.65; LL128 carries 120 of 128
 * bytes (prims_ll128.h), 0.9375/0.8 = 1.17, rounded to 1.2. NVLS and CollNet reduce in the switch
 * and may move twice that. Per-collective bandwidth factors obey the Simple bound. */
static double upper_bound(int i) {
  char name[64];
  cs_model_param_name(i, name, sizeof name);
  enum cs_param_kind k = cs_model_param_kind(i);
  if (k == CS_PK_COLL_BW) return 1.25;
  if (k != CS_PK_EFF) return HUGE_VAL;
  double red = strstr(name, ".nvls.") || strstr(name, ".collnet.") ? 2.0 : 1.0;
  const char *proto = strrchr(name, '.') + 1;
  if (strcmp(proto, "ll") == 0) return 0.65 * red;
  if (strcmp(proto, "ll128") == 0) return 1.2 * red;
  return 1.25 * red;
}

/* Whether a point not held out lies on one node (*one_node) and whether one has several GPUs
 * per node (*shared). */
static void point_shapes(const struct problem *pb, int *one_node, int *shared) {
  *one_node = *shared = 0;
  for (size_t k = 0; k < pb->n; k++) {
    if (pb->pts[k].held_out) continue;
    *one_node |= pb->pts[k].q.nodes == 1;
    *shared |= pb->pts[k].q.gpus_per_node > 1;
  }
}

/* Whether any non-held-out point's residual moves with parameter i at pb's model. */
static int depends_on(struct problem *pb, int i) {
  double *p = cs_model_param(&pb->model, i);
  double v = *p;
  int used = 0;
  for (size_t k = 0; k < pb->n && !used; k++) {
    if (pb->pts[k].held_out) continue;
    double before = log_resid(&pb->model, &pb->pts[k]);
    *p = v * exp(SENS_STEP);
    double up = log_resid(&pb->model, &pb->pts[k]);
    *p = v * exp(-SENS_STEP);
    double down = log_resid(&pb->model, &pb->pts[k]);
    *p = v;
    if (fabs(up - before) > 1e-9 || fabs(down - before) > 1e-9) used = 1;
  }
  return used;
}

/* Marks which parameters any non-held-out point depends on (at the current model). Without a
 * point on one node the intra-node rate is not fitted: across nodes a transfer runs at the lesser
 * of it and the network's (a smooth minimum), which such data cannot tell apart, and a fit left
 * free to choose moves whichever its prior holds least (on the published ALCF Polaris runs, 2 and
 * 8 nodes, NVLink came out at 4.6-40 GB/s per GPU and the 2 x 200 Gb/s network at its 400 GB/s
 * default); the network's rate is what such data measures. */
static void find_parameters(struct problem *pb) {
  pb->np = 0;
  int one_node, shared;
  point_shapes(pb, &one_node, &shared);
  const int intra_bw = cs_model_param_bw_index(pb->model.intra);
  /* a parameter no point depends on at the search's start (NCCL's constants) ends at the prior's
   * centre (cs_fit_run): it takes that value before the search, and whether the points depend on
   * it is asked again there, so that one the start hides but the centre would make matter (a
   * tree pipeline term of 0.1 us under NCCL's constants, 7.33 us under the defaults) is fitted
   * and never changes the fitted predictions behind the fit's back */
  unsigned char used[CS_MODEL_NPARAMS];
  int moved = 0;
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    used[i] = cs_model_param_prior_sd(i) > 0 && depends_on(pb, i);
    if (cs_model_param_prior_sd(i) > 0 && !used[i]) {
      double *p = cs_model_param(&pb->model, i), c = cs_model_param_get(pb->prior, i);
      moved |= *p != c;
      *p = c;
    }
  }
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    double sd = cs_model_param_prior_sd(i);
    if (sd <= 0) continue;
    if (i == intra_bw && !one_node) continue;
    /* asked again only where the centres changed the model */
    if (moved ? depends_on(pb, i) : used[i]) {
      pb->idx[pb->np] = i;
      pb->x0[pb->np] = log(cs_model_param_get(pb->prior, i));
      pb->sd[pb->np] = sd;
      pb->hi[pb->np] = log(upper_bound(i));
      pb->np++;
    }
  }
}

struct selection {
  const char *config;
  int launch;
};

int cs_fit_row_selected(const struct cs_meas_row *r, const struct cs_fit_opts *o, int launch) {
  const char *cfg = o->config ? o->config : "";
  if (strcmp(r->config, cfg) != 0) return 0;
  if (launch >= 0 && (int)r->launch != launch) return 0;
  if (r->in_place && !o->with_in_place) return 0;
  if (r->ranks < 2 || !(r->time_us > 0)) return 0;
  return 1;
}

/* Picks the launch with most rows under the config; -1 when none. */
static int pick_launch(const struct cs_meas_set *meas, const struct cs_fit_opts *o) {
  size_t count[2] = {0, 0};
  const char *cfg = o->config ? o->config : "";
  for (size_t i = 0; i < meas->n; i++)
    if (strcmp(meas->rows[i].config, cfg) == 0 && meas->rows[i].ranks > 1)
      count[meas->rows[i].launch == CS_LAUNCH_THREAD]++;
  if (count[0] == 0 && count[1] == 0) return -1;
  return count[1] > count[0] ? CS_LAUNCH_THREAD : CS_LAUNCH_PROCESS;
}

static void group_name(const struct point *pt, char *buf, size_t len) {
  snprintf(buf, len, "%s/%s n=%d N=%d g=%d", cs_algo_name(pt->q.algo), cs_proto_name(pt->q.proto),
           pt->q.ranks, pt->q.nodes, pt->q.gpus_per_node);
}

/* Summary of the configs present, for the "no rows" message. */
static void list_configs(const struct cs_meas_set *meas, char *buf, size_t len) {
  size_t k = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < meas->n && k < len; i++) {
    const char *c = meas->rows[i].config;
    int seen = 0;
    for (size_t j = 0; j < i && !seen; j++)
      seen = strcmp(meas->rows[j].config, c) == 0;
    if (seen) continue;
    int w = snprintf(buf + k, len - k, "%s\"%s\"", k ? ", " : "", c);
    if (w < 0) break;
    k += (size_t)w;
  }
}

/* Relative-error statistics of the fit over the points not held out. Returns -1 when out of
 * memory (the statistics are then NaN and must not be written). */
static int rel_errors(const struct problem *pb, double *med, double *p90, double *max, int *outl,
                      double scale) {
  double *e = malloc((pb->n ? pb->n : 1) * sizeof *e);
  size_t m = 0;
  int out = 0;
  *med = *p90 = *max = NAN;
  if (e == NULL) return -1;
  for (size_t i = 0; i < pb->n; i++) {
    if (pb->pts[i].held_out) continue;
    double lr = log_resid(&pb->model, &pb->pts[i]);
    if (fabs(lr) > 3.0 * scale) out++;
    e[m++] = fabs(exp(lr) - 1.0);
  }
  qsort(e, m, sizeof *e, cmp_double);
  if (m) {
    *med = gsl_stats_median_from_sorted_data(e, 1, m);
    *p90 = e[(size_t)floor(0.9 * (double)(m - 1))];
    *max = e[m - 1];
  }
  *outl = out;
  free(e);
  return 0;
}

/* AIC of the current fit from the unweighted log residuals. */
static double aic(const struct problem *pb) {
  double rss = 0.0;
  size_t m = 0;
  for (size_t i = 0; i < pb->n; i++) {
    if (pb->pts[i].held_out) continue;
    double r = log_resid(&pb->model, &pb->pts[i]);
    rss += r * r;
    m++;
  }
  if (m == 0 || rss <= 0) return NAN;
  return (double)m * log(rss / (double)m) + 2.0 * pb->np;
}

static enum cs_status gsl_failure(int st, struct cs_error *err) {
  if (st == GSL_ENOMEM) return cs_error_set(err, CS_ERR_NOMEM, "out of memory in the fit");
  return cs_error_set(err, CS_ERR_NUMERIC,
                      "the fit did not converge (%s); measure more message sizes or more shapes, "
                      "or fit fewer algorithms at once (--config)",
                      gsl_strerror(st));
}

/* Cross-validation: refit without each group, predict it. */
static enum cs_status cross_validate(struct problem *pb, const struct cs_fit_opts *o,
                                     const struct cs_model *fitted, int ngroups,
                                     struct cs_cal_quality *q, struct cs_error *err) {
  q->n_cv = 0;
  if (ngroups < 2) return CS_OK;
  struct cs_fit_opts co = *o;
  co.max_irls = 3;
  double *e = malloc(pb->n * sizeof *e);
  if (e == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory in cross-validation");
  for (int g = 0; g < ngroups && q->n_cv < CS_CAL_MAX_CV; g++) {
    struct problem cv = *pb;
    cv.model = *fitted;
    int held = 0;
    for (size_t i = 0; i < pb->n; i++) {
      pb->pts[i].held_out = pb->pts[i].group == g;
      held += pb->pts[i].held_out;
    }
    cv.pts = pb->pts;
    /* parameters only the held-out shape informs revert to their prior centres */
    find_parameters(&cv);
    for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
      int kept = 0;
      for (int k = 0; k < cv.np; k++)
        kept |= cv.idx[k] == i;
      if (!kept && cs_model_param_prior_sd(i) > 0)
        *cs_model_param(&cv.model, i) = cs_model_param_get(pb->prior, i);
    }
    double scale;
    int iters = 0;
    int st = cv.np > 0 ? irls(&cv, &co, NULL, &iters, &scale) : GSL_SUCCESS;
    if (st != GSL_SUCCESS) continue;
    size_t m = 0;
    const struct point *first = NULL;
    for (size_t i = 0; i < pb->n; i++) {
      if (pb->pts[i].group != g) continue;
      if (!first) first = &pb->pts[i];
      e[m++] = fabs(exp(log_resid(&cv.model, &pb->pts[i])) - 1.0);
    }
    if (m == 0 || first == NULL) continue;
    qsort(e, m, sizeof *e, cmp_double);
    struct cs_cal_cv *c = &q->cv[q->n_cv++];
    group_name(first, c->group, sizeof c->group);
    c->points = (int)m;
    c->median_rel_err = gsl_stats_median_from_sorted_data(e, 1, m);
    c->max_rel_err = e[m - 1];
    (void)held;
  }
  for (size_t i = 0; i < pb->n; i++)
    pb->pts[i].held_out = 0;
  free(e);
  return CS_OK;
}

/* Fills q->gate with why the fit fails its quality gate (fit.h), or "". */
static void gate(struct cs_cal_quality *q) {
  q->gate[0] = '\0';
  q->forced = 0;
  double cv[CS_CAL_MAX_CV], cv_med = 0;
  for (int i = 0; i < q->n_cv; i++)
    cv[i] = q->cv[i].median_rel_err;
  if (q->n_cv > 0) cv_med = median_abs(cv, (size_t)q->n_cv);
  if (q->median_rel_err > CS_FIT_GATE_MEDIAN)
    snprintf(q->gate, sizeof q->gate, "median |error| %.1f%% is above %.0f%%",
             100 * q->median_rel_err, 100 * CS_FIT_GATE_MEDIAN);
  else if (cv_med > CS_FIT_GATE_CV)
    snprintf(q->gate, sizeof q->gate,
             "cross-validation median |error| %.1f%% (held-out shapes) is above %.0f%%",
             100 * cv_med, 100 * CS_FIT_GATE_CV);
}

/* The error when no launch kind has multi-rank rows of o's configuration: no rows at all, or
 * (without --config) only single-rank ones, are the data's fault (CS_ERR_RANGE); a --config with
 * no rows is the option's (CS_ERR_USAGE). Each lists the configurations present. */
static enum cs_status no_launch(const struct cs_meas_set *meas, const struct cs_fit_opts *o,
                                struct cs_error *err) {
  char cfgs[512];
  list_configs(meas, cfgs, sizeof cfgs);
  if (meas->n == 0) return cs_error_set(err, CS_ERR_RANGE, "no measurement rows to fit");
  if (!o->config) /* the data's fault (one rank, e.g. calibrate without mpirun), not the options'
                   */
    return cs_error_set(err, CS_ERR_RANGE,
                        "no multi-rank measurement among %zu rows (a single rank measures no "
                        "communication); configurations present: %s",
                        meas->n, cfgs[0] ? cfgs : "none");
  return cs_error_set(err, CS_ERR_USAGE,
                      "no multi-rank measurement has configuration \"%s\"; configurations "
                      "present: %s (choose one with --config)",
                      o->config, cfgs[0] ? cfgs : "none");
}

/* cs_fit_run's steps, defined after it */
static enum cs_status select_points(const struct cs_meas_set *meas, const struct cs_fit_opts *o,
                                    int launch, struct cs_cal *cal, struct cs_fit_result *res,
                                    struct problem *pb, int *ngroups, struct cs_error *err);
static enum cs_status check_sizes(struct problem *pb, struct cs_error *err);
static enum cs_status fit_quality(struct cs_cal *cal, struct problem *best, double scale,
                                  int iters_total, int net_determined, int max_nodes, int ngroups,
                                  const struct cs_fit_opts *o, struct cs_fit_result *res,
                                  struct cs_error *err);
static enum cs_status fill_result(const struct cs_meas_set *meas, const struct cs_cal *cal,
                                  const struct problem *best, struct cs_fit_result *res,
                                  struct cs_error *err);
static void fill_provenance(struct cs_cal *cal, const struct cs_meas_set *meas,
                            const struct cs_fit_opts *o, int launch);

/* The residual table of the final model over the points not held out (cs_fit_resid_table), above
 * the fit's robust noise. Errors: CS_ERR_NOMEM. */
static enum cs_status resid_table(struct cs_cal *cal, const struct problem *pb,
                                  struct cs_error *err) {
  struct cs_coll_query *q = malloc((pb->n ? pb->n : 1) * sizeof *q);
  double *t = malloc((pb->n ? pb->n : 1) * sizeof *t);
  enum cs_status st = CS_OK;
  if (q == NULL || t == NULL) st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  size_t k = 0;
  for (size_t i = 0; st == CS_OK && i < pb->n; i++)
    if (!pb->pts[i].held_out) q[k] = pb->pts[i].q, t[k++] = pb->pts[i].t;
  double noise = isfinite(cal->quality.noise_rel) ? log1p(cal->quality.noise_rel) : 0;
  if (st == CS_OK) st = cs_fit_resid_table(&cal->model, q, t, k, noise, &cal->quality, err);
  free(q);
  free(t);
  return st;
}

enum cs_status cs_fit_run(const struct cs_meas_set *meas, const struct cs_fit_opts *opts,
                          struct cs_cal *cal, struct cs_fit_result *res, struct cs_error *err) {
  struct cs_fit_opts o;
  if (opts)
    o = *opts;
  else
    cs_fit_opts_default(&o);
  if (o.max_irls < 1) o.max_irls = 1;
  if (o.max_iter < 1) o.max_iter = 300;
  if (meas->n == 0) return cs_error_set(err, CS_ERR_PARSE, "the file has no data rows");
  if (!(o.huber_k > 0)) o.huber_k = 1.345;
  if (res) memset(res, 0, sizeof *res);

  int launch = o.launch >= 0 ? o.launch : pick_launch(meas, &o);
  char cfgs[512];
  if (launch < 0) return no_launch(meas, &o, err);

  /* select and count what is skipped */
  struct problem pb;
  int ngroups = 0;
  enum cs_status status = select_points(meas, &o, launch, cal, res, &pb, &ngroups, err);
  if (status != CS_OK) return status;
  struct cs_model prior;
  if (o.prior)
    prior = *o.prior;
  else
    cs_model_defaults(&prior);
  pb.prior = &prior;
  if (pb.n < 3) {
    free(pb.pts);
    list_configs(meas, cfgs, sizeof cfgs);
    return cs_error_set(err, CS_ERR_RANGE,
                        "only %zu usable row%s for configuration \"%s\" (need at least 3); "
                        "configurations present: %s",
                        pb.n, pb.n == 1 ? "" : "s", o.config ? o.config : "",
                        cfgs[0] ? cfgs : "none");
  }

  /* one size per shape cannot separate latency from bandwidth */
  if ((status = check_sizes(&pb, err)) != CS_OK) return status;

  /* does the data span several node counts? then both network forms are fitted */
  int min_nodes = pb.pts[0].q.nodes, max_nodes = min_nodes;
  for (size_t i = 0; i < pb.n; i++) {
    if (pb.pts[i].q.nodes < min_nodes) min_nodes = pb.pts[i].q.nodes;
    if (pb.pts[i].q.nodes > max_nodes) max_nodes = pb.pts[i].q.nodes;
  }
  int net_determined = max_nodes > 1 && max_nodes > min_nodes;

  struct cs_model start = pb.model;
  struct problem best;
  double best_cov_scale = 0;
  double *cov_store[2] = {NULL, NULL};
  struct problem fits[2];
  double scales[2] = {0, 0};
  int iters_total = 0;
  int st_forms[2] = {GSL_FAILURE, GSL_FAILURE};
  for (int form = 0; form < 2; form++) {
    if (form == CS_NET_TREE_LOG && !net_determined) break;
    fits[form] = pb;
    fits[form].model = start;
    fits[form].model.net_form = (enum cs_net_form)form;
    find_parameters(&fits[form]);
    cov_store[form] =
        calloc((size_t)(fits[form].np ? fits[form].np * fits[form].np : 1), sizeof(double));
    if (cov_store[form] == NULL) {
      status = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
      break;
    }
    st_forms[form] = fits[form].np > 0
                         ? irls(&fits[form], &o, cov_store[form], &iters_total, &scales[form])
                         : GSL_SUCCESS;
    cal->quality.aic[form] = st_forms[form] == GSL_SUCCESS ? aic(&fits[form]) : NAN;
  }
  int pick = CS_NET_RING_LINEAR;
  if (status == CS_OK) {
    if (net_determined && st_forms[1] == GSL_SUCCESS &&
        (st_forms[0] != GSL_SUCCESS || cal->quality.aic[1] < cal->quality.aic[0]))
      pick = CS_NET_TREE_LOG;
    if (st_forms[pick] != GSL_SUCCESS) status = gsl_failure(st_forms[pick], err);
  }
  if (status == CS_OK) {
    best = fits[pick];
    best_cov_scale = scales[pick];
    for (int k = 0; k < best.np; k++)
      if (!isfinite(cs_model_param_get(&best.model, best.idx[k])))
        status = gsl_failure(GSL_EDOM, err);
  }
  if (status == CS_OK) {
    cal->model = best.model;
    for (int i = 0; i < CS_MODEL_NPARAMS; i++)
      cal->source[i] = CS_SRC_DEFAULT;
    status = cs_cal_alloc_cov(cal, best.np, err);
  }
  if (status == CS_OK) {
    for (int k = 0; k < best.np; k++) {
      cal->fit_index[k] = best.idx[k];
      cal->source[best.idx[k]] = CS_SRC_FIT;
    }
    /* what the data did not determine is what the prior believes (no point depends on it) */
    for (int i = 0; i < CS_MODEL_NPARAMS; i++)
      if (cal->source[i] == CS_SRC_DEFAULT && cs_model_param_prior_sd(i) > 0)
        *cs_model_param(&cal->model, i) = cs_model_param_get(&prior, i);
    memcpy(cal->cov, cov_store[pick], (size_t)best.np * (size_t)best.np * sizeof(double));
    int other = 1 - pick;
    for (int p = 0; p < CS_PROTO_COUNT; p++)
      cal->alt_hop_net[p] = st_forms[other] == GSL_SUCCESS && net_determined
                                ? fits[other].model.hop[CS_TIER_NET][p]
                                : cal->model.hop[CS_TIER_NET][p];
    status = fit_quality(cal, &best, best_cov_scale, iters_total, net_determined, max_nodes,
                         ngroups, &o, res, err);
  }
  if (status == CS_OK) status = resid_table(cal, &best, err);
  if (status == CS_OK && res) status = fill_result(meas, cal, &best, res, err);
  if (status == CS_OK) fill_provenance(cal, meas, &o, launch);
  free(cov_store[0]);
  free(cov_store[1]);
  free(pb.pts);
  return status;
}

/* The points' canonical order: collective, algorithm, protocol, shape, size, time, row. */
static int point_cmp(const void *a, const void *b) {
  const struct point *x = a, *y = b;
  const double kx[] = {x->q.coll,  x->q.algo,  x->q.proto, x->q.nodes,    x->q.gpus_per_node,
                       x->q.ranks, x->q.bytes, x->t,       (double)x->row};
  const double ky[] = {y->q.coll,  y->q.algo,  y->q.proto, y->q.nodes,    y->q.gpus_per_node,
                       y->q.ranks, y->q.bytes, y->t,       (double)y->row};
  for (size_t i = 0; i < sizeof kx / sizeof kx[0]; i++)
    if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
  return 0;
}

/* Adds nodes to q's ascending list of distinct measured node counts (while there is room). */
static void add_node_count(struct cs_cal_quality *q, int nodes) {
  int i = 0;
  while (i < q->n_node_counts && q->node_counts[i] < nodes)
    i++;
  if ((i < q->n_node_counts && q->node_counts[i] == nodes) ||
      q->n_node_counts == CS_CAL_MAX_NODE_COUNTS)
    return;
  memmove(&q->node_counts[i + 1], &q->node_counts[i],
          (size_t)(q->n_node_counts - i) * sizeof q->node_counts[0]);
  q->node_counts[i] = nodes;
  q->n_node_counts++;
}

/* Selects the rows of meas to fit into pb (pb->pts allocated here, pb->model the defaults with
 * every forced algorithm enabled): those of o's configuration, launch, in-place choice and shape
 * selection, each in a group per (algorithm, protocol, shape), *ngroups of them; the largest shape
 * measured goes into cal->quality; what is skipped is noted in res. Errors: CS_ERR_RANGE for an
 * implausible time (pb->pts freed); CS_ERR_NOMEM. */
static enum cs_status select_points(const struct cs_meas_set *meas, const struct cs_fit_opts *o,
                                    int launch, struct cs_cal *cal, struct cs_fit_result *res,
                                    struct problem *pb, int *ngroups, struct cs_error *err) {
  size_t n_cfg = 0, n_launch = 0, n_inplace = 0, n_single = 0;
  memset(pb, 0, sizeof *pb);
  pb->pts = calloc(meas->n ? meas->n : 1, sizeof *pb->pts);
  if (pb->pts == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  struct {
    enum cs_algo a;
    enum cs_proto p;
    int n, N, g;
  } groups[MAX_GROUPS];
  *ngroups = 0;
  /* the search starts from NCCL's own model, whatever the priors' centres: on the published
   * multi-node runs a start at the defaults' slower tree extrapolated worse (docs/model.md) */
  cs_model_nccl_tuning(&pb->model);
  for (size_t i = 0; i < meas->n; i++) {
    const struct cs_meas_row *r = &meas->rows[i];
    if (strcmp(r->config, o->config ? o->config : "") != 0) {
      n_cfg++;
      continue;
    }
    if ((int)r->launch != launch) {
      n_launch++;
      continue;
    }
    if (r->in_place && !o->with_in_place) {
      n_inplace++;
      continue;
    }
    if (!cs_fit_row_selected(r, o, launch)) {
      n_single++;
      continue;
    }
    /* an hour per collective is no measurement a fit can use: say where it is */
    if (r->time_us > 3.6e9) {
      free(pb->pts);
      return cs_error_set(err, CS_ERR_RANGE,
                          "%s: time_us %g is not a plausible collective time (over an hour)",
                          r->source, r->time_us);
    }
    struct point *pt = &pb->pts[pb->n++];
    pt->q.coll = r->coll;
    pt->q.algo = r->algo;
    pt->q.proto = r->proto;
    pt->q.ranks = r->ranks;
    pt->q.nodes = r->nodes;
    pt->q.gpus_per_node = r->gpus_per_node;
    pt->q.bytes = r->bytes;
    pt->t = r->time_us * 1e-6;
    pt->w = 1.0;
    pt->row = i;
    /* a forced algorithm the default model does not offer is enabled: the system has it */
    if (r->algo != CS_ALGO_AUTO) pb->model.algo_enabled |= 1u << r->algo;
    if (r->nodes > cal->quality.max_nodes) cal->quality.max_nodes = r->nodes;
    add_node_count(&cal->quality, r->nodes);
    if (r->ranks > cal->quality.max_ranks) cal->quality.max_ranks = r->ranks;
    if (r->gpus_per_node > cal->quality.max_gpus_per_node)
      cal->quality.max_gpus_per_node = r->gpus_per_node;
  }
  /* one order whatever the files' (the fit of an ill-determined parameter can land in another of
   * its near-equal optima when only the order of the sums changes), then the groups in it */
  if (pb->n > 1) qsort(pb->pts, pb->n, sizeof *pb->pts, point_cmp);
  for (size_t i = 0; i < pb->n; i++) {
    const struct cs_coll_query *q = &pb->pts[i].q;
    int g;
    for (g = 0; g < *ngroups; g++)
      if (groups[g].a == q->algo && groups[g].p == q->proto && groups[g].n == q->ranks &&
          groups[g].N == q->nodes && groups[g].g == q->gpus_per_node)
        break;
    if (g == *ngroups && *ngroups < MAX_GROUPS) {
      groups[g].a = q->algo, groups[g].p = q->proto, groups[g].n = q->ranks;
      groups[g].N = q->nodes, groups[g].g = q->gpus_per_node;
      (*ngroups)++;
    }
    pb->pts[i].group = g < MAX_GROUPS ? g : MAX_GROUPS - 1;
  }
  if (n_cfg) note(res, "skipped %zu rows of other configurations (fit them with --config)", n_cfg);
  if (n_launch)
    note(res, "skipped %zu rows launched with one %s (fit them with --launch %s)", n_launch,
         launch == CS_LAUNCH_THREAD ? "process per GPU" : "process for several GPUs",
         launch == CS_LAUNCH_THREAD ? "process" : "thread");
  if (n_inplace) note(res, "skipped %zu in-place rows (fit them too with --in-place)", n_inplace);
  if (n_single) note(res, "skipped %zu single-rank rows (no communication to model)", n_single);
  return CS_OK;
}

/* Whether pb's points hold at least 3 distinct message sizes: one size per shape cannot separate
 * latency from bandwidth. Errors: CS_ERR_RANGE, with pb->pts freed. */
static enum cs_status check_sizes(struct problem *pb, struct cs_error *err) {
  double sizes[3];
  int nsizes = 0;
  for (size_t i = 0; i < pb->n && nsizes < 3; i++) {
    int seen = 0;
    for (int k = 0; k < nsizes; k++)
      seen |= sizes[k] == pb->pts[i].q.bytes;
    if (!seen) sizes[nsizes++] = pb->pts[i].q.bytes;
  }
  if (nsizes < 3) {
    free(pb->pts);
    return cs_error_set(err, CS_ERR_RANGE,
                        "the %zu usable rows hold only %d distinct message size%s: latency and "
                        "bandwidth cannot be told apart; measure at least 3 sizes (e.g. -b 8 -e "
                        "1G -f 4)",
                        pb->n, nsizes, nsizes == 1 ? "" : "s");
  }
  return CS_OK;
}

/* The quality of the chosen fit best (its noise scale, iters_total iterations over both forms)
 * into cal->quality, with notes in res on what the data does not determine: a poor fit,
 * parameters left at the prior or held at a bound, no convergence (after o->max_iter), one node
 * count (max_nodes); then cross-validation over ngroups groups and the quality gate. Errors:
 * CS_ERR_NOMEM; cross_validate's. */
static enum cs_status fit_quality(struct cs_cal *cal, struct problem *best, double scale,
                                  int iters_total, int net_determined, int max_nodes, int ngroups,
                                  const struct cs_fit_opts *o, struct cs_fit_result *res,
                                  struct cs_error *err) {
  enum cs_status status = CS_OK;
  struct cs_cal_quality *q = &cal->quality;
  q->points = (int)best->n;
  q->iterations = iters_total;
  q->converged = !best->not_converged;
  q->noise_rel = scale;
  q->net_determined = net_determined;
  if (rel_errors(best, &q->median_rel_err, &q->p90_rel_err, &q->max_rel_err, &q->outliers, scale) !=
      0)
    status = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  if (status == CS_OK && q->median_rel_err > 0.5)
    note(res,
         "the fit does not describe the data (median error %.0f%%): the model stayed far "
         "from the measurements; check that the rows are of one system and configuration, "
         "measure more message sizes per shape, or fit fewer algorithms at once (--config)",
         100.0 * q->median_rel_err);
  /* parameters the data does not determine, and those held by a physical bound */
  char undet[200] = "", bound[200] = "";
  int n_undet = 0, n_bound = 0;
  for (int k = 0; k < best->np; k++) {
    char name[64];
    cs_model_param_name(best->idx[k], name, sizeof name);
    double se = sqrt(cal->cov[k * best->np + k]);
    if (se >= 0.8 * best->sd[k] && n_undet++ < 8)
      snprintf(undet + strlen(undet), sizeof undet - strlen(undet), "%s%s", n_undet > 1 ? ", " : "",
               name);
    if (log(cs_model_param_get(&best->model, best->idx[k])) > best->hi[k] - 1e-3 && n_bound++ < 6)
      snprintf(bound + strlen(bound), sizeof bound - strlen(bound), "%s%s", n_bound > 1 ? ", " : "",
               name);
  }
  if (n_undet)
    note(res,
         "%d parameters are not determined by this data (their uncertainty stays the prior's, "
         "their value near the prior's centre): %s%s",
         n_undet, undet, n_undet > 8 ? ", ..." : "");
  if (n_bound)
    note(res, "held at a physical bound (the data alone would push them past it): %s", bound);
  if (!q->converged)
    note(res,
         "the solver did not converge in %d iterations (GSL): the data determines some "
         "parameters poorly (see their standard errors); quality.converged is false",
         o->max_iter);
  if (!net_determined)
    note(res, "network latency form not determined: the data spans one node count (%d)", max_nodes);
  int one_node, shared;
  point_shapes(best, &one_node, &shared);
  if (!one_node && shared) {
    char name[32];
    note(res,
         "no one-node rows: %s, the intra-node rate, is not fitted (across nodes the data "
         "measures the network's rate, bw.net); measure one node too to fit it",
         cs_model_param_name(cs_model_param_bw_index(best->model.intra), name, sizeof name));
  }
  if (status == CS_OK && o->cross_validate)
    status = cross_validate(best, o, &best->model, ngroups, q, err);
  if (status == CS_OK) gate(q);
  return status;
}

/* Each fitted row's index, prediction by cal's model and final weight into res (allocated here;
 * freed again on failure). Errors: CS_ERR_NOMEM; CS_ERR_NUMERIC naming the row the fitted model
 * cannot price. */
static enum cs_status fill_result(const struct cs_meas_set *meas, const struct cs_cal *cal,
                                  const struct problem *best, struct cs_fit_result *res,
                                  struct cs_error *err) {
  enum cs_status status = CS_OK;
  res->n = best->n;
  res->row = malloc(best->n * sizeof *res->row);
  res->pred_us = malloc(best->n * sizeof *res->pred_us);
  res->weight = malloc(best->n * sizeof *res->weight);
  if (!res->row || !res->pred_us || !res->weight) {
    cs_fit_result_fini(res);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < best->n && status == CS_OK; i++) {
    struct cs_coll_pred pr = {0};
    res->row[i] = best->pts[i].row;
    /* the report never shows a NaN: a point the fitted model cannot price is an error */
    if (cs_model_predict(&cal->model, &best->pts[i].q, &pr, NULL) != CS_OK || !isfinite(pr.time))
      status = cs_error_set(err, CS_ERR_NUMERIC, "%s: the fitted model gives no finite time",
                            meas->rows[best->pts[i].row].source);
    res->pred_us[i] = pr.time * 1e6;
    res->weight[i] = best->pts[i].w;
  }
  if (status != CS_OK) cs_fit_result_fini(res);
  return status;
}

/* The calibration's provenance: this tool, now, o's configuration, the launch, and the GPU, NCCL
 * version and hosts of meas's metadata. */
static void fill_provenance(struct cs_cal *cal, const struct cs_meas_set *meas,
                            const struct cs_fit_opts *o, int launch) {
  struct cs_cal_prov *pv = &cal->prov;
  snprintf(pv->tool, sizeof pv->tool, "commscale %s", CS_VERSION);
  time_t now = time(NULL);
  struct tm tmv;
  if (gmtime_r(&now, &tmv)) strftime(pv->created, sizeof pv->created, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  snprintf(pv->config, sizeof pv->config, "%s", o->config ? o->config : "");
  snprintf(pv->launch, sizeof pv->launch, "%s", cs_meas_launch_name((enum cs_launch)launch));
  const char *v;
  if ((v = cs_meas_get_meta(meas, "gpu"))) snprintf(pv->gpu, sizeof pv->gpu, "%s", v);
  if ((v = cs_meas_get_meta(meas, "nccl"))) snprintf(pv->nccl, sizeof pv->nccl, "%s", v);
  if ((v = cs_meas_get_meta(meas, "hosts"))) snprintf(pv->hosts, sizeof pv->hosts, "%s", v);
}
