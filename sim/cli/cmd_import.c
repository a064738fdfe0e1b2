/* cmd_import.c — `commscale import`: convert nccl-tests logs (text or -J JSON) into one
 * measurements CSV.
 *
 * Every log is read completely before anything is written, and the CSV is written through a
 * temporary file renamed into place, so a bad log leaves the output untouched. With --append the
 * existing CSV is read first and written back with the new rows after its own, under its own
 * provenance lines (extended with the new logs' GPUs, NCCL versions and hosts). Per log, one
 * summary line on stderr says what was found: rows, tests (distinct collective, algorithm,
 * protocol, configuration, shape and launch), shapes (ranks x nodes x GPUs per node) and
 * configurations (NCCL_* tags, the default counting as one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "meas.h"
#include "nccllog.h"
#include "nccltests.h"
#include "opts.h"

static const struct cli_opt opts[] = {
    {"output", 'o', "FILE", "measurements CSV to write (default and \"-\": stdout)"},
    {"append", 0, NULL, "keep the rows and provenance of an existing FILE and add the new rows"},
    {"quiet", 'q', NULL, "print no per-log summary"},
    {"nodes", 'N', "N",
     "the logs' ranks ran on N nodes (for a log that cannot tell, e.g. NCCL_HOSTID on one host)"},
    {"gpus-per-node", 'g', "G", "the logs' ranks ran G per node"},
    {"coll", 0, "NAME",
     "the collective of logs that name none (old nccl-tests output without a ### line)"},
};

static const struct cli_verb verb = {
    "import",
    "LOG... [-o measurements.csv] [--append]",
    "Convert nccl-tests logs (text output or -J JSON) into a measurements CSV.",
    "A log may hold several tests, mpirun --tag-output prefixes and NCCL_DEBUG=INFO lines, even\n"
    "inside data rows. Ranks, nodes and GPUs per node come from its \"#  Rank N ... on HOST\"\n"
    "lines; NCCL_ALGO/NCCL_PROTO on a \"### command\" line or in the environment set the\n"
    "algorithm and protocol; other NCCL_* settings become the row's configuration tag.\n"
    "Results whose #wrong count is above 0 are left out, with a warning.\n"
    "The CSV schema and what is accepted: docs/measurements.md.",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

/* Number of distinct values among rows [from, to) under the equality same(). */
static size_t count_distinct(const struct cs_meas_set *set, size_t from, size_t to,
                             int (*same)(const struct cs_meas_row *, const struct cs_meas_row *)) {
  size_t n = 0;
  for (size_t i = from; i < to; i++) {
    int seen = 0;
    for (size_t j = from; j < i && !seen; j++)
      seen = same(&set->rows[i], &set->rows[j]);
    n += !seen;
  }
  return n;
}

static int same_shape(const struct cs_meas_row *a, const struct cs_meas_row *b) {
  return a->ranks == b->ranks && a->nodes == b->nodes && a->gpus_per_node == b->gpus_per_node;
}

static int same_config(const struct cs_meas_row *a, const struct cs_meas_row *b) {
  return strcmp(a->config, b->config) == 0;
}

static int same_test(const struct cs_meas_row *a, const struct cs_meas_row *b) {
  return a->coll == b->coll && a->algo == b->algo && a->proto == b->proto &&
         a->launch == b->launch && same_shape(a, b) && same_config(a, b);
}

/* Whether rows [from, n) hold a multi-rank shape on one node launched one process per GPU: the
 * case where the log cannot tell whether NCCL_HOSTID split the processes into nodes. */
static int one_host_processes(const struct cs_meas_set *set, size_t from) {
  for (size_t i = from; i < set->n; i++)
    if (set->rows[i].ranks > 1 && set->rows[i].nodes == 1 &&
        set->rows[i].launch == CS_LAUNCH_PROCESS)
      return 1;
  return 0;
}

int cs_cmd_import(int argc, char **argv) {
  struct cs_error err = {0};
  struct cli_args args;
  int begun = cli_begin(&verb, argc, argv, &args, 1, CLI_MAX_POS,
                        "expected at least one nccl-tests log", NULL);
  if (begun >= 0) return begun;
  const char *out = cli_get(&verb, &args, "output");
  int append = cli_get(&verb, &args, "append") != NULL;
  int quiet = cli_get(&verb, &args, "quiet") != NULL;
  if (out == NULL) out = "-";
  if (append && strcmp(out, "-") == 0) {
    cs_error_set(&err, CS_ERR_USAGE, "--append needs -o FILE");
    return cli_fail("import", &err);
  }

  int shape[2] = {0, 0};
  char unsure[CLI_MAX_POS] = {0}; /* logs whose node count could not be told */
  static const char *const shape_opts[2] = {"nodes", "gpus-per-node"};
  for (int k = 0; k < 2; k++) {
    const char *v = cli_get(&verb, &args, shape_opts[k]);
    char *e;
    long x = v ? strtol(v, &e, 10) : 0;
    if (v && (*v == '\0' || *e != '\0' || x < 1 || x > 1 << 20)) {
      cs_error_set(&err, CS_ERR_USAGE, "--%s expects a whole number from 1, got \"%s\"",
                   shape_opts[k], v);
      return cli_fail("import", &err);
    }
    shape[k] = (int)x;
  }
  struct cs_nccltests_hint hint = {cli_get(&verb, &args, "coll")};
  enum cs_coll hinted;
  if (hint.coll && cs_coll_parse(hint.coll, &hinted) != 0) {
    cs_error_set(&err, CS_ERR_USAGE, "--coll expects a collective (%s), got \"%s\"",
                 cs_nccllog_known_colls, hint.coll);
    return cli_fail("import", &err);
  }
  struct cs_meas_set set;
  cs_meas_set_init(&set);
  enum cs_status st = CS_OK;
  if (append && access(out, F_OK) == 0) st = cs_meas_read_file(out, &set, &err);
  args.npos = cli_unique_inputs("import", args.pos, args.npos);
  for (int i = 0; st == CS_OK && i < args.npos; i++) {
    size_t from = set.n;
    struct cs_nccltests_left left;
    st = cs_nccltests_import_hinted(args.pos[i], &set, &hint, &left, &err);
    if (st == CS_OK && left.wrong > 0 && !quiet)
      fprintf(stderr,
              "commscale import: %s: warning: %ld result%s left out: nccl-tests counted wrong "
              "elements (first at %s); the run returned wrong data there\n",
              args.pos[i], left.wrong, left.wrong == 1 ? "" : "s", left.first);
    if (st == CS_OK && (shape[0] > 0 || shape[1] > 0))
      st = cs_meas_set_shape(&set, from, shape[0], shape[1], args.pos[i], &err);
    else if (st == CS_OK && one_host_processes(&set, from))
      unsure[i] = 1;
    if (st == CS_OK && !quiet) {
      size_t rows = set.n - from, tests = count_distinct(&set, from, set.n, same_test),
             shapes = count_distinct(&set, from, set.n, same_shape),
             configs = count_distinct(&set, from, set.n, same_config);
      fprintf(stderr, "commscale import: %s: %zu row%s, %zu test%s, %zu shape%s, %zu config%s\n",
              args.pos[i], rows, rows == 1 ? "" : "s", tests, tests == 1 ? "" : "s", shapes,
              shapes == 1 ? "" : "s", configs, configs == 1 ? "" : "s");
    }
  }
  if (st == CS_OK) st = cs_meas_write_file(out, &set, &err);
  for (int i = 0; st == CS_OK && !quiet && i < args.npos; i++)
    if (unsure[i])
      fprintf(stderr,
              "commscale import: %s: warning: every rank ran on one host in its own process; "
              "counted as 1 node (if NCCL_HOSTID made them separate nodes and the log does not "
              "say so, give --nodes)\n",
              args.pos[i]);
  cs_meas_set_fini(&set);
  if (st != CS_OK) return cli_fail("import", &err);
  return 0;
}
