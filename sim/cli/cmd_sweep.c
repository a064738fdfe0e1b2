/* cmd_sweep.c — `commscale sweep`: a grid over nodes x network Gb/s (per GPU, or per node with
 * --per-node) x plans x global batch. A plan is either given (--plans "P1;P2", dp filling the
 * GPUs as in predict) or a family (--families zero3,dp+tp,tp+pp,3d, the default). The grid and
 * the figures are sim/sweep.c's; this verb reads the options and writes the records as a table,
 * CSV or JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "busy.h"
#include "cmds.h"
#include "output.h"
#include "setup.h"
#include "sizing.h"
#include "step.h"
#include "plot.h"
#include "sweep.h"
#include "units.h"

static const struct cli_opt opts[] = {
    CLI_SETUP_OPTS,
    {"nodes", 'N', "LIST", "node counts, e.g. 16,32,64 or 50:400 (required)"},
    {"net-gbps", 0, "LIST", "network speeds, Gb/s per GPU (default 50,100,200,400,800)"},
    {"per-node", 0, NULL, "--net-gbps values are per node, not per GPU"},
    {"gbs", 0, "LIST", "global batches in samples (required)"},
    {"families", 0, "LIST",
     "plan families (default zero3,dp+tp,tp+pp,3d), bundled names or NAME=KEYS as size-network's "
     "--family: the best plan of each"},
    {"plans", 'p', "P1;P2", "explicit plans instead of families; dp fills the GPUs"},
    {"metric", 0, "NAME", "plotted value: tokens (default), mfu or samples"},
    {"plot", 0, "PREFIX", "write PREFIX-net.{dat,gp,svg} and PREFIX-nodes.{dat,gp,svg}"},
    {"png", 0, NULL, "with --plot: a PNG beside each SVG"},
    {"quiet", 'q', NULL, "no progress line on a terminal's stderr"},
    CLI_OUTPUT_OPTS,
};

static const struct cli_verb verb = {
    "sweep",
    "--workload NAME --gpu NAME --topology NAME --nodes LIST --gbs LIST [--net-gbps LIST] "
    "[--families LIST | --plans \"P1;P2\"] [--plot PREFIX]",
    "Step time, throughput and MFU over nodes x network speed x plans (or families) x batch.",
    "Network speeds are per GPU (all NICs of a node together divided by its GPUs) unless\n"
    "--per-node. A family's row is the fastest feasible plan of that family at the point (it may\n"
    "change along the grid; the plan column says which). speedup_vs_first: throughput over that "
    "of\n"
    "the smallest node count of the same curve, speed and batch.",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

/* Parses option opt's integer list (1,2,4 or 50:400); a bad list is a usage error naming opt. */
static enum cs_status int_list(const char *opt, const char *text, long lo, long hi, long **out,
                               size_t *n, struct cs_error *err) {
  enum cs_status st = cs_units_parse_ints(text, lo, hi, out, n, err);
  if (st != CS_OK) {
    cs_error_prefix(err, opt);
    if (st != CS_ERR_NOMEM) st = err->status = CS_ERR_USAGE;
  }
  return st;
}

/* The curves of --plans "P1;P2" or --families (default zero3,dp+tp,tp+pp,3d). */
static enum cs_status parse_curves(const struct cli_args *a, struct cs_sweep_spec *sp,
                                   struct cs_error *err) {
  const char *plans = cli_get(&verb, a, "plans"), *fams = cli_get(&verb, a, "families");
  if (plans && fams)
    return cs_error_set(err, CS_ERR_USAGE,
                        "give --plans or --families, not both (the curves are either the plans "
                        "given or the best plan of each family)");
  if (!plans) { /* families: the list syntax of size-network's --family (family.h) */
    struct cs_family_set fs;
    enum cs_status st = cs_family_set_parse(fams ? fams : "zero3,dp+tp,tp+pp,3d", &fs, err);
    if (st != CS_OK) {
      cs_error_prefix(err, "--families");
      return st;
    }
    if (fs.n > CS_SWEEP_MAX_CURVES)
      return cs_error_set(err, CS_ERR_USAGE, "at most %d plans or families", CS_SWEEP_MAX_CURVES);
    for (int c = 0; c < fs.n; c++) {
      sp->famspec[c] = fs.f[c], sp->fam[c] = c;
      snprintf(sp->names[c], sizeof sp->names[0], "%s", fs.f[c].name);
    }
    sp->ncurve = fs.n;
    if (fs.n == 0)
      return cs_error_set(err, CS_ERR_USAGE, "--families: expected at least one family");
    return CS_OK;
  }
  char buf[2048];
  snprintf(buf, sizeof buf, "%s", plans);
  const char *sep = ";";
  char *save = NULL;
  enum cs_status st = CS_OK;
  for (char *t = strtok_r(buf, sep, &save); t && st == CS_OK; t = strtok_r(NULL, sep, &save)) {
    int c = sp->ncurve;
    if (c == CS_SWEEP_MAX_CURVES)
      return cs_error_set(err, CS_ERR_USAGE, "at most %d plans or families", CS_SWEEP_MAX_CURVES);
    if ((st = cs_plan_parse(t, &sp->plans[c], err)) != CS_OK) {
      cs_error_prefix(err, "--plans");
      if (st != CS_ERR_NOMEM) err->status = st = CS_ERR_USAGE; /* out of memory is no misuse */
    }
    snprintf(sp->names[c], sizeof sp->names[0], "%.63s", t);
    sp->fam[sp->ncurve++] = -1;
  }
  if (st == CS_OK && sp->ncurve == 0)
    st = cs_error_set(err, CS_ERR_USAGE, "--plans: expected at least one plan (\"P1;P2\")");
  return st;
}

/* The grid and the plotted metric from the options (lists malloc'd into sp). */
static enum cs_status parse_grid(const struct cli_args *a, struct cs_sweep_spec *sp, int *metric,
                                 struct cs_error *err) {
  long *v[3] = {NULL, NULL, NULL};
  const char *s = cli_get(&verb, a, "net-gbps");
  enum cs_status st = CS_OK;
  if (!cli_get(&verb, a, "nodes") || !cli_get(&verb, a, "gbs"))
    st = cs_error_set(err, CS_ERR_USAGE, "--nodes and --gbs are required");
  if (st == CS_OK)
    st = int_list("--nodes", cli_get(&verb, a, "nodes"), 1, 1 << 20, &v[0], &sp->nn, err);
  if (st == CS_OK)
    st = int_list("--gbs", cli_get(&verb, a, "gbs"), 1, 1 << 30, &v[1], &sp->ng, err);
  /* 1 Pb/s per GPU (or node) is beyond any real network: the cap keeps the model's sums finite */
  if (st == CS_OK)
    st = int_list("--net-gbps", s ? s : "50,100,200,400,800", 1, 1000000, &v[2], &sp->nnet, err);
  sp->nodes = v[0], sp->gbs = v[1], sp->nets = v[2];
  sp->per_node = cli_get(&verb, a, "per-node") != NULL;
  *metric = CS_SWEEP_TOKENS;
  if (st == CS_OK && (s = cli_get(&verb, a, "metric"))) {
    if (strcmp(s, "mfu") == 0)
      *metric = CS_SWEEP_MFU;
    else if (strcmp(s, "samples") == 0)
      *metric = CS_SWEEP_SAMPLES;
    else if (strcmp(s, "tokens") != 0)
      st = cs_error_set(err, CS_ERR_USAGE, "--metric expects tokens, mfu or samples");
  }
  return st == CS_OK ? parse_curves(a, sp, err) : st;
}

static void write_table(FILE *f, const struct cs_scenario *su, const struct cs_sweep_spec *sp,
                        const struct cs_sweep_rec *R, size_t k) {
  /* where each link value comes from, the network re-costed at the swept speeds */
  long widest = 1;
  for (size_t i = 0; i < sp->nn; i++)
    widest = sp->nodes[i] > widest ? sp->nodes[i] : widest;
  char links[1024];
  cs_scenario_links(su, widest, 1, links, sizeof links);
  fprintf(f,
          "# commscale %s sweep\n# workload  %s\n# topology  %s\n# framework %s\n%s"
          "# speedup: throughput over the same curve's at the smallest node count where it is "
          "feasible,\n#   at the same speed and batch (strong scaling; speedup / (nodes / those "
          "nodes) is its efficiency)\n#%5s %9s %6s %-10s %9s %11s %6s %8s %9s  %s\n",
          CS_VERSION, su->workload->description, su->topo.description, su->base.framework, links,
          "nodes", "Gb/s/GPU", "gbs", "curve", "step(s)", "tokens/s", "MFU%", "speedup", "net(GB)",
          "plan");
  for (size_t i = 0; i < k; i++) {
    const struct cs_sweep_rec *r = &R[i];
    if (!r->ok) {
      fprintf(f, " %5ld %9.4g %6d %-10.10s rejected: %s\n", r->nodes, r->gbps_gpu, r->gbs, r->name,
              r->reason);
      continue;
    }
    fprintf(f, " %5ld %9.4g %6d %-10.10s %9.4g %11.4g %6.1f %8.2f %9.3g  %s\n", r->nodes,
            r->gbps_gpu, r->gbs, r->name, r->step, r->tokens_per_s, 100 * r->mfu, r->speedup,
            r->net_bytes / 1e9, r->plan);
  }
}

static void write_csv(FILE *f, const struct cs_scenario *su, const struct cs_sweep_rec *R,
                      size_t k) {
  fputs("nodes,net_Gbps_per_gpu,net_Gbps_per_node,gbs,curve,status,plan,step_s,samples_per_s,"
        "tokens_per_s,mfu,speedup_vs_first,net_bytes_per_gpu,reason\n",
        f);
  for (size_t i = 0; i < k; i++) {
    const struct cs_sweep_rec *r = &R[i];
    fprintf(f, "%ld,%g,%g,%d,", r->nodes, r->gbps_gpu, r->gbps_gpu * su->topo.node.gpus, r->gbs);
    cli_csv_field(f, r->name);
    fprintf(f, ",%s,", r->ok ? "ok" : "rejected");
    cli_csv_field(f, r->plan);
    if (r->ok)
      fprintf(f, ",%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,", r->step, r->samples_per_s, r->tokens_per_s,
              r->mfu, r->speedup, r->net_bytes);
    else
      fputs(",,,,,,,", f);
    cli_csv_field(f, r->ok ? "" : r->reason);
    fputc('\n', f);
  }
}

static void write_json(FILE *f, const struct cs_scenario *su, const struct cs_sweep_rec *R,
                       size_t k, int argc, char **argv) {
  cli_json_head(f, argc, argv);
  fputs(", \"workload\": ", f);
  cli_json_string(f, su->workload->name); /* names from files: quotes, backslashes escaped */
  fputs(", \"topology\": ", f);
  cli_json_string(f, su->topo.name);
  fputs(",\n \"points\": [\n", f);
  for (size_t i = 0; i < k; i++) {
    const struct cs_sweep_rec *r = &R[i];
    fprintf(f, "  {\"nodes\": %ld, \"net_Gbps_per_gpu\": %g, \"gbs\": %d, \"curve\": ", r->nodes,
            r->gbps_gpu, r->gbs);
    cli_json_string(f, r->name);
    fprintf(f, ", \"ok\": %s, \"plan\": ", r->ok ? "true" : "false");
    cli_json_string(f, r->ok ? r->plan : r->reason);
    if (r->ok)
      fprintf(f,
              ", \"step_s\": %.6g, \"samples_per_s\": %.6g, \"tokens_per_s\": %.6g, "
              "\"mfu\": %.6g, \"speedup_vs_first\": %.6g, \"net_bytes_per_gpu\": %.6g",
              r->step, r->samples_per_s, r->tokens_per_s, r->mfu, r->speedup, r->net_bytes);
    fprintf(f, "}%s\n", i + 1 < k ? "," : "");
  }
  fputs("]}\n", f);
}

int cs_cmd_sweep(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int fmt, metric;
  int begun = cli_begin(&verb, argc, argv, &a, 0, 0, NULL, &fmt);
  if (begun >= 0) return begun;
  struct cs_sweep_spec sp = {0};
  struct cs_scenario su;
  struct cs_sweep_rec *R = NULL;
  size_t k = 0;
  int loaded = 0;
  const char *plot = cli_get(&verb, &a, "plot");
  enum cs_status st = parse_grid(&a, &sp, &metric, &err);
  if (st == CS_OK && (st = cli_setup_load(&su, &verb, &a, NULL, &err)) == CS_OK) loaded = 1;
  struct cli_progress busy;
  cli_progress_init(&busy, "sweep", cli_get(&verb, &a, "quiet") != NULL, &sp.progress);
  if (st == CS_OK) st = cs_sweep_run(&su, &sp, &R, &k, &err);
  cli_progress_end(&busy);
  if (st == CS_OK && plot)
    st = cs_sweep_plot(&su, &sp, R, k, metric, plot,
                       CS_PLOT_SVG | (cli_get(&verb, &a, "png") ? CS_PLOT_PNG : 0u), &err);
  FILE *f = st == CS_OK ? cli_open_out(cli_get(&verb, &a, "output"), &err) : NULL;
  if (st == CS_OK && !f) st = CS_ERR_IO;
  if (f && fmt == CLI_TABLE)
    write_table(f, &su, &sp, R, k);
  else if (f && fmt == CLI_CSV)
    write_csv(f, &su, R, k);
  else if (f)
    write_json(f, &su, R, k, argc, argv);
  if (f) st = cli_close_out(f, &err);
  int rc = st != CS_OK ? cli_fail("sweep", &err) : 0;
  free(R);
  free((void *)sp.nodes);
  free((void *)sp.gbs);
  free((void *)sp.nets);
  if (loaded) cs_scenario_fini(&su);
  return rc;
}
