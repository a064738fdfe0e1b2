/* sizenet.c — see sizenet.h. */
#include "sizenet.h"

#include <math.h>
#include <string.h>

#include "plot.h"
#include "search.h"

/* The cost of row r's least listed speed, and the throughput there. */
static enum cs_status price_row(struct cs_sizenet *z, int fam, struct cs_sizenet_row *r,
                                struct cs_error *err) {
  const struct cs_prices *p = z->prices;
  const struct cs_topology *t = z->t;
  double per_nic = t->net.nics > 0 ? (double)t->node.gpus / t->net.nics : 1;
  for (int k = 0; k < p->n && r->price < 0; k++)
    if (p->speed[k].gbps >= r->z.gbps_nic - 1e-9) r->price = k;
  if (r->price < 0) return CS_OK;
  r->cost = cs_prices_network_cost(p, r->price, t, z->nodes, NULL, NULL);
  struct cs_search_entry e;
  enum cs_status st = cs_decide_best(z->d, fam, p->speed[r->price].gbps / per_nic, &e, err);
  if (st != CS_OK) return st;
  r->tokens_at_price = e.tokens_per_s > 0 ? e.tokens_per_s : e.samples_per_s;
  double total = r->cost + p->node * z->nodes;
  r->per_cost = total > 0 ? r->tokens_at_price / total * 1e6 : 0;
  return CS_OK;
}

enum cs_status cs_sizenet_run(const struct cs_scenario *s, long nodes, long gbs, const int *fams,
                              int nf, const struct cs_target *tg, const struct cs_sizing_opts *so,
                              const struct cs_prices *prices, struct cs_sizenet *z,
                              struct cs_error *err) {
  memset(z, 0, sizeof *z);
  z->nodes = nodes, z->gbs = gbs, z->target = *tg, z->nf = nf, z->prices = prices;
  struct cs_search_space sp;
  cs_search_space_init(&sp, nodes * s->topo.node.gpus, (int)gbs);
  sp.base = s->base;
  struct cs_search_inputs in = cs_scenario_search_inputs(s);
  enum cs_status st = cs_decide_alloc(&in, &s->topo, &sp, &z->d, err);
  z->t = z->d ? cs_decide_topology(z->d) : &s->topo;
  for (int i = 0; i < nf && st == CS_OK; i++) {
    struct cs_sizenet_row *r = &z->rows[i];
    r->price = -1;
    struct cs_error e2 = {0};
    enum cs_status s2 = cs_decide_size(z->d, fams[i], tg, so, &r->z, &e2);
    if (s2 == CS_ERR_RANGE) {
      r->z.family = fams[i];
      snprintf(r->reason, sizeof r->reason, "no feasible plan in this family");
      continue;
    }
    if (s2 != CS_OK) {
      *err = e2;
      return s2;
    }
    r->ok = r->z.reachable;
    if (!r->ok)
      snprintf(r->reason, sizeof r->reason,
               "not reached even with an unlimited network (best "
               "step %.4g s, target needs <= %.4g s)",
               r->z.ideal.step, r->z.threshold);
    if (r->ok && prices) st = price_row(z, fams[i], r, err);
  }
  return st;
}

void cs_sizenet_fini(struct cs_sizenet *z) {
  cs_decide_free(z->d);
  z->d = NULL;
}

/* Family row i's chosen point and target line. */
static enum cs_status add_target(struct cs_plot *pl, const struct cs_sizenet_row *r,
                                 struct cs_error *err) {
  int fam = r->z.family;
  double thr = r->z.threshold > 0 ? r->z.threshold : 0;
  double y = r->z.at.tokens_per_s > 0 ? r->z.at.tokens_per_s / 1e6 : r->z.at.samples_per_s;
  double x = r->z.gbps_gpu;
  char lab[96];
  snprintf(lab, sizeof lab, "%s: least %.0f Gb/s", cs_family_name(fam), x);
  enum cs_status st = cs_plot_add_xy(pl, CS_PLOT_MEASURED, lab, fam, 1, &x, &y, NULL, NULL, err);
  /* the target as a line at the family's threshold throughput */
  double per_step = r->z.at.tokens_per_s > 0 ? r->z.at.tokens_per_s * r->z.at.step / 1e6
                                             : r->z.at.samples_per_s * r->z.at.step;
  double tx[2] = {10, 10000}, ty[2] = {per_step / thr, per_step / thr};
  snprintf(lab, sizeof lab, "%s target", cs_family_name(fam));
  if (st == CS_OK) st = cs_plot_add_xy(pl, CS_PLOT_FITTED, lab, fam, 2, tx, ty, NULL, NULL, err);
  return st;
}

enum cs_status cs_sizenet_plot(const struct cs_scenario *s, const struct cs_sizenet *z,
                               const char *prefix, struct cs_error *err) {
  char title[512], tt[96];
  cs_target_format(&z->target, tt, sizeof tt);
  snprintf(title, sizeof title, "%s on %ld x %s: throughput vs network (target %s)",
           s->workload->name, z->nodes, z->t->name, tt);
  struct cs_plot *pl = cs_plot_alloc("sizing", title, err);
  if (!pl) return err->status;
  enum cs_status st = CS_OK;
  enum { NP = 25 };
  double xs[NP], ys[NP];
  for (int i = 0; i < z->nf && st == CS_OK; i++) {
    int fam = z->rows[i].z.family;
    if (cs_decide_count(z->d, fam) == 0) continue;
    for (int k = 0; k < NP && st == CS_OK; k++) {
      xs[k] = 10 * pow(10, 3.0 * k / (NP - 1)); /* 10 .. 10000 Gb/s per GPU */
      struct cs_search_entry e;
      st = cs_decide_best(z->d, fam, xs[k], &e, err);
      ys[k] = e.tokens_per_s > 0 ? e.tokens_per_s / 1e6 : e.samples_per_s;
    }
    if (st == CS_OK)
      st = cs_plot_add_xy(pl, CS_PLOT_PREDICTED, cs_family_name(fam), fam, NP, xs, ys, NULL, NULL,
                          err);
    if (st == CS_OK && z->rows[i].ok) st = add_target(pl, &z->rows[i], err);
  }
  if (st == CS_OK) {
    snprintf(pl->xlabel, sizeof pl->xlabel, "network per GPU (Gb/s)");
    snprintf(pl->ylabel, sizeof pl->ylabel, "%s",
             s->workload->seq ? "throughput (million tokens/s)" : "samples/s");
    pl->xlog = 1;
    struct cs_plot_opts po = {prefix, CS_PLOT_SVG, NULL, NULL};
    st = cs_plot_write(pl, &po, err);
  }
  cs_plot_free(pl);
  return st;
}
