/* report.h — `commscale report`'s library side: the scenario file (one schema table, every value
 * checked at load, before any work) and the Markdown report around the parts it quotes.
 *
 * A scenario (version: 1) names a workload, GPU, topology, optional calibration, node count,
 * global batch, target, the plan to predict, the sweep lists and an optional price file; relative
 * paths of prices are relative to the scenario file. report.c's fields table is the schema
 * (cs_report_scenario_help prints it; docs/decisions.md describes it).
 *
 * The report has four parts, each the output of a verb a user can run by hand: predict, search,
 * size-network (with its figure) and sweep (two figures). cs_report_write writes report.md to a
 * FILE * and has each part run by the caller's runner, so that the library never touches stdout
 * and the caller decides where the files go (the verb builds them in a temporary directory that
 * is renamed into place only when every part succeeded).
 */
#ifndef CS_SIM_REPORT_H
#define CS_SIM_REPORT_H

#include <stdio.h>

#include "status.h"

struct cs_report_scenario {
  char path[4096]; /* the scenario file */
  char version[16], title[512], workload[512], gpu[512], topology[512], cal[512], nodes[512],
      gbs[512], target[512], plan[512], sweep_nodes[512], sweep_net_gbps[512], prices[512];
  char prices_path[1024]; /* prices resolved against the scenario's folder ("" = none) */
  char cal_line[1024];    /* the calibration's quality, one sentence ("" = no calibration) */
};

/* Reads and checks the scenario at path. exe is the running executable (bundled data). Every bad
 * value is CS_ERR_PARSE at its path:line:col; a calibration, workload, GPU or topology that does
 * not load is its loader's error, once. */
enum cs_status cs_report_load(const char *path, const char *exe, struct cs_report_scenario *s,
                              struct cs_error *err);

/* Writes the scenario keys, one line each (for --help and the man page). */
void cs_report_scenario_help(FILE *out);

/* Runs one part: argv (NULL-terminated, argv[0] the verb) with its table written to out_path.
 * Returns the verb's exit status (0 ok). */
typedef int (*cs_report_run_fn)(void *ctx, char **argv, const char *out_path);

/* Writes report.md for s to md. Each part runs through run with its files (table, figures) under
 * dir_tmp, while the commands printed in the report name dir, where they will be. *failed is set
 * to the number of parts that failed. The caller checks md's write errors. */
enum cs_status cs_report_write(const struct cs_report_scenario *s, const char *dir,
                               const char *dir_tmp, FILE *md, cs_report_run_fn run, void *ctx,
                               int *failed, struct cs_error *err);

#endif
