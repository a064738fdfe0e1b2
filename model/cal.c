/* cal.c — the calibration object and its predictions with an error band; see cal.h.
 *
 * The band propagates the fitted parameters' covariance (ln space) through the model by the delta
 * method: the gradient of ln t with respect to each fitted ln parameter is taken by central
 * differences of the full prediction (algorithm choice included), so the band follows whichever
 * algorithm and protocol the model picks at that size.
 */
#include "cal.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAND_Z 1.96
#define GRAD_STEP 1e-4

void cs_cal_init(struct cs_cal *cal) {
  memset(cal, 0, sizeof *cal);
  cal->version = CS_CAL_VERSION;
  cs_model_defaults(&cal->model);
  for (int i = 0; i < CS_MODEL_NPARAMS; i++)
    cal->source[i] = CS_SRC_DEFAULT;
  for (int p = 0; p < CS_PROTO_COUNT; p++)
    cal->alt_hop_net[p] = cal->model.hop[CS_TIER_NET][p];
  cal->quality.aic[0] = cal->quality.aic[1] = NAN;
  cal->quality.extrap_sd = NAN;
  cal->quality.max_nodes = cal->quality.max_ranks = cal->quality.max_gpus_per_node = 0;
  cal->steps.compute_scale = cal->steps.interference = 1;
  cal->steps.compute_scale_se = cal->steps.host_s_se = cal->steps.interference_se = NAN;
  cal->steps.corr_scale_host = NAN;
}

double cs_cal_steps_band(const struct cs_cal_steps *s) {
  double a = isfinite(s->compute_scale_se) && s->compute_scale > 0
                 ? BAND_Z * s->compute_scale_se / s->compute_scale
                 : 0;
  double b = isfinite(s->max_rel_err) ? s->max_rel_err : 0;
  return sqrt(a * a + b * b);
}

void cs_cal_fini(struct cs_cal *cal) {
  if (cal == NULL) return;
  free(cal->cov);
  cal->cov = NULL;
  cal->n_fit = 0;
  free(cal->quality.resid);
  cal->quality.resid = NULL;
  cal->quality.n_resid = 0;
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

const char *cs_cal_source_name(enum cs_param_source s) {
  switch (s) {
  case CS_SRC_DEFAULT:
    return "default";
  case CS_SRC_FIT:
    return "fit";
  case CS_SRC_USER:
    return "user";
  case CS_SRC_TOPO:
    return "topology";
  }
  return "?";
}

int cs_cal_set_user(struct cs_cal *cal, int i, double v) {
  double *p = cs_model_param(&cal->model, i);
  if (p == NULL || cal->source[i] == CS_SRC_FIT) return 0;
  *p = v;
  cal->source[i] = CS_SRC_USER;
  return 1;
}

/* The first token of letters followed by two or more digits ("H200", "A100"), upper-cased. */
static void gpu_token(const char *s, char *tok, size_t len) {
  tok[0] = '\0';
  for (const char *p = s; p && *p; p++) {
    if (!isalpha((unsigned char)*p) || (p > s && isalnum((unsigned char)p[-1]))) continue;
    const char *q = p;
    while (isalpha((unsigned char)*q))
      q++;
    const char *d = q;
    while (isdigit((unsigned char)*d))
      d++;
    if (d - q >= 2 && q - p <= 3 && (size_t)(d - p) < len) {
      for (size_t i = 0; i < (size_t)(d - p); i++)
        tok[i] = (char)toupper((unsigned char)p[i]);
      tok[d - p] = '\0';
      return;
    }
  }
}

int cs_cal_warnings(const struct cs_cal *cal, const char *target_gpu, int target_intra,
                    int max_nodes, enum cs_param_source src_net, char w[][256]) {
  int n = 0;
  const struct cs_cal_quality *q = &cal->quality;
  if (q->gate[0])
    snprintf(w[n++], 256, "the calibration fails its quality gate (%.160s)%s", q->gate,
             q->forced ? " and was written with --force" : "");
  if (!q->converged && q->points > 0)
    snprintf(w[n++], 256,
             "the calibration's fit did not converge (GSL): some of its parameters are "
             "poorly determined");
  char a[16], b[16];
  gpu_token(cal->prov.gpu, a, sizeof a);
  gpu_token(target_gpu, b, sizeof b);
  if (a[0] && b[0] && strcmp(a, b) != 0)
    snprintf(w[n++], 256,
             "the calibration was measured on %s, the target is %s: its fitted values "
             "describe the other GPU's links",
             a, b);
  static const char *const tn[CS_TIER_COUNT] = {"NVLink", "PCIe", "network"};
  for (int t = CS_TIER_NVLINK; t <= CS_TIER_PCIE && target_intra >= 0; t++)
    if (t != target_intra && cal->source[t] == CS_SRC_FIT && q->max_nodes >= 1 &&
        cal->model.intra == (enum cs_tier)t)
      snprintf(w[n++], 256,
               "the calibration measured %s between GPUs, the target's GPUs talk over "
               "%s: those values are not measured",
               tn[t], tn[target_intra]);
  if (max_nodes > 1 && cal->source[cs_model_param_index("bw.net")] != CS_SRC_FIT)
    snprintf(w[n++], 256,
             "the network was never measured (the calibration spans %d node%s): its "
             "bandwidth is %s",
             q->max_nodes > 0 ? q->max_nodes : 0, q->max_nodes == 1 ? "" : "s",
             src_net == CS_SRC_TOPO   ? "the topology's nominal rate"
             : src_net == CS_SRC_USER ? "the rate given"
                                      : "the default rate");
  double miss = cs_cal_extrap_miss(q);
  if (max_nodes > q->max_nodes && miss > CS_CAL_EXTRAP_WARN)
    snprintf(w[n++], 256,
             "beyond %d nodes: the calibration's own check (%d nodes predicted from %d) missed "
             "by %.0f%% (log, beyond the fit's noise), so its band there is wide",
             q->max_nodes, q->extrap_to, q->extrap_from, 100 * miss);
  return n;
}

double cs_cal_extrap_miss(const struct cs_cal_quality *q) {
  if (!isfinite(q->extrap_sd) || q->extrap_from < 1 || q->extrap_to <= q->extrap_from) return NAN;
  return q->extrap_sd * sqrt(log2((double)q->extrap_to / q->extrap_from));
}

double cs_cal_param_se(const struct cs_cal *cal, int i) {
  for (int k = 0; k < cal->n_fit; k++)
    if (cal->fit_index[k] == i && cal->cov) return sqrt(cal->cov[k * cal->n_fit + k]);
  return NAN;
}

/* ln-variance of the prediction of q by the delta method over the fitted parameters. */

/* cs_model_predict(m, q) when the (algorithm, protocol) pair it picks is known to be pick's: the
 * derivative of a minimum over candidates is the derivative of the candidate that attains it (the
 * envelope theorem), so for CS_SELECT_NCCL and CS_SELECT_FASTEST the gradient of every parameter
 * is taken with the pair held; under CS_SELECT_NCCL_TABLE the pick depends on m only through
 * bw.net (and the intra tier and the enabled algorithms, which are not parameters), so moving any
 * other parameter keeps it. The prediction is the pick priced with m, plus the forcing cost as
 * cs_model_predict adds it: the same arithmetic, without choosing among all pairs again. */
static int predict_pick(const struct cs_model *m, const struct cs_coll_query *q,
                        const struct cs_coll_pred *pick, struct cs_coll_pred *out) {
  if (!pick) return cs_model_predict(m, q, out, NULL) == CS_OK;
  if (cs_model_time(m, q, pick->algo, pick->proto, out, NULL) != CS_OK) return 0;
  if ((q->algo != CS_ALGO_AUTO || q->proto != CS_PROTO_AUTO) && q->ranks > 1) {
    out->lat += m->force_lat[out->proto];
    out->time += m->force_lat[out->proto];
  }
  return 1;
}

/* d ln t / d ln theta_i of the prediction of q, by central differences; 0 where not defined.
 * pick: the base prediction when moving parameter i cannot change the pair (predict_pick), or
 * NULL. */
static double log_gradient(struct cs_model *m, const struct cs_coll_query *q, int i,
                           const struct cs_coll_pred *pick) {
  double *p = cs_model_param(m, i);
  double v = *p;
  struct cs_coll_pred up, dn;
  *p = v * exp(GRAD_STEP);
  int ok = predict_pick(m, q, pick, &up);
  *p = v * exp(-GRAD_STEP);
  ok = ok && predict_pick(m, q, pick, &dn);
  *p = v;
  return ok && up.time > 0 && dn.time > 0 ? log(up.time / dn.time) / (2 * GRAD_STEP) : 0;
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
  case CS_PK_TREE_HOP:
    if (!cs_coll_algo_valid(q->coll, CS_ALGO_TREE)) return 0;
    /* fall through */
  case CS_PK_BW:
  case CS_PK_HOP:
    if (strncmp(rest, "net", 3) == 0) return q->nodes > 1;
    return strncmp(rest, m->intra == CS_TIER_PCIE ? "pcie" : "nvlink",
                   m->intra == CS_TIER_PCIE ? 4 : 6) == 0;
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
  case CS_PK_COLL_BW:
    return strcmp(rest, cs_coll_name(q->coll)) == 0;
  case CS_PK_FORCE:
    return q->algo != CS_ALGO_AUTO || q->proto != CS_PROTO_AUTO;
  case CS_PK_LOCAL:
    return q->coll != CS_COLL_SEND_RECV && q->nodes == 1;
  }
  return 1;
}

/* What relevant() reads from each parameter's name, parsed once: the names are fixed. */
struct pinfo {
  int kind;  /* enum cs_param_kind */
  int tier;  /* bw/hop: the tier the name starts with, or -1 */
  int algo;  /* base/eff/pipe/win: the algorithm named, or -1 */
  int coll;  /* coll_lat/coll_bw: the collective named, or -1 */
  int proto; /* the protocol the name ends with (hop, base, eff, pipe, win, force_lat), or -1 */
};
static struct pinfo pinfo[CS_MODEL_NPARAMS];
static int pinfo_bw_net;
static pthread_once_t pinfo_once = PTHREAD_ONCE_INIT;

static void pinfo_build(void) {
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    char name[64];
    cs_model_param_name(i, name, sizeof name);
    const char *dot = strchr(name, '.');
    const char *rest = dot ? dot + 1 : "";
    struct pinfo *x = &pinfo[i];
    x->kind = (int)cs_model_param_kind(i);
    x->tier = strncmp(rest, "net", 3) == 0      ? CS_TIER_NET
              : strncmp(rest, "pcie", 4) == 0   ? CS_TIER_PCIE
              : strncmp(rest, "nvlink", 6) == 0 ? CS_TIER_NVLINK
                                                : -1;
    char algo[16];
    size_t k = strcspn(rest, ".");
    snprintf(algo, sizeof algo, "%.*s", (int)(k < 15 ? k : 15), rest);
    enum cs_algo a;
    x->algo = cs_algo_parse(algo, &a) == 0 && a != CS_ALGO_AUTO ? (int)a : -1;
    x->coll = -1;
    for (int c = 0; c < CS_COLL_COUNT; c++)
      if (strcmp(rest, cs_coll_name((enum cs_coll)c)) == 0) x->coll = c;
    const char *last = strrchr(name, '.');
    enum cs_proto pr;
    x->proto = last && cs_proto_parse(last + 1, &pr) == 0 && pr != CS_PROTO_AUTO ? (int)pr : -1;
  }
  pinfo_bw_net = cs_model_param_index("bw.net");
}

/* relevant() from the parsed names, for the kinds whose rule depends on the name alone; others
 * ask relevant() itself. With pick (the pair fixed, see predict_pick), the prediction reads the
 * per-pair and per-protocol parameters of that pair only, so the others have an exactly zero
 * gradient too. */
static int relevant_fast(int i, const struct cs_model *m, const struct cs_coll_query *q,
                         const struct cs_coll_pred *pick) {
  const struct pinfo *x = &pinfo[i];
  if (pick) {
    switch (x->kind) {
    case CS_PK_BASE:
    case CS_PK_EFF:
    case CS_PK_PIPE:
    case CS_PK_WIN:
      if (x->algo != (int)pick->algo) return 0;
      /* fall through */
    case CS_PK_TREE_HOP:
      if (x->kind == CS_PK_TREE_HOP && pick->algo != CS_ALGO_TREE) return 0;
      /* fall through */
    case CS_PK_HOP:
    case CS_PK_FORCE:
      if (x->proto >= 0 && x->proto != (int)pick->proto) return 0;
      break;
    default:
      break;
    }
  }
  switch (x->kind) {
  case CS_PK_BW:
  case CS_PK_HOP:
    if (x->tier == CS_TIER_NET) return q->nodes > 1;
    return x->tier == (m->intra == CS_TIER_PCIE ? CS_TIER_PCIE : CS_TIER_NVLINK);
  case CS_PK_BASE:
  case CS_PK_EFF:
  case CS_PK_PIPE:
  case CS_PK_WIN:
    return x->algo >= 0 && cs_coll_algo_valid(q->coll, (enum cs_algo)x->algo);
  case CS_PK_COLL_LAT:
  case CS_PK_COLL_BW:
    return x->coll == (int)q->coll;
  case CS_PK_FORCE:
    return q->algo != CS_ALGO_AUTO || q->proto != CS_PROTO_AUTO;
  default:
    return relevant(i, m, q);
  }
}

/* The parameters relevant_fast keeps for a query, as a bit mask: it reads the query and the pick
 * only through the features packed into a key here, so masks are computed once per key and kept
 * per thread (a few dozen keys in practice; a full table is simply recomputed). */
#define MASK_WORDS ((CS_MODEL_NPARAMS + 63) / 64)
#define MASK_SLOTS 64
struct relmask {
  int key;
  uint64_t bit[MASK_WORDS];
};
static _Thread_local struct relmask rel_masks[MASK_SLOTS];
static _Thread_local int rel_masks_n;

static const uint64_t *relevant_mask(const struct cs_model *m, const struct cs_coll_query *q,
                                     const struct cs_coll_pred *pick) {
  const int forced = q->algo != CS_ALGO_AUTO || q->proto != CS_PROTO_AUTO;
  const int key = (int)q->coll | (q->nodes > 1) << 3 | (m->intra == CS_TIER_PCIE) << 4 |
                  forced << 5 | (pick != NULL) << 6 | (pick ? (int)pick->algo : 0) << 7 |
                  (pick ? (int)pick->proto : 0) << 11 |
                  (q->nodes == 1 && q->coll != CS_COLL_SEND_RECV) << 13;
  for (int s = 0; s < rel_masks_n; s++)
    if (rel_masks[s].key == key) return rel_masks[s].bit;
  if (rel_masks_n == MASK_SLOTS) rel_masks_n = 0; /* full: start over */
  struct relmask *r = &rel_masks[rel_masks_n++];
  r->key = key;
  memset(r->bit, 0, sizeof r->bit);
  for (int i = 0; i < CS_MODEL_NPARAMS; i++)
    if (relevant_fast(i, m, q, i == pinfo_bw_net ? NULL : pick))
      r->bit[i / 64] |= (uint64_t)1 << (i % 64);
  return r->bit;
}

static double log_variance(const struct cs_cal *cal, const struct cs_model *base,
                           const struct cs_coll_query *q, const struct cs_coll_pred *base_pred) {
  struct cs_model m = *base;
  double var = 0.0;
  pthread_once(&pinfo_once, pinfo_build);
  /* the pair the model picks, when parameters other than bw.net cannot move it: base_pred, the
   * caller's cs_model_predict(base, q) (the same model and query, so the same pair) */
  const struct cs_coll_pred pick = *base_pred;
  int fixed = !(q->algo != CS_ALGO_AUTO && q->proto != CS_PROTO_AUTO);
#define PICK(i) (fixed && ((i) != pinfo_bw_net || m.select != CS_SELECT_NCCL_TABLE) ? &pick : NULL)
  /* relevant_fast(i, &m, q, PICK(i)) for every i, at once (PICK matters to no bandwidth) */
  const uint64_t *rel = relevant_mask(&m, q, fixed ? &pick : NULL);
#define REL(i) ((rel[(i) / 64] >> ((i) % 64)) & 1)
  /* fitted parameters: full covariance */
  if (cal->n_fit > 0 && cal->cov != NULL) {
    double g[CS_MODEL_NPARAMS];
    for (int k = 0; k < cal->n_fit; k++) {
      int i = cal->fit_index[k];
      g[k] = REL(i) ? log_gradient(&m, q, i, PICK(i)) : 0.0;
    }
    for (int i = 0; i < cal->n_fit; i++)
      for (int j = 0; j < cal->n_fit; j++)
        var += g[i] * cal->cov[i * cal->n_fit + j] * g[j];
  }
  /* defaults no measurement determined: their prior spread, independently */
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    /* a topology's nominal network rate is not what NCCL reaches over it */
    int topo_net = cal->source[i] == CS_SRC_TOPO && i == pinfo_bw_net;
    if (!REL(i) || (cal->source[i] != CS_SRC_DEFAULT && !topo_net)) continue;
    double g = log_gradient(&m, q, i, PICK(i));
    if (g != 0.0) {
      double sd = topo_net ? CS_CAL_TOPO_NET_SD : cs_model_param_prior_sd(i);
      var += g * g * sd * sd;
    }
  }
#undef REL
#undef PICK
  return var > 0 ? var : 0.0;
}

double cs_cal_resid_scale(const struct cs_cal_quality *q, enum cs_coll c,
                          const struct cs_coll_pred *pred, double bytes) {
  if (q->n_resid <= 0 || !(bytes >= 1)) return NAN;
  long o = lround(log2(bytes));
  for (int i = 0; i < q->n_resid; i++) {
    const struct cs_cal_resid *r = &q->resid[i];
    if (r->coll == c && r->algo == pred->algo && r->proto == pred->proto && r->octave == o)
      return r->rms_ln;
  }
  return NAN;
}

double cs_cal_unmeasured_doublings(const struct cs_cal_quality *q, int nodes) {
  if (q->max_nodes < 1 || nodes < 1) return 0;
  if (nodes > q->max_nodes) return log2((double)nodes / q->max_nodes);
  double d = q->n_node_counts > 0 ? INFINITY : 0;
  for (int i = 0; i < q->n_node_counts; i++) {
    double x = fabs(log2((double)nodes / q->node_counts[i]));
    if (x < d) d = x;
  }
  return d;
}

enum cs_status cs_cal_predict(const struct cs_cal *cal, const struct cs_coll_query *q,
                              struct cs_coll_pred *pred, double *lo, double *hi,
                              struct cs_error *err) {
  enum cs_status st = cs_model_predict(&cal->model, q, pred, err);
  if (st != CS_OK) return st;
  /* a band for one measurement, not only for the model's mean: the scatter of measurements about
   * the fitted model (its robust relative residual scale) adds to the parameters' uncertainty */
  double noise = isfinite(cal->quality.noise_rel) && cal->quality.noise_rel > 0
                     ? log1p(cal->quality.noise_rel)
                     : 0.0;
  /* where the fit missed this size range by more than its overall noise, that is the scale */
  double local = cs_cal_resid_scale(&cal->quality, q->coll, pred, q->bytes);
  if (local > noise) noise = local;
  /* each doubling away from the measured node counts adds an independent error: what the
   * calibration's own data showed (quality.extrap_sd), else CS_CAL_EXTRAP_SD */
  double away = q->nodes > 1 ? cs_cal_unmeasured_doublings(&cal->quality, q->nodes) : 0;
  if (away > 0) {
    double k = isfinite(cal->quality.extrap_sd) ? cal->quality.extrap_sd : CS_CAL_EXTRAP_SD;
    double ex = k * sqrt(away);
    noise = sqrt(noise * noise + ex * ex);
  }
  double s = sqrt(log_variance(cal, &cal->model, q, pred) + noise * noise);
  double l = pred->time * exp(-BAND_Z * s), h = pred->time * exp(BAND_Z * s);
  /* beyond the measured node count, the other network-latency form is as plausible */
  if (q->nodes > 1 && (q->nodes > cal->quality.max_nodes || !cal->quality.net_determined)) {
    struct cs_model alt = cal->model;
    alt.net_form = alt.net_form == CS_NET_RING_LINEAR ? CS_NET_TREE_LOG : CS_NET_RING_LINEAR;
    for (int p = 0; p < CS_PROTO_COUNT; p++)
      if (cal->alt_hop_net[p] > 0) alt.hop[CS_TIER_NET][p] = cal->alt_hop_net[p];
    struct cs_coll_pred ap;
    if (cs_model_predict(&alt, q, &ap, NULL) == CS_OK) {
      double sa = sqrt(log_variance(cal, &alt, q, &ap) + noise * noise);
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
