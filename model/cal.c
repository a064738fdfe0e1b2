/* cal.c — the calibration object and its predictions with an error band; see cal.h.
 *
 * The band propagates the fitted parameters' covariance (ln space) through the model by the delta
 * method: the gradient of ln t with respect to each fitted ln parameter is taken by central
 * differences of the full prediction (algorithm choice included), so the band follows whichever
 * algorithm and protocol the model picks at that size.
 */
#include "cal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAND_Z 1.96
#define GRAD_STEP 1e-4

void cs_cal_init(struct cs_cal *cal) {
  memset(cal, 0, sizeof *cal);
  cal->version = CS_CAL_VERSION;
  cs_model_defaults(&cal->model);
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) cal->source[i] = CS_SRC_DEFAULT;
  for (int p = 0; p < CS_PROTO_COUNT; p++) cal->alt_hop_net[p] = cal->model.hop[CS_TIER_NET][p];
  cal->quality.aic[0] = cal->quality.aic[1] = NAN;
  cal->quality.max_nodes = cal->quality.max_ranks = cal->quality.max_gpus_per_node = 0;
}

void cs_cal_fini(struct cs_cal *cal) {
  if (cal == NULL) return;
  free(cal->cov);
  cal->cov = NULL;
  cal->n_fit = 0;
}

enum cs_status cs_cal_alloc_cov(struct cs_cal *cal, int n_fit, struct cs_error *err) {
  free(cal->cov);
  cal->cov = NULL;
  cal->n_fit = 0;
  if (n_fit < 0 || n_fit > CS_MODEL_NPARAMS)
    return cs_error_set(err, CS_ERR_RANGE, "covariance size %d out of range", n_fit);
  if (n_fit == 0) return CS_OK;
  cal->cov = calloc((size_t)n_fit * (size_t)n_fit, sizeof *cal->cov);
  if (cal->cov == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory for covariance");
  cal->n_fit = n_fit;
  return CS_OK;
}

double cs_cal_param_se(const struct cs_cal *cal, int i) {
  for (int k = 0; k < cal->n_fit; k++)
    if (cal->fit_index[k] == i && cal->cov) return sqrt(cal->cov[k * cal->n_fit + k]);
  return NAN;
}

/* ln-variance of the prediction of q by the delta method over the fitted parameters. */
/* d ln t / d ln theta_i of the prediction of q, by central differences; 0 where not defined. */
static double log_gradient(struct cs_model *m, const struct cs_coll_query *q, int i) {
  double *p = cs_model_param(m, i);
  double v = *p;
  struct cs_coll_pred up, dn;
  *p = v * exp(GRAD_STEP);
  int ok = cs_model_predict(m, q, &up, NULL) == CS_OK;
  *p = v * exp(-GRAD_STEP);
  ok = ok && cs_model_predict(m, q, &dn, NULL) == CS_OK;
  *p = v;
  return ok && up.time > 0 && dn.time > 0 ? (log(up.time) - log(dn.time)) / (2 * GRAD_STEP) : 0;
}

/* Whether parameter i can move the prediction of q at all: parameters of other collectives, of
 * algorithms that cannot run q, of tiers q does not cross and forcing costs of unforced queries
 * have an exactly zero gradient, so the band skips them (a large saving: most of the table). */
static int relevant(int i, const struct cs_model *m, const struct cs_coll_query *q) {
  char name[64];
  cs_model_param_name(i, name, sizeof name);
  const char *dot = strchr(name, '.');
  const char *rest = dot ? dot + 1 : "";
  switch (cs_model_param_kind(i)) {
  case CS_PK_BW:
  case CS_PK_HOP:
    if (strncmp(rest, "net", 3) == 0) return q->nodes > 1;
    return strncmp(rest, m->intra == CS_TIER_PCIE ? "pcie" : "nvlink", m->intra == CS_TIER_PCIE ? 4 : 6) == 0;
  case CS_PK_BASE:
  case CS_PK_EFF:
  case CS_PK_PIPE:
  case CS_PK_WIN: {
    char algo[16];
    size_t k = strcspn(rest, ".");
    snprintf(algo, sizeof algo, "%.*s", (int)(k < 15 ? k : 15), rest);
    enum cs_algo a;
    return cs_algo_parse(algo, &a) == 0 && a != CS_ALGO_AUTO && cs_coll_algo_valid(q->coll, a);
  }
  case CS_PK_COLL_LAT:
  case CS_PK_COLL_BW: return strcmp(rest, cs_coll_name(q->coll)) == 0;
  case CS_PK_FORCE: return q->algo != CS_ALGO_AUTO || q->proto != CS_PROTO_AUTO;
  }
  return 1;
}

static double log_variance(const struct cs_cal *cal, const struct cs_model *base,
                           const struct cs_coll_query *q) {
  struct cs_model m = *base;
  double var = 0.0;
  /* fitted parameters: full covariance */
  if (cal->n_fit > 0 && cal->cov != NULL) {
    double g[CS_MODEL_NPARAMS];
    for (int k = 0; k < cal->n_fit; k++)
      g[k] = relevant(cal->fit_index[k], &m, q) ? log_gradient(&m, q, cal->fit_index[k]) : 0.0;
    for (int i = 0; i < cal->n_fit; i++)
      for (int j = 0; j < cal->n_fit; j++) var += g[i] * cal->cov[i * cal->n_fit + j] * g[j];
  }
  /* defaults no measurement determined: their prior spread, independently */
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    if (cal->source[i] != CS_SRC_DEFAULT || !relevant(i, &m, q)) continue;
    double g = log_gradient(&m, q, i);
    if (g != 0.0) {
      double sd = cs_model_param_prior_sd(i);
      var += g * g * sd * sd;
    }
  }
  return var > 0 ? var : 0.0;
}

enum cs_status cs_cal_predict(const struct cs_cal *cal, const struct cs_coll_query *q,
                              struct cs_coll_pred *pred, double *lo, double *hi,
                              struct cs_error *err) {
  enum cs_status st = cs_model_predict(&cal->model, q, pred, err);
  if (st != CS_OK) return st;
  double s = sqrt(log_variance(cal, &cal->model, q));
  double l = pred->time * exp(-BAND_Z * s), h = pred->time * exp(BAND_Z * s);
  /* beyond the measured node count, the other network-latency form is as plausible */
  if (q->nodes > 1 && (q->nodes > cal->quality.max_nodes || !cal->quality.net_determined)) {
    struct cs_model alt = cal->model;
    alt.net_form = alt.net_form == CS_NET_RING_LINEAR ? CS_NET_TREE_LOG : CS_NET_RING_LINEAR;
    for (int p = 0; p < CS_PROTO_COUNT; p++)
      if (cal->alt_hop_net[p] > 0) alt.hop[CS_TIER_NET][p] = cal->alt_hop_net[p];
    struct cs_coll_pred ap;
    if (cs_model_predict(&alt, q, &ap, NULL) == CS_OK) {
      double sa = sqrt(log_variance(cal, &alt, q));
      double la = ap.time * exp(-BAND_Z * sa), ha = ap.time * exp(BAND_Z * sa);
      if (la < l) l = la;
      if (ha > h) h = ha;
    }
  }
  if (!isfinite(pred->time) || !isfinite(l) || !isfinite(h))
    return cs_error_set(err, CS_ERR_NUMERIC, "prediction is not finite");
  *lo = l;
  *hi = h;
  return CS_OK;
}
