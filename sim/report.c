/* report.c — see report.h. */
#include "report.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "calfile.h"
#include "datadir.h"
#include "gpu.h"
#include "plan.h"
#include "sizing.h"
#include "topology.h"
#include "family.h"
#include "units.h"
#include "workload.h"
#include "yamlcfg.h"

#define S(key, member, def, help)                                                                  \
  {                                                                                                \
    key, CS_CFG_STRING, offsetof(struct cs_report_scenario, member),                               \
        sizeof(((struct cs_report_scenario *)0)->member), CS_UNIT_BYTES, 0, 0, def, NULL, help     \
  }
static const struct cs_cfg_field fields[] = {
    S("version", version, NULL, "1"),
    S("title", title, "", "the report's heading (default: commscale report)"),
    S("workload", workload, NULL, "a bundled workload or a workload YAML file"),
    S("gpu", gpu, NULL, "a bundled GPU or a GPU YAML file"),
    S("topology", topology, NULL, "a bundled topology or a topology YAML file"),
    S("cal", cal, "", "calibration.yaml (default: the NCCL-anchored model)"),
    S("nodes", nodes, NULL, "the node count of the question, e.g. 400"),
    S("gbs", gbs, NULL, "global batch in samples, e.g. 1600"),
    S("target", target, NULL, "what size-network must meet: eff=0.8, mfu=0.4 or tokens=1.2e6"),
    S("plan", plan, "", "the plan to predict (default tp=8,pp=8)"),
    S("sweep_nodes", sweep_nodes, "", "node counts of the sweep (default: nodes)"),
    S("sweep_net_gbps", sweep_net_gbps, "", "Gb/s per GPU of the sweep (default 50,...,800)"),
    S("prices", prices, "", "a price file for the cost table (relative to the scenario)"),
    S("families", families, "",
      "plan families to size: bundled names (fsdp, fsdp-hsdp, zero3-tp8, mcore, zero3, dp+tp, "
      "tp+pp, 3d; "
      "default all) or \"NAME=KEY=V,...;NAME=...\""),
};
#undef S
#define NFIELDS (sizeof fields / sizeof fields[0])

void cs_report_scenario_help(FILE *out) {
  cs_cfg_help(out, fields, NFIELDS);
}

/* The value node of key in the scenario's root mapping. */
static int node_of(const struct cs_yaml *y, const char *key) {
  return cs_yaml_get(y, cs_yaml_root(y), key);
}

/* Checks an integer-list value (one integer when one is set). */
static enum cs_status check_ints(const struct cs_yaml *y, const char *key, const char *val, long lo,
                                 long hi, int one, struct cs_error *err) {
  if (!val[0]) return CS_OK;
  long *v = NULL;
  size_t n = 0;
  struct cs_error e2 = {0};
  enum cs_status st = cs_units_parse_ints(val, lo, hi, &v, &n, &e2);
  free(v);
  if (st == CS_ERR_NOMEM) return cs_error_set(err, st, "%s", e2.msg);
  if (st == CS_OK && one && n != 1)
    st = cs_error_set(&e2, CS_ERR_PARSE, "expected one integer, got \"%s\"", val);
  if (st != CS_OK)
    return cs_yaml_error(y, node_of(y, key), err, CS_ERR_PARSE, "%s: %s", key, e2.msg);
  return CS_OK;
}

/* st, with err prefixed by the scenario's place of key unless it is CS_OK. */
static enum cs_status at_key(const struct cs_yaml *y, const char *path, const char *key,
                             enum cs_status st, struct cs_error *err) {
  if (st == CS_OK || st == CS_ERR_NOMEM) return st;
  long line, col;
  cs_yaml_mark(y, node_of(y, key), &line, &col);
  char pre[4400];
  snprintf(pre, sizeof pre, "%s:%ld:%ld: %s", path, line, col, key);
  cs_error_prefix(err, pre);
  return st;
}

/* Loads the workload, GPU and topology the scenario names, to report a bad one before any work. */
static enum cs_status check_inputs(const struct cs_report_scenario *s, const struct cs_yaml *y,
                                   const char *exe, struct cs_error *err) {
  char path[4096];
  struct cs_workload *w = NULL;
  struct cs_gpu gpu;
  struct cs_topology topo;
  enum cs_status st =
      cs_datadir_find("workloads", "model/workloads", s->workload, exe, path, sizeof path, err);
  if (st == CS_OK) st = cs_workload_load(path, &w, err);
  cs_workload_free(w);
  if ((st = at_key(y, s->path, "workload", st, err)) != CS_OK) return st;
  st = cs_datadir_find("gpus", "model/gpus", s->gpu, exe, path, sizeof path, err);
  if (st == CS_OK) st = cs_gpu_load(path, &gpu, err);
  if ((st = at_key(y, s->path, "gpu", st, err)) != CS_OK) return st;
  st = cs_topo_find(s->topology, path, sizeof path, err);
  if (st == CS_OK) st = cs_topo_load(path, &topo, err);
  return at_key(y, s->path, "topology", st, err);
}

/* The calibration's quality as one sentence (the calibration must load). */
static enum cs_status read_cal(struct cs_report_scenario *s, struct cs_error *err) {
  struct cs_cal cal;
  cs_cal_init(&cal);
  enum cs_status st = cs_calfile_read(s->cal, &cal, err);
  if (st == CS_OK)
    snprintf(s->cal_line, sizeof s->cal_line,
             "`%s`: %d points on up to %d nodes, median error %.1f%%, p90 %.1f%%, network "
             "terms %s; GPU %s, NCCL %s.",
             s->cal, cal.quality.points, cal.quality.max_nodes, 100 * cal.quality.median_rel_err,
             100 * cal.quality.p90_rel_err,
             cal.quality.net_determined ? "determined by the data"
                                        : "at their defaults (one node measured)",
             cal.prov.gpu, cal.prov.nccl);
  cs_cal_fini(&cal);
  return st;
}

static enum cs_status check_values(struct cs_report_scenario *s, const struct cs_yaml *y,
                                   const char *exe, struct cs_error *err) {
  enum cs_status st = CS_OK;
  if (strcmp(s->version, "1") != 0)
    return cs_yaml_error(y, node_of(y, "version"), err, CS_ERR_PARSE,
                         "version: expected 1, got \"%s\"", s->version);
  if ((st = check_ints(y, "nodes", s->nodes, 1, 1 << 20, 1, err)) != CS_OK ||
      (st = check_ints(y, "gbs", s->gbs, 1, 1 << 30, 1, err)) != CS_OK ||
      (st = check_ints(y, "sweep_nodes", s->sweep_nodes, 1, 1 << 20, 0, err)) != CS_OK ||
      (st = check_ints(y, "sweep_net_gbps", s->sweep_net_gbps, 1, 1000000, 0, err)) != CS_OK)
    return st;
  struct cs_error e2 = {0};
  struct cs_plan p;
  if (s->plan[0] && (st = cs_plan_parse(s->plan, &p, &e2)) != CS_OK)
    return st == CS_ERR_NOMEM
               ? cs_error_set(err, st, "%s", e2.msg)
               : cs_yaml_error(y, node_of(y, "plan"), err, CS_ERR_PARSE, "plan: %s", e2.msg);
  struct cs_target tg;
  if ((st = cs_target_parse(s->target, &tg, &e2)) != CS_OK)
    return cs_yaml_error(y, node_of(y, "target"), err, CS_ERR_PARSE, "target: %s", e2.msg);
  static struct cs_family_set fs;
  if (s->families[0] && (st = cs_family_set_parse(s->families, &fs, &e2)) != CS_OK)
    return cs_yaml_error(y, node_of(y, "families"), err, CS_ERR_PARSE, "families: %s", e2.msg);
  if (s->cal[0] && (st = at_key(y, s->path, "cal", read_cal(s, err), err)) != CS_OK) return st;
  return check_inputs(s, y, exe, err);
}

enum cs_status cs_report_load(const char *path, const char *exe, struct cs_report_scenario *s,
                              struct cs_error *err) {
  memset(s, 0, sizeof *s);
  snprintf(s->path, sizeof s->path, "%s", path);
  struct cs_yaml *y = NULL;
  enum cs_status st = cs_yaml_load(path, &y, err);
  if (st != CS_OK) return st;
  int root = cs_yaml_root(y);
  if (cs_yaml_kind(y, root) != CS_YAML_MAP)
    st = cs_yaml_error(y, root, err, CS_ERR_PARSE,
                       "expected a mapping of scenario keys "
                       "(version, workload, gpu, topology, nodes, gbs, target, plan, ...)");
  if (st == CS_OK) st = cs_cfg_read(y, root, fields, NFIELDS, s, NULL, err);
  if (st == CS_OK) st = check_values(s, y, exe, err);
  cs_yaml_free(y);
  if (st == CS_OK && s->prices[0]) {
    const char *slash = strrchr(path, '/');
    if (s->prices[0] != '/' && slash)
      snprintf(s->prices_path, sizeof s->prices_path, "%.*s/%s", (int)(slash - path), path,
               s->prices);
    else
      snprintf(s->prices_path, sizeof s->prices_path, "%s", s->prices);
  }
  return st;
}

/* ---- the report ------------------------------------------------------------------------------ */

static void quote(FILE *md, const char *path) {
  FILE *f = fopen(path, "r");
  char line[2048];
  fputs("```\n", md);
  while (f && fgets(line, sizeof line, f))
    fputs(line, md);
  fputs("```\n\n", md);
  if (f) fclose(f);
}

static void cmdline(FILE *md, char **argv) {
  fputs("`commscale", md);
  for (int i = 0; argv[i]; i++)
    fprintf(md, strchr(argv[i], ' ') || strchr(argv[i], ';') ? " \"%s\"" : " %s", argv[i]);
  fputs("`\n\n", md);
}

/* A part: argv printed with plot prefixes under dir, run with them under dir_tmp (argv[plot] is
 * the prefix's file name, or plot is 0), its table in dir_tmp/NAME.txt, quoted. */
struct part {
  FILE *md;
  const char *dir, *dir_tmp;
  cs_report_run_fn run;
  void *ctx;
  int failed;
};

static void run_part(struct part *p, char **argv, int plot, const char *name) {
  char shown[4096] = "", tmp[4096] = "", out[4096];
  const char *base = plot ? argv[plot] : NULL;
  if (base) {
    snprintf(shown, sizeof shown, "%s/%s", p->dir, base);
    snprintf(tmp, sizeof tmp, "%s/%s", p->dir_tmp, base);
    argv[plot] = shown;
  }
  cmdline(p->md, argv);
  if (base) argv[plot] = tmp;
  snprintf(out, sizeof out, "%s/%s.txt", p->dir_tmp, name);
  p->failed += p->run(p->ctx, argv, out) != 0;
  quote(p->md, out);
}

static const char why_families[] =
    "### Why the families need different networks: bytes per step\n\n"
    "With ZeRO-3 every GPU all-gathers each layer's weights in the forward pass, again in the "
    "backward pass, and reduce-scatters the gradients: three passes over its TP shard of the "
    "model, 1.5 x what plain data parallelism's all-reduce moves, and it moves them between "
    "nodes, since the data-parallel group spans the cluster. Those transfers must hide behind "
    "one layer's compute each, so the step slows as soon as the network cannot deliver a "
    "layer's weights in a layer's time. TP-in-node + PP keeps the heavy traffic (four "
    "activation all-reduces per layer per micro-batch) on NVLink; over the network go only the "
    "point-to-point activations between stages and the gradient reduction of a model slice of "
    "1/(tp x pp), overlapped with the whole backward pass of the last micro-batches. The "
    "`net/step` lines above give the bytes per GPU per step that cross the network for the "
    "plan each family picks; the least bandwidth follows from how much of it the schedule can "
    "hide. This is DeepSpeed's advice in numbers (its ZeRO-3 guidance, for 64 or more V100 GPUs: "
    "100 Gbps is not enough, 200-400 Gbps is ok, 800-1000 Gbps is ideal; docs/decisions.md sets "
    "the sizing beside it).\n\n";

static void write_head(const struct cs_report_scenario *s, FILE *md) {
  fprintf(md, "# %s\n\n", s->title[0] ? s->title : "commscale report");
  fprintf(md,
          "Workload `%s`, GPU `%s`, topology `%s`, %s nodes, global batch %s, target `%s`. "
          "Produced by commscale %s from `%s`; every table below is the output of the command "
          "printed above it.\n\n",
          s->workload, s->gpu, s->topology, s->nodes, s->gbs, s->target, CS_VERSION, s->path);
  fputs("## 1. Calibration\n\n", md);
  if (s->cal[0])
    fprintf(md, "%s\n\n", s->cal_line);
  else
    fputs("No calibration given: collectives are costed with the NCCL-anchored default model and "
          "the topology's link rates. Bands are wide; run `commscale calibrate` on a few nodes and "
          "add `cal:` to the scenario.\n\n",
          md);
}

enum cs_status cs_report_write(const struct cs_report_scenario *s, const char *dir,
                               const char *dir_tmp, FILE *md, cs_report_run_fn run, void *ctx,
                               int *failed, struct cs_error *err) {
  (void)err;
  struct part p = {md, dir, dir_tmp, run, ctx, 0};
  char *W = (char *)s->workload, *G = (char *)s->gpu, *T = (char *)s->topology;
  char *N = (char *)s->nodes, *B = (char *)s->gbs, *cal = (char *)s->cal;
  char *calopt = cal[0] ? "--cal" : NULL;
  write_head(s, md);
  fputs("## 2. Prediction of the scenario's plan\n\n", md);
  char *plan = s->plan[0] ? (char *)s->plan : "tp=8,pp=8";
  char *SN = s->sweep_nodes[0] ? (char *)s->sweep_nodes : N;
  char *png = s->png ? "--png" : NULL;
  char *av_predict[] = {"predict", "-w", W,        "--gpu",   G,   "-t",   T,   "--plan", plan,
                        "--nodes", SN,   "--plot", "predict", png, calopt, cal, NULL};
  if (!png) av_predict[13] = calopt, av_predict[14] = cal, av_predict[15] = NULL;
  run_part(&p, av_predict, 12, "predict");
  fputs("![speedup vs nodes against the table's reference](predict-speedup.svg)\n\n"
        "![the parts of each step as shares, the step under each bar](predict-breakdown.svg)\n\n",
        md);
  fputs(
      "## 3. Plan search\n\nEvery feasible plan, ranked by step time; P marks the Pareto front of "
      "(step time, memory headroom, network bytes per step). Top 15 and the front:\n\n",
      md);
  char *av_search[] = {"search", "-w", W,    "--gpu", G,         "-t",   T,   "--nodes", N,
                       "--gbs",  B,    "-n", "15",    "--front", calopt, cal, NULL};
  run_part(&p, av_search, 0, "search");
  fputs("## 4. Network sizing\n\n", md);
  char *prices = (char *)s->prices_path;
  char *av_size[32] = {"size-network",
                       "-w",
                       W,
                       "--gpu",
                       G,
                       "-t",
                       T,
                       "--nodes",
                       N,
                       "--gbs",
                       B,
                       "--target",
                       (char *)s->target,
                       "--plot",
                       "sizing",
                       "--quiet"};
  int k = 16;
  if (s->families[0]) av_size[k++] = "--family", av_size[k++] = (char *)s->families;
  if (prices[0]) av_size[k++] = "--prices", av_size[k++] = prices;
  if (png) av_size[k++] = png;
  if (calopt) av_size[k++] = calopt, av_size[k++] = cal;
  av_size[k] = NULL;
  run_part(&p, av_size, 14, "sizing");
  fputs("![throughput vs network per GPU, per family](sizing.svg)\n\n", md);
  fputs(why_families, md);
  fputs("## 5. Sweep: nodes x network per GPU\n\n", md);
  char *av_sweep[] = {"sweep",
                      "-w",
                      W,
                      "--gpu",
                      G,
                      "-t",
                      T,
                      "--nodes",
                      s->sweep_nodes[0] ? (char *)s->sweep_nodes : N,
                      "--gbs",
                      B,
                      "--net-gbps",
                      s->sweep_net_gbps[0] ? (char *)s->sweep_net_gbps : "50,100,200,400,800",
                      "--plot",
                      "sweep",
                      "--quiet",
                      png ? png : calopt,
                      png ? calopt : cal,
                      png ? cal : NULL,
                      NULL};
  run_part(&p, av_sweep, 14, "sweep");
  fputs("![throughput vs network per GPU at the largest node count](sweep-net.svg)\n\n"
        "![speedup vs nodes](sweep-nodes.svg)\n\n",
        md);
  fputs(
      "## Caveats\n\nPredictions, not measurements: the step simulator's model (docs/simulator.md) "
      "with the calibration above. The sizing target asks every family for the same throughput: "
      "the stated fraction of the fastest family's on an unlimited network (so a family that is "
      "slow for other reasons, bubbles or TP, shows as not reached rather than as needing no "
      "network). The lo..hi columns give the answer with every collective at the ends of its "
      "~95% band: an answer whose band is wide, or a knee far above it, is a knife edge. "
      "Every key of the scenario is described in docs/scenario.md.\n",
      md);
  *failed = p.failed;
  return CS_OK;
}
