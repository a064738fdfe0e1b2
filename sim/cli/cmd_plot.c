/* cmd_plot.c — `commscale plot FIGURE`: figures drawn by gnuplot from measurements and a
 * calibration. One figure so far:
 *
 *   busbw  measured bus bandwidth against message size for every measured shape (ranks, nodes,
 *          GPUs per node, algorithm/protocol, launch) of one collective and configuration, the
 *          calibrated model's line at each of those shapes (same algorithm/protocol; auto = the
 *          model's own choice), and predictions for other node counts with their ~95% band.
 *
 * This verb reads the inputs and builds the series; plots/plot.h turns them into PREFIX.dat,
 * PREFIX.gp and the images. Shapes are sorted (nodes, GPUs per node, algorithm, protocol,
 * launch) so that the same inputs always give the same files.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calfile.h"
#include "cmds.h"
#include "measread.h"
#include "opts.h"
#include "busbw.h"
#include "plot.h"
#include "units.h"

static const struct cli_opt opts[] = {
    {"cal", 'c', "FILE", "calibration.yaml from commscale fit (default: NCCL-anchored constants)"},
    {"coll", 0, "NAME",
     "collective: all_reduce (default), all_gather, reduce_scatter, broadcast, "
     "reduce, all_to_all, send_recv"},
    {"config", 0, "TAG",
     "draw the rows with this NCCL_* configuration tag (default: untagged rows)"},
    {"launch", 0, "KIND",
     "draw rows launched as 'process', 'thread' or 'all' (default: the "
     "calibration's launch, else all)"},
    {"nodes", 'N', "LIST",
     "node counts to predict, e.g. 1,4,16,64,400 (the default); 'none' for "
     "no predictions"},
    {"gpus-per-node", 'g', "G", "GPUs per node of the predictions (default 8)"},
    {"sizes", 's', "LIST", "message sizes of the predictions, e.g. 8:8G (the default)"},
    {"log-y", 0, NULL, "logarithmic bandwidth axis, to see small messages (default: linear)"},
    {"format", 0, "FMT", "svg, png or both (default both)"},
    {"output", 'o', "PREFIX", "write PREFIX.dat, PREFIX.gp and PREFIX.svg/.png (default busbw)"},
};

static const struct cli_verb verb = {
    "plot",
    "busbw [--cal calibration.yaml] MEASUREMENTS... [--coll all_reduce] [--nodes 1,4,16,64,400]\n"
    "       [-g 8] [--sizes 8:8G] [--format svg|png|both] [-o PREFIX]",
    "Draw measured vs fitted bus bandwidth, and predictions at more nodes, with gnuplot.",
    "MEASUREMENTS are commscale CSV files or nccl-tests logs; out-of-place rows are drawn.\n"
    "busbw = size x busbw factor / time, as nccl-tests defines it. PREFIX.dat (the series) and\n"
    "PREFIX.gp (which loads the template plots/busbw.gp) stay beside the images: edit them and\n"
    "run `gnuplot PREFIX.gp` in their directory to restyle. Templates are looked for in\n"
    "$COMMSCALE_PLOTS_DIR, then <prefix>/share/commscale/plots, then the source tree;\n"
    "gnuplot is $COMMSCALE_GNUPLOT, else the one found at build time, else gnuplot on PATH.",
    opts,
    (int)(sizeof opts / sizeof opts[0]),
    NULL};

/* Strips a .svg/.png/.dat/.gp suffix from prefix (in place); an image suffix also chooses the
 * format when none was given. */
static void strip_suffix(char *prefix, unsigned *formats, int format_given) {
  static const struct {
    const char *ext;
    unsigned fmt;
  } sfx[] = {{".svg", CS_PLOT_SVG}, {".png", CS_PLOT_PNG}, {".dat", 0}, {".gp", 0}};
  size_t n = strlen(prefix);
  for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
    size_t k = strlen(sfx[i].ext);
    if (n > k && strcmp(prefix + n - k, sfx[i].ext) == 0 && prefix[n - k - 1] != '/') {
      prefix[n - k] = '\0';
      if (sfx[i].fmt && !format_given) *formats = sfx[i].fmt;
      return;
    }
  }
}

static int usage_fail(struct cs_error *err) {
  if (err->status != CS_ERR_NOMEM) err->status = CS_ERR_USAGE; /* out of memory is no usage error */
  return cli_fail("plot", err);
}

static void note(void *ctx, const char *msg) {
  (void)ctx;
  fprintf(stderr, "commscale plot: note: %s\n", msg);
}

/* The figure's options: collective, configuration, launch, image formats, -o prefix, and the
 * predictions' node counts, GPUs per node and sizes (malloc'd into pa). Returns an exit status,
 * or -1 to go on. */
static int parse_figure(const struct cli_args *a, struct cs_busbw_spec *pa, unsigned *formats,
                        char *prefix, size_t len, struct cs_error *err) {
  long *nodes = NULL;
  double *sizes = NULL;
  const char *s;
  if ((s = cli_get(&verb, a, "coll")) && cs_coll_parse(s, &pa->coll) != 0) {
    cs_error_set(err, CS_ERR_USAGE, "--coll: unknown collective \"%s\"", s);
    return cli_fail("plot", err);
  }
  if ((s = cli_get(&verb, a, "config"))) pa->config = s;
  const char *launch = cli_get(&verb, a, "launch");
  if (launch && strcmp(launch, "all") != 0) {
    enum cs_launch l;
    if (cs_meas_launch_parse(launch, &l) != 0) {
      cs_error_set(err, CS_ERR_USAGE, "--launch expects process, thread or all, got \"%s\"",
                   launch);
      return cli_fail("plot", err);
    }
    pa->launch = (int)l;
  }
  *formats = CS_PLOT_SVG | CS_PLOT_PNG;
  const char *fmt = cli_get(&verb, a, "format");
  if (fmt) {
    if (strcmp(fmt, "svg") == 0)
      *formats = CS_PLOT_SVG;
    else if (strcmp(fmt, "png") == 0)
      *formats = CS_PLOT_PNG;
    else if (strcmp(fmt, "both") == 0)
      *formats = CS_PLOT_SVG | CS_PLOT_PNG;
    else {
      cs_error_set(err, CS_ERR_USAGE, "--format expects svg, png or both, got \"%s\"", fmt);
      return cli_fail("plot", err);
    }
  }
  s = cli_get(&verb, a, "output");
  if ((size_t)snprintf(prefix, len, "%s", s ? s : "busbw") >= len) {
    cs_error_set(err, CS_ERR_USAGE, "-o: path too long");
    return cli_fail("plot", err);
  }
  strip_suffix(prefix, formats, fmt != NULL);
  s = cli_get(&verb, a, "gpus-per-node");
  if (s) {
    long *g = NULL;
    size_t ng = 0;
    if (cs_units_parse_ints(s, 1, 1024, &g, &ng, err) != CS_OK) {
      cs_error_prefix(err, "--gpus-per-node");
      return usage_fail(err);
    }
    pa->gpn = (int)g[0];
    free(g);
    if (ng != 1) {
      cs_error_set(err, CS_ERR_USAGE, "--gpus-per-node takes one number");
      return cli_fail("plot", err);
    }
  }
  s = cli_get(&verb, a, "nodes");
  if (s == NULL || strcmp(s, "none") != 0) {
    if (cs_units_parse_ints(s ? s : "1,4,16,64,400", 1, 1 << 20, &nodes, &pa->nn, err) != CS_OK) {
      cs_error_prefix(err, "--nodes");
      return usage_fail(err);
    }
  }
  s = cli_get(&verb, a, "sizes");
  if (cs_units_parse_sizes(s ? s : "8:8G", &sizes, &pa->ns, err) != CS_OK) {
    free(nodes);
    cs_error_prefix(err, "--sizes");
    return usage_fail(err);
  }
  pa->nodes = nodes, pa->sizes = sizes;
  pa->ylog = cli_get(&verb, a, "log-y") != NULL;
  return -1;
}

/* The calibration (its launch chooses the rows when --launch is not given) and the measurements. */
static enum cs_status load_inputs(const struct cli_args *a, struct cs_busbw_spec *pa,
                                  struct cs_cal *cal, struct cs_meas_set *set,
                                  struct cs_error *err) {
  enum cs_status st = CS_OK;
  const char *calpath = cli_get(&verb, a, "cal");
  if (calpath)
    st = cs_calfile_read(calpath, cal, err);
  else
    fprintf(
        stderr,
        "commscale plot: no --cal given: the model lines use NCCL-anchored default constants\n");
  if (st == CS_OK && cli_get(&verb, a, "launch") == NULL && cal->prov.launch[0]) {
    enum cs_launch l;
    if (cs_meas_launch_parse(cal->prov.launch, &l) == 0) pa->launch = (int)l;
  }
  if (st == CS_OK && calpath && strcmp(cal->prov.config, pa->config) != 0)
    fprintf(stderr,
            "commscale plot: note: the calibration was fitted to configuration \"%s\", the rows "
            "drawn have \"%s\"\n",
            cal->prov.config, pa->config);
  for (int i = 0; st == CS_OK && i < a->npos; i++)
    st = cs_meas_read_any(a->pos[i], set, err);
  return st;
}

int cs_cmd_plot(int argc, char **argv) {
  struct cs_error err = {0};
  if (argc < 2) {
    cs_error_set(&err, CS_ERR_USAGE, "expects a figure: busbw (see commscale plot --help)");
    return cli_fail("plot", &err);
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    cli_usage(stdout, &verb);
    return 0;
  }
  if (argv[1][0] == '-') {
    cs_error_set(&err, CS_ERR_USAGE,
                 "the figure comes first: commscale plot busbw [options] MEASUREMENTS...");
    return cli_fail("plot", &err);
  }
  if (strcmp(argv[1], "busbw") != 0) {
    cs_error_set(&err, CS_ERR_USAGE, "unknown figure \"%s\" (known: busbw)", argv[1]);
    return cli_fail("plot", &err);
  }
  struct cli_args a;
  int begun = cli_begin(&verb, argc - 1, argv + 1, &a, 1, CLI_MAX_POS,
                        "no measurements given (commscale CSV or nccl-tests logs)", NULL);
  if (begun >= 0) return begun;

  struct cs_busbw_spec pa = {CS_COLL_ALL_REDUCE, "", -1, NULL, 0, 8, NULL, 0, 0, note, NULL};
  unsigned formats = CS_PLOT_SVG | CS_PLOT_PNG;
  char prefix[4096];
  int rc = parse_figure(&a, &pa, &formats, prefix, sizeof prefix, &err);
  if (rc >= 0) return rc;
  struct cs_cal cal;
  cs_cal_init(&cal);
  struct cs_meas_set set;
  cs_meas_set_init(&set);
  enum cs_status st = load_inputs(&a, &pa, &cal, &set, &err);
  struct cs_busbw_counts cnt = {0};
  /* COMMSCALE_GNUPLOT picks another gnuplot than the build's, as COMMSCALE_PLOTS_DIR does
     for the templates (plot.h reads that one) */
  struct cs_plot_opts o = {prefix, formats, NULL, getenv("COMMSCALE_GNUPLOT")};
  if (st == CS_OK) st = cs_busbw_figure(&set, &cal, &pa, &o, &cnt, &err);
  if (st == CS_OK)
    fprintf(stderr,
            "commscale plot: %zu measured shapes, %zu predictions: wrote %s%s%s%s%s (data %s.dat, "
            "script %s.gp)\n",
            cnt.shapes, pa.nn, formats & CS_PLOT_SVG ? prefix : "",
            formats & CS_PLOT_SVG ? ".svg" : "", formats == (CS_PLOT_SVG | CS_PLOT_PNG) ? " " : "",
            formats & CS_PLOT_PNG ? prefix : "", formats & CS_PLOT_PNG ? ".png" : "", prefix,
            prefix);
  cs_meas_set_fini(&set);
  cs_cal_fini(&cal);
  free((void *)pa.nodes);
  free((void *)pa.sizes);
  return st == CS_OK ? 0 : cli_fail("plot", &err);
}
