/* plot.c — figures as .dat + .gp files rendered by gnuplot; see plot.h.
 *
 * The per-figure script is deliberately small: it names the data file, the title and the index
 * ranges of each kind of series, the legend texts and colour slots as gnuplot arrays, sets the
 * terminal and output, and loads the template, which holds everything about looks. gnuplot runs
 * in the prefix's directory (`cd` before the script), so the .dat/.gp pair can be moved together.
 * The images are rendered under a temporary name passed in as `cs_out`, checked and renamed into
 * place; the script itself falls back to the prefix's name, so a user's `gnuplot PREFIX.gp` writes
 * PREFIX.svg directly. gnuplot's stderr goes to an anonymous temporary file so that its error line
 * can be put into the returned message; nothing is printed.
 */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wfile.h"

#ifndef CS_PLOTS_DIR
#define CS_PLOTS_DIR ""
#endif
#ifndef CS_GNUPLOT
#define CS_GNUPLOT ""
#endif

#define PATH_LEN 4096

/* ---- the figure object ------------------------------------------------------------------------
 */

static int name_ok(const char *name) {
  size_t n = name ? strlen(name) : 0;
  if (n == 0 || n >= sizeof((struct cs_plot *)0)->name) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return 0;
  }
  return 1;
}

struct cs_plot *cs_plot_alloc(const char *name, const char *title, struct cs_error *err) {
  if (!name_ok(name)) {
    cs_error_set(err, CS_ERR_USAGE,
                 "plot template name \"%s\" must be 1-31 letters, digits, _ or -",
                 name ? name : "(null)");
    return NULL;
  }
  struct cs_plot *p = calloc(1, sizeof *p);
  if (p == NULL) {
    cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    return NULL;
  }
  snprintf(p->name, sizeof p->name, "%s", name);
  snprintf(p->title, sizeof p->title, "%s", title ? title : "");
  p->ylog = 0;
  return p;
}

static void series_fini(struct cs_plot_series *s) {
  free(s->bytes); /* one block holds all seven arrays */
  memset(s, 0, sizeof *s);
}

void cs_plot_free(struct cs_plot *p) {
  if (p == NULL) return;
  for (size_t i = 0; i < p->n; i++)
    series_fini(&p->series[i]);
  free(p->series);
  free(p);
}

double cs_plot_busbw(enum cs_coll c, int ranks, double bytes, double time) {
  if (!(time > 0) || ranks < 1) return 0;
  double f = cs_coll_busbw_factor(c, ranks);
  if (!(f > 0)) return 0;
  return bytes * f / time;
}

struct point {
  double bytes, t, lo, hi;
};

static int point_cmp(const void *a, const void *b) {
  const struct point *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
  return (x->t > y->t) - (x->t < y->t); /* equal sizes: a stable, content-only order */
}

/* Room for one more series in p (CS_ERR_NOMEM). */
static enum cs_status reserve(struct cs_plot *p, struct cs_error *err) {
  if (p->n < p->cap) return CS_OK;
  size_t cap = p->cap ? 2 * p->cap : 8;
  struct cs_plot_series *s = realloc(p->series, cap * sizeof *s);
  if (s == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  p->series = s;
  p->cap = cap;
  return CS_OK;
}

/* Appends a series of m points whose seven arrays (bytes or x, busbw or y and its band, time and
 * its band) lie in block at multiples of stride; the series owns block. Needs reserve() first. */
static struct cs_plot_series *push(struct cs_plot *p, enum cs_plot_kind kind, const char *title,
                                   int group, double *block, size_t stride, size_t m) {
  struct cs_plot_series *s = &p->series[p->n++];
  memset(s, 0, sizeof *s);
  s->kind = kind;
  snprintf(s->title, sizeof s->title, "%s", title ? title : "");
  s->group = group;
  s->n = m;
  s->bytes = block;
  s->busbw = block + stride;
  s->busbw_lo = block + 2 * stride;
  s->busbw_hi = block + 3 * stride;
  s->time = block + 4 * stride;
  s->time_lo = block + 5 * stride;
  s->time_hi = block + 6 * stride;
  return s;
}

enum cs_status cs_plot_add_times(struct cs_plot *p, enum cs_plot_kind kind, const char *title,
                                 int group, enum cs_coll c, int ranks, size_t n,
                                 const double *bytes, const double *time, const double *time_lo,
                                 const double *time_hi, struct cs_error *err) {
  if (p == NULL || n == 0 || bytes == NULL || time == NULL)
    return cs_error_set(err, CS_ERR_USAGE, "plot series \"%s\" has no points", title ? title : "");
  if ((int)kind < 0 || kind >= CS_PLOT_KIND_COUNT || group < 0 || (int)c < 0 ||
      c >= CS_COLL_COUNT || ranks < 1 || p->ncols > 0)
    return cs_error_set(err, CS_ERR_USAGE,
                        "plot series \"%s\": bad kind, group, collective or ranks, or mixed "
                        "with stacked series",
                        title ? title : "");
  int band = time_lo != NULL && time_hi != NULL;
  struct point *pt = malloc(n * sizeof *pt);
  if (pt == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    struct point q = {bytes[i], time[i], band ? time_lo[i] : time[i], band ? time_hi[i] : time[i]};
    if (!isfinite(q.bytes) || !isfinite(q.t) || !isfinite(q.lo) || !isfinite(q.hi)) continue;
    if (!(q.bytes > 0) || cs_plot_busbw(c, ranks, q.bytes, q.t) <= 0 || !(q.lo > 0) || !(q.hi > 0))
      continue;
    pt[m++] = q;
  }
  if (m == 0) {
    free(pt);
    return cs_error_set(err, CS_ERR_RANGE,
                        "plot series \"%s\": no point has a bus bandwidth (%s on %d rank%s)",
                        title ? title : "", cs_coll_name(c), ranks, ranks == 1 ? "" : "s");
  }
  qsort(pt, m, sizeof *pt, point_cmp);

  enum cs_status st = reserve(p, err);
  double *block = st == CS_OK ? malloc(7 * m * sizeof *block) : NULL;
  if (block == NULL) {
    free(pt);
    return st != CS_OK ? st : cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  struct cs_plot_series *s = push(p, kind, title, group, block, m, m);
  for (size_t i = 0; i < m; i++) {
    s->bytes[i] = pt[i].bytes;
    s->time[i] = pt[i].t;
    s->time_lo[i] = fmin(pt[i].lo, pt[i].t);
    s->time_hi[i] = fmax(pt[i].hi, pt[i].t);
    s->busbw[i] = cs_plot_busbw(c, ranks, pt[i].bytes, pt[i].t);
    s->busbw_lo[i] = cs_plot_busbw(c, ranks, pt[i].bytes, s->time_hi[i]);
    s->busbw_hi[i] = cs_plot_busbw(c, ranks, pt[i].bytes, s->time_lo[i]);
  }
  free(pt);
  return CS_OK;
}

enum cs_status cs_plot_add_xy(struct cs_plot *p, enum cs_plot_kind kind, const char *title,
                              int group, size_t n, const double *x, const double *y,
                              const double *lo, const double *hi, struct cs_error *err) {
  if (p == NULL || n == 0 || x == NULL || y == NULL)
    return cs_error_set(err, CS_ERR_USAGE, "plot series \"%s\" has no points", title ? title : "");
  if ((int)kind < 0 || kind >= CS_PLOT_KIND_COUNT || group < 0 || (!p->xy && p->n > 0))
    return cs_error_set(err, CS_ERR_USAGE,
                        "plot series \"%s\": bad kind or group, or mixed with "
                        "bus-bandwidth series",
                        title ? title : "");
  enum cs_status st = reserve(p, err);
  if (st != CS_OK) return st;
  double *block = malloc(7 * n * sizeof *block);
  if (block == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    double a = lo && hi ? lo[i] : y[i], b = lo && hi ? hi[i] : y[i];
    if (!isfinite(x[i]) || !isfinite(y[i]) || !isfinite(a) || !isfinite(b)) continue;
    block[m] = x[i];
    block[n + m] = y[i];
    block[2 * n + m] = fmin(a, y[i]);
    block[3 * n + m] = fmax(b, y[i]);
    m++;
  }
  if (m == 0) {
    free(block);
    return cs_error_set(err, CS_ERR_RANGE, "plot series \"%s\": no finite point",
                        title ? title : "");
  }
  push(p, kind, title, group, block, n, m);
  p->xy = 1;
  return CS_OK;
}

enum cs_status cs_plot_add_stack(struct cs_plot *p, const char *title, int group, size_t n,
                                 const double *x, size_t ncols, const char *const *names,
                                 const double *vals, struct cs_error *err) {
  if (p == NULL || n == 0 || x == NULL || vals == NULL || names == NULL)
    return cs_error_set(err, CS_ERR_USAGE, "plot series \"%s\" has no rows", title ? title : "");
  if (group < 0 || ncols == 0 || ncols > CS_PLOT_COLS_MAX || p->xy ||
      (p->n > 0 && p->ncols != ncols))
    return cs_error_set(err, CS_ERR_USAGE,
                        "plot series \"%s\": bad group or number of parts, or mixed with other "
                        "series",
                        title ? title : "");
  enum cs_status st = reserve(p, err);
  if (st != CS_OK) return st;
  double *block = malloc((7 + ncols) * n * sizeof *block);
  if (block == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  double *cols = block + 7 * n;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    int finite = isfinite(x[i]);
    double total = 0;
    for (size_t j = 0; j < ncols; j++) {
      finite = finite && isfinite(vals[i * ncols + j]);
      total += vals[i * ncols + j];
    }
    if (!finite) continue;
    block[m] = x[i];
    for (size_t k = 1; k < 4; k++)
      block[k * n + m] = total;
    memcpy(cols + m * ncols, vals + i * ncols, ncols * sizeof *cols);
    m++;
  }
  if (m == 0) {
    free(block);
    return cs_error_set(err, CS_ERR_RANGE, "plot series \"%s\": no finite row", title ? title : "");
  }
  if (p->n == 0) {
    p->ncols = ncols;
    for (size_t j = 0; j < ncols; j++)
      snprintf(p->colname[j], sizeof p->colname[j], "%s", names[j] ? names[j] : "");
  }
  push(p, CS_PLOT_PREDICTED, title, group, block, n, m)->cols = cols;
  return CS_OK;
}

/* ---- files -------------------------------------------------------------------------------------
 */

/* The order series are written in: predicted, fitted, measured; insertion order within a kind.
 * order[] receives p->n indices; first/last[k] the index-block range of kind k (last < first when
 * the kind is absent). */
static void series_order(const struct cs_plot *p, size_t *order, long first[CS_PLOT_KIND_COUNT],
                         long last[CS_PLOT_KIND_COUNT]) {
  static const enum cs_plot_kind seq[CS_PLOT_KIND_COUNT] = {CS_PLOT_PREDICTED, CS_PLOT_FITTED,
                                                            CS_PLOT_MEASURED};
  size_t k = 0;
  for (int j = 0; j < CS_PLOT_KIND_COUNT; j++) {
    enum cs_plot_kind kind = seq[j];
    first[kind] = (long)k;
    for (size_t i = 0; i < p->n; i++)
      if (p->series[i].kind == kind) order[k++] = i;
    last[kind] = (long)k - 1;
  }
}

static const char *kind_name(enum cs_plot_kind k) {
  switch (k) {
  case CS_PLOT_MEASURED:
    return "measured";
  case CS_PLOT_FITTED:
    return "fitted";
  case CS_PLOT_PREDICTED:
    return "predicted";
  default:
    return "?";
  }
}

static void write_dat_xy(FILE *f, const struct cs_plot *p, const size_t *order) {
  fprintf(f, "# commscale %s plot %s%s%s\n", CS_VERSION, p->name, p->title[0] ? ": " : "",
          p->title);
  fprintf(f, "# %zu series, one gnuplot index block each (blocks separated by two blank lines)\n",
          p->n);
  fprintf(f, "#%15s %14s %14s %14s\n# x: %s; y: %s\n", "x", "y", "y_lo", "y_hi", p->xlabel,
          p->ylabel);
  for (size_t k = 0; k < p->n; k++) {
    const struct cs_plot_series *s = &p->series[order[k]];
    if (k > 0) fputs("\n\n", f);
    fprintf(f, "# index %zu: %s, group %d: %s\n", k, kind_name(s->kind), s->group, s->title);
    for (size_t i = 0; i < s->n; i++)
      fprintf(f, " %15.8g %14.8g %14.8g %14.8g\n", s->bytes[i], s->busbw[i], s->busbw_lo[i],
              s->busbw_hi[i]);
  }
}

static void write_dat_stack(FILE *f, const struct cs_plot *p, const size_t *order) {
  fprintf(f, "# commscale %s plot %s%s%s\n", CS_VERSION, p->name, p->title[0] ? ": " : "",
          p->title);
  fprintf(f,
          "# %zu series, one gnuplot index block each (blocks separated by two blank lines);\n"
          "# columns 2..%zu stack into one bar, column %zu is their total\n",
          p->n, p->ncols + 1, p->ncols + 2);
  fprintf(f, "#%15s", "x");
  for (size_t j = 0; j < p->ncols; j++)
    fprintf(f, " %14s", p->colname[j]);
  fprintf(f, " %14s\n# x: %s; parts: %s\n", "total", p->xlabel, p->ylabel);
  for (size_t k = 0; k < p->n; k++) {
    const struct cs_plot_series *s = &p->series[order[k]];
    if (k > 0) fputs("\n\n", f);
    fprintf(f, "# index %zu: group %d: %s\n", k, s->group, s->title);
    for (size_t i = 0; i < s->n; i++) {
      fprintf(f, " %15.8g", s->bytes[i]);
      for (size_t j = 0; j < p->ncols; j++)
        fprintf(f, " %14.8g", s->cols[i * p->ncols + j]);
      fprintf(f, " %14.8g\n", s->busbw[i]);
    }
  }
}

static void write_dat(FILE *f, const struct cs_plot *p, const size_t *order) {
  if (p->xy) {
    write_dat_xy(f, p, order);
    return;
  }
  if (p->ncols > 0) {
    write_dat_stack(f, p, order);
    return;
  }
  fprintf(f, "# commscale %s plot %s%s%s\n", CS_VERSION, p->name, p->title[0] ? ": " : "",
          p->title);
  fprintf(f,
          "# %zu series, one gnuplot index block each (blocks separated by two blank lines),\n"
          "# predicted first, then fitted, then measured; busbw = size x busbw factor / time\n",
          p->n);
  fprintf(f, "#%15s %14s %14s %14s %14s %14s %14s\n", "size", "busbw", "busbw_lo", "busbw_hi",
          "time", "time_lo", "time_hi");
  fprintf(f, "#%15s %14s %14s %14s %14s %14s %14s\n", "(B)", "(GB/s)", "(GB/s)", "(GB/s)", "(us)",
          "(us)", "(us)");
  for (size_t k = 0; k < p->n; k++) {
    const struct cs_plot_series *s = &p->series[order[k]];
    if (k > 0) fputs("\n\n", f);
    fprintf(f, "# index %zu: %s, group %d: %s\n", k, kind_name(s->kind), s->group, s->title);
    for (size_t i = 0; i < s->n; i++)
      fprintf(f, " %15.0f %14.6g %14.6g %14.6g %14.6g %14.6g %14.6g\n", s->bytes[i],
              s->busbw[i] / 1e9, s->busbw_lo[i] / 1e9, s->busbw_hi[i] / 1e9, s->time[i] * 1e6,
              s->time_lo[i] * 1e6, s->time_hi[i] * 1e6);
  }
}

enum cs_status cs_plot_write_dat(const struct cs_plot *p, const char *path, struct cs_error *err) {
  if (p == NULL || p->n == 0) return cs_error_set(err, CS_ERR_USAGE, "the plot has no series");
  size_t *order = malloc(p->n * sizeof *order);
  if (order == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  long first[CS_PLOT_KIND_COUNT], last[CS_PLOT_KIND_COUNT];
  series_order(p, order, first, last);
  struct cs_wfile *w;
  if (cs_wfile_open(path, &w, err) != CS_OK) {
    free(order);
    return CS_ERR_IO;
  }
  write_dat(cs_wfile_fp(w), p, order);
  free(order);
  return cs_wfile_commit(w, err);
}

/* Writes s as a gnuplot single-quoted string ('' stands for one quote). */
static void gp_string(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    if (*s == '\n' || *s == '\r')
      fputc(' ', f);
    else
      fputc(*s, f);
  }
  fputc('\'', f);
}

#define IMG_W 1100
#define IMG_H 640

static void write_gp(FILE *f, const struct cs_plot *p, const size_t *order, const long *first,
                     const long *last, const char *base, const char *tpl, unsigned formats) {
  fprintf(f,
          "# %s.gp: commscale %s plot %s. Render again in this directory with\n"
          "#   gnuplot %s.gp\n"
          "# The data is %s.dat (columns in its header); the looks come from the template loaded\n"
          "# below. cs_ylog = 1 gives a logarithmic value axis.\n",
          base, CS_VERSION, p->name, base, base);
  fputs("if (!exists(\"cs_out\")) cs_out = ", f);
  gp_string(f, base);
  fputs("\ncs_data = ", f);
  char dat[PATH_LEN];
  snprintf(dat, sizeof dat, "%s.dat", base);
  gp_string(f, dat);
  fputs("\ncs_title = ", f);
  gp_string(f, p->title);
  fprintf(f, "\ncs_ylog = %d\n", p->ylog ? 1 : 0);
  if (p->xy || p->ncols > 0) {
    fputs("cs_xlabel = ", f);
    gp_string(f, p->xlabel);
    fputs("\ncs_ylabel = ", f);
    gp_string(f, p->ylabel);
    fprintf(f, "\ncs_xlog = %d\n", p->xlog ? 1 : 0);
    fputs("# tick labels (space-separated values; '' lets gnuplot choose)\ncs_xtics = ", f);
    gp_string(f, p->xtics);
    fputs("\ncs_ytics = ", f);
    gp_string(f, p->ytics);
    fputc('\n', f);
  }
  if (p->ncols > 0) {
    fprintf(f, "# parts that stack into each bar: columns 2..cs_ncols+1 of cs_data\n");
    fprintf(f, "# cs_share = 1: each bar as the shares of its total (%%), the total under it\n");
    fprintf(f, "cs_share = %d\n", p->share ? 1 : 0);
    fprintf(f, "cs_ncols = %zu\narray cs_col[%zu] = [", p->ncols, p->ncols);
    for (size_t j = 0; j < p->ncols; j++) {
      if (j) fputs(", ", f);
      gp_string(f, p->colname[j]);
    }
    fputs("]\n", f);
  }
  fprintf(f, "# index blocks of cs_data by kind (0-based, empty when last < first)\n");
  fprintf(f, "cs_pred_first = %ld; cs_pred_last = %ld\n", first[CS_PLOT_PREDICTED],
          last[CS_PLOT_PREDICTED]);
  fprintf(f, "cs_fit_first = %ld; cs_fit_last = %ld\n", first[CS_PLOT_FITTED],
          last[CS_PLOT_FITTED]);
  fprintf(f, "cs_meas_first = %ld; cs_meas_last = %ld\n", first[CS_PLOT_MEASURED],
          last[CS_PLOT_MEASURED]);
  fprintf(f, "# legend text and colour slot of index block i are cs_name[i+1], cs_group[i+1]\n");
  fprintf(f, "array cs_name[%zu] = [", p->n);
  for (size_t k = 0; k < p->n; k++) {
    if (k) fputs(", ", f);
    gp_string(f, p->series[order[k]].title);
  }
  fprintf(f, "]\narray cs_group[%zu] = [", p->n);
  for (size_t k = 0; k < p->n; k++)
    fprintf(f, "%s%d", k ? ", " : "", p->series[order[k]].group);
  fputs("]\n", f);
  int loaded = 0;
  if (formats & CS_PLOT_SVG) {
    fprintf(f, "set terminal svg size %d,%d noenhanced font 'sans,12' background rgb 'white'\n",
            IMG_W, IMG_H);
    fputs("set output cs_out.'.svg'\nload ", f);
    gp_string(f, tpl);
    fputs("\nset output\n", f);
    loaded = 1;
  }
  if (formats & CS_PLOT_PNG) {
    fprintf(f,
            "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "  set terminal pngcairo size %d,%d noenhanced font 'sans,11' background rgb 'white'\n"
            "} else {\n"
            "  set terminal png size %d,%d noenhanced background rgb 'white'\n"
            "}\n",
            IMG_W, IMG_H, IMG_W, IMG_H);
    fputs("set output cs_out.'.png'\n", f);
    if (loaded && p->ncols == 0)
      fputs("replot\n", f);
    else { /* a multiplot (stacked panels) cannot be replotted: draw it again */
      fputs("load ", f);
      gp_string(f, tpl);
      fputc('\n', f);
    }
    fputs("set output\n", f);
  }
  if (!formats) {
    fputs("load ", f);
    gp_string(f, tpl);
    fputc('\n', f);
  }
}

/* ---- the template ------------------------------------------------------------------------------
 */

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

enum cs_status cs_plot_find_template(const char *name, const char *templates_dir, char *path,
                                     size_t len, struct cs_error *err) {
  if (!name_ok(name))
    return cs_error_set(err, CS_ERR_USAGE, "bad plot template name \"%s\"", name ? name : "");
  const char *forced = templates_dir ? templates_dir : getenv("COMMSCALE_PLOTS_DIR");
  if (forced && forced[0]) {
    if ((size_t)snprintf(path, len, "%s/%s.gp", forced, name) >= len)
      return cs_error_set(err, CS_ERR_IO, "plot template path too long");
    if (is_file(path)) return CS_OK;
    return cs_error_set(err, CS_ERR_IO, "plot template %s not found (%s%s)", path,
                        templates_dir ? "templates directory given" : "from COMMSCALE_PLOTS_DIR",
                        templates_dir ? "" : "; unset it to use the installed templates");
  }
  char exe[PATH_LEN], tried[2 * PATH_LEN] = "";
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = '\0';
      if ((size_t)snprintf(path, len, "%s/../share/commscale/plots/%s.gp", exe, name) < len) {
        if (is_file(path)) return CS_OK;
        snprintf(tried, sizeof tried, "%s", path);
      }
    }
  }
  if (CS_PLOTS_DIR[0] && (size_t)snprintf(path, len, "%s/%s.gp", CS_PLOTS_DIR, name) < len) {
    if (is_file(path)) return CS_OK;
    size_t t = strlen(tried);
    snprintf(tried + t, sizeof tried - t, "%s%s", t ? ", " : "", path);
  }
  return cs_error_set(
      err, CS_ERR_IO,
      "plot template %s.gp not found (looked at %s); set COMMSCALE_PLOTS_DIR to the "
      "directory holding commscale's plots/*.gp",
      name, tried[0] ? tried : "nothing");
}

/* ---- running gnuplot ---------------------------------------------------------------------------
 */

/* The line of gnuplot's stderr that says what went wrong: the first `"file" line N: ...` line,
 * else the first non-blank one. */
static void gnuplot_error_line(FILE *f, char *out, size_t len) {
  char line[512], first[512] = "";
  out[0] = '\0';
  rewind(f);
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    char *s = line;
    while (*s == ' ' || *s == '\t')
      s++;
    if (*s == '\0') continue;
    if (first[0] == '\0') snprintf(first, sizeof first, "%s", s);
    if (strstr(s, " line ") && strstr(s, ": ") && !strstr(s, "warning:")) {
      snprintf(out, len, "%s", s);
      return;
    }
  }
  snprintf(out, len, "%s", first[0] ? first : "no message");
}

/* Picks the gnuplot to run: the caller's, the one found at build time when it is still there,
 * else "gnuplot" looked up on PATH. */
static const char *gnuplot_path(const char *given) {
  if (given && given[0]) return given;
  if (CS_GNUPLOT[0] && CS_GNUPLOT[0] == '/' && access(CS_GNUPLOT, X_OK) == 0) return CS_GNUPLOT;
  return "gnuplot";
}

/* Runs `gnuplot -e "cd 'dir'; cs_out='outbase'" script` and waits; stdout and stdin are
 * /dev/null, stderr is kept for the error message. */
static enum cs_status run_gnuplot(const char *gnuplot, const char *dir, const char *script,
                                  const char *outbase, const char *prefix, struct cs_error *err) {
  char cmd[3 * PATH_LEN];
  size_t k = 0;
  const char *parts[] = {"cd '", dir, "'; cs_out = '", outbase, "'"};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    int quoted = i == 1 || i == 3;
    for (const char *s = parts[i]; *s; s++) {
      if (k + 3 >= sizeof cmd) return cs_error_set(err, CS_ERR_IO, "%s: path too long", prefix);
      if (quoted && *s == '\'') cmd[k++] = '\'';
      cmd[k++] = *s;
    }
  }
  cmd[k] = '\0';
  char *argv[] = {(char *)gnuplot, "-e", cmd, (char *)script, NULL};

  FILE *errf = tmpfile();
  if (errf == NULL)
    return cs_error_set(err, CS_ERR_IO, "cannot create a temporary file: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) {
    fclose(errf);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (rc == 0) rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, fileno(errf), 2);
  long child = 0;
  if (rc == 0) rc = cs_wfile_spawn(&child, gnuplot, &fa, argv);
  posix_spawn_file_actions_destroy(&fa);
  pid_t pid = (pid_t)child;
  if (rc != 0) {
    fclose(errf);
    return cs_error_set(err, CS_ERR_EXTERNAL,
                        "cannot run gnuplot (%s): %s; %s.dat and %s.gp are written: install "
                        "gnuplot (Debian: gnuplot-nox) and run gnuplot on the .gp",
                        gnuplot, strerror(rc), prefix, prefix);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      cs_wfile_child(0);
      fclose(errf);
      return cs_error_set(err, CS_ERR_EXTERNAL, "waiting for gnuplot: %s", strerror(errno));
    }
  cs_wfile_child(0);
  enum cs_status st = CS_OK;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char line[512];
    gnuplot_error_line(errf, line, sizeof line);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      st = cs_error_set(err, CS_ERR_EXTERNAL, "cannot run gnuplot (%s): %s", gnuplot, line);
    else
      st = cs_error_set(err, CS_ERR_EXTERNAL, "gnuplot failed on %s.gp: %s", prefix, line);
  }
  fclose(errf);
  return st;
}

/* ---- the whole figure --------------------------------------------------------------------------
 */

/* Copies the image gnuplot wrote at from to path under wfile.h's rules (a symlink kept and its
 * target replaced, a device or FIFO written through). */
static enum cs_status copy_into_place(const char *from, const char *path, struct cs_error *err) {
  FILE *in = fopen(from, "rb");
  if (in == NULL) return cs_error_set(err, CS_ERR_IO, "%s: cannot read: %s", from, strerror(errno));
  struct cs_wfile *w;
  enum cs_status st = cs_wfile_open(path, &w, err);
  if (st == CS_OK) {
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
      if (fwrite(buf, 1, n, cs_wfile_fp(w)) != n) break;
    if (ferror(in)) {
      st = cs_error_set(err, CS_ERR_IO, "%s: cannot read: %s", from, strerror(errno));
      cs_wfile_abort(w);
    } else {
      st = cs_wfile_commit(w, err);
    }
  }
  fclose(in);
  return st;
}

static enum cs_status join(char *buf, size_t len, const char *a, const char *b,
                           struct cs_error *err) {
  if ((size_t)snprintf(buf, len, "%s%s", a, b) >= len)
    return cs_error_set(err, CS_ERR_IO, "%s: path too long", a);
  return CS_OK;
}

enum cs_status cs_plot_write(const struct cs_plot *p, const struct cs_plot_opts *o,
                             struct cs_error *err) {
  if (p == NULL || p->n == 0) return cs_error_set(err, CS_ERR_USAGE, "the plot has no series");
  if (o == NULL || o->prefix == NULL || o->prefix[0] == '\0')
    return cs_error_set(err, CS_ERR_USAGE, "no output prefix for the plot");
  const char *prefix = o->prefix;
  const char *slash = strrchr(prefix, '/');
  const char *base = slash ? slash + 1 : prefix;
  if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
    return cs_error_set(err, CS_ERR_USAGE, "output prefix \"%s\" names a directory, not files",
                        prefix);
  char dir[PATH_LEN];
  if (slash == NULL)
    snprintf(dir, sizeof dir, ".");
  else if (slash == prefix)
    snprintf(dir, sizeof dir, "/");
  else if ((size_t)(slash - prefix) < sizeof dir)
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - prefix), prefix);
  else
    return cs_error_set(err, CS_ERR_IO, "%s: path too long", prefix);

  char tpl[PATH_LEN], path[PATH_LEN];
  enum cs_status st = cs_plot_find_template(p->name, o->templates_dir, tpl, sizeof tpl, err);
  if (st != CS_OK) return st;
  /* gnuplot runs in dir, so the template path must not depend on the current directory */
  if (tpl[0] != '/') {
    char cwd[PATH_LEN], abs[PATH_LEN];
    if (getcwd(cwd, sizeof cwd) == NULL ||
        (size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, tpl) >= sizeof abs)
      return cs_error_set(err, CS_ERR_IO, "%s: cannot make the template path absolute", tpl);
    snprintf(tpl, sizeof tpl, "%s", abs);
  }

  if ((st = join(path, sizeof path, prefix, ".dat", err)) != CS_OK) return st;
  if ((st = cs_plot_write_dat(p, path, err)) != CS_OK) return st;

  if ((st = join(path, sizeof path, prefix, ".gp", err)) != CS_OK) return st;
  size_t *order = malloc(p->n * sizeof *order);
  if (order == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  long first[CS_PLOT_KIND_COUNT], last[CS_PLOT_KIND_COUNT];
  series_order(p, order, first, last);
  struct cs_wfile *w;
  if (cs_wfile_open(path, &w, err) != CS_OK) {
    free(order);
    return CS_ERR_IO;
  }
  write_gp(cs_wfile_fp(w), p, order, first, last, base, tpl, o->formats);
  free(order);
  if ((st = cs_wfile_commit(w, err)) != CS_OK) return st;
  if (!(o->formats & (CS_PLOT_SVG | CS_PLOT_PNG))) return CS_OK;

  char script[PATH_LEN], outbase[PATH_LEN];
  if ((st = join(script, sizeof script, base, ".gp", err)) != CS_OK) return st;
  if ((size_t)snprintf(outbase, sizeof outbase, "%s.tmp%ld", base, (long)getpid()) >=
      sizeof outbase)
    return cs_error_set(err, CS_ERR_IO, "%s: path too long", prefix);
  static const struct {
    unsigned bit;
    const char *ext;
  } fmts[] = {{CS_PLOT_SVG, ".svg"}, {CS_PLOT_PNG, ".png"}};
  /* gnuplot writes its images beside them under temporary names, removed on a signal too */
  char img_tmps[2][2 * PATH_LEN + 8];
  int tracked[2] = {-1, -1};
  for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    snprintf(img_tmps[i], sizeof img_tmps[i], "%s/%s%s", dir, outbase, fmts[i].ext);
    if (o->formats & fmts[i].bit) tracked[i] = cs_wfile_track(img_tmps[i]);
  }
  st = run_gnuplot(gnuplot_path(o->gnuplot), dir, script, outbase, prefix, err);
  /* check and copy every image into place; on any failure remove every temporary image */
  for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    if (!(o->formats & fmts[i].bit)) continue;
    const char *img_tmp = img_tmps[i];
    char img[PATH_LEN];
    if (st != CS_OK) {
      remove(img_tmp);
      continue;
    }
    struct stat sb;
    if (stat(img_tmp, &sb) != 0 || sb.st_size == 0) {
      remove(img_tmp);
      st = cs_error_set(err, CS_ERR_EXTERNAL, "gnuplot wrote no %s image for %s.gp",
                        fmts[i].ext + 1, prefix);
      continue;
    }
    if ((st = join(img, sizeof img, prefix, fmts[i].ext, err)) != CS_OK) {
      remove(img_tmp);
      continue;
    }
    st = copy_into_place(img_tmp, img, err);
    remove(img_tmp);
  }
  for (size_t i = 0; i < 2; i++)
    cs_wfile_untrack(tracked[i]);
  return st;
}

static int dbl_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void cs_plot_set_tics(struct cs_plot *p, char axis, size_t n, const double *v) {
  char *out = axis == 'y' ? p->ytics : p->xtics;
  size_t cap = sizeof p->xtics, len = 0;
  int lg = axis == 'y' ? p->ylog : p->xlog;
  double w[256];
  size_t m = 0;
  for (size_t i = 0; i < n && m < 256; i++)
    if (isfinite(v[i]) && (!lg || v[i] > 0)) w[m++] = v[i];
  qsort(w, m, sizeof w[0], dbl_cmp);
  size_t u = 0;
  for (size_t i = 0; i < m; i++)
    if (u == 0 || w[i] != w[u - 1]) w[u++] = w[i];
  size_t step = u > 24 ? (u + 23) / 24 : 1;
  out[0] = '\0';
  for (size_t i = 0; i < u; i++) {
    if (i % step != 0 && i + 1 != u) continue;
    int k = snprintf(out + len, cap - len, "%s%g", len ? " " : "", w[i]);
    if (k < 0 || (size_t)k >= cap - len) {
      out[len] = '\0';
      break;
    }
    len += (size_t)k;
  }
}
