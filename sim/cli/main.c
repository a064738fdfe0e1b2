/* main.c — the commscale executable: dispatches to one verb per subcommand.
 *
 * Data goes to stdout, diagnostics to stderr; exit status 0 success, 1 failure, 2 usage.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cmds.h"
#include "opts.h"
#include "wfile.h"

struct verb {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
};

static const struct verb verbs[] = {
    {"calibrate", "measure collectives on 1..N nodes (commscale-run), then fit", cs_cmd_calibrate},
    {"import", "convert nccl-tests logs (text or JSON) into a measurements CSV", cs_cmd_import},
    {"fit", "fit the collective cost model to measurements; write calibration.yaml", cs_cmd_fit},
    {"coll", "predict collective times at any size, GPU count and node count", cs_cmd_coll},
    {"plot", "draw measured vs fitted bus bandwidth and extrapolations with gnuplot", cs_cmd_plot},
    {"topology", "show, list, import (nvidia-smi topo -m) and map cluster topologies",
     cs_cmd_topology},
    {"predict",
     "step time, throughput, speedup and scaling efficiency of a plan at many node counts",
     cs_cmd_predict},
    {"sweep", "grid over nodes x network Gb/s x plans (or families) x batch, with plots",
     cs_cmd_sweep},
    {"search", "every feasible plan on N GPUs ranked by step time, with the Pareto front",
     cs_cmd_search},
    {"size-network", "least network Gb/s per GPU meeting a target, per plan family; the knee; cost",
     cs_cmd_size_network},
    {"report", "calibration + prediction + sweep + sizing of a scenario as Markdown with SVG plots",
     cs_cmd_report},
    {"bench", "time predictions and fits; prints each figure with its conditions", cs_cmd_bench},
    {"workload", "per-GPU parameters, FLOPs, memory and compute time of a model under a plan",
     cs_cmd_workload},
    {"validate", "every validation case predicted vs published, with the error; exit 1 on a miss",
     cs_cmd_validate},
};
#define NVERBS (sizeof verbs / sizeof verbs[0])

static void usage(FILE *f) {
  fprintf(f, "usage: commscale VERB [options] [arguments]\n\n"
             "Measure collectives, fit a cost model, and predict communication at scale.\n\n"
             "verbs:\n");
  for (size_t i = 0; i < NVERBS; i++)
    fprintf(f, "  %-12s %s\n", verbs[i].name, verbs[i].summary); /* size-network: 12 */
  fprintf(f, "\n'commscale VERB --help' describes each verb; 'commscale --man' writes the man "
             "page; 'commscale --version' prints the version.\n");
}

/* commscale(1): a fixed head and tail around every verb's option table, written by the verb's own
 * --help in man-page mode (opts.h), so the page cannot drift from the parser. */
static int man(void) {
  printf(".TH COMMSCALE 1 \"\" \"commscale %s\" \"User Commands\"\n"
         ".SH NAME\ncommscale \\- measure collectives, fit a cost model, predict training steps "
         "at scale\n"
         ".SH SYNOPSIS\n.B commscale\n.I VERB\n[\\fIoptions\\fR] [\\fIarguments\\fR]\n"
         ".SH DESCRIPTION\n"
         "commscale measures real collectives (NCCL on GPUs, MPI on CPUs) on the nodes you have, "
         "fits a collective cost model to them with its uncertainty, and simulates training steps "
         "of a model under a parallel plan on a cluster topology, from one GPU to hundreds of "
         "nodes, with tables and gnuplot plots.\n.PP\nVerbs:\n",
         CS_VERSION);
  for (size_t i = 0; i < NVERBS; i++) {
    printf(".TP\n.B %s\n", verbs[i].name);
    cli_roff(stdout, verbs[i].summary);
    putchar('\n');
  }
  printf(".SH VERBS\n");
  cli_set_man(1);
  int rc = 0;
  for (size_t i = 0; i < NVERBS && rc == 0; i++) {
    char name[32], help[] = "--help";
    snprintf(name, sizeof name, "%s", verbs[i].name);
    char *av[] = {name, help, NULL};
    fflush(stdout);
    rc = verbs[i].run(2, av);
  }
  cli_set_man(0);
  printf(".SH EXIT STATUS\n0 success; 1 failure (a file that cannot be read or written, a fit "
         "that does not converge, a validation case over its tolerance); 2 usage (a bad option "
         "or value). Errors are one line on standard error naming the file, line and column.\n"
         ".SH ENVIRONMENT\n.TP\n.B COMMSCALE_DATA_DIR\nsearched first for bundled workloads, "
         "GPUs, topologies and validation cases (\\fIKIND\\fR/\\fINAME\\fR.yaml).\n"
         ".TP\n.B CS_RUNNER\nthe commscale\\-run executable that \\fBcalibrate\\fR starts.\n"
         ".SH FILES\n.TP\n.I share/commscale\nbundled workloads, GPUs, topologies, plot "
         "templates and validation cases, beside the installed executable.\n"
         ".SH SEE ALSO\n\\fBcommscale\\-run\\fR \\-\\-help; the docs/ folder of the "
         "source tree.\n");
  return rc;
}

/* Runs the verb argv[1]; returns the exit status. */
static int dispatch(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--man") == 0) return man();
  if (strcmp(argv[1], "--version") == 0) {
    printf("commscale %s\n", CS_VERSION);
    return 0;
  }
  for (size_t i = 0; i < NVERBS; i++)
    if (strcmp(argv[1], verbs[i].name) == 0) return verbs[i].run(argc - 1, argv + 1);
  fprintf(stderr, "commscale: unknown verb \"%s\" (see commscale --help)\n", argv[1]);
  return 2;
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
#ifdef M_TRIM_THRESHOLD
  /* sweeps and searches allocate and free a simulator per plan: with glibc's default the freed
   * top of the heap went back to the system after every plan and came back on the next (a brk
   * call each way, thousands per second); keep up to 64 MiB of it */
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
  cs_wfile_install_signal_cleanup(); /* an interrupted run leaves no temporary behind */
  int rc = dispatch(argc, argv);
  /* whatever went to stdout (tables, --help, --man, lists) must have arrived: a full disk or a
   * closed pipe is a failure, not a silent truncation */
  struct cs_error err = {0};
  if (cli_close_out(stdout, &err) != CS_OK && rc == 0) {
    fprintf(stderr, "commscale: %s\n", err.msg);
    rc = 1;
  }
  return rc;
}
