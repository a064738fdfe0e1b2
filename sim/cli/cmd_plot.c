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

/* Orders rows by shape (the series they belong to), then by size and time. */
static int row_cmp(const void *pa, const void *pb) {
  const struct cs_meas_row *a = pa, *b = pb;
  int d;
  if ((d = (a->nodes > b->nodes) - (a->nodes < b->nodes))) return d;
  if ((d = (a->gpus_per_node > b->gpus_per_node) - (a->gpus_per_node < b->gpus_per_node))) return d;
  if ((d = (a->ranks > b->ranks) - (a->ranks < b->ranks))) return d;
  if ((d = ((int)a->algo > (int)b->algo) - ((int)a->algo < (int)b->algo))) return d;
  if ((d = ((int)a->proto > (int)b->proto) - ((int)a->proto < (int)b->proto))) return d;
  if ((d = ((int)a->launch > (int)b->launch) - ((int)a->launch < (int)b->launch))) return d;
  if ((d = (a->bytes > b->bytes) - (a->bytes < b->bytes))) return d;
  return (a->time_us > b->time_us) - (a->time_us < b->time_us);
}

static int same_shape(const struct cs_meas_row *a, const struct cs_meas_row *b) {
  return a->nodes == b->nodes && a->gpus_per_node == b->gpus_per_node && a->ranks == b->ranks &&
         a->algo == b->algo && a->proto == b->proto && a->launch == b->launch;
}

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

/* The configurations present among the rows of collective c, for the "no rows match" message. */
static void list_configs(const struct cs_meas_set *set, enum cs_coll c, char *buf, size_t len) {
  buf[0] = '\0';
  int shown = 0;
  for (size_t i = 0; i < set->n && shown < 6; i++) {
    if (set->rows[i].coll != c) continue;
    int seen = 0;
    for (size_t j = 0; j < i && !seen; j++)
      seen = set->rows[j].coll == c && strcmp(set->rows[j].config, set->rows[i].config) == 0;
    if (seen) continue;
    size_t k = strlen(buf);
    snprintf(buf + k, len - k, "%s\"%s\"", shown ? ", " : "", set->rows[i].config);
    shown++;
  }
}

struct plot_args {
  enum cs_coll coll;
  const char *config;
  int launch; /* enum cs_launch, or -1 for all */
  long *nodes;
  size_t nn;
  int gpn;
  double *sizes;
  size_t ns;
};

/* Adds the measured series and the model's line for each shape found in rows[0..n) (sorted). */
static enum cs_status add_measured(struct cs_plot *p, const struct cs_cal *cal,
                                   const struct cs_meas_row *rows, size_t n, int show_launch,
                                   size_t *shapes, struct cs_error *err) {
  double *b = malloc((n ? n : 1) * sizeof *b), *t = malloc((n ? n : 1) * sizeof *t);
  double *fb = malloc((n ? n : 1) * sizeof *fb), *ft = malloc((n ? n : 1) * sizeof *ft);
  enum cs_status st = CS_OK;
  if (!b || !t || !fb || !ft) st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  int group = 0;
  *shapes = 0;
  for (size_t i = 0; st == CS_OK && i < n;) {
    size_t j = i, m = 0, fm = 0;
    for (; j < n && same_shape(&rows[i], &rows[j]); j++) {
      b[m] = rows[j].bytes;
      t[m++] = rows[j].time_us * 1e-6;
    }
    const struct cs_meas_row *r = &rows[i];
    char shape[96], title[CS_PLOT_TITLE_MAX];
    snprintf(shape, sizeof shape, "%dx%d %s/%s%s%s", r->nodes, r->gpus_per_node,
             cs_algo_name(r->algo), cs_proto_name(r->proto), show_launch ? " " : "",
             show_launch ? cs_meas_launch_name(r->launch) : "");
    snprintf(title, sizeof title, "measured %s", shape);
    struct cs_error e2 = {0};
    enum cs_status s2 = cs_plot_add_times(p, CS_PLOT_MEASURED, title, group, rows[i].coll, r->ranks,
                                          m, b, t, NULL, NULL, &e2);
    if (s2 == CS_ERR_RANGE) {
      fprintf(stderr, "commscale plot: note: %s left out: %s\n", shape, e2.msg);
      i = j;
      continue;
    }
    if (s2 != CS_OK) {
      *err = e2;
      st = s2;
      break;
    }
    (*shapes)++;
    /* the model at the same shape and sizes */
    struct cs_coll_query q = {r->coll, r->algo, r->proto, r->ranks, r->nodes, r->gpus_per_node, 0};
    for (size_t k = 0; k < m && s2 == CS_OK; k++) {
      if (k > 0 && b[k] == b[k - 1]) continue;
      struct cs_coll_pred pr;
      double lo, hi;
      q.bytes = b[k];
      s2 = cs_cal_predict(cal, &q, &pr, &lo, &hi, &e2);
      fb[fm] = b[k];
      ft[fm++] = pr.time;
    }
    snprintf(title, sizeof title, "model %s", shape);
    if (s2 == CS_OK)
      s2 = cs_plot_add_times(p, CS_PLOT_FITTED, title, group, r->coll, r->ranks, fm, fb, ft, NULL,
                             NULL, &e2);
    if (s2 == CS_ERR_NOMEM) {
      *err = e2;
      st = s2;
      break;
    }
    if (s2 != CS_OK)
      fprintf(stderr, "commscale plot: note: no model line for %s: %s\n", shape, e2.msg);
    group++;
    i = j;
  }
  free(b);
  free(t);
  free(fb);
  free(ft);
  return st;
}

/* Adds one predicted series with its band per node count. */
static enum cs_status add_predicted(struct cs_plot *p, const struct cs_cal *cal,
                                    const struct plot_args *pa, struct cs_error *err) {
  double *t = malloc(pa->ns * sizeof *t), *lo = malloc(pa->ns * sizeof *lo),
         *hi = malloc(pa->ns * sizeof *hi);
  enum cs_status st = CS_OK;
  if (!t || !lo || !hi) st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; st == CS_OK && i < pa->nn; i++) {
    int nodes = (int)pa->nodes[i];
    struct cs_coll_query q = {
        pa->coll, CS_ALGO_AUTO, CS_PROTO_AUTO, nodes * pa->gpn, nodes, pa->gpn, 0};
    for (size_t k = 0; st == CS_OK && k < pa->ns; k++) {
      struct cs_coll_pred pr;
      q.bytes = pa->sizes[k];
      st = cs_cal_predict(cal, &q, &pr, &lo[k], &hi[k], err);
      t[k] = pr.time;
    }
    if (st != CS_OK) break;
    char title[CS_PLOT_TITLE_MAX];
    snprintf(title, sizeof title, "predicted %dx%d (%d ranks)", nodes, pa->gpn, q.ranks);
    struct cs_error e2 = {0};
    enum cs_status s2 = cs_plot_add_times(p, CS_PLOT_PREDICTED, title, (int)i, pa->coll, q.ranks,
                                          pa->ns, pa->sizes, t, lo, hi, &e2);
    if (s2 == CS_ERR_RANGE)
      fprintf(stderr, "commscale plot: note: %s left out: %s\n", title, e2.msg);
    else if (s2 != CS_OK) {
      *err = e2;
      st = s2;
    }
  }
  free(t);
  free(lo);
  free(hi);
  return st;
}

static int usage_fail(struct cs_error *err) {
  if (err->status != CS_ERR_NOMEM) err->status = CS_ERR_USAGE; /* out of memory is no usage error */
  return cli_fail("plot", err);
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

  struct plot_args pa = {CS_COLL_ALL_REDUCE, "", -1, NULL, 0, 8, NULL, 0};
  const char *s;
  if ((s = cli_get(&verb, &a, "coll")) && cs_coll_parse(s, &pa.coll) != 0) {
    cs_error_set(&err, CS_ERR_USAGE, "--coll: unknown collective \"%s\"", s);
    return cli_fail("plot", &err);
  }
  if ((s = cli_get(&verb, &a, "config"))) pa.config = s;
  const char *launch = cli_get(&verb, &a, "launch");
  if (launch && strcmp(launch, "all") != 0) {
    enum cs_launch l;
    if (cs_meas_launch_parse(launch, &l) != 0) {
      cs_error_set(&err, CS_ERR_USAGE, "--launch expects process, thread or all, got \"%s\"",
                   launch);
      return cli_fail("plot", &err);
    }
    pa.launch = (int)l;
  }
  unsigned formats = CS_PLOT_SVG | CS_PLOT_PNG;
  const char *fmt = cli_get(&verb, &a, "format");
  if (fmt) {
    if (strcmp(fmt, "svg") == 0)
      formats = CS_PLOT_SVG;
    else if (strcmp(fmt, "png") == 0)
      formats = CS_PLOT_PNG;
    else if (strcmp(fmt, "both") == 0)
      formats = CS_PLOT_SVG | CS_PLOT_PNG;
    else {
      cs_error_set(&err, CS_ERR_USAGE, "--format expects svg, png or both, got \"%s\"", fmt);
      return cli_fail("plot", &err);
    }
  }
  char prefix[4096];
  s = cli_get(&verb, &a, "output");
  if ((size_t)snprintf(prefix, sizeof prefix, "%s", s ? s : "busbw") >= sizeof prefix) {
    cs_error_set(&err, CS_ERR_USAGE, "-o: path too long");
    return cli_fail("plot", &err);
  }
  strip_suffix(prefix, &formats, fmt != NULL);
  s = cli_get(&verb, &a, "gpus-per-node");
  if (s) {
    long *g = NULL;
    size_t ng = 0;
    if (cs_units_parse_ints(s, 1, 1024, &g, &ng, &err) != CS_OK) {
      cs_error_prefix(&err, "--gpus-per-node");
      return usage_fail(&err);
    }
    pa.gpn = (int)g[0];
    free(g);
    if (ng != 1) {
      cs_error_set(&err, CS_ERR_USAGE, "--gpus-per-node takes one number");
      return cli_fail("plot", &err);
    }
  }
  s = cli_get(&verb, &a, "nodes");
  if (s == NULL || strcmp(s, "none") != 0) {
    if (cs_units_parse_ints(s ? s : "1,4,16,64,400", 1, 1 << 20, &pa.nodes, &pa.nn, &err) !=
        CS_OK) {
      cs_error_prefix(&err, "--nodes");
      return usage_fail(&err);
    }
  }
  s = cli_get(&verb, &a, "sizes");
  if (cs_units_parse_sizes(s ? s : "8:8G", &pa.sizes, &pa.ns, &err) != CS_OK) {
    free(pa.nodes);
    cs_error_prefix(&err, "--sizes");
    return usage_fail(&err);
  }

  struct cs_cal cal;
  cs_cal_init(&cal);
  struct cs_meas_set set;
  cs_meas_set_init(&set);
  struct cs_meas_row *rows = NULL;
  struct cs_plot *p = NULL;
  enum cs_status st = CS_OK;
  const char *calpath = cli_get(&verb, &a, "cal");
  if (calpath)
    st = cs_calfile_read(calpath, &cal, &err);
  else
    fprintf(
        stderr,
        "commscale plot: no --cal given: the model lines use NCCL-anchored default constants\n");
  if (st == CS_OK && launch == NULL && cal.prov.launch[0]) {
    enum cs_launch l;
    if (cs_meas_launch_parse(cal.prov.launch, &l) == 0) pa.launch = (int)l;
  }
  if (st == CS_OK && calpath && strcmp(cal.prov.config, pa.config) != 0)
    fprintf(stderr,
            "commscale plot: note: the calibration was fitted to configuration \"%s\", the rows "
            "drawn have \"%s\"\n",
            cal.prov.config, pa.config);
  for (int i = 0; st == CS_OK && i < a.npos; i++)
    st = cs_meas_read_any(a.pos[i], &set, &err);

  /* the rows to draw, sorted by shape */
  size_t n = 0, other_launch = 0;
  if (st == CS_OK && !(rows = malloc((set.n ? set.n : 1) * sizeof *rows)))
    st = cs_error_set(&err, CS_ERR_NOMEM, "out of memory");
  int launches = 0;
  for (size_t i = 0; st == CS_OK && i < set.n; i++) {
    const struct cs_meas_row *r = &set.rows[i];
    if (r->coll != pa.coll || r->in_place || strcmp(r->config, pa.config) != 0) continue;
    if (pa.launch >= 0 && (int)r->launch != pa.launch) {
      other_launch++;
      continue;
    }
    launches |= 1 << r->launch;
    rows[n++] = *r;
  }
  if (st == CS_OK && n == 0) {
    char cfgs[512];
    list_configs(&set, pa.coll, cfgs, sizeof cfgs);
    /* the data does not hold what was asked for: a failure (exit 1), not a usage error */
    st = cs_error_set(&err, CS_ERR_RANGE,
                      "no out-of-place %s rows with configuration \"%s\"%s%s in the %zu rows read "
                      "(configurations of %s: %s)",
                      cs_coll_name(pa.coll), pa.config, pa.launch >= 0 ? " and launch " : "",
                      pa.launch >= 0 ? cs_meas_launch_name(pa.launch) : "", set.n,
                      cs_coll_name(pa.coll), cfgs[0] ? cfgs : "none");
  }
  if (st == CS_OK && other_launch)
    fprintf(stderr,
            "commscale plot: note: %zu rows of another launch than the calibration's (%s) left "
            "out; --launch all draws them\n",
            other_launch, cs_meas_launch_name(pa.launch));
  if (st == CS_OK) {
    qsort(rows, n, sizeof *rows, row_cmp);
    char title[256];
    snprintf(title, sizeof title,
             "%s bus bandwidth%s%s%s%s: measured, model, predicted at %d GPUs/node",
             cs_coll_name(pa.coll), cal.prov.gpu[0] ? ", " : "", cal.prov.gpu,
             pa.config[0] ? ", " : "", pa.config, pa.gpn);
    if (!(p = cs_plot_alloc("busbw", title, &err))) st = err.status;
  }
  size_t shapes = 0;
  if (st == CS_OK) {
    p->ylog = cli_get(&verb, &a, "log-y") != NULL;
    st = add_measured(p, &cal, rows, n, launches == 3, &shapes, &err);
  }
  if (st == CS_OK && shapes == 0)
    st = cs_error_set(&err, CS_ERR_RANGE, "none of the %zu matching rows has a bus bandwidth", n);
  if (st == CS_OK) st = add_predicted(p, &cal, &pa, &err);
  if (st == CS_OK) {
    /* COMMSCALE_GNUPLOT picks another gnuplot than the build's, as COMMSCALE_PLOTS_DIR does
       for the templates (plot.h reads that one) */
    struct cs_plot_opts o = {prefix, formats, NULL, getenv("COMMSCALE_GNUPLOT")};
    st = cs_plot_write(p, &o, &err);
  }
  if (st == CS_OK)
    fprintf(stderr,
            "commscale plot: %zu measured shapes, %zu predictions: wrote %s%s%s%s%s (data %s.dat, "
            "script %s.gp)\n",
            shapes, pa.nn, formats & CS_PLOT_SVG ? prefix : "", formats & CS_PLOT_SVG ? ".svg" : "",
            formats == (CS_PLOT_SVG | CS_PLOT_PNG) ? " " : "", formats & CS_PLOT_PNG ? prefix : "",
            formats & CS_PLOT_PNG ? ".png" : "", prefix, prefix);
  cs_plot_free(p);
  free(rows);
  cs_meas_set_fini(&set);
  cs_cal_fini(&cal);
  free(pa.nodes);
  free(pa.sizes);
  return st == CS_OK ? 0 : cli_fail("plot", &err);
}
