/* cmd_report.c — `commscale report SCENARIO.yaml -o DIR`: calibration summary, prediction, search,
 * sweep and sizing of a scenario as DIR/report.md with its SVG figures beside it. Each part is the
 * verb a user would run by hand, run in-process with its table written to a file, so every figure
 * in the report can be reproduced from the command printed above it.
 *
 * The scenario is read and checked by sim/report.c before any work; the set of files is built in
 * a temporary directory (model/wfile.h, cs_wdir) and renamed into place only when every part and
 * every write succeeded, so an interrupted or failed report leaves DIR as it was and two runs
 * into one DIR never mix.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "opts.h"
#include "report.h"
#include "setup.h"
#include "wfile.h"

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
    "DIR/report.md that quotes each table, shows each figure and gives the command behind it.\n"
    "DIR is replaced only when every part succeeded. Scenario keys (YAML, version: 1):",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    cs_report_scenario_help};

/* Runs the verb argv[0] with "-o out_path" appended. */
static int run_verb(void *ctx, char **argv, const char *out_path) {
  (void)ctx;
  static const struct {
    const char *name;
    int (*fn)(int, char **);
  } verbs[] = {{"predict", cs_cmd_predict},
               {"search", cs_cmd_search},
               {"size-network", cs_cmd_size_network},
               {"sweep", cs_cmd_sweep}};
  char *av[64];
  int argc = 0;
  while (argv[argc] && argc < 60) {
    av[argc] = argv[argc];
    argc++;
  }
  av[argc++] = "-o";
  av[argc++] = (char *)out_path;
  av[argc] = NULL;
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    if (strcmp(argv[0], verbs[i].name) == 0) return verbs[i].fn(argc, av);
  return 1;
}

/* Writes the report into d's temporary directory; *failed counts the parts that failed. */
static enum cs_status write_report(const struct cs_report_scenario *s, struct cs_wdir *d,
                                   int *failed, struct cs_error *err) {
  char md_path[4096];
  snprintf(md_path, sizeof md_path, "%s/report.md", cs_wdir_tmp(d));
  struct cs_wfile *w = NULL;
  enum cs_status st = cs_wfile_open(md_path, &w, err);
  if (st == CS_OK)
    st = cs_report_write(s, cs_wdir_path(d), cs_wdir_tmp(d), cs_wfile_fp(w), run_verb, NULL, failed,
                         err);
  if (st == CS_OK) return cs_wfile_commit(w, err);
  cs_wfile_abort(w);
  return st;
}

int cs_cmd_report(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args a;
  int begun = cli_begin(&verb, argc, argv, &a, 1, 1, "expected one scenario file", NULL);
  if (begun >= 0) return begun;
  const char *dir = cli_get(&verb, &a, "output");
  if (!dir) dir = "report";
  static struct cs_report_scenario s; /* 10 KiB */
  char exe[4096];
  cli_exe_path(exe, sizeof exe);
  if (cs_report_load(a.pos[0], exe, &s, &err) != CS_OK) return cli_fail("report", &err);
  struct cs_wdir *d = NULL;
  int failed = 0;
  enum cs_status st = cs_wdir_open(dir, &d, &err);
  if (st == CS_OK) st = write_report(&s, d, &failed, &err);
  if (st == CS_OK && failed)
    st = cs_error_set(&err, CS_ERR_RANGE,
                      "%d part%s of the report failed (see the messages above); %s is left as it "
                      "was",
                      failed, failed == 1 ? "" : "s", dir);
  if (st != CS_OK) {
    cs_wdir_abort(d);
    return cli_fail("report", &err);
  }
  if ((st = cs_wdir_commit(d, &err)) != CS_OK) return cli_fail("report", &err);
  fprintf(stderr, "commscale report: wrote %s/report.md\n", dir);
  return 0;
}
