/* plot.h — figures drawn by gnuplot, the way fio2gnuplot draws them: commscale writes the data
 * (PREFIX.dat) and a small script (PREFIX.gp) that sets the terminal, the output and the titles and
 * then loads a template from plots/ (plots/NAME.gp) that holds the styling and the plot command;
 * gnuplot renders PREFIX.svg and/or PREFIX.png. The .dat/.gp pair stays behind, so a user can
 * restyle the figure and run `gnuplot PREFIX.gp` in its directory.
 *
 * A figure is a list of series, each one curve against message size: measured points, the fitted
 * model's line at the measured shape, or a predicted line with its uncertainty band. Series are
 * added as times (seconds) and converted here to nccl-tests bus bandwidth, busbw = bytes x
 * cs_coll_busbw_factor(coll, ranks) / time, so that every caller uses the same convention. This
 * module knows nothing of measurement files or calibrations: the caller builds the series.
 *
 * PREFIX.dat: whitespace-separated columns under a '#' header that names each column with its unit;
 * one gnuplot index block per series (blocks separated by two blank lines), ordered predicted,
 * fitted, measured (so bands lie behind lines and points on top), insertion order within a kind.
 * Stacked figures (cs_plot_add_stack) write one block per series with x, its parts and their total.
 * Numbers are printed with fixed formats and nothing time-dependent is written anywhere, so the
 * same figure gives byte-identical .dat, .gp and .svg files on every run. Every file is written
 * under a temporary name and renamed into place; a failure leaves no partial file behind.
 */
#ifndef CS_PLOT_H
#define CS_PLOT_H

#include <stddef.h>

#include "coll.h"
#include "status.h"

/* What a series shows, which decides how the template draws it. */
enum cs_plot_kind {
  CS_PLOT_MEASURED,  /* points */
  CS_PLOT_FITTED,    /* a line, in the colour of the measured series of the same group */
  CS_PLOT_PREDICTED, /* a line over its shaded band lo..hi */
  CS_PLOT_KIND_COUNT
};

/* Output formats, a bit mask. */
enum cs_plot_format { CS_PLOT_SVG = 1u, CS_PLOT_PNG = 2u };

#define CS_PLOT_TITLE_MAX 160

/* One curve. All arrays have n entries, sorted by bytes, and belong to the series. */
struct cs_plot_series {
  enum cs_plot_kind kind;
  char title[CS_PLOT_TITLE_MAX]; /* legend text */
  int group;                     /* colour slot within its kind (fitted k matches measured k) */
  size_t n;
  double *bytes;                       /* message size (nccl-tests size), bytes */
  double *busbw, *busbw_lo, *busbw_hi; /* bytes/s; lo = hi = busbw when the series has no band */
  double *time, *time_lo, *time_hi;    /* seconds */
  double *cols; /* stacked figures: n rows of the figure's ncols parts, row-major; else NULL */
};

#define CS_PLOT_COLS_MAX 16
#define CS_PLOT_COL_NAME_MAX 32

/* A figure: a template name, a title, axis conventions of that template, and its series. */
struct cs_plot {
  char name[32];   /* template: plots/<name>.gp */
  char title[256]; /* figure title; "" for none */
  int ylog;        /* 0 (cs_plot_alloc's default): linear value axis from 0; 1: logarithmic */
  /* x-y figures (cs_plot_add_xy; sweep and sizing templates): */
  int xy;                      /* set by cs_plot_add_xy: the .dat holds x, y, y_lo, y_hi as given */
  int xlog;                    /* 1: logarithmic x axis */
  char xlabel[64], ylabel[64]; /* axis titles with units */
  /* tick marks labelled with these values (space-separated numbers, as printed); "" lets gnuplot
   * choose. Log axes get the plotted values as labels (cs_plot_set_tics). */
  char xtics[512], ytics[512];
  /* stacked figures (cs_plot_add_stack; breakdown template): */
  size_t ncols;                                         /* parts per row, 0 for other figures */
  char colname[CS_PLOT_COLS_MAX][CS_PLOT_COL_NAME_MAX]; /* legend text of each part */
  int share; /* 1: each bar drawn as the shares of its total (%), the total under its label */
  struct cs_plot_series *series;
  size_t n, cap;
};

/* Where and how cs_plot_write puts the figure. Zero-initialise, then set prefix. */
struct cs_plot_opts {
  const char *prefix;        /* writes PREFIX.dat, PREFIX.gp, PREFIX.svg / PREFIX.png */
  unsigned formats;          /* enum cs_plot_format bits; 0 writes .dat and .gp only */
  const char *templates_dir; /* NULL: search (see cs_plot_find_template) */
  const char *gnuplot;       /* NULL: the build's gnuplot, else `gnuplot` on PATH */
};

/* Allocates an empty figure drawn with template `name` (letters, digits, '_' and '-', at most 31
 * characters) and titled `title` (may be NULL). Returns NULL with CS_ERR_USAGE for a bad name or
 * CS_ERR_NOMEM in err. The caller frees it with cs_plot_free. */
struct cs_plot *cs_plot_alloc(const char *name, const char *title, struct cs_error *err);

/* Frees p and every series it owns; p may be NULL. */
void cs_plot_free(struct cs_plot *p);

/* Bus bandwidth in bytes/s of collective c on `ranks` ranks moving `bytes` (nccl-tests size) in
 * `time` seconds: bytes x cs_coll_busbw_factor(c, ranks) / time. 0 when time is not positive or
 * the factor is 0 (a single rank). */
double cs_plot_busbw(enum cs_coll c, int ranks, double bytes, double time);

/* Appends a series of kind `kind` titled `title` (truncated to CS_PLOT_TITLE_MAX - 1 characters)
 * in colour slot `group` (>= 0): for each i, a message of bytes[i] taking time[i] seconds of
 * collective c on `ranks` ranks. time_lo/time_hi give the band (both or neither may be NULL; NULL
 * means no band). The arrays are copied and sorted by size. Points with no bus bandwidth (see
 * cs_plot_busbw) or with a non-finite value are left out; a series that keeps no point is not
 * added and CS_ERR_RANGE says so. Errors: CS_ERR_USAGE for n == 0, NULL bytes/time, a bad kind or
 * group; CS_ERR_NOMEM. On failure p is unchanged. */
enum cs_status cs_plot_add_times(struct cs_plot *p, enum cs_plot_kind kind, const char *title,
                                 int group, enum cs_coll c, int ranks, size_t n,
                                 const double *bytes, const double *time, const double *time_lo,
                                 const double *time_hi, struct cs_error *err);

/* Appends an x-y series (for figures other than bus bandwidth: throughput against network speed
 * or node count): n points x[i], y[i] with an optional band lo/hi (both or neither NULL), kept in
 * the given order; non-finite points are left out. The .dat of such a figure has the columns x,
 * y, y_lo, y_hi as given, and its .gp also sets cs_xlabel, cs_ylabel and cs_xlog. A figure holds
 * either x-y or bus-bandwidth series (CS_ERR_USAGE when mixed). Errors as cs_plot_add_times. */
enum cs_status cs_plot_add_xy(struct cs_plot *p, enum cs_plot_kind kind, const char *title,
                              int group, size_t n, const double *x, const double *y,
                              const double *lo, const double *hi, struct cs_error *err);

/* Appends a stacked series (one group of bars, e.g. one plan): n rows, row i at x[i] (kept in the
 * given order) with ncols parts vals[i * ncols + j] that stack into one bar. The first stacked
 * series fixes the figure's parts and their names (names[j], truncated to CS_PLOT_COL_NAME_MAX - 1
 * characters); later ones must have the same ncols. Rows with a non-finite x or part are left out.
 * The .dat of such a figure has the columns x, the parts and their total, and its .gp also sets
 * cs_xlabel, cs_ylabel, cs_ncols and the array cs_col of part names. A figure holds stacked series
 * only (CS_ERR_USAGE when mixed). Errors: CS_ERR_USAGE for n == 0, NULL arrays, ncols outside
 * 1..CS_PLOT_COLS_MAX or different from the figure's, a negative group; CS_ERR_RANGE when no row
 * is kept; CS_ERR_NOMEM. On failure p is unchanged. */
enum cs_status cs_plot_add_stack(struct cs_plot *p, const char *title, int group, size_t n,
                                 const double *x, size_t ncols, const char *const *names,
                                 const double *vals, struct cs_error *err);

/* Sets the tick labels of an axis ('x' or 'y') to the n values v (duplicates and non-positive
 * values on a log axis dropped; %g each). At most 24 values are kept: more are thinned to every
 * k-th, the first and the last always kept. */
void cs_plot_set_tics(struct cs_plot *p, char axis, size_t n, const double *v);

/* Writes the data file (format above) to path. CS_ERR_USAGE when p has no series, CS_ERR_IO when
 * the file cannot be written (the message names it). */
enum cs_status cs_plot_write_dat(const struct cs_plot *p, const char *path, struct cs_error *err);

/* Finds template `name`.gp and writes its full path into path[len]. The first of these that is
 * set wins and must hold the template: templates_dir (when not NULL), the environment variable
 * COMMSCALE_PLOTS_DIR. Otherwise the first of <directory of the running executable>/../share/
 * commscale/plots and the source tree's plots/ (fixed at build time) that holds it. CS_ERR_IO
 * names the places looked in when none does. */
enum cs_status cs_plot_find_template(const char *name, const char *templates_dir, char *path,
                                     size_t len, struct cs_error *err);

/* Writes PREFIX.dat and PREFIX.gp, then, when o->formats is not 0, runs gnuplot on PREFIX.gp
 * (in PREFIX's directory) to render PREFIX.svg and/or PREFIX.png (pngcairo where gnuplot has it,
 * else png). The .gp refers to the .dat by its file name and to the template by its full path.
 * Errors: CS_ERR_USAGE (no series, no prefix), CS_ERR_IO (a file cannot be written, the template
 * is not found), CS_ERR_EXTERNAL when gnuplot cannot be started (the .dat and .gp stay) or fails
 * (the message carries gnuplot's error line; no partial image is left). */
enum cs_status cs_plot_write(const struct cs_plot *p, const struct cs_plot_opts *o,
                             struct cs_error *err);

#endif
