/* cmd_report.c — `commscale report SCENARIO.yaml -o DIR`: runs calibration summary, prediction,
 * search, sweep and sizing for a scenario and writes DIR/report.md with its SVG figures beside
 * it. Each part is the verb a user would run by hand (in-process, output into DIR), so every
 * figure in the report can be reproduced from the command printed under it.
 *
 * Scenario keys (version: 1): title, workload, gpu, topology, cal (optional), nodes, gbs,
 * target (eff=0.8), plan (the plan to predict), sweep_nodes, sweep_net_gbps, prices (optional;
 * relative paths are relative to the scenario file).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calfile.h"
#include "cmds.h"
#include "opts.h"
#include "plan.h"
#include "units.h"
#include "yamlcfg.h"

static const struct cli_opt opts[] = {
    {"output", 'o', "DIR", "directory for report.md and its figures (default: report)"},
};

static const struct cli_verb verb = {
    "report",
    "SCENARIO.yaml [-o DIR]",
    "Prediction, search, sweep and network sizing of a scenario as Markdown with SVG plots.",
    "Runs, into DIR: predict (the scenario's plan at its nodes), search (top plans and the "
    "front),\n"
    "sweep (families over nodes x Gb/s per GPU, two figures) and size-network (least Gb/s per\n"
    "GPU per family for the target, with the figure and, with prices, the cost); then writes\n"
    "DIR/report.md that quotes each table, shows each figure and gives the command behind it.",
    opts,
    (int)(sizeof opts / sizeof opts[0])};

#define NKEYS 12
static const char *const keys[NKEYS] = {"version",  "title", "workload",    "gpu",
                                        "topology", "cal",   "nodes",       "gbs",
                                        "target",   "plan",  "sweep_nodes", "sweep_net_gbps"};

/* Checks the scenario's values that the verbs would otherwise reject one by one (each naming its
 * own option, not the file): version, nodes, gbs, plan and the sweep lists. A bad value is
 * CS_ERR_PARSE at its file:line:col. node[i] is the value node of keys[i] (-1 when absent). */
static enum cs_status check_values(const struct cs_yaml *y, const int *node, char val[][512],
                                   struct cs_error *err) {
  if (node[0] < 0 || strcmp(val[0], "1") != 0)
    return cs_yaml_error(y, node[0] < 0 ? cs_yaml_root(y) : node[0], err, CS_ERR_PARSE,
                         "version: expected 1, got \"%s\"", val[0]);
  static const struct {
    int key;
    long lo, hi;
  } ints[] = {{6, 1, 1 << 20}, {7, 1, 1 << 30}, {10, 1, 1 << 20}, {11, 1, 1000000}};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    int k = ints[i].key;
    if (node[k] < 0) continue;
    long *v = NULL;
    size_t n = 0;
    struct cs_error e2 = {0};
    enum cs_status st = cs_units_parse_ints(val[k], ints[i].lo, ints[i].hi, &v, &n, &e2);
    free(v);
    if (st == CS_ERR_NOMEM) return cs_error_set(err, st, "%s", e2.msg);
    if (st == CS_OK && k < 10 && n != 1)
      st = cs_error_set(&e2, CS_ERR_PARSE, "expected one integer, got \"%s\"", val[k]);
    if (st != CS_OK) return cs_yaml_error(y, node[k], err, CS_ERR_PARSE, "%s: %s", keys[k], e2.msg);
  }
  if (node[9] >= 0) {
    struct cs_plan p;
    struct cs_error e2 = {0};
    enum cs_status st = cs_plan_parse(val[9], &p, &e2);
    if (st == CS_ERR_NOMEM) return cs_error_set(err, st, "%s", e2.msg);
    if (st != CS_OK) return cs_yaml_error(y, node[9], err, CS_ERR_PARSE, "plan: %s", e2.msg);
  }
  return CS_OK;
}

/* Runs verb fn with the NULL-terminated argv, stdout redirected to path. */
static int run_to(int (*fn)(int, char **), char **argv, const char *path) {
  int argc = 0;
  while (argv[argc])
    argc++;
  fflush(stdout);
  FILE *keep = stdout, *f = fopen(path, "w");
  if (!f) return 1;
  stdout = f;
  int rc = fn(argc, argv);
  fflush(f);
  stdout = keep;
  fclose(f);
  return rc;
}

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

int cs_cmd_report(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int help;
  if (cli_parse(&verb, argc, argv, &a, &help, &err) != CS_OK) return cli_fail("report", &err);
  if (help) {
    cli_usage(stdout, &verb);
    return 0;
  }
  if (a.npos != 1) {
    cs_error_set(&err, CS_ERR_USAGE, "expected one scenario file (see commscale report --help)");
    return cli_fail("report", &err);
  }
  const char *dir = cli_get(&verb, &a, "output");
  if (!dir) dir = "report";
  struct cs_yaml *y = NULL;
  if (cs_yaml_load(a.pos[0], &y, &err) != CS_OK) return cli_fail("report", &err);
  char val[NKEYS][512], prices[1024] = "";
  memset(val, 0, sizeof val);
  int root = cs_yaml_root(y), node[NKEYS];
  for (int i = 0; i < NKEYS; i++)
    node[i] = -1;
  enum cs_status st = CS_OK;
  if (cs_yaml_kind(y, root) != CS_YAML_MAP)
    st = cs_yaml_error(y, root, &err, CS_ERR_PARSE,
                       "expected a mapping of scenario keys "
                       "(version, workload, gpu, topology, nodes, gbs, target, plan, ...)");
  for (size_t k = 0; st == CS_OK && k < cs_yaml_len(y, root); k++) {
    const char *key = cs_yaml_scalar(y, cs_yaml_key(y, root, k));
    const char *v = cs_yaml_scalar(y, cs_yaml_value(y, root, k));
    int found = 0;
    if (key && v && strcmp(key, "prices") == 0) {
      const char *slash = strrchr(a.pos[0], '/');
      if (v[0] != '/' && slash)
        snprintf(prices, sizeof prices, "%.*s/%s", (int)(slash - a.pos[0]), a.pos[0], v);
      else
        snprintf(prices, sizeof prices, "%s", v);
      found = 1;
    }
    for (int i = 0; i < NKEYS && key && v && !found; i++)
      if (strcmp(key, keys[i]) == 0)
        snprintf(val[i], sizeof val[i], "%s", v), node[i] = cs_yaml_value(y, root, k), found = 1;
    if (!found)
      st = cs_yaml_error(y, cs_yaml_key(y, root, k), &err, CS_ERR_PARSE,
                         "unknown key or non-scalar value \"%s\"", key ? key : "");
  }
  for (int i = 2; st == CS_OK && i < 9; i++)
    if (i != 5 && !val[i][0])
      st = cs_yaml_error(y, root, &err, CS_ERR_PARSE, "the scenario needs \"%s\"", keys[i]);
  if (st == CS_OK) st = check_values(y, node, val, &err);
  cs_yaml_free(y);
  if (st != CS_OK) return cli_fail("report", &err);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    cs_error_set(&err, CS_ERR_IO, "%s: cannot create: %s", dir, strerror(errno));
    return cli_fail("report", &err);
  }
  char path[4096], md_path[4096], sweep_prefix[4096], size_prefix[4096];
  snprintf(md_path, sizeof md_path, "%s/report.md", dir);
  snprintf(sweep_prefix, sizeof sweep_prefix, "%s/sweep", dir);
  snprintf(size_prefix, sizeof size_prefix, "%s/sizing", dir);
  FILE *md = fopen(md_path, "w");
  if (!md) {
    cs_error_set(&err, CS_ERR_IO, "%s: cannot create: %s", md_path, strerror(errno));
    return cli_fail("report", &err);
  }
  const char *W = val[2], *G = val[3], *T = val[4], *N = val[6], *B = val[7];
  fprintf(md, "# %s\n\n", val[1][0] ? val[1] : "commscale report");
  fprintf(md,
          "Workload `%s`, GPU `%s`, topology `%s`, %s nodes, global batch %s, target `%s`. "
          "Produced by commscale %s from `%s`; every table below is the output of the command "
          "printed above it.\n\n",
          W, G, T, N, B, val[8], CS_VERSION, a.pos[0]);
  /* 1. calibration */
  fputs("## 1. Calibration\n\n", md);
  if (val[5][0]) {
    struct cs_cal cal;
    cs_cal_init(&cal);
    if (cs_calfile_read(val[5], &cal, &err) == CS_OK)
      fprintf(md,
              "`%s`: %d points on up to %d nodes, median error %.1f%%, p90 %.1f%%, network "
              "terms %s; GPU %s, NCCL %s.\n\n",
              val[5], cal.quality.points, cal.quality.max_nodes, 100 * cal.quality.median_rel_err,
              100 * cal.quality.p90_rel_err,
              cal.quality.net_determined ? "determined by the data"
                                         : "at their defaults (one node measured)",
              cal.prov.gpu, cal.prov.nccl);
    else
      fprintf(md, "`%s` could not be read: %s\n\n", val[5], err.msg);
    cs_cal_fini(&cal);
  } else
    fputs("No calibration given: collectives are costed with the NCCL-anchored default model and "
          "the topology's link rates. Bands are wide; run `commscale calibrate` on a few nodes and "
          "add `cal:` to the scenario.\n\n",
          md);
  int rc = 0;
  char *calopt = val[5][0] ? "--cal" : NULL;
  /* 2. prediction */
  fputs("## 2. Prediction of the scenario's plan\n\n", md);
  {
    char *av[] = {"predict", "-w",      (char *)W,
                  "--gpu",   (char *)G, "-t",
                  (char *)T, "--plan",  val[9][0] ? val[9] : "tp=8,pp=8",
                  "--nodes", (char *)N, calopt,
                  val[5],    NULL};
    snprintf(path, sizeof path, "%s/predict.txt", dir);
    cmdline(md, av);
    rc |= run_to(cs_cmd_predict, av, path);
    quote(md, path);
  }
  /* 3. search */
  fputs(
      "## 3. Plan search\n\nEvery feasible plan, ranked by step time; P marks the Pareto front of "
      "(step time, memory headroom, network bytes per step). Top 15 and the front:\n\n",
      md);
  {
    char *av[] = {"search",  "-w",      (char *)W, "--gpu", (char *)G, "-t",
                  (char *)T, "--nodes", (char *)N, "--gbs", (char *)B, "-n",
                  "15",      "--front", calopt,    val[5],  NULL};
    snprintf(path, sizeof path, "%s/search.txt", dir);
    cmdline(md, av);
    rc |= run_to(cs_cmd_search, av, path);
    quote(md, path);
  }
  /* 4. sizing */
  fputs("## 4. Network sizing\n\n", md);
  {
    char *av[] = {"size-network", "-w",     (char *)W,   "--gpu",
                  (char *)G,      "-t",     (char *)T,   "--nodes",
                  (char *)N,      "--gbs",  (char *)B,   "--target",
                  val[8],         "--plot", size_prefix, prices[0] ? "--prices" : NULL,
                  prices,         calopt,   val[5],      NULL};
    if (!prices[0]) av[15] = calopt, av[16] = val[5], av[17] = NULL;
    snprintf(path, sizeof path, "%s/sizing.txt", dir);
    cmdline(md, av);
    rc |= run_to(cs_cmd_size_network, av, path);
    quote(md, path);
    fputs("![throughput vs network per GPU, per family](sizing.svg)\n\n", md);
  }
  fputs("### Why the families need different networks: bytes per step\n\n"
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
        "hide. This is DeepSpeed's advice in numbers (VALIDATION.md section 7).\n\n",
        md);
  /* 5. sweep */
  fputs("## 5. Sweep: nodes x network per GPU\n\n", md);
  {
    char *av[] = {"sweep",
                  "-w",
                  (char *)W,
                  "--gpu",
                  (char *)G,
                  "-t",
                  (char *)T,
                  "--nodes",
                  val[10][0] ? val[10] : (char *)N,
                  "--gbs",
                  (char *)B,
                  "--net-gbps",
                  val[11][0] ? val[11] : "50,100,200,400,800",
                  "--plot",
                  sweep_prefix,
                  calopt,
                  val[5],
                  NULL};
    snprintf(path, sizeof path, "%s/sweep.txt", dir);
    cmdline(md, av);
    rc |= run_to(cs_cmd_sweep, av, path);
    quote(md, path);
    fputs("![throughput vs network per GPU at the largest node count](sweep-net.svg)\n\n"
          "![speedup vs nodes](sweep-nodes.svg)\n\n",
          md);
  }
  fputs(
      "## Caveats\n\nPredictions, not measurements: the step simulator's model (docs/simulator.md) "
      "with the calibration above. Network scaling efficiency compares a family with itself on an "
      "unlimited network; it does not include pipeline bubbles or TP overheads, which the "
      "absolute throughput columns do.\n",
      md);
  fclose(md);
  if (rc) {
    cs_error_set(&err, CS_ERR_RANGE,
                 "a part of the report failed (see the messages above); %s is "
                 "written with what succeeded",
                 md_path);
    return cli_fail("report", &err);
  }
  fprintf(stderr, "commscale report: wrote %s\n", md_path);
  return 0;
}
