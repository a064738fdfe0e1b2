/* sweep.c — see sweep.h. */
#include "sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "search.h"
#include "sizing.h"

/* The point r of a given plan: dp fills the GPUs, the network is set to r's speed. */
static enum cs_status eval_plan(const struct cs_scenario *s, struct cs_plan p,
                                struct cs_sweep_rec *r, struct cs_search_entry *e,
                                struct cs_error *e2) {
  long mp = (long)p.tp * p.pp * p.cp, g = r->nodes * s->topo.node.gpus;
  if (g % mp) {
    snprintf(r->reason, sizeof r->reason, "%ld GPUs not a multiple of tp*pp*cp", g);
    return CS_ERR_RANGE;
  }
  p.dp = (int)(g / mp);
  p.gbs = r->gbs;
  struct cs_topology t = s->topo;
  cs_netedit_set_gbps_per_gpu(&t, r->gbps_gpu);
  struct cs_search_inputs in = cs_scenario_search_inputs(s);
  in.topology = &t;
  enum cs_status st = cs_search_eval(&in, &p, e, e2);
  if (st != CS_OK) snprintf(r->reason, sizeof r->reason, "%.200s", e2->msg);
  return st;
}

/* The curves x speeds of one node count and batch, appended at R[*k]. */
static enum cs_status run_point(const struct cs_scenario *s, const struct cs_sweep_spec *sp,
                                long nodes, long gbs, struct cs_sweep_rec *R, size_t *k,
                                struct cs_error *err) {
  /* one search per framework the families name ("" = the scenario's), each family a filter
   * added to it: d[c] and id[c] for curve c (d[c] NULL when its search has no feasible plan) */
  struct cs_decide *ctx[CS_SWEEP_MAX_CURVES] = {NULL}, *d[CS_SWEEP_MAX_CURVES] = {NULL};
  const struct cs_family_spec *fws[CS_SWEEP_MAX_CURVES];
  int nctx = 0, id[CS_SWEEP_MAX_CURVES] = {0};
  enum cs_status st = CS_OK;
  for (int c = 0; st == CS_OK && c < sp->ncurve; c++) {
    if (sp->fam[c] < 0) continue;
    const struct cs_family_spec *f = &sp->famspec[sp->fam[c]];
    int j = 0;
    while (j < nctx && (strcmp(fws[j]->framework, f->framework) != 0 || fws[j]->shard != f->shard))
      j++;
    if (j == nctx) {
      struct cs_search_space space;
      cs_search_space_init(&space, nodes * s->topo.node.gpus, (int)gbs);
      space.base = s->base;
      if (f->framework[0])
        snprintf(space.base.framework, sizeof space.base.framework, "%s", f->framework);
      space.base.shard = cs_family_shard(f, s->topo.node.gpus);
      struct cs_search_inputs in = cs_scenario_search_inputs(s);
      struct cs_error e2 = {0};
      enum cs_status s2 = cs_decide_alloc(&in, &s->topo, &space, &ctx[j], &e2);
      if (s2 == CS_ERR_NOMEM) st = s2, *err = e2;
      if (s2 != CS_OK) ctx[j] = NULL;
      fws[nctx++] = f;
    }
    if (st == CS_OK && ctx[j]) {
      struct cs_error e2 = {0};
      enum cs_status s2 = cs_decide_add_family(ctx[j], f, &id[c], &e2);
      if (s2 == CS_ERR_NOMEM) st = s2, *err = e2;
      if (s2 == CS_OK) d[c] = ctx[j];
    }
  }
  for (int c = 0; st == CS_OK && c < sp->ncurve; c++)
    for (size_t q = 0; st == CS_OK && q < sp->nnet; q++) {
      struct cs_sweep_rec *r = &R[(*k)++];
      r->nodes = nodes, r->gbs = (int)gbs, r->curve = c;
      r->gbps_gpu = sp->per_node ? (double)sp->nets[q] / s->topo.node.gpus : (double)sp->nets[q];
      snprintf(r->name, sizeof r->name, "%s", sp->names[c]);
      struct cs_search_entry e;
      struct cs_error e2 = {0};
      enum cs_status s2;
      if (sp->fam[c] >= 0) {
        s2 = d[c] ? cs_decide_best(d[c], id[c], r->gbps_gpu, &e, &e2) : CS_ERR_RANGE;
        if (s2 != CS_OK)
          snprintf(r->reason, sizeof r->reason, "%.200s", d[c] ? e2.msg : "no feasible plan");
      } else
        s2 = eval_plan(s, sp->plans[c], r, &e, &e2);
      if (e2.status == CS_ERR_NOMEM) st = e2.status, *err = e2;
      if (s2 != CS_OK) continue;
      r->ok = 1;
      cs_plan_format(&e.plan, r->plan, sizeof r->plan);
      r->step = e.step, r->samples_per_s = e.samples_per_s, r->tokens_per_s = e.tokens_per_s;
      r->mfu = e.mfu, r->net_bytes = e.net_bytes;
    }
  for (int j = 0; j < nctx; j++)
    cs_decide_free(ctx[j]);
  return st;
}

enum cs_status cs_sweep_run(const struct cs_scenario *s, const struct cs_sweep_spec *sp,
                            struct cs_sweep_rec **recs, size_t *n, struct cs_error *err) {
  size_t nrec = sp->nn * sp->ng * sp->nnet * (size_t)sp->ncurve, k = 0;
  struct cs_sweep_rec *R = calloc(nrec + 1, sizeof *R);
  *recs = NULL, *n = 0;
  if (!R) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  enum cs_status st = CS_OK;
  int total = (int)(sp->nn * sp->ng), done = 0;
  for (size_t i = 0; st == CS_OK && i < sp->nn; i++)
    for (size_t b = 0; st == CS_OK && b < sp->ng; b++) {
      char what[96];
      snprintf(what, sizeof what, "%ld nodes, gbs %ld", sp->nodes[i], sp->gbs[b]);
      cs_progress_report(&sp->progress, what, done++, total);
      st = run_point(s, sp, sp->nodes[i], sp->gbs[b], R, &k, err);
    }
  cs_progress_report(&sp->progress, "done", total, total);
  if (st != CS_OK) {
    free(R);
    return st;
  }
  for (size_t i = 0; i < k; i++) {
    const struct cs_sweep_rec *ref = NULL;
    for (size_t j = 0; j < k; j++)
      if (R[j].ok && R[j].curve == R[i].curve && R[j].gbs == R[i].gbs &&
          R[j].gbps_gpu == R[i].gbps_gpu && (!ref || R[j].nodes < ref->nodes))
        ref = &R[j];
    if (R[i].ok && ref) R[i].speedup = R[i].samples_per_s / ref->samples_per_s;
  }
  *recs = R, *n = k;
  return CS_OK;
}

static double metric_of(const struct cs_sweep_rec *r, int m) {
  return m == CS_SWEEP_MFU       ? 100 * r->mfu
         : m == CS_SWEEP_SAMPLES ? r->samples_per_s
                                 : r->tokens_per_s / 1e6;
}

/* The speed the nodes figure is drawn at: the fastest swept (the least network-bound). */
static double nodes_speed(const struct cs_sweep_rec *R, size_t k) {
  double g = 0;
  for (size_t i = 0; i < k; i++)
    if (R[i].gbps_gpu > g) g = R[i].gbps_gpu;
  return g;
}

/* Figure fig (0: metric vs network, 1: speedup vs nodes) into pl. */
static enum cs_status add_curves(struct cs_plot *pl, const struct cs_sweep_spec *sp,
                                 const struct cs_sweep_rec *R, size_t k, int fig, int metric,
                                 struct cs_error *err) {
  long N = sp->nodes[sp->nn - 1];
  double xs[512], ys[512], g1 = nodes_speed(R, k);
  enum cs_status st = CS_OK;
  for (int c = 0; c < sp->ncurve && st == CS_OK; c++) {
    size_t m = 0;
    for (size_t i = 0; i < k && m < 512; i++) {
      const struct cs_sweep_rec *r = &R[i];
      if (!r->ok || r->curve != c || r->gbs != sp->gbs[0]) continue;
      if (fig == 0 && r->nodes == N) xs[m] = r->gbps_gpu, ys[m++] = metric_of(r, metric);
      if (fig == 1 && r->gbps_gpu == g1) xs[m] = (double)r->nodes, ys[m++] = r->speedup;
    }
    if (m > 0)
      st = cs_plot_add_xy(pl, CS_PLOT_PREDICTED, sp->names[c], sp->fam[c] >= 0 ? sp->fam[c] : c, m,
                          xs, ys, NULL, NULL, err);
  }
  if (st == CS_OK && fig == 1) { /* ideal: n / n0 at every swept node count */
    size_t m = 0;
    for (size_t i = 0; i < sp->nn && m < 512; i++)
      xs[m] = (double)sp->nodes[i], ys[m] = xs[m] / (double)sp->nodes[0], m++;
    st = cs_plot_add_xy(pl, CS_PLOT_FITTED, "ideal (linear)", 7, m, xs, ys, NULL, NULL, err);
    if (st == CS_OK) {
      cs_plot_set_tics(pl, 'x', m, xs);
      cs_plot_set_tics(pl, 'y', m, ys);
    }
  }
  if (st == CS_OK && fig == 0) {
    size_t m = 0;
    for (size_t i = 0; i < k && m < 512; i++) /* cs_plot_set_tics drops the repeats */
      if (R[i].nodes == N) xs[m++] = R[i].gbps_gpu;
    cs_plot_set_tics(pl, 'x', m, xs);
  }
  return st;
}

enum cs_status cs_sweep_plot(const struct cs_scenario *s, const struct cs_sweep_spec *sp,
                             const struct cs_sweep_rec *R, size_t k, int metric, const char *prefix,
                             unsigned formats, struct cs_error *err) {
  static const char *ylab[] = {"throughput (million tokens/s)", "MFU (%)", "samples/s"};
  enum cs_status st = CS_OK;
  for (int fig = 0; fig < 2 && st == CS_OK; fig++) {
    char title[512], path[4096];
    if (fig == 0)
      snprintf(title, sizeof title, "%s on %ld x %s, gbs %ld: %s vs network", s->workload->name,
               sp->nodes[sp->nn - 1], s->topo.name, sp->gbs[0], ylab[metric]);
    else
      snprintf(title, sizeof title,
               "%s on %s, gbs %ld, %.0f Gb/s per GPU (the fastest swept): speedup vs nodes",
               s->workload->name, s->topo.name, sp->gbs[0], nodes_speed(R, k));
    snprintf(path, sizeof path, "%s-%s", prefix, fig == 0 ? "net" : "nodes");
    struct cs_plot *pl = cs_plot_alloc("sweep", title, err);
    if (!pl) return err->status;
    pl->xlog = 1;
    pl->ylog = fig == 1;
    st = add_curves(pl, sp, R, k, fig, metric, err);
    if (st == CS_OK) {
      snprintf(pl->xlabel, sizeof pl->xlabel, "%s", fig == 0 ? "network per GPU (Gb/s)" : "nodes");
      snprintf(pl->ylabel, sizeof pl->ylabel, "%s",
               fig == 0 ? ylab[metric] : "speedup over the smallest node count");
      struct cs_plot_opts po = {path, formats ? formats : CS_PLOT_SVG, NULL,
                                getenv("COMMSCALE_GNUPLOT")};
      if (pl->n > 0) st = cs_plot_write(pl, &po, err);
    }
    cs_plot_free(pl);
  }
  return st;
}
