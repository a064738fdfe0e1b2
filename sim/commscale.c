/* commscale.c — the public C API (commscale.h) over the scenario loader, the collective model,
 * the step simulator and the plan search. Nothing here prints. */
#include "commscale.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cal.h"
#include "calfile.h"
#include "costmodel.h"
#include "framework.h"
#include "map.h"
#include "memory.h"
#include "scenario.h"
#include "search.h"
#include "sizenet.h"
#include "status.h"
#include "step.h"
#include "topology.h"

#define EXPORT __attribute__((visibility("default")))

/* the public statuses are the internal ones, number for number */
_Static_assert(COMMSCALE_USAGE == (int)CS_ERR_USAGE && COMMSCALE_PARSE == (int)CS_ERR_PARSE &&
                   COMMSCALE_IO == (int)CS_ERR_IO && COMMSCALE_NOMEM == (int)CS_ERR_NOMEM &&
                   COMMSCALE_RANGE == (int)CS_ERR_RANGE &&
                   COMMSCALE_NUMERIC == (int)CS_ERR_NUMERIC &&
                   COMMSCALE_UNSUPPORTED == (int)CS_ERR_UNSUPPORTED &&
                   COMMSCALE_EXTERNAL == (int)CS_ERR_EXTERNAL,
               "commscale_status and cs_status disagree");

struct commscale {
  struct cs_cal cal;
};

/* Copies err's message into the caller's buffer and returns its status. */
static commscale_status done(enum cs_status st, const struct cs_error *err, char *msg, size_t len) {
  if (msg && len > 0) snprintf(msg, len, "%s", st == CS_OK ? "" : err->msg);
  return (commscale_status)st;
}

static commscale_status misuse(const char *what, char *msg, size_t len) {
  if (msg && len > 0) snprintf(msg, len, "%s is NULL", what);
  return COMMSCALE_MISUSE;
}

EXPORT const char *commscale_libversion(void) {
  return CS_VERSION;
}

EXPORT const char *commscale_status_name(commscale_status st) {
  if (st == COMMSCALE_MISUSE) return "misuse of the API";
  return cs_status_name((enum cs_status)st);
}

EXPORT commscale_status commscale_open(const char *calibration, commscale **out, char *msg,
                                       size_t len) {
  if (out == NULL) return misuse("out", msg, len);
  *out = NULL;
  struct cs_error err = {0};
  commscale *h = malloc(sizeof *h);
  if (h == NULL) return done(cs_error_set(&err, CS_ERR_NOMEM, "out of memory"), &err, msg, len);
  cs_cal_init(&h->cal);
  enum cs_status st = calibration ? cs_calfile_read(calibration, &h->cal, &err) : CS_OK;
  if (st != CS_OK) {
    cs_cal_fini(&h->cal);
    free(h);
    return done(st, &err, msg, len);
  }
  *out = h;
  return done(CS_OK, &err, msg, len);
}

EXPORT void commscale_close(commscale *h) {
  if (h == NULL) return;
  cs_cal_fini(&h->cal);
  free(h);
}

/* ---- one collective ------------------------------------------------------------------------- */

static enum cs_status collective(const struct cs_cal *cal, const char *name, double bytes,
                                 int ranks, int nodes, int gpn, const char *topology,
                                 commscale_collective *out, struct cs_error *err) {
  struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, 1, 1, 1, 0};
  if (cs_coll_parse(name, &q.coll) != 0)
    return cs_error_set(err, CS_ERR_USAGE, "unknown collective \"%s\"", name);
  if (!(bytes > 0) || !isfinite(bytes))
    return cs_error_set(err, CS_ERR_USAGE, "bytes must be a finite number > 0, got %g", bytes);
  if (nodes < 1 || nodes > (1 << 20) || gpn < 0 || gpn > 1024 || ranks < 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "expected nodes from 1 to 1048576 and gpus_per_node from 0 to 1024, got "
                        "%d and %d",
                        nodes, gpn);
  struct cs_topology t;
  enum cs_status st = CS_OK;
  if (topology) {
    char path[4096];
    st = cs_topo_find(topology, path, sizeof path, err);
    if (st == CS_OK) st = cs_topo_load(path, &t, err);
    if (st != CS_OK) return st;
    if (gpn == 0) gpn = t.node.gpus;
  }
  if (gpn == 0) gpn = cal->quality.max_gpus_per_node > 0 ? cal->quality.max_gpus_per_node : 8;
  if (ranks != 0 && (long)ranks != (long)nodes * gpn)
    return cs_error_set(err, CS_ERR_USAGE, "ranks %d is not nodes x gpus_per_node = %ld", ranks,
                        (long)nodes * gpn);
  q.nodes = nodes, q.gpus_per_node = gpn, q.ranks = nodes * gpn, q.bytes = bytes;
  struct cs_cal shape = *cal; /* shallow: only the model and sources change, cov is shared */
  if (topology && (st = cs_topo_shape_cal(cal, &t, &q, &shape, err)) != CS_OK) return st;
  struct cs_coll_pred pr;
  double lo, hi;
  if ((st = cs_cal_predict(&shape, &q, &pr, &lo, &hi, err)) != CS_OK) return st;
  if (!(pr.time > 0) || !isfinite(pr.time) || !isfinite(lo) || !isfinite(hi))
    return cs_error_set(err, CS_ERR_NUMERIC, "the model gives no finite time");
  memset(out, 0, sizeof *out);
  out->time = pr.time, out->time_lo = lo, out->time_hi = hi, out->latency = pr.lat;
  out->algbw = bytes / pr.time;
  out->busbw = out->algbw * cs_coll_busbw_factor(q.coll, q.ranks);
  out->ranks = q.ranks, out->nodes = q.nodes, out->gpus_per_node = q.gpus_per_node;
  snprintf(out->algorithm, sizeof out->algorithm, "%s", cs_algo_name(pr.algo));
  snprintf(out->protocol, sizeof out->protocol, "%s", cs_proto_name(pr.proto));
  return CS_OK;
}

EXPORT commscale_status commscale_predict_collective(commscale *h, const char *name, double bytes,
                                                     int ranks, int nodes, int gpus_per_node,
                                                     const char *topology,
                                                     commscale_collective *out, char *msg,
                                                     size_t len) {
  if (h == NULL) return misuse("the handle", msg, len);
  if (name == NULL) return misuse("collective", msg, len);
  if (out == NULL) return misuse("out", msg, len);
  struct cs_error err = {0};
  enum cs_status st =
      collective(&h->cal, name, bytes, ranks, nodes, gpus_per_node, topology, out, &err);
  return done(st, &err, msg, len);
}

/* ---- a training step ------------------------------------------------------------------------ */

static enum cs_status load(const commscale *h, const commscale_step_query *q, struct cs_scenario *s,
                           struct cs_error *err) {
  if (!q->workload || !q->gpu || !q->topology)
    return cs_error_set(err, CS_ERR_USAGE, "a step needs a workload, a GPU and a topology");
  if (q->nodes < 0 || q->gpus < 0 || (q->nodes > 0 && q->gpus > 0))
    return cs_error_set(err, CS_ERR_USAGE, "give nodes or gpus (> 0), not both");
  if (q->framework && strlen(q->framework) >= sizeof s->base.framework)
    return cs_error_set(err, CS_ERR_USAGE, "framework name longer than %zu bytes",
                        sizeof s->base.framework - 1);
  struct cs_scenario_spec sp = {.workload = q->workload,
                                .gpu = q->gpu,
                                .topology = q->topology,
                                .shared_cal = &h->cal,
                                .plan_text = q->plan,
                                .interference = q->interference,
                                .measured = q->measured};
  enum cs_status st = cs_scenario_load(s, &sp, err);
  if (st != CS_OK || !q->framework) return st;
  /* as "framework=NAME" at the end of the plan text; an unknown profile fails here */
  snprintf(s->base.framework, sizeof s->base.framework, "%s", q->framework);
  struct cs_framework fw;
  if ((st = cs_framework_find(q->framework, NULL, &fw, err)) != CS_OK) cs_scenario_fini(s);
  return st;
}

/* Predicts plan p (dp already set) of s into out, as a row of `commscale predict`. */
static enum cs_status step(const struct cs_scenario *s, struct cs_plan *p, long nodes,
                           int with_band, commscale_step *out, struct cs_error *err) {
  struct cs_memory mem;
  enum cs_status st = cs_workload_check_plan(s->workload, p, err);
  if (st == CS_OK) st = cs_memory_estimate(s->workload, p, &s->gpu, &mem, err);
  struct cs_sim_result r;
  struct cs_sim_inputs in = cs_scenario_sim_inputs(s, p);
  if (st == CS_OK) st = cs_sim_predict(&in, &r, err);
  double one = 0;
  if (st == CS_OK) st = cs_sim_single_gpu(s->workload, p, &s->compute, &one, err);
  if (st != CS_OK) return st;
  memset(out, 0, sizeof *out);
  out->step = r.step;
  out->step_lo = with_band ? r.step_lo : r.step;
  out->step_hi = with_band ? r.step_hi : r.step;
  out->samples_per_s = r.samples_per_s, out->tokens_per_s = r.tokens_per_s;
  out->tflops_per_gpu = r.tflops_per_gpu, out->hw_tflops_per_gpu = r.hw_tflops_per_gpu;
  out->mfu = r.mfu;
  out->gpus = cs_plan_gpus(p), out->nodes = nodes, out->microbatches = r.microbatches;
  out->speedup = one > 0 ? r.samples_per_s / one : 0;
  out->efficiency = out->speedup / (double)out->gpus;
  out->memory = mem.total, out->fits = cs_memory_fits(&mem);
  cs_plan_format(p, out->plan, sizeof out->plan);
  return CS_OK;
}

/* The GPUs and nodes of q on s's topology (the plan's own GPUs when q names neither). */
static void shape(const commscale_step_query *q, const struct cs_scenario *s, long *gpus,
                  long *nodes) {
  long gpn = s->topo.node.gpus > 0 ? s->topo.node.gpus : 1;
  *gpus = q->gpus > 0 ? q->gpus : q->nodes > 0 ? q->nodes * gpn : cs_plan_gpus(&s->base);
  *nodes = q->nodes > 0 ? q->nodes : (*gpus + gpn - 1) / gpn;
}

EXPORT commscale_status commscale_predict_step(commscale *h, const commscale_step_query *q,
                                               commscale_step *out, char *msg, size_t len) {
  if (h == NULL) return misuse("the handle", msg, len);
  if (q == NULL) return misuse("the query", msg, len);
  if (out == NULL) return misuse("out", msg, len);
  struct cs_error err = {0};
  struct cs_scenario s;
  enum cs_status st = load(h, q, &s, &err);
  if (st != CS_OK) return done(st, &err, msg, len);
  long gpus, nodes;
  shape(q, &s, &gpus, &nodes);
  struct cs_plan plan = s.base;
  long mp = (long)plan.tp * plan.pp * plan.cp;
  if (!cs_plan_text_names(q->plan ? q->plan : "", "dp")) {
    if (gpus % mp != 0)
      st = cs_error_set(&err, CS_ERR_USAGE, "%ld GPUs are not a multiple of tp*pp*cp = %ld", gpus,
                        mp);
    else
      plan.dp = (int)(gpus / mp);
  } else if (cs_plan_gpus(&plan) != gpus)
    st = cs_error_set(&err, CS_ERR_USAGE, "the plan occupies %ld GPUs, not %ld",
                      cs_plan_gpus(&plan), gpus);
  if (st == CS_OK) st = step(&s, &plan, nodes, 1, out, &err);
  cs_scenario_fini(&s);
  return done(st, &err, msg, len);
}

/* ---- the plan search ------------------------------------------------------------------------ */

EXPORT commscale_status commscale_search(commscale *h, const commscale_step_query *q, int gbs,
                                         commscale_step *top, size_t k, size_t *found, char *msg,
                                         size_t len) {
  if (h == NULL) return misuse("the handle", msg, len);
  if (q == NULL) return misuse("the query", msg, len);
  if (top == NULL && k > 0) return misuse("top", msg, len);
  if (found) *found = 0;
  struct cs_error err = {0};
  if (q->nodes <= 0 && q->gpus <= 0)
    return done(cs_error_set(&err, CS_ERR_USAGE, "a search needs nodes or gpus"), &err, msg, len);
  if (gbs < 1)
    return done(cs_error_set(&err, CS_ERR_USAGE, "gbs must be >= 1, got %d", gbs), &err, msg, len);
  /* the search chooses the layout: the plan holds fixed fields only (as commscale search's) */
  const char *key = cs_plan_layout_key(q->plan);
  if (key)
    return done(cs_error_set(&err, CS_ERR_USAGE,
                             "plan: %s is chosen by the search; the plan sets fixed fields only "
                             "(precision, bucket, overlaps, reserve, ...)",
                             key),
                &err, msg, len);
  struct cs_scenario s;
  enum cs_status st = load(h, q, &s, &err);
  if (st != CS_OK) return done(st, &err, msg, len);
  long gpus, nodes;
  shape(q, &s, &gpus, &nodes);
  struct cs_search_space sp;
  cs_search_space_init(&sp, gpus, gbs);
  sp.base = s.base;
  struct cs_search_inputs in = cs_scenario_search_inputs(&s);
  struct cs_search_result r = {0};
  st = cs_search_run(&in, &sp, 0, 1, &r, &err);
  char hint[640] = "";
  if (st == CS_OK && r.n == 0 && r.stats.points == 0)
    cs_search_empty_hint(&in, &sp, hint, sizeof hint);
  if (st == CS_OK && r.n == 0)
    st = cs_error_set(&err, CS_ERR_RANGE,
                      "no feasible plan: %ld points, %ld invalid, %ld do not fit memory, %ld "
                      "pruned%s",
                      r.stats.points, r.stats.invalid, r.stats.memory, r.stats.pruned, hint);
  if (st == CS_OK && found) *found = r.n;
  for (size_t i = 0; st == CS_OK && i < k && i < r.n; i++)
    st = step(&s, &r.e[i].plan, nodes, 1, &top[i], &err);
  cs_search_result_free(&r);
  cs_scenario_fini(&s);
  return done(st, &err, msg, len);
}

EXPORT commscale_status commscale_size_network(commscale *h, const commscale_step_query *q, int gbs,
                                               const char *target, const char *families,
                                               commscale_sizing *out, size_t k, size_t *n,
                                               char *msg, size_t len) {
  if (h == NULL) return misuse("the handle", msg, len);
  if (q == NULL) return misuse("the query", msg, len);
  if (out == NULL && k > 0) return misuse("out", msg, len);
  if (n) *n = 0;
  struct cs_error err = {0};
  if (q->nodes <= 0)
    return done(cs_error_set(&err, CS_ERR_USAGE, "sizing needs nodes"), &err, msg, len);
  if (gbs < 1)
    return done(cs_error_set(&err, CS_ERR_USAGE, "gbs must be >= 1, got %d", gbs), &err, msg, len);
  struct cs_target tg = {CS_TARGET_EFF, 0.8};
  if (target && cs_target_parse(target, &tg, &err) != CS_OK)
    return done(err.status, &err, msg, len);
  struct cs_family_set local, *fp = &local;
  if (families) {
    if (cs_family_set_parse(families, fp, &err) != CS_OK) return done(err.status, &err, msg, len);
  } else
    cs_family_set_default(fp);
  struct cs_scenario s;
  enum cs_status st = load(h, q, &s, &err);
  if (st != CS_OK) return done(st, &err, msg, len);
  struct cs_sizing_opts so;
  cs_sizing_opts_init(&so);
  struct cs_sizenet *z = calloc(1, sizeof *z);
  if (!z) st = cs_error_set(&err, CS_ERR_NOMEM, "out of memory");
  if (st == CS_OK) st = cs_sizenet_run(&s, q->nodes, gbs, fp, &tg, &so, NULL, NULL, z, &err);
  if (st == CS_OK && n) *n = (size_t)z->nf;
  for (int i = 0; st == CS_OK && i < z->nf && (size_t)i < k; i++) {
    const struct cs_sizenet_row *r = &z->rows[i];
    commscale_sizing *o = &out[i];
    memset(o, 0, sizeof *o);
    snprintf(o->family, sizeof o->family, "%s", r->fam.name);
    o->reachable = r->ok;
    snprintf(o->reason, sizeof o->reason, "%s", r->reason);
    if (z->bar_row >= 0) {
      const struct cs_search_entry *b = &z->rows[z->bar_row].z.ideal;
      o->bar_tokens_per_s = b->tokens_per_s > 0 ? b->tokens_per_s : b->samples_per_s;
    }
    o->max_step = r->z.threshold;
    if (!r->ok) continue;
    o->gbps_gpu = r->z.gbps_gpu, o->gbps_gpu_lo = r->z.gbps_gpu_lo;
    o->gbps_gpu_hi = r->z.gbps_gpu_hi, o->gbps_node = r->z.gbps_node;
    o->knee_gbps_gpu = r->z.knee_gbps_gpu, o->step = r->z.at.step;
    o->tokens_per_s = r->z.at.tokens_per_s > 0 ? r->z.at.tokens_per_s : r->z.at.samples_per_s;
    snprintf(o->dominant, sizeof o->dominant, "%s", r->z.dominant ? r->z.dominant : "");
    o->dominant_s = r->z.dominant_s;
    cs_plan_format(&r->z.at.plan, o->plan, sizeof o->plan);
  }
  if (z) cs_sizenet_fini(z);
  free(z);
  cs_scenario_fini(&s);
  return done(st, &err, msg, len);
}
