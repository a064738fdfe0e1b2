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
#include "busy.h"
#include "family.h"
#include "setup.h"
#include "sizenet.h"
#include "sizing.h"

static const struct cli_opt opts[] = {
    CLI_SETUP_OPTS,
    {"nodes", 'N', "N", "nodes (required)"},
    {"gbs", 0, "SAMPLES", "global batch in samples (required)"},
    {"target", 0, "KIND=X", "eff=0.8 (default), mfu=0.4 or tokens=1.2e6"},
    {"plan", 'p', "PLAN", "fixed plan fields (precision, bucket, overlaps, reserve)"},
    {"family", 0, "LIST",
     "families: bundled names (fsdp, fsdp-hsdp, zero3-tp8, mcore, zero3, dp+tp, tp+pp, 3d; default "
     "all but fsdp-hsdp) or "
     "\"NAME=KEY=V,...;NAME=...\" (docs/decisions.md)"},
    {"prices", 0, "FILE", "price list YAML: cost of each option and throughput per unit cost"},
    {"range", 0, "LO:HI", "Gb/s per GPU searched (default 1:100000)"},
    {"plot", 0, "PREFIX", "write PREFIX.dat/.gp/.svg: throughput vs Gb/s per GPU per family"},
    {"png", 0, NULL, "with --plot: a PNG beside the SVG"},
    {"quiet", 'q', NULL, "no progress line on a terminal's stderr"},
    CLI_OUTPUT_OPTS,
};

static const struct cli_verb verb = {
    "size-network",
    "--workload NAME --gpu NAME --topology NAME --nodes N --gbs SAMPLES [--target eff=0.8] "
    "[--prices FILE] [--plot PREFIX]",
    "The least network bandwidth per GPU meeting a target for each plan family, and the knee.",
    "For each family the fastest feasible plan is chosen at every bandwidth (the search's space).\n"
    "eff: one bar for every family: X times the throughput of the fastest family of the run with\n"
    "an unlimited network (named in the header); mfu and tokens are absolute. least: rounded up\n"
    "to whole Gb/s per NIC, so `commscale predict --plan PLAN --net-gbps NIC` meets the target;\n"
    "lo..hi: the same with every collective at the ends of its ~95% band. knee: the least\n"
    "bandwidth >= least from which on no doubling gains 5% throughput (0 in CSV and JSON, like\n"
    "least, for a family that never meets the target). Under the table: the\n"
    "throughput curve per family. Network edits: --rails, --oversub, --sharp, --nvls,\n"
    "--transport, --net-latency. Families: docs/scenario.md.",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

static void write_csv(FILE *f, const struct cs_sizenet *z) {
  fputs("family,reachable,least_Gbps_per_gpu,least_Gbps_per_nic,least_Gbps_per_node,max_step_s,"
        "step_s,step_at_90pct_s,knee_Gbps_per_gpu,ideal_step_s,tokens_per_s,net_bytes_per_gpu,"
        "plan,network_cost,tokens_per_s_per_1M_cost,band_lo_Gbps_per_gpu,band_hi_Gbps_per_gpu,"
        "dominant,dominant_s,definition\n",
        f);
  for (int i = 0; i < z->nf; i++) {
    const struct cs_sizenet_row *r = &z->rows[i];
    char plan[256] = "";
    if (r->ok) cs_plan_format(&r->z.at.plan, plan, sizeof plan);
    fprintf(f, "%s,%d,%g,%g,%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,", r->fam.name, r->ok,
            r->z.gbps_gpu, r->z.gbps_nic, r->z.gbps_node, r->z.threshold, r->z.at.step,
            r->z.below.step, r->ok ? r->z.knee_gbps_gpu : 0, r->z.ideal.step, r->z.at.tokens_per_s,
            r->z.at.net_bytes);
    cli_csv_field(f, plan);
    fprintf(f, ",%.6g,%.6g,%g,%g,%s,%.6g,", r->cost, r->per_cost, r->z.gbps_gpu_lo,
            r->z.gbps_gpu_hi, r->z.dominant ? r->z.dominant : "", r->z.dominant_s);
    cli_csv_field(f, r->fam.def);
    fputc('\n', f);
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
            "\"net_bytes_per_gpu\": %.6g, \"band_lo_Gbps_per_gpu\": %g, "
            "\"band_hi_Gbps_per_gpu\": %g, \"dominant_s\": %.6g, \"plan\": ",
            r->fam.name, r->ok ? "true" : "false", r->z.gbps_gpu, r->z.gbps_nic, r->z.gbps_node,
            r->z.threshold, r->z.at.step, r->z.below.step, r->ok ? r->z.knee_gbps_gpu : 0,
            r->z.at.net_bytes, r->z.gbps_gpu_lo, r->z.gbps_gpu_hi, r->z.dominant_s);
    cli_json_string(f, plan);
    fputs(", \"definition\": ", f);
    cli_json_string(f, r->fam.def);
    fputs(", \"dominant\": ", f);
    cli_json_string(f, r->z.dominant ? r->z.dominant : "");
    fputs(", \"curve\": [", f);
    for (int k = 0; k < r->z.ncurve; k++)
      fprintf(f, "%s[%g, %.6g]", k ? ", " : "", r->z.curve_gbps[k], r->z.curve_tokens[k]);
    fputc(']', f);
    fprintf(f, ", \"network_cost\": %.6g}%s\n", r->cost, i + 1 < z->nf ? "," : "");
  }
  fputs("]}\n", f);
}

/* The families of --family (default all), the target and the --range of the bisection. */
static enum cs_status parse_sizing(const struct cli_args *a, struct cs_family_set *fs,
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
  if (st == CS_OK && (s = cli_get(&verb, a, "family"))) {
    st = cs_family_set_parse(s, fs, err);
    if (st != CS_OK) cs_error_prefix(err, "--family");
  } else
    cs_family_set_default(fs);
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
  struct cs_family_set fs;
  if (st == CS_OK) st = parse_sizing(&a, &fs, &tg, &so, &err);
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
  struct cli_progress busy;
  struct cs_progress pg;
  cli_progress_init(&busy, "size-network", cli_get(&verb, &a, "quiet") != NULL, &pg);
  st = cs_sizenet_run(&su, nodes, gbs, &fs, &tg, &so, s ? &prices : NULL, &pg, &z, &err);
  cli_progress_end(&busy);
  if (st == CS_OK && (s = cli_get(&verb, &a, "plot")))
    st = cs_sizenet_plot(&su, &z, s, CS_PLOT_SVG | (cli_get(&verb, &a, "png") ? CS_PLOT_PNG : 0u),
                         &err);
  FILE *f = st == CS_OK ? cli_open_out(cli_get(&verb, &a, "output"), &err) : NULL;
  if (st == CS_OK && !f) st = CS_ERR_IO;
  char tt[96];
  cs_target_format(&tg, tt, sizeof tt);
  if (f && fmt == CLI_TABLE)
    cs_sizenet_write_table(f, &su, &z);
  else if (f && fmt == CLI_CSV)
    write_csv(f, &z);
  else if (f)
    write_json(f, &su, &z, tt, argc, argv);
  if (f) st = cli_close_out(f, &err);
  /* the table says it per family; no family with a plan at all is a failed run */
  int any = 0;
  for (int i = 0; st == CS_OK && i < z.nf; i++)
    any |= z.rows[i].feasible;
  if (st == CS_OK && !any && z.nf > 0)
    st = cs_error_set(&err, CS_ERR_RANGE, "no family has a feasible plan: %s", z.rows[0].reason);
  int rc = st != CS_OK ? cli_fail("size-network", &err) : 0;
  cs_sizenet_fini(&z);
  cs_scenario_fini(&su);
  return rc;
}
