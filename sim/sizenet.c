/* sizenet.c — see sizenet.h. */
#include "sizenet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "search.h"

static double tput(const struct cs_search_entry *e) {
  return e->tokens_per_s > 0 ? e->tokens_per_s : e->samples_per_s;
}

void cs_sizenet_write_table(FILE *f, const struct cs_scenario *su, const struct cs_sizenet *z) {
  char tt[96];
  cs_target_format(&z->target, tt, sizeof tt);
  const struct cs_topology *t = z->t;
  const char *unit = su->workload->seq ? "tokens/s" : "samples/s";
  fprintf(f,
          "# commscale %s size-network\n# workload  %s\n# topology  %s: %ld nodes x %d GPUs, "
          "%d NICs per node, %s%s%s\n# framework %s (where a family names none)\n",
          CS_VERSION, su->workload->description, t->name, z->nodes, t->node.gpus, t->net.nics,
          cs_topo_transport_name((enum cs_topo_transport)t->net.transport),
          t->net.sharp ? ", SHARP" : "", t->node.nvls ? ", NVLS" : "", su->base.framework);
  /* where each link value comes from, the network re-costed at the sized speeds */
  char links[1024];
  if (cs_scenario_links(su, z->nodes, 1, links, sizeof links) > 0) fputs(links, f);
  if (z->target.kind == CS_TARGET_EFF && z->bar_row >= 0) {
    const struct cs_sizenet_row *b = &z->rows[z->bar_row];
    fprintf(f,
            "# target    %.0f%% of one bar for every family, gbs %ld: the bar is the fastest "
            "family with an\n#           unlimited network, %s at %.4g %s (step %.4g s); every "
            "family must reach %.4g %s (step <= %.4g s)\n",
            100 * z->target.value, z->gbs, b->fam.name, tput(&b->z.ideal), unit, z->bar_step,
            tput(&b->z.ideal) * z->target.value, unit, z->bar_step / z->target.value);
  } else
    fprintf(f, "# target    %s, gbs %ld\n", tt, z->gbs);
  fprintf(f, "# families\n");
  for (int i = 0; i < z->nf; i++) {
    const struct cs_family_spec *p = &z->rows[i].fam;
    fprintf(f, "#   %-10s %s%s%s\n", p->name, p->def, p->what[0] ? ": " : "", p->what);
  }
  fprintf(f, "# least: Gb/s per GPU meeting the target; lo..hi: the same with every collective at "
             "the low / high end\n# of its ~95%% band (the plan chosen at the predicted times; - = "
             "not reached even at the top of the range);\n# knee: the least bandwidth >= least "
             "from which on no doubling gains 5%% throughput\n");
  fprintf(f, "#%-10s %7s %7s %7s %8s %9s %7s %11s  %-34s %s\n", "family", "least", "lo", "hi",
          "per NIC", "per node", "knee", unit, "dominant at least (s per step)", "plan at least");
  fprintf(f, "#%-10s %7s %7s %7s %8s %9s %7s %11s\n", "", "(/GPU)", "(/GPU)", "(/GPU)", "(Gb/s)",
          "(Gb/s)", "(/GPU)", "at least");
  for (int i = 0; i < z->nf; i++) {
    const struct cs_sizenet_row *r = &z->rows[i];
    if (!r->ok) {
      fprintf(f, " %-10s %s\n", r->fam.name, r->reason);
      continue;
    }
    char plan[256], lo[16] = "-", hi[16] = "-", dom[64];
    cs_plan_format(&r->z.at.plan, plan, sizeof plan);
    if (r->z.gbps_gpu_lo > 0) snprintf(lo, sizeof lo, "%.0f", r->z.gbps_gpu_lo);
    if (r->z.gbps_gpu_hi > 0) snprintf(hi, sizeof hi, "%.0f", r->z.gbps_gpu_hi);
    snprintf(dom, sizeof dom, "%s %.3g", r->z.dominant ? r->z.dominant : "-", r->z.dominant_s);
    fprintf(f, " %-10s %7.0f %7s %7s %8.0f %9.0f %7.0f %11.4g  %-34s %s\n", r->fam.name,
            r->z.gbps_gpu, lo, hi, r->z.gbps_nic, r->z.gbps_node, r->z.knee_gbps_gpu,
            tput(&r->z.at), dom, plan);
  }
  /* the curve */
  int c0 = -1;
  for (int i = 0; i < z->nf; i++)
    if (z->rows[i].feasible && z->rows[i].z.ncurve > 0 && c0 < 0) c0 = i;
  if (c0 >= 0) {
    fprintf(f, "#\n# throughput (%s) of each family's best plan against Gb/s per GPU\n#%9s",
            su->workload->seq ? "million tokens/s" : "samples/s", "Gb/s/GPU");
    for (int i = 0; i < z->nf; i++)
      if (z->rows[i].feasible) fprintf(f, " %10s", z->rows[i].fam.name);
    fputc('\n', f);
    const struct cs_sizing *a = &z->rows[c0].z;
    for (int k = 0; k < a->ncurve; k++) {
      fprintf(f, " %9.4g", a->curve_gbps[k]);
      for (int i = 0; i < z->nf; i++)
        if (z->rows[i].feasible)
          fprintf(f, " %10.4g", z->rows[i].z.curve_tokens[k] / (su->workload->seq ? 1e6 : 1));
      fputc('\n', f);
    }
  }
  fprintf(f, "#\n# net/step: bytes per GPU crossing the network per step of the plan chosen at the "
             "least bandwidth\n");
  for (int i = 0; i < z->nf; i++)
    if (z->rows[i].ok)
      fprintf(f, "#   %-10s %8.1f GB  (predict with --net-gbps = per NIC to check)\n",
              z->rows[i].fam.name, z->rows[i].z.at.net_bytes / 1e9);
  if (z->prices) {
    fprintf(f,
            "#\n# cost (%s): NICs, switch ports and cables of %ld nodes at the least listed "
            "speed >= the answer%s\n",
            z->prices->currency, z->nodes,
            z->prices->node > 0 ? "; per-cost counts the nodes too" : "");
    fprintf(f, "#%-10s %9s %14s %12s %16s\n", "family", "speed", "network cost", unit,
            "per 1M of cost");
    for (int i = 0; i < z->nf; i++) {
      const struct cs_sizenet_row *r = &z->rows[i];
      if (!r->ok) continue;
      if (r->price < 0)
        fprintf(f, " %-10s no listed speed reaches %.0f Gb/s per NIC\n", r->fam.name,
                r->z.gbps_nic);
      else
        fprintf(f, " %-10s %7.0fG %14.4g %12.4g %16.4g\n", r->fam.name,
                z->prices->speed[r->price].gbps, r->cost, r->tokens_at_price, r->per_cost);
    }
  }
}

enum cs_status cs_sizenet_plot(const struct cs_scenario *s, const struct cs_sizenet *z,
                               const char *prefix, unsigned formats, struct cs_error *err) {
  char title[512], tt[96];
  cs_target_format(&z->target, tt, sizeof tt);
  if (z->target.kind == CS_TARGET_EFF)
    snprintf(tt, sizeof tt, "%.0f%% of the fastest family, unlimited network",
             100 * z->target.value);
  snprintf(title, sizeof title, "%s on %ld x %s, gbs %ld: throughput vs network", s->workload->name,
           z->nodes, z->t->name, z->gbs);
  char tlab[160];
  snprintf(tlab, sizeof tlab, "target: %s", tt);
  struct cs_plot *pl = cs_plot_alloc("sizing", title, err);
  if (!pl) return err->status;
  enum cs_status st = CS_OK;
  double scale = s->workload->seq ? 1e6 : 1, ticks[CS_SIZING_CURVE_MAX];
  int nt = 0, drew_target = 0;
  for (int i = 0; i < z->nf && st == CS_OK; i++) {
    const struct cs_sizenet_row *r = &z->rows[i];
    if (!r->feasible) continue;
    const struct cs_sizing *a = &r->z;
    double xs[CS_SIZING_CURVE_MAX + 1], ys[CS_SIZING_CURVE_MAX + 1];
    int m = 0, put = !r->ok;
    for (int k = 0; k < a->ncurve; k++) { /* the answer on its curve */
      if (!put && a->gbps_gpu < a->curve_gbps[k]) {
        xs[m] = a->gbps_gpu, ys[m++] = tput(&a->at) / scale, put = 1;
      }
      xs[m] = a->curve_gbps[k], ys[m++] = a->curve_tokens[k] / scale;
    }
    if (nt == 0)
      for (int k = 0; k < a->ncurve; k++)
        if (fmod(log2(a->curve_gbps[k] / 12.5), 2) < 1e-9) ticks[nt++] = a->curve_gbps[k];
    st = cs_plot_add_xy(pl, CS_PLOT_PREDICTED, r->fam.name, i, (size_t)m, xs, ys, NULL, NULL, err);
    if (st != CS_OK || !r->ok) continue;
    char lab[512], l2[32] = "-", h2[32] = "-";
    double x = a->gbps_gpu, y = tput(&a->at) / scale;
    if (a->gbps_gpu_lo > 0) snprintf(l2, sizeof l2, "%.0f", a->gbps_gpu_lo);
    if (a->gbps_gpu_hi > 0) snprintf(h2, sizeof h2, "%.0f", a->gbps_gpu_hi);
    snprintf(lab, sizeof lab, "%s: least %.0f Gb/s per GPU (band %s..%s)", r->fam.name, x, l2, h2);
    st = cs_plot_add_xy(pl, CS_PLOT_MEASURED, lab, i, 1, &x, &y, NULL, NULL, err);
    double kx = a->knee_gbps_gpu, ky = tput(&a->knee) / scale;
    snprintf(lab, sizeof lab, "%s: knee %.0f Gb/s per GPU", r->fam.name, kx);
    if (st == CS_OK && kx > x)
      st = cs_plot_add_xy(pl, CS_PLOT_MEASURED, lab, i, 1, &kx, &ky, NULL, NULL, err);
    if (st == CS_OK && !drew_target) { /* one target for every family */
      double per_step = tput(&a->at) * a->at.step / scale;
      double tx[2] = {a->curve_gbps[0], a->curve_gbps[a->ncurve - 1]};
      double ty[2] = {per_step / a->threshold, per_step / a->threshold};
      st = cs_plot_add_xy(pl, CS_PLOT_FITTED, tlab, 7, 2, tx, ty, NULL, NULL, err);
      drew_target = 1;
    }
  }
  if (st == CS_OK && pl->n > 0) {
    snprintf(pl->xlabel, sizeof pl->xlabel, "network per GPU (Gb/s)");
    snprintf(pl->ylabel, sizeof pl->ylabel, "%s",
             s->workload->seq ? "throughput (million tokens/s)" : "samples/s");
    pl->xlog = 1;
    cs_plot_set_tics(pl, 'x', (size_t)nt, ticks);
    struct cs_plot_opts po = {prefix, formats ? formats : CS_PLOT_SVG, NULL,
                              getenv("COMMSCALE_GNUPLOT")};
    st = cs_plot_write(pl, &po, err);
  }
  cs_plot_free(pl);
  return st;
}
