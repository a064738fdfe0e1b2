/* sizing.c — see sizing.h.
 *
 * The context keeps, per family, the indices of its feasible plans sorted by their step time at
 * the unlimited network; cs_decide_best walks that list with the exact bound of sizing.h. The
 * bisection works on log B: each probe is one cs_decide_best.
 */
#include "sizing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "netedit.h"
#include "step.h"
#include "units.h"
#include "yamlcfg.h"

/* ---- targets ------------------------------------------------------------------------------ */

enum cs_status cs_target_parse(const char *text, struct cs_target *t, struct cs_error *err) {
  const char *eq = text ? strchr(text, '=') : NULL;
  if (!eq)
    return cs_error_set(err, CS_ERR_USAGE,
                        "target \"%s\": expected eff=0.8, mfu=0.4 or "
                        "tokens=1e6",
                        text ? text : "");
  size_t k = (size_t)(eq - text);
  if (k == 3 && strncasecmp(text, "eff", 3) == 0)
    t->kind = CS_TARGET_EFF;
  else if (k == 3 && strncasecmp(text, "mfu", 3) == 0)
    t->kind = CS_TARGET_MFU;
  else if ((k == 6 && strncasecmp(text, "tokens", 6) == 0) ||
           (k == 7 && strncasecmp(text, "samples", 7) == 0))
    t->kind = CS_TARGET_TOKENS;
  else
    return cs_error_set(err, CS_ERR_USAGE, "target \"%s\": unknown kind (eff, mfu, tokens)", text);
  char *end;
  double v = strtod(eq + 1, &end);
  if (*end == '%' && end[1] == '\0' && t->kind != CS_TARGET_TOKENS) v /= 100, end++;
  if (*end || !(v > 0) || !isfinite(v) || (t->kind != CS_TARGET_TOKENS && v > 1))
    return cs_error_set(err, CS_ERR_USAGE,
                        "target \"%s\": expected a value in (0, 1] (or a "
                        "percentage) for eff and mfu, > 0 for tokens",
                        text);
  t->value = v;
  return CS_OK;
}

void cs_target_format(const struct cs_target *t, char *buf, size_t len) {
  if (t->kind == CS_TARGET_EFF)
    snprintf(buf, len, "%.0f%% network scaling efficiency", 100 * t->value);
  else if (t->kind == CS_TARGET_MFU)
    snprintf(buf, len, "%.0f%% MFU", 100 * t->value);
  else
    snprintf(buf, len, "%.4g tokens/s", t->value);
}

/* ---- the context -------------------------------------------------------------------------- */

struct cs_decide {
  struct cs_search_inputs in;
  struct cs_topology topo;
  struct cs_search_result all;
  double *ideal;                    /* [all.n] step at the unlimited network */
  size_t *order[CS_DECIDE_FAM_MAX]; /* indices into all.e sorted by ideal */
  size_t count[CS_DECIDE_FAM_MAX];
  int nfam;
  struct cs_sim_cache *cache;
  int evaluations;
  /* per plan, the steps already simulated: memo[i * MEMO + k] at bandwidth memo_bw[...] */
  double *memo, *memo_bw;
  int *nmemo;
  double *bound; /* [all.n] scratch: lower bounds for one query */
  size_t *visit; /* [all.n] scratch: visiting order */
};

#define MEMO 96

void cs_decide_free(struct cs_decide *d) {
  if (!d) return;
  cs_search_result_free(&d->all);
  free(d->ideal);
  free(d->memo);
  free(d->memo_bw);
  free(d->nmemo);
  free(d->bound);
  free(d->visit);
  for (int f = 0; f < CS_DECIDE_FAM_MAX; f++)
    free(d->order[f]);
  cs_sim_cache_free(d->cache);
  free(d);
}

const struct cs_topology *cs_decide_topology(const struct cs_decide *d) {
  return &d->topo;
}
size_t cs_decide_count(const struct cs_decide *d, int f) {
  return f >= 0 && f < d->nfam ? d->count[f] : 0;
}
const struct cs_search_result *cs_decide_search(const struct cs_decide *d) {
  return &d->all;
}

/* Step of entry e's plan on d->topo at its current rate. */
static enum cs_status step_of(struct cs_decide *d, const struct cs_search_entry *e, double *step,
                              struct cs_error *err) {
  struct cs_sim_inputs si = {d->in.workload, &e->plan,           d->in.compute, &d->topo,
                             d->in.cal,      d->in.interference, NULL};
  struct cs_sim *s = NULL;
  enum cs_status st = cs_sim_alloc_cached(&si, d->cache, &s, err);
  if (st != CS_OK) return st;
  struct cs_sim_result r;
  cs_sim_run_step(s, &r);
  cs_sim_free(s);
  *step = r.step;
  return CS_OK;
}

static const double *cmp_key;
static int by_ideal(const void *a, const void *b) {
  double x = cmp_key[*(const size_t *)a], y = cmp_key[*(const size_t *)b];
  if (x != y) return x < y ? -1 : 1;
  return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

enum cs_status cs_decide_alloc(const struct cs_search_inputs *in, const struct cs_topology *t,
                               const struct cs_search_space *s, struct cs_decide **out,
                               struct cs_error *err) {
  *out = NULL;
  struct cs_decide *d = calloc(1, sizeof *d);
  if (!d) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  d->in = *in;
  d->topo = *t;
  d->in.topology = &d->topo;
  enum cs_status st = cs_search_run(&d->in, s, 0, 1, &d->all, err);
  if (st == CS_OK && d->all.n == 0) {
    char hint[640] = "";
    if (d->all.stats.points == 0) cs_search_empty_hint(&d->in, s, hint, sizeof hint);
    st = cs_error_set(err, CS_ERR_RANGE,
                      "no feasible plan for %s on %ld GPUs with gbs=%d: %ld points, %ld invalid, "
                      "%ld do not fit memory, %ld pruned by the memory bound%s",
                      in->workload->name, s->gpus, s->gbs, d->all.stats.points,
                      d->all.stats.invalid, d->all.stats.memory, d->all.stats.pruned, hint);
  }
  if (st == CS_OK) st = cs_sim_cache_alloc(&d->cache, err);
  size_t n = d->all.n + 1;
  if (st == CS_OK &&
      (!(d->ideal = malloc(n * sizeof *d->ideal)) ||
       !(d->memo = malloc(n * MEMO * sizeof *d->memo)) ||
       !(d->memo_bw = malloc(n * MEMO * sizeof *d->memo_bw)) ||
       !(d->nmemo = calloc(n, sizeof *d->nmemo)) || !(d->bound = malloc(n * sizeof *d->bound)) ||
       !(d->visit = malloc(n * sizeof *d->visit))))
    st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  double keep = d->topo.net.nic_bw;
  if (st == CS_OK) cs_netedit_set_gbps_per_gpu(&d->topo, CS_DECIDE_IDEAL_GBPS);
  for (size_t i = 0; st == CS_OK && i < d->all.n; i++) {
    st = step_of(d, &d->all.e[i], &d->ideal[i], err);
    d->count[d->all.e[i].family]++;
  }
  d->topo.net.nic_bw = keep;
  d->nfam = CS_FAMILY_COUNT;
  for (int f = 0; st == CS_OK && f < CS_FAMILY_COUNT; f++) {
    if (!(d->order[f] = malloc((d->count[f] + 1) * sizeof *d->order[f]))) {
      st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
      break;
    }
    size_t k = 0;
    for (size_t i = 0; i < d->all.n; i++)
      if (d->all.e[i].family == f) d->order[f][k++] = i;
    cmp_key = d->ideal;
    if (k > 1) qsort(d->order[f], k, sizeof *d->order[f], by_ideal);
  }
  if (st != CS_OK) {
    cs_decide_free(d);
    return st;
  }
  *out = d;
  return CS_OK;
}

enum cs_status cs_decide_add_family(struct cs_decide *d, const struct cs_family_spec *f, int *id,
                                    struct cs_error *err) {
  if (f->builtin >= 0 && f->n == 0) {
    *id = f->builtin;
    return CS_OK;
  }
  if (d->nfam == CS_DECIDE_FAM_MAX)
    return cs_error_set(err, CS_ERR_RANGE, "at most %d families", CS_DECIDE_FAM_MAX);
  size_t *o = malloc((d->all.n + 1) * sizeof *o), k = 0;
  if (!o) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < d->all.n; i++)
    if (cs_family_match(f, &d->all.e[i].plan, d->topo.node.gpus)) o[k++] = i;
  cmp_key = d->ideal;
  if (k > 1) qsort(o, k, sizeof *o, by_ideal);
  *id = d->nfam;
  d->order[d->nfam] = o;
  d->count[d->nfam++] = k;
  return CS_OK;
}

/* The tightest known lower bound on plan i's step at gbps (and whether it is exact): the step at
 * the smallest bandwidth >= gbps simulated so far, else the unlimited network's. */
static double lower_bound(const struct cs_decide *d, size_t i, double gbps, int *exact) {
  double b = d->ideal[i], bw = INFINITY;
  *exact = 0;
  for (int k = 0; k < d->nmemo[i]; k++) {
    double x = d->memo_bw[i * MEMO + (size_t)k];
    if (x >= gbps && x < bw) {
      bw = x;
      b = d->memo[i * MEMO + (size_t)k];
      *exact = x == gbps;
    }
  }
  return b;
}

static int by_bound(const void *a, const void *b) {
  double x = cmp_key[*(const size_t *)a], y = cmp_key[*(const size_t *)b];
  if (x != y) return x < y ? -1 : 1;
  return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

enum cs_status cs_decide_best(struct cs_decide *d, int f, double gbps, struct cs_search_entry *e,
                              struct cs_error *err) {
  if (f < 0 || f >= d->nfam || d->count[f] == 0)
    return cs_error_set(err, CS_ERR_RANGE, "no feasible plan in this family");
  if (!(gbps > 0) || gbps > CS_DECIDE_IDEAL_GBPS) gbps = CS_DECIDE_IDEAL_GBPS;
  double keep = d->topo.net.nic_bw;
  cs_netedit_set_gbps_per_gpu(&d->topo, gbps);
  /* visit in order of the lower bound; stop when it reaches the best found (exact: a step never
   * gets faster with less bandwidth) */
  size_t n = d->count[f];
  for (size_t k = 0; k < n; k++) {
    size_t i = d->order[f][k];
    int exact;
    d->bound[i] = gbps >= CS_DECIDE_IDEAL_GBPS ? d->ideal[i] : lower_bound(d, i, gbps, &exact);
    d->visit[k] = i;
  }
  cmp_key = d->bound;
  if (n > 1) qsort(d->visit, n, sizeof *d->visit, by_bound);
  double best = INFINITY;
  size_t arg = d->visit[0];
  enum cs_status st = CS_OK;
  for (size_t k = 0; k < n; k++) {
    size_t i = d->visit[k];
    if (d->bound[i] >= best) break;
    int exact = gbps >= CS_DECIDE_IDEAL_GBPS;
    double t = exact ? d->ideal[i] : lower_bound(d, i, gbps, &exact);
    if (!exact) {
      if ((st = step_of(d, &d->all.e[i], &t, err)) != CS_OK) break;
      if (d->nmemo[i] < MEMO) {
        d->memo[i * MEMO + (size_t)d->nmemo[i]] = t;
        d->memo_bw[i * MEMO + (size_t)d->nmemo[i]++] = gbps;
      }
    }
    if (t < best) best = t, arg = i;
  }
  d->topo.net.nic_bw = keep;
  d->evaluations++;
  if (st != CS_OK) return st;
  *e = d->all.e[arg];
  double ratio = e->step / best;
  e->step = e->step_lo = e->step_hi = best;
  e->samples_per_s *= ratio;
  e->tokens_per_s *= ratio;
  e->mfu *= ratio;
  return CS_OK;
}

double cs_decide_threshold(struct cs_decide *d, int f, const struct cs_target *t) {
  if (d->count[f] == 0) return 0;
  const struct cs_search_entry *e = &d->all.e[d->order[f][0]];
  double ideal = d->ideal[d->order[f][0]];
  /* e's figures are at the search's rate: scale them to its step */
  if (t->kind == CS_TARGET_EFF) return ideal / t->value; /* cs_decide_size may use a common bar */
  if (t->kind == CS_TARGET_MFU) return e->mfu * e->step / t->value;
  double per_step = e->tokens_per_s > 0 ? e->tokens_per_s * e->step : e->samples_per_s * e->step;
  return per_step / t->value;
}

void cs_sizing_opts_init(struct cs_sizing_opts *o) {
  o->lo_gbps = 1;
  o->hi_gbps = 100000;
  o->rel_tol = 0.002;
  o->knee_gain = 0.05;
  o->bar_step = 0;
  o->band = 1;
}

/* Step of family f's best plan (chosen at predicted times) at gbps, at the band's low (side < 0)
 * or high (side > 0) end; *e receives the plan. */
static enum cs_status band_step(struct cs_decide *d, int f, double gbps, int side, double *step,
                                struct cs_sim_result *res, struct cs_search_entry *e,
                                struct cs_error *err) {
  enum cs_status st = cs_decide_best(d, f, gbps, e, err);
  if (st != CS_OK) return st;
  double keep = d->topo.net.nic_bw;
  cs_netedit_set_gbps_per_gpu(&d->topo, gbps);
  struct cs_sim_inputs si = {d->in.workload, &e->plan,           d->in.compute, &d->topo,
                             d->in.cal,      d->in.interference, NULL};
  struct cs_sim *s = NULL;
  st = cs_sim_alloc_cached(&si, d->cache, &s, err);
  if (st == CS_OK) {
    cs_sim_run(s, res);
    *step = side < 0 ? res->step_lo : side > 0 ? res->step_hi : res->step;
  }
  cs_sim_free(s);
  d->topo.net.nic_bw = keep;
  return st;
}

/* The least B in [lo, hi] (ratio rel_tol) at which the band's side meets thr; 0 when not at hi. */
static enum cs_status band_answer(struct cs_decide *d, int f, double thr, int side, double lo,
                                  double hi, const struct cs_sizing_opts *o, double per_nic,
                                  double *out, struct cs_error *err) {
  struct cs_sim_result r;
  struct cs_search_entry e;
  double t;
  enum cs_status st = band_step(d, f, hi, side, &t, &r, &e, err);
  *out = 0;
  if (st != CS_OK || t > thr) return st;
  if ((st = band_step(d, f, lo, side, &t, &r, &e, err)) != CS_OK) return st;
  if (t <= thr) hi = lo;
  while (hi / lo > 1 + o->rel_tol) {
    double mid = sqrt(lo * hi);
    if ((st = band_step(d, f, mid, side, &t, &r, &e, err)) != CS_OK) return st;
    if (t <= thr)
      hi = mid;
    else
      lo = mid;
  }
  double nic = ceil(hi * per_nic - 1e-9);
  *out = (nic < 1 ? 1 : nic) / per_nic;
  return CS_OK;
}

static const char *const part_names[] = {"compute",
                                         "exposed TP communication",
                                         "exposed CP communication",
                                         "exposed EP communication",
                                         "exposed DP communication",
                                         "pipeline transfer waits",
                                         "pipeline bubble",
                                         "optimizer"};

enum cs_status cs_decide_size(struct cs_decide *d, int f, const struct cs_target *t,
                              const struct cs_sizing_opts *o, struct cs_sizing *out,
                              struct cs_error *err) {
  memset(out, 0, sizeof *out);
  out->family = f;
  int ev0 = d->evaluations;
  enum cs_status st = cs_decide_best(d, f, 0, &out->ideal, err);
  if (st != CS_OK) return st;
  out->threshold = (t->kind == CS_TARGET_EFF && o->bar_step > 0 ? o->bar_step / t->value
                                                                : cs_decide_threshold(d, f, t)) *
                   (1 + 1e-12);
  struct cs_search_entry e;
  double lo = o->lo_gbps, hi = o->hi_gbps;
  if ((st = cs_decide_best(d, f, hi, &e, err)) != CS_OK) return st;
  double per_nic = d->topo.net.nics > 0 ? (double)d->topo.node.gpus / d->topo.net.nics : 1;
  if (e.step <= out->threshold) {
    out->reachable = 1;
    if ((st = cs_decide_best(d, f, lo, &e, err)) != CS_OK) return st;
    if (e.step <= out->threshold) hi = lo;
    while (hi / lo > 1 + o->rel_tol) {
      double mid = sqrt(lo * hi);
      if ((st = cs_decide_best(d, f, mid, &e, err)) != CS_OK) return st;
      if (e.step <= out->threshold)
        hi = mid;
      else
        lo = mid;
    }
    /* whole Gb/s per NIC, so that predict --net-gbps reproduces it */
    double nic = ceil(hi * per_nic - 1e-9);
    if (nic < 1) nic = 1;
    out->gbps_nic = nic;
    out->gbps_gpu = nic / per_nic;
    out->gbps_node = out->gbps_gpu * d->topo.node.gpus;
    if ((st = cs_decide_best(d, f, out->gbps_gpu, &out->at, err)) != CS_OK) return st;
    if ((st = cs_decide_best(d, f, 0.9 * out->gbps_gpu, &out->below, err)) != CS_OK) return st;
  }
  if (out->reachable && o->band) { /* the answer at the band's ends */
    if ((st = band_answer(d, f, out->threshold, -1, o->lo_gbps, out->gbps_gpu, o, per_nic,
                          &out->gbps_gpu_lo, err)) != CS_OK)
      return st;
    if ((st = band_answer(d, f, out->threshold, 1, out->gbps_gpu, o->hi_gbps, o, per_nic,
                          &out->gbps_gpu_hi, err)) != CS_OK)
      return st;
  }
  if (out->reachable) { /* what the step at the answer is made of */
    struct cs_sim_result r;
    struct cs_search_entry e0;
    double t0;
    if ((st = band_step(d, f, out->gbps_gpu, 0, &t0, &r, &e0, err)) != CS_OK) return st;
    out->part = r.part;
    const double v[8] = {r.part.compute, r.part.tp, r.part.cp,     r.part.ep,
                         r.part.dp,      r.part.pp, r.part.bubble, r.part.optimizer};
    out->dominant = part_names[1], out->dominant_s = v[1];
    for (int j = 1; j < 8; j++)
      if (v[j] > out->dominant_s) out->dominant = part_names[j], out->dominant_s = v[j];
  }
  /* the curve, 12.5 * 2^(k/2) Gb/s per GPU within the range, and the knee: the least point at
   * or above the answer from which on no doubling gains knee_gain (a staircase of plan changes
   * past it moves the knee up, never below the answer) */
  out->ncurve = 0;
  for (int k = 0; out->ncurve < CS_SIZING_CURVE_MAX; k++) {
    double g = 12.5 * pow(2, k / 2.0);
    if (g > o->hi_gbps || g > 12800) break; /* 12.8 Tb/s per GPU: past any network on sale */
    if (g < o->lo_gbps) continue;
    if ((st = cs_decide_best(d, f, g, &e, err)) != CS_OK) return st;
    int c = out->ncurve++;
    out->curve_gbps[c] = g, out->curve_step[c] = e.step;
    out->curve_tokens[c] = e.tokens_per_s > 0 ? e.tokens_per_s : e.samples_per_s;
  }
  double from = out->reachable ? out->gbps_gpu : o->lo_gbps, knee = from;
  struct cs_search_entry a, b;
  if ((st = cs_decide_best(d, f, from, &a, err)) != CS_OK) return st;
  if ((st = cs_decide_best(d, f, 2 * from, &b, err)) != CS_OK) return st;
  if (a.step / b.step - 1 >= o->knee_gain) knee = 0;
  for (int c = 0; c < out->ncurve; c++) {
    double g = out->curve_gbps[c];
    if (g <= from || 2 * g > o->hi_gbps) continue;
    if ((st = cs_decide_best(d, f, 2 * g, &b, err)) != CS_OK) return st;
    if (out->curve_step[c] / b.step - 1 >= o->knee_gain)
      knee = 0;
    else if (knee == 0)
      knee = g;
  }
  if (knee == 0) knee = o->hi_gbps / 2; /* still gaining at the end of the range */
  out->knee_gbps_gpu = knee;
  if ((st = cs_decide_best(d, f, knee, &out->knee, err)) != CS_OK) return st;
  out->evaluations = d->evaluations - ev0;
  return CS_OK;
}

/* ---- prices ------------------------------------------------------------------------------- */

static int price_cmp(const void *a, const void *b) {
  double x = ((const struct cs_price *)a)->gbps, y = ((const struct cs_price *)b)->gbps;
  return (x > y) - (x < y);
}

enum cs_status cs_prices_load(const char *path, struct cs_prices *p, struct cs_error *err) {
  memset(p, 0, sizeof *p);
  snprintf(p->currency, sizeof p->currency, "USD");
  struct cs_yaml *y = NULL;
  enum cs_status st = cs_yaml_load(path, &y, err);
  if (st != CS_OK) return st;
  int root = cs_yaml_root(y);
  if (cs_yaml_kind(y, root) != CS_YAML_MAP)
    st = cs_yaml_error(y, root, err, CS_ERR_PARSE, "a price list is a mapping");
  for (size_t k = 0; st == CS_OK && k < cs_yaml_len(y, root); k++) {
    const char *key = cs_yaml_scalar(y, cs_yaml_key(y, root, k));
    int v = cs_yaml_value(y, root, k);
    if (!key) key = "";
    if (strcmp(key, "version") == 0) {
      long ver;
      st = cs_yaml_int(y, v, 1, 1, &ver, err);
    } else if (strcmp(key, "currency") == 0) {
      const char *s = cs_yaml_scalar(y, v);
      if (!s)
        st = cs_yaml_error(y, v, err, CS_ERR_PARSE, "currency: expected a name");
      else
        snprintf(p->currency, sizeof p->currency, "%s", s);
    } else if (strcmp(key, "node") == 0) {
      st = cs_yaml_double(y, v, 0, 1e12, &p->node, err);
    } else if (strcmp(key, "speeds") == 0) {
      if (cs_yaml_kind(y, v) != CS_YAML_SEQ) {
        st = cs_yaml_error(y, v, err, CS_ERR_PARSE, "speeds: expected a list");
        break;
      }
      for (size_t i = 0; i < cs_yaml_len(y, v) && st == CS_OK; i++) {
        int m = cs_yaml_item(y, v, i);
        if (p->n == CS_PRICES_MAX) {
          st = cs_yaml_error(y, m, err, CS_ERR_RANGE, "at most %d speeds", CS_PRICES_MAX);
          break;
        }
        struct cs_price *pr = &p->speed[p->n];
        memset(pr, 0, sizeof *pr);
        pr->gbps = -1;
        if (cs_yaml_kind(y, m) != CS_YAML_MAP) {
          st = cs_yaml_error(y, m, err, CS_ERR_PARSE, "a speed entry is a mapping");
          break;
        }
        for (size_t j = 0; j < cs_yaml_len(y, m) && st == CS_OK; j++) {
          const char *kk = cs_yaml_scalar(y, cs_yaml_key(y, m, j));
          int vv = cs_yaml_value(y, m, j);
          if (!kk) kk = "";
          double *dst = strcmp(kk, "nic") == 0           ? &pr->nic
                        : strcmp(kk, "switch_port") == 0 ? &pr->port
                        : strcmp(kk, "cable") == 0       ? &pr->cable
                                                         : NULL;
          if (strcmp(kk, "speed") == 0) {
            double bps;
            st = cs_yaml_quantity(y, vv, CS_UNIT_BANDWIDTH, &bps, err);
            if (st == CS_OK) pr->gbps = bps * 8 / 1e9;
            if (st == CS_OK && !(pr->gbps > 0))
              st = cs_yaml_error(y, vv, err, CS_ERR_RANGE, "speed must be > 0");
          } else if (dst) {
            st = cs_yaml_double(y, vv, 0, 1e12, dst, err);
          } else {
            st = cs_yaml_error(y, cs_yaml_key(y, m, j), err, CS_ERR_PARSE,
                               "unknown key \"%s\" (speed, nic, switch_port, cable)", kk);
          }
        }
        if (st == CS_OK && pr->gbps < 0)
          st = cs_yaml_error(y, m, err, CS_ERR_PARSE, "speed missing");
        if (st == CS_OK) p->n++;
      }
    } else {
      st = cs_yaml_error(y, cs_yaml_key(y, root, k), err, CS_ERR_PARSE,
                         "unknown key \"%s\" (version, currency, node, speeds)", key);
    }
  }
  if (st == CS_OK && p->n == 0) st = cs_error_set(err, CS_ERR_PARSE, "%s: no speeds listed", path);
  if (st == CS_OK && p->n > 1) qsort(p->speed, (size_t)p->n, sizeof p->speed[0], price_cmp);
  cs_yaml_free(y);
  return st;
}

double cs_prices_network_cost(const struct cs_prices *p, int k, const struct cs_topology *t,
                              long nodes, double *ports, double *cables) {
  double nics = (double)nodes * t->net.nics;
  double pt = nics, cb = nics, share = 1; /* the NIC's own leaf port and cable */
  for (int l = 0; l + 1 < t->net.nlevels; l++) {
    share /= t->net.level[l].oversub > 1 ? t->net.level[l].oversub : 1;
    pt += 2 * nics * share;
    cb += nics * share;
  }
  if (ports) *ports = pt;
  if (cables) *cables = cb;
  const struct cs_price *pr = &p->speed[k];
  return nics * pr->nic + pt * pr->port + cb * pr->cable;
}
