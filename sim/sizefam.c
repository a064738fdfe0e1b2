/* sizefam.c — cs_sizenet_run and cs_sizenet_fini (sizenet.h): sizing every family of a set on
 * one scenario. In cs_sim (and so in libcommscale, commscale_size_network) without the writers
 * and the figure, which stay in sizenet.c. */
#include <stdio.h>
#include <string.h>

#include "search.h"
#include "sizenet.h"

/* The cost of row r's least listed speed, and the throughput there. */
static enum cs_status price_row(struct cs_sizenet *z, struct cs_sizenet_row *r,
                                struct cs_error *err) {
  const struct cs_prices *p = z->prices;
  const struct cs_topology *t = z->t;
  double per_nic = t->net.nics > 0 ? (double)t->node.gpus / t->net.nics : 1;
  for (int k = 0; k < p->n && r->price < 0; k++)
    if (p->speed[k].gbps >= r->z.gbps_nic - 1e-9) r->price = k;
  if (r->price < 0) return CS_OK;
  r->cost = cs_prices_network_cost(p, r->price, t, z->nodes, NULL, NULL);
  struct cs_search_entry e;
  enum cs_status st = cs_decide_best(r->d, r->id, p->speed[r->price].gbps / per_nic, &e, err);
  if (st != CS_OK) return st;
  r->tokens_at_price = e.tokens_per_s > 0 ? e.tokens_per_s : e.samples_per_s;
  double total = r->cost + p->node * z->nodes;
  r->per_cost = total > 0 ? r->tokens_at_price / total * 1e6 : 0;
  return CS_OK;
}

/* The context of family f's framework ("" = the scenario's plan's) and hybrid sharding, made
 * once per pair. */
static enum cs_status context(const struct cs_scenario *s, struct cs_sizenet *z,
                              const struct cs_family_spec *f, const struct cs_family_spec **fws,
                              struct cs_decide **out, struct cs_error *err) {
  const char *fw = f->framework;
  for (int i = 0; i < z->nown; i++)
    if (strcmp(fws[i]->framework, fw) == 0 && fws[i]->shard == f->shard)
      return *out = z->own[i], CS_OK;
  struct cs_search_space sp;
  cs_search_space_init(&sp, z->nodes * s->topo.node.gpus, (int)z->gbs);
  sp.base = s->base;
  if (fw[0]) snprintf(sp.base.framework, sizeof sp.base.framework, "%s", fw);
  sp.base.shard = cs_family_shard(f, s->topo.node.gpus);
  struct cs_search_inputs in = cs_scenario_search_inputs(s);
  enum cs_status st = cs_decide_alloc(&in, &s->topo, &sp, out, err);
  if (st != CS_OK) return st;
  fws[z->nown] = f;
  z->own[z->nown++] = *out;
  return CS_OK;
}

enum cs_status cs_sizenet_run(const struct cs_scenario *s, long nodes, long gbs,
                              const struct cs_family_set *fs, const struct cs_target *tg,
                              const struct cs_sizing_opts *so0, const struct cs_prices *prices,
                              const struct cs_progress *progress, struct cs_sizenet *z,
                              struct cs_error *err) {
  memset(z, 0, sizeof *z);
  z->nodes = nodes, z->gbs = gbs, z->target = *tg, z->nf = fs->n, z->prices = prices;
  z->bar_row = -1;
  z->t = &s->topo;
  const struct cs_family_spec *fws[CS_FAMILY_SPEC_MAX];
  enum cs_status st = CS_OK;
  /* the contexts and each family's unlimited-network best: the bar */
  for (int i = 0; i < fs->n && st == CS_OK; i++) {
    struct cs_sizenet_row *r = &z->rows[i];
    r->fam = fs->f[i], r->price = -1;
    cs_progress_report(progress, "searching the plans", i, 2 * fs->n);
    st = context(s, z, &r->fam, fws, &r->d, err);
    if (st == CS_ERR_RANGE) { /* no plan at all on these GPUs: every family says so */
      snprintf(r->reason, sizeof r->reason, "%s", err->msg);
      r->d = NULL;
      st = CS_OK;
      continue;
    }
    if (st == CS_OK) st = cs_decide_add_family(r->d, &r->fam, &r->id, err);
    if (st != CS_OK) break;
    z->t = cs_decide_topology(r->d);
    r->feasible = cs_decide_count(r->d, r->id) > 0;
    if (!r->feasible) {
      snprintf(r->reason, sizeof r->reason,
               "no feasible plan in this family (its splits do not divide the batch or the model, "
               "or do not fit memory)");
      continue;
    }
    struct cs_search_entry e;
    if ((st = cs_decide_best(r->d, r->id, 0, &e, err)) != CS_OK) break;
    if (z->bar_row < 0 || e.step < z->bar_step) z->bar_row = i, z->bar_step = e.step;
  }
  struct cs_sizing_opts so = *so0;
  so.bar_step = tg->kind == CS_TARGET_EFF ? z->bar_step : 0;
  for (int i = 0; i < fs->n && st == CS_OK; i++) {
    struct cs_sizenet_row *r = &z->rows[i];
    cs_progress_report(progress, r->fam.name, fs->n + i, 2 * fs->n);
    if (!r->feasible) continue;
    struct cs_error e2 = {0};
    enum cs_status s2 = cs_decide_size(r->d, r->id, tg, &so, &r->z, &e2);
    r->z.family = r->id;
    if (s2 != CS_OK) {
      *err = e2;
      return s2;
    }
    r->ok = r->z.reachable;
    if (!r->ok)
      snprintf(r->reason, sizeof r->reason,
               "not reached even with an unlimited network: best step %.4g s, the target needs "
               "<= %.4g s (at most %.0f%% of the bar)",
               r->z.ideal.step, r->z.threshold,
               z->bar_step > 0 ? 100 * z->bar_step / r->z.ideal.step : 0.0);
    if (r->ok && prices) st = price_row(z, r, err);
  }
  cs_progress_report(progress, "done", 2 * fs->n, 2 * fs->n);
  return st;
}

void cs_sizenet_fini(struct cs_sizenet *z) {
  for (int i = 0; i < z->nown; i++)
    cs_decide_free(z->own[i]);
  z->nown = 0;
}
