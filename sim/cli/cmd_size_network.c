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
#include "sizenet.h"
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
    CLI_OUTPUT_OPTS,
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
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

static void write_table(FILE *f, const struct cs_scenario *su, const struct cs_sizenet *z,
                        const char *tt) {
  fprintf(f,
          "# commscale %s size-network\n# workload  %s\n# topology  %s: %ld nodes x %d GPUs, "
          "%d NICs per node, %s%s%s\n# framework %s\n# target    %s, gbs %ld\n",
          CS_VERSION, su->workload->description, z->t->name, z->nodes, z->t->node.gpus,
          z->t->net.nics, cs_topo_transport_name((enum cs_topo_transport)z->t->net.transport),
          z->t->net.sharp ? ", SHARP" : "", z->t->node.nvls ? ", NVLS" : "", su->base.framework, tt,
          z->gbs);
  fprintf(f, "#%-6s %9s %9s %9s %9s %9s %9s %10s %10s  %s\n", "family", "least", "per NIC",
          "per node", "max_step", "step", "step@90%", "knee", "tok/s@inf", "plan at least");
  fprintf(f, "#%-6s %9s %9s %9s %9s %9s %9s %10s %10s\n", "", "(Gb/s/GPU)", "(Gb/s)", "(Gb/s)",
          "(s)", "(s)", "(s)", "(Gb/s/GPU)", "");
  for (int i = 0; i < z->nf; i++) {
    const struct cs_sizenet_row *r = &z->rows[i];
    char plan[256];
    if (!r->ok) {
      fprintf(f, " %-6s %s\n", cs_family_name(r->z.family), r->reason);
      continue;
    }
    cs_plan_format(&r->z.at.plan, plan, sizeof plan);
    fprintf(f, " %-6s %9.0f %9.0f %9.0f %9.4g %9.4g %9.4g %10.0f %10.4g  %s\n",
            cs_family_name(r->z.family), r->z.gbps_gpu, r->z.gbps_nic, r->z.gbps_node,
            r->z.threshold, r->z.at.step, r->z.below.step, r->z.knee_gbps_gpu,
            r->z.ideal.tokens_per_s, plan);
  }
  fprintf(f, "#\n# net/step: bytes per GPU crossing the network per step of the plan chosen at the "
             "least bandwidth\n");
  for (int i = 0; i < z->nf; i++)
    if (z->rows[i].ok)
      fprintf(f, "#   %-6s %8.1f GB  (%s)\n", cs_family_name(z->rows[i].z.family),
              z->rows[i].z.at.net_bytes / 1e9, "predict with --net-gbps = per NIC to check");
  if (z->prices) {
    fprintf(f,
            "#\n# cost (%s): NICs, switch ports and cables of %ld nodes at the least listed "
            "speed >= the answer%s\n",
            z->prices->currency, z->nodes,
            z->prices->node > 0 ? "; per-cost counts the nodes too" : "");
    fprintf(f, "#%-6s %9s %14s %12s %16s\n", "family", "speed", "network cost", "tokens/s",
            "tokens/s per 1M");
    for (int i = 0; i < z->nf; i++) {
      const struct cs_sizenet_row *r = &z->rows[i];
      if (!r->ok) continue;
      if (r->price < 0)
        fprintf(f, " %-6s no listed speed reaches %.0f Gb/s per NIC\n", cs_family_name(r->z.family),
                r->z.gbps_nic);
      else
        fprintf(f, " %-6s %7.0fG %14.4g %12.4g %16.4g\n", cs_family_name(r->z.family),
                z->prices->speed[r->price].gbps, r->cost, r->tokens_at_price, r->per_cost);
    }
  }
}

static void write_csv(FILE *f, const struct cs_sizenet *z) {
  fputs("family,reachable,least_Gbps_per_gpu,least_Gbps_per_nic,least_Gbps_per_node,max_step_s,"
        "step_s,step_at_90pct_s,knee_Gbps_per_gpu,ideal_step_s,tokens_per_s,net_bytes_per_gpu,"
        "plan,network_cost,tokens_per_s_per_1M_cost\n",
        f);
  for (int i = 0; i < z->nf; i++) {
    const struct cs_sizenet_row *r = &z->rows[i];
    char plan[256] = "";
    if (r->ok) cs_plan_format(&r->z.at.plan, plan, sizeof plan);
    fprintf(f, "%s,%d,%g,%g,%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,", cs_family_name(r->z.family),
            r->ok, r->z.gbps_gpu, r->z.gbps_nic, r->z.gbps_node, r->z.threshold, r->z.at.step,
            r->z.below.step, r->z.knee_gbps_gpu, r->z.ideal.step, r->z.at.tokens_per_s,
            r->z.at.net_bytes);
    cli_csv_field(f, plan);
    fprintf(f, ",%.6g,%.6g\n", r->cost, r->per_cost);
  }
}

static void write_json(FILE *f, const struct cs_scenario *su, const struct cs_sizenet *z,
                       const char *tt, int argc, char **argv) {
  cli_json_head(f, argc, argv);
  fprintf(f,
          ", \"workload\": \"%s\", \"topology\": \"%s\", \"nodes\": %ld, \"gbs\": %ld, "
          "\"target\": ",
          su->workload->name, z->t->name, z->nodes, z->gbs);
  cli_json_string(f, tt);
  fputs(",\n \"families\": [\n", f);
  for (int i = 0; i < z->nf; i++) {
    const struct cs_sizenet_row *r = &z->rows[i];
    char plan[256] = "";
    if (r->ok) cs_plan_format(&r->z.at.plan, plan, sizeof plan);
    fprintf(f,
            "  {\"family\": \"%s\", \"reachable\": %s, \"least_Gbps_per_gpu\": %g, "
            "\"least_Gbps_per_nic\": %g, \"least_Gbps_per_node\": %g, \"max_step_s\": %.6g, "
            "\"step_s\": %.6g, \"step_at_90pct_s\": %.6g, \"knee_Gbps_per_gpu\": %.6g, "
            "\"net_bytes_per_gpu\": %.6g, \"plan\": ",
            cs_family_name(r->z.family), r->ok ? "true" : "false", r->z.gbps_gpu, r->z.gbps_nic,
            r->z.gbps_node, r->z.threshold, r->z.at.step, r->z.below.step, r->z.knee_gbps_gpu,
            r->z.at.net_bytes);
    cli_json_string(f, plan);
    fprintf(f, ", \"network_cost\": %.6g}%s\n", r->cost, i + 1 < z->nf ? "," : "");
  }
  fputs("]}\n", f);
}

/* The families of --family (default all), the target and the --range of the bisection. */
static enum cs_status parse_sizing(const struct cli_args *a, int *fams, int *nf,
                                   struct cs_target *tg, struct cs_sizing_opts *so,
                                   struct cs_error *err) {
  const char *s;
  enum cs_status st = CS_OK;
  *tg = (struct cs_target){CS_TARGET_EFF, 0.8};
  if ((s = cli_get(&verb, a, "target"))) st = cs_target_parse(s, tg, err);
  cs_sizing_opts_init(so);
  if (st == CS_OK && (s = cli_get(&verb, a, "range"))) {
    char *end;
    so->lo_gbps = strtod(s, &end);
    if (*end == ':') so->hi_gbps = strtod(end + 1, &end);
    if (*end || !(so->lo_gbps > 0) || !(so->hi_gbps > 2 * so->lo_gbps))
      st = cs_error_set(err, CS_ERR_USAGE, "--range expects LO:HI Gb/s per GPU with HI > 2 LO");
  }
  *nf = 0;
  if (st == CS_OK && (s = cli_get(&verb, a, "family"))) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && st == CS_OK; t = strtok_r(NULL, ",", &save)) {
      int f = cs_family_parse(t);
      if (f < 0)
        st = cs_error_set(err, CS_ERR_USAGE, "--family: unknown family \"%s\"", t);
      else if (*nf < CS_FAMILY_COUNT)
        fams[(*nf)++] = f;
    }
  } else
    for (int f = 0; f < CS_FAMILY_COUNT; f++)
      fams[(*nf)++] = f;
  return st;
}

int cs_cmd_size_network(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int fmt;
  int begun = cli_begin(&verb, argc, argv, &a, 0, 0, NULL, &fmt);
  if (begun >= 0) return begun;
  const char *s;
  long nodes, gbs;
  enum cs_status st = cli_int_opt(&verb, &a, "nodes", 1, 1 << 20, 0, &nodes, &err);
  if (st == CS_OK) st = cli_int_opt(&verb, &a, "gbs", 1, 1 << 30, 0, &gbs, &err);
  if (st == CS_OK && (!nodes || !gbs))
    st = cs_error_set(&err, CS_ERR_USAGE, "--nodes and --gbs are required");
  struct cs_target tg;
  struct cs_sizing_opts so;
  int fams[CS_FAMILY_COUNT], nf;
  if (st == CS_OK) st = parse_sizing(&a, fams, &nf, &tg, &so, &err);
  if (st != CS_OK) return cli_fail("size-network", &err);
  struct cs_scenario su;
  if ((st = cli_setup_load(&su, &verb, &a, cli_get(&verb, &a, "plan"), &err)) != CS_OK)
    return cli_fail("size-network", &err);
  struct cs_prices prices;
  if ((s = cli_get(&verb, &a, "prices")) && (st = cs_prices_load(s, &prices, &err)) != CS_OK) {
    cs_scenario_fini(&su);
    return cli_fail("size-network", &err);
  }
  struct cs_sizenet z;
  st = cs_sizenet_run(&su, nodes, gbs, fams, nf, &tg, &so, s ? &prices : NULL, &z, &err);
  if (st == CS_OK && (s = cli_get(&verb, &a, "plot"))) st = cs_sizenet_plot(&su, &z, s, &err);
  FILE *f = st == CS_OK ? cli_open_out(cli_get(&verb, &a, "output"), &err) : NULL;
  if (st == CS_OK && !f) st = CS_ERR_IO;
  char tt[96];
  cs_target_format(&tg, tt, sizeof tt);
  if (f && fmt == CLI_TABLE)
    write_table(f, &su, &z, tt);
  else if (f && fmt == CLI_CSV)
    write_csv(f, &z);
  else if (f)
    write_json(f, &su, &z, tt, argc, argv);
  if (f) st = cli_close_out(f, &err);
  int rc = st != CS_OK ? cli_fail("size-network", &err) : 0;
  cs_sizenet_fini(&z);
  cs_scenario_fini(&su);
  return rc;
}
