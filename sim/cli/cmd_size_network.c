/* cmd_size_network.c — `commscale size-network`: for a workload on N nodes and a target, the
 * least network bandwidth per GPU (and per NIC and node) at which each plan family meets it,
 * the knee beyond which more bandwidth stops helping, and with a price list the cost of each
 * option and throughput per unit cost (sizing.h). --plot draws throughput against Gb/s per GPU
 * with one curve per family, the target line and the chosen points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "output.h"
#include "plot.h"
#include "setup.h"
#include "sizing.h"

static const struct cli_opt opts[] = {
    CLI_SETUP_OPTS,
    {"nodes", 'N', "N", "nodes (required)"},
    {"gbs", 0, "SAMPLES", "global batch in samples (required)"},
    {"target", 0, "KIND=X", "eff=0.8 (default), mfu=0.4 or tokens=1.2e6"},
    {"plan", 'p', "PLAN", "fixed plan fields (precision, bucket, overlaps, reserve)"},
    {"family", 0, "LIST", "families to size (default zero3,dp+tp,tp+pp,3d)"},
    {"prices", 0, "FILE", "price list YAML: cost of each option and throughput per unit cost"},
    {"range", 0, "LO:HI", "Gb/s per GPU searched (default 1:100000)"},
    {"plot", 0, "PREFIX", "write PREFIX.dat/.gp/.svg: throughput vs Gb/s per GPU per family"},
    {"format", 0, "FMT", "table (default), csv or json; -o FILE.csv/.json implies it"},
    {"output", 'o', "FILE", "write to FILE instead of stdout"},
};

static const struct cli_verb verb = {
    "size-network",
    "--workload NAME --gpu NAME --topology NAME --nodes N --gbs SAMPLES [--target eff=0.8] "
    "[--prices FILE] [--plot PREFIX]",
    "The least network bandwidth per GPU meeting a target for each plan family, and the knee.",
    "For each family the fastest feasible plan is chosen at every bandwidth (the search's space).\n"
    "eff: network scaling efficiency = the family's throughput at B / its throughput with an\n"
    "unlimited network on the same nodes (pipeline bubbles and the optimizer are not the\n"
    "network's to fix); mfu and tokens are absolute. least: rounded up to whole Gb/s per NIC, so\n"
    "`commscale predict --plan PLAN --net-gbps NIC` meets the target (step <= max_step) and 10%\n"
    "less does not. knee: doubling the bandwidth beyond it gains < 5% throughput. Network edits:\n"
    "--rails, --oversub, --sharp, --nvls, --transport, --net-latency.",
    opts,
    (int)(sizeof opts / sizeof opts[0])};

struct row {
  struct cs_sizing z;
  int ok;
  char reason[256];
  int price; /* index into the price list of the least speed >= the answer per NIC, -1 none */
  double cost, tokens_at_price, per_cost;
};

static void plan_text(const struct cs_search_entry *e, char *buf, size_t len) {
  cs_plan_format(&e->plan, buf, len);
}

int cs_cmd_size_network(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int help;
  if (cli_parse(&verb, argc, argv, &a, &help, &err) != CS_OK) return cli_fail("size-network", &err);
  if (help) {
    cli_usage(stdout, &verb);
    return 0;
  }
  if (a.npos > 0) {
    cs_error_set(&err, CS_ERR_USAGE, "unexpected argument \"%s\"", a.pos[0]);
    return cli_fail("size-network", &err);
  }
  const char *outpath = cli_get(&verb, &a, "output"), *s;
  int fmt = cli_format(cli_get(&verb, &a, "format"), outpath);
  long nodes, gbs;
  enum cs_status st =
      fmt < 0 ? cs_error_set(&err, CS_ERR_USAGE, "--format expects table, csv or json") : CS_OK;
  if (st == CS_OK) st = cli_int_opt(&verb, &a, "nodes", 1, 1 << 20, 0, &nodes, &err);
  if (st == CS_OK) st = cli_int_opt(&verb, &a, "gbs", 1, 1 << 30, 0, &gbs, &err);
  if (st == CS_OK && (!nodes || !gbs))
    st = cs_error_set(&err, CS_ERR_USAGE, "--nodes and --gbs are required");
  struct cs_target tg = {CS_TARGET_EFF, 0.8};
  if (st == CS_OK && (s = cli_get(&verb, &a, "target"))) st = cs_target_parse(s, &tg, &err);
  struct cs_sizing_opts so;
  cs_sizing_opts_init(&so);
  if (st == CS_OK && (s = cli_get(&verb, &a, "range"))) {
    char *end;
    so.lo_gbps = strtod(s, &end);
    if (*end == ':') so.hi_gbps = strtod(end + 1, &end);
    if (*end || !(so.lo_gbps > 0) || !(so.hi_gbps > 2 * so.lo_gbps))
      st = cs_error_set(&err, CS_ERR_USAGE, "--range expects LO:HI Gb/s per GPU with HI > 2 LO");
  }
  int fams[CS_FAMILY_COUNT], nf = 0;
  if (st == CS_OK && (s = cli_get(&verb, &a, "family"))) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && st == CS_OK; t = strtok_r(NULL, ",", &save)) {
      int f = cs_family_parse(t);
      if (f < 0)
        st = cs_error_set(&err, CS_ERR_USAGE, "--family: unknown family \"%s\"", t);
      else if (nf < CS_FAMILY_COUNT)
        fams[nf++] = f;
    }
  } else
    for (int f = 0; f < CS_FAMILY_COUNT; f++)
      fams[nf++] = f;
  if (st != CS_OK) return cli_fail("size-network", &err);
  struct cs_scenario su;
  if ((st = cli_setup_load(&su, &verb, &a, cli_get(&verb, &a, "plan"), &err)) != CS_OK)
    return cli_fail("size-network", &err);
  struct cs_prices prices;
  int have_prices = 0;
  if ((s = cli_get(&verb, &a, "prices"))) {
    if ((st = cs_prices_load(s, &prices, &err)) != CS_OK) {
      cs_scenario_fini(&su);
      return cli_fail("size-network", &err);
    }
    have_prices = 1;
  }
  struct cs_search_space sp;
  cs_search_space_init(&sp, nodes * su.topo.node.gpus, (int)gbs);
  sp.base = su.base;
  struct cs_search_inputs in = cs_scenario_search_inputs(&su);
  struct cs_decide *d = NULL;
  struct row rows[CS_FAMILY_COUNT];
  memset(rows, 0, sizeof rows);
  st = cs_decide_alloc(&in, &su.topo, &sp, &d, &err);
  const struct cs_topology *t = d ? cs_decide_topology(d) : &su.topo;
  double per_nic = t->net.nics > 0 ? (double)t->node.gpus / t->net.nics : 1;
  for (int i = 0; i < nf && st == CS_OK; i++) {
    struct row *r = &rows[i];
    r->price = -1;
    struct cs_error e2 = {0};
    enum cs_status s2 = cs_decide_size(d, fams[i], &tg, &so, &r->z, &e2);
    if (s2 == CS_ERR_RANGE) {
      r->z.family = fams[i];
      snprintf(r->reason, sizeof r->reason, "no feasible plan in this family");
      continue;
    }
    if (s2 != CS_OK) {
      st = s2, err = e2;
      break;
    }
    r->ok = r->z.reachable;
    if (!r->ok)
      snprintf(r->reason, sizeof r->reason,
               "not reached even with an unlimited network (best "
               "step %.4g s, target needs <= %.4g s)",
               r->z.ideal.step, r->z.threshold);
    if (r->ok && have_prices) {
      for (int k = 0; k < prices.n && r->price < 0; k++)
        if (prices.speed[k].gbps >= r->z.gbps_nic - 1e-9) r->price = k;
      if (r->price >= 0) {
        r->cost = cs_prices_network_cost(&prices, r->price, t, nodes, NULL, NULL);
        struct cs_search_entry e;
        if ((st = cs_decide_best(d, fams[i], prices.speed[r->price].gbps / per_nic, &e, &err)) !=
            CS_OK)
          break;
        r->tokens_at_price = e.tokens_per_s > 0 ? e.tokens_per_s : e.samples_per_s;
        double total = r->cost + prices.node * nodes;
        r->per_cost = total > 0 ? r->tokens_at_price / total * 1e6 : 0;
      }
    }
  }
  /* the figure: throughput vs Gb/s per GPU per family, target, chosen points, knees */
  if (st == CS_OK && (s = cli_get(&verb, &a, "plot"))) {
    char title[512], tt[96];
    cs_target_format(&tg, tt, sizeof tt);
    snprintf(title, sizeof title, "%s on %ld x %s: throughput vs network (target %s)",
             su.workload->name, nodes, t->name, tt);
    struct cs_plot *pl = cs_plot_alloc("sizing", title, &err);
    if (!pl) st = err.status;
    int np = 25;
    double xs[25], ys[25];
    for (int i = 0; i < nf && st == CS_OK; i++) {
      if (cs_decide_count(d, fams[i]) == 0) continue;
      for (int k = 0; k < np && st == CS_OK; k++) {
        xs[k] = 10 * pow(10, 3.0 * k / (np - 1)); /* 10 .. 10000 Gb/s per GPU */
        struct cs_search_entry e;
        st = cs_decide_best(d, fams[i], xs[k], &e, &err);
        ys[k] = e.tokens_per_s > 0 ? e.tokens_per_s / 1e6 : e.samples_per_s;
      }
      if (st == CS_OK)
        st = cs_plot_add_xy(pl, CS_PLOT_PREDICTED, cs_family_name(fams[i]), fams[i], (size_t)np, xs,
                            ys, NULL, NULL, &err);
      double thr = rows[i].z.threshold > 0 ? rows[i].z.threshold : 0;
      if (st == CS_OK && rows[i].ok) {
        double y = rows[i].z.at.tokens_per_s > 0 ? rows[i].z.at.tokens_per_s / 1e6
                                                 : rows[i].z.at.samples_per_s;
        double x = rows[i].z.gbps_gpu;
        char lab[96];
        snprintf(lab, sizeof lab, "%s: least %.0f Gb/s", cs_family_name(fams[i]), x);
        st = cs_plot_add_xy(pl, CS_PLOT_MEASURED, lab, fams[i], 1, &x, &y, NULL, NULL, &err);
        /* the target as a line at the family's threshold throughput */
        double per_step = rows[i].z.at.tokens_per_s > 0
                              ? rows[i].z.at.tokens_per_s * rows[i].z.at.step / 1e6
                              : rows[i].z.at.samples_per_s * rows[i].z.at.step;
        double tx[2] = {10, 10000}, ty[2] = {per_step / thr, per_step / thr};
        snprintf(lab, sizeof lab, "%s target", cs_family_name(fams[i]));
        if (st == CS_OK)
          st = cs_plot_add_xy(pl, CS_PLOT_FITTED, lab, fams[i], 2, tx, ty, NULL, NULL, &err);
      }
    }
    if (st == CS_OK) {
      snprintf(pl->xlabel, sizeof pl->xlabel, "network per GPU (Gb/s)");
      snprintf(pl->ylabel, sizeof pl->ylabel, "%s",
               su.workload->seq ? "throughput (million tokens/s)" : "samples/s");
      pl->xlog = 1;
      struct cs_plot_opts po = {s, CS_PLOT_SVG, NULL, NULL};
      st = cs_plot_write(pl, &po, &err);
    }
    cs_plot_free(pl);
  }
  if (st == CS_OK) {
    FILE *f = cli_open_out(outpath, &err);
    if (!f) st = CS_ERR_IO;
    char tt[96];
    cs_target_format(&tg, tt, sizeof tt);
    if (f && fmt == CLI_TABLE) {
      fprintf(f,
              "# commscale %s size-network\n# workload  %s\n# topology  %s: %ld nodes x %d GPUs, "
              "%d NICs per node, %s%s%s\n# framework %s\n# target    %s, gbs %ld\n",
              CS_VERSION, su.workload->description, t->name, nodes, t->node.gpus, t->net.nics,
              cs_topo_transport_name((enum cs_topo_transport)t->net.transport),
              t->net.sharp ? ", SHARP" : "", t->node.nvls ? ", NVLS" : "", su.base.framework, tt,
              gbs);
      fprintf(f, "#%-6s %9s %9s %9s %9s %9s %9s %10s %10s  %s\n", "family", "least", "per NIC",
              "per node", "max_step", "step", "step@90%", "knee", "tok/s@inf", "plan at least");
      fprintf(f, "#%-6s %9s %9s %9s %9s %9s %9s %10s %10s\n", "", "(Gb/s/GPU)", "(Gb/s)", "(Gb/s)",
              "(s)", "(s)", "(s)", "(Gb/s/GPU)", "");
      for (int i = 0; i < nf; i++) {
        const struct row *r = &rows[i];
        char plan[256];
        if (!r->ok) {
          fprintf(f, " %-6s %s%s\n", cs_family_name(r->z.family), r->reason,
                  r->z.knee_gbps_gpu > 0 ? "" : "");
          continue;
        }
        plan_text(&r->z.at, plan, sizeof plan);
        fprintf(f, " %-6s %9.0f %9.0f %9.0f %9.4g %9.4g %9.4g %10.0f %10.4g  %s\n",
                cs_family_name(r->z.family), r->z.gbps_gpu, r->z.gbps_nic, r->z.gbps_node,
                r->z.threshold, r->z.at.step, r->z.below.step, r->z.knee_gbps_gpu,
                r->z.ideal.tokens_per_s, plan);
      }
      fprintf(
          f, "#\n# net/step: bytes per GPU crossing the network per step of the plan chosen at the "
             "least bandwidth\n");
      for (int i = 0; i < nf; i++)
        if (rows[i].ok)
          fprintf(f, "#   %-6s %8.1f GB  (%s)\n", cs_family_name(rows[i].z.family),
                  rows[i].z.at.net_bytes / 1e9, "predict with --net-gbps = per NIC to check");
      if (have_prices) {
        fprintf(f,
                "#\n# cost (%s): NICs, switch ports and cables of %ld nodes at the least listed "
                "speed >= the answer%s\n",
                prices.currency, nodes, prices.node > 0 ? "; per-cost counts the nodes too" : "");
        fprintf(f, "#%-6s %9s %14s %12s %16s\n", "family", "speed", "network cost", "tokens/s",
                "tokens/s per 1M");
        for (int i = 0; i < nf; i++) {
          const struct row *r = &rows[i];
          if (!r->ok) continue;
          if (r->price < 0)
            fprintf(f, " %-6s no listed speed reaches %.0f Gb/s per NIC\n",
                    cs_family_name(r->z.family), r->z.gbps_nic);
          else
            fprintf(f, " %-6s %7.0fG %14.4g %12.4g %16.4g\n", cs_family_name(r->z.family),
                    prices.speed[r->price].gbps, r->cost, r->tokens_at_price, r->per_cost);
        }
      }
    } else if (f && fmt == CLI_CSV) {
      fputs("family,reachable,least_Gbps_per_gpu,least_Gbps_per_nic,least_Gbps_per_node,max_step_s,"
            "step_s,step_at_90pct_s,knee_Gbps_per_gpu,ideal_step_s,tokens_per_s,net_bytes_per_gpu,"
            "plan,network_cost,tokens_per_s_per_1M_cost\n",
            f);
      for (int i = 0; i < nf; i++) {
        const struct row *r = &rows[i];
        char plan[256] = "";
        if (r->ok) plan_text(&r->z.at, plan, sizeof plan);
        fprintf(f, "%s,%d,%g,%g,%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,",
                cs_family_name(r->z.family), r->ok, r->z.gbps_gpu, r->z.gbps_nic, r->z.gbps_node,
                r->z.threshold, r->z.at.step, r->z.below.step, r->z.knee_gbps_gpu, r->z.ideal.step,
                r->z.at.tokens_per_s, r->z.at.net_bytes);
        cli_csv_field(f, plan);
        fprintf(f, ",%.6g,%.6g\n", r->cost, r->per_cost);
      }
    } else if (f) {
      fprintf(f, "{\"tool\": \"commscale %s\", \"arguments\": [", CS_VERSION);
      for (int i = 0; i < argc; i++) {
        if (i) fputs(", ", f);
        cli_json_string(f, argv[i]);
      }
      fprintf(f,
              "], \"workload\": \"%s\", \"topology\": \"%s\", \"nodes\": %ld, \"gbs\": %ld, "
              "\"target\": ",
              su.workload->name, t->name, nodes, gbs);
      cli_json_string(f, tt);
      fputs(",\n \"families\": [\n", f);
      for (int i = 0; i < nf; i++) {
        const struct row *r = &rows[i];
        char plan[256] = "";
        if (r->ok) plan_text(&r->z.at, plan, sizeof plan);
        fprintf(f,
                "  {\"family\": \"%s\", \"reachable\": %s, \"least_Gbps_per_gpu\": %g, "
                "\"least_Gbps_per_nic\": %g, \"least_Gbps_per_node\": %g, \"max_step_s\": %.6g, "
                "\"step_s\": %.6g, \"step_at_90pct_s\": %.6g, \"knee_Gbps_per_gpu\": %.6g, "
                "\"net_bytes_per_gpu\": %.6g, \"plan\": ",
                cs_family_name(r->z.family), r->ok ? "true" : "false", r->z.gbps_gpu, r->z.gbps_nic,
                r->z.gbps_node, r->z.threshold, r->z.at.step, r->z.below.step, r->z.knee_gbps_gpu,
                r->z.at.net_bytes);
        cli_json_string(f, plan);
        fprintf(f, ", \"network_cost\": %.6g}%s\n", r->cost, i + 1 < nf ? "," : "");
      }
      fputs("]}\n", f);
    }
    if (f) st = cli_close_out(f, &err);
  }
  int rc = st != CS_OK ? cli_fail("size-network", &err) : 0;
  cs_decide_free(d);
  cs_scenario_fini(&su);
  return rc;
}
