/* test_plot.c — the plot module: bus bandwidth from times, the .dat layout checked against
 * hand-computed values, a real gnuplot run (SVG and PNG) that is byte-identical the second time,
 * and every failure path (bad series, missing template, gnuplot missing or failing, bad prefix). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "cal.h"
#include "plot.h"
#include "testutil.h"

#define GiB 1073741824.0

/* ---- helpers -----------------------------------------------------------------------------------
 */

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  size_t k;
  while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) {
      char *b = realloc(buf, 2 * cap + 1);
      if (b == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = b;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* A fresh empty directory CS_TEST_TMP/name (its files from an earlier run removed). */
static const char *fresh_dir(const char *name, char *buf, size_t len) {
  cs_test_tmp(name, buf, len);
  mkdir(buf, 0777);
  DIR *d = opendir(buf);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || strcmp(e->d_name, "..") == 0)) continue;
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", buf, e->d_name);
    remove(p);
  }
  closedir(d);
  return buf;
}

/* Number of files in dir whose name contains needle. */
static int count_files(const char *dir, const char *needle) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    n += strstr(e->d_name, needle) != NULL;
  closedir(d);
  return n;
}

/* Whether gnuplot runs: its version line is read through a pipe (nothing written to a device). */
static int have_gnuplot(void) {
  FILE *p = popen("gnuplot --version 2>&1", "r");
  if (p == NULL) return 0;
  char line[256];
  while (fgets(line, sizeof line, p) != NULL)
    continue;
  return pclose(p) == 0;
}

/* Options that write busbw.* of the given formats into a fresh directory CS_TEST_TMP/name; dir and
 * prefix receive that directory and the prefix "dir/busbw" (o.prefix points at prefix). */
static struct cs_plot_opts busbw_opts(const char *name, unsigned formats, char *dir, size_t dlen,
                                      char *prefix, size_t plen) {
  fresh_dir(name, dir, dlen);
  snprintf(prefix, plen, "%s/busbw", dir);
  struct cs_plot_opts o = {0};
  o.prefix = prefix;
  o.formats = formats;
  return o;
}

/* The .dat rows of index block `block` (0-based): up to max rows of 7 columns; returns the count.
 */
static int dat_block(const char *text, int block, double rows[][7], int max) {
  int b = 0, n = 0, blank = 0;
  const char *s = text;
  while (*s) {
    const char *e = strchr(s, '\n');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == 0) {
      if (++blank == 2) b++;
    } else {
      blank = 0;
      if (s[0] != '#' && b == block && n < max) {
        char line[256];
        snprintf(line, sizeof line, "%.*s", (int)len, s);
        int k = sscanf(line, "%lf %lf %lf %lf %lf %lf %lf", &rows[n][0], &rows[n][1], &rows[n][2],
                       &rows[n][3], &rows[n][4], &rows[n][5], &rows[n][6]);
        assert_int_equal(k, 7);
        n++;
      }
    }
    s = e ? e + 1 : s + len;
  }
  return n;
}

/* A figure like `commscale plot busbw` draws, from the default model: one measured shape (a
 * synthetic 2-rank all_reduce whose 1 GiB point is the hand-computed one), the model's line at that
 * shape, and predictions for 1 and 4 nodes of 8 GPUs with their band. */
static struct cs_plot *sample_plot(void) {
  struct cs_error err = {0};
  struct cs_plot *p = cs_plot_alloc("busbw", "all_reduce bus bandwidth (test)", &err);
  assert_non_null(p);
  const double mb[] = {GiB, 8, 1048576, 64 * 1048576.0};
  const double mt[] = {3289.17e-6, 10.2e-6, 24.0e-6, 230e-6};
  assert_int_equal(cs_plot_add_times(p, CS_PLOT_MEASURED, "measured 1x2 ring/simple", 0,
                                     CS_COLL_ALL_REDUCE, 2, 4, mb, mt, NULL, NULL, &err),
                   CS_OK);

  struct cs_cal cal;
  cs_cal_init(&cal);
  double sizes[31], t[31], lo[31], hi[31];
  for (int i = 0; i < 31; i++)
    sizes[i] = ldexp(1.0, i + 3); /* 8 B .. 8 GiB */
  struct cs_coll_query q = {CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE, 2, 1, 2, 0};
  struct cs_coll_pred pr;
  for (int i = 0; i < 4; i++) {
    q.bytes = mb[i];
    assert_int_equal(cs_cal_predict(&cal, &q, &pr, &lo[i], &hi[i], &err), CS_OK);
    t[i] = pr.time;
  }
  assert_int_equal(cs_plot_add_times(p, CS_PLOT_FITTED, "model 1x2 ring/simple", 0,
                                     CS_COLL_ALL_REDUCE, 2, 4, mb, t, NULL, NULL, &err),
                   CS_OK);
  const int nodes[] = {1, 4};
  for (int k = 0; k < 2; k++) {
    struct cs_coll_query qq = {
        CS_COLL_ALL_REDUCE, CS_ALGO_AUTO, CS_PROTO_AUTO, nodes[k] * 8, nodes[k], 8, 0};
    for (int i = 0; i < 31; i++) {
      qq.bytes = sizes[i];
      assert_int_equal(cs_cal_predict(&cal, &qq, &pr, &lo[i], &hi[i], &err), CS_OK);
      t[i] = pr.time;
    }
    char title[64];
    snprintf(title, sizeof title, "predicted %dx8", nodes[k]);
    assert_int_equal(cs_plot_add_times(p, CS_PLOT_PREDICTED, title, k, CS_COLL_ALL_REDUCE,
                                       nodes[k] * 8, 31, sizes, t, lo, hi, &err),
                     CS_OK);
  }
  cs_cal_fini(&cal);
  return p;
}

/* ---- tests -------------------------------------------------------------------------------------
 */

static void busbw_convention(void **state) {
  (void)state;
  /* 1 GiB in 3289.17 us on 2 ranks: algbw 326.45 GB/s, all_reduce factor 2(n-1)/n = 1 */
  assert_close(cs_plot_busbw(CS_COLL_ALL_REDUCE, 2, GiB, 3289.17e-6), 326.4479e9, 1e-6);
  /* all_gather on 8 ranks: factor 7/8; all_reduce on 8 ranks: 14/8; broadcast: 1 */
  assert_close(cs_plot_busbw(CS_COLL_ALL_GATHER, 8, 8e6, 1e-3), 8e9 * 7 / 8, 1e-12);
  assert_close(cs_plot_busbw(CS_COLL_ALL_REDUCE, 8, 8e6, 1e-3), 8e9 * 14 / 8, 1e-12);
  assert_close(cs_plot_busbw(CS_COLL_BROADCAST, 8, 8e6, 1e-3), 8e9, 1e-12);
  /* no bus bandwidth: one rank, no time */
  assert_true(cs_plot_busbw(CS_COLL_ALL_REDUCE, 1, GiB, 1e-3) == 0);
  assert_true(cs_plot_busbw(CS_COLL_ALL_REDUCE, 2, GiB, 0) == 0);
}

static void dat_layout(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_plot *p = cs_plot_alloc("busbw", "layout", &err);
  assert_non_null(p);
  /* measured, unsorted, with one point that has no time: kept 3 of 4, sorted by size */
  const double mb[] = {GiB, 8, 1048576, 4096};
  const double mt[] = {3289.17e-6, 10e-6, 20e-6, NAN};
  assert_int_equal(cs_plot_add_times(p, CS_PLOT_MEASURED, "measured 1x2 auto/auto", 3,
                                     CS_COLL_ALL_REDUCE, 2, 4, mb, mt, NULL, NULL, &err),
                   CS_OK);
  /* predicted with a band, 16 ranks: factor 30/16 */
  const double pb[] = {1048576, GiB};
  const double pt[] = {100e-6, 5000e-6}, plo[] = {80e-6, 4000e-6}, phi[] = {125e-6, 6250e-6};
  assert_int_equal(cs_plot_add_times(p, CS_PLOT_PREDICTED, "predicted 2x8", 0, CS_COLL_ALL_REDUCE,
                                     16, 2, pb, pt, plo, phi, &err),
                   CS_OK);
  char path[512];
  cs_test_tmp("plot_layout.dat", path, sizeof path);
  assert_int_equal(cs_plot_write_dat(p, path, &err), CS_OK);
  char *text = slurp(path, NULL);
  assert_non_null(text);
  /* the header names every column with its unit */
  assert_non_null(strstr(text, "size"));
  assert_non_null(strstr(text, "busbw_lo"));
  assert_non_null(strstr(text, "time_hi"));
  assert_non_null(strstr(text, "(B)"));
  assert_non_null(strstr(text, "(GB/s)"));
  assert_non_null(strstr(text, "(us)"));
  /* exactly one separator of two blank lines between the two blocks, predicted first */
  assert_non_null(strstr(text, "\n\n\n# index 1: measured, group 3: measured 1x2 auto/auto\n"));
  assert_null(strstr(strstr(text, "\n\n\n") + 3, "\n\n\n"));
  assert_non_null(strstr(text, "# index 0: predicted, group 0: predicted 2x8\n"));

  double rows[8][7];
  assert_int_equal(dat_block(text, 1, rows, 8), 3);
  assert_close(rows[0][0], 8, 0);
  assert_close(rows[1][0], 1048576, 0);
  assert_close(rows[2][0], GiB, 0);
  assert_close(rows[2][1], 326.45, 2e-5);     /* GB/s, hand-computed */
  assert_close(rows[2][4], 3289.17, 1e-6);    /* us */
  assert_close(rows[2][2], rows[2][1], 1e-9); /* no band: lo = hi = busbw */
  assert_close(rows[2][3], rows[2][1], 1e-9);
  assert_close(rows[0][1], 8 / 10e-6 / 1e9, 1e-5);

  assert_int_equal(dat_block(text, 0, rows, 8), 2);
  /* 1 GiB x 30/16 / 5000 us = 402.65 GB/s; lo from time_hi, hi from time_lo */
  assert_close(rows[1][1], GiB * 30 / 16 / 5000e-6 / 1e9, 1e-5);
  assert_close(rows[1][1], 402.653, 1e-5);
  assert_close(rows[1][2], GiB * 30 / 16 / 6250e-6 / 1e9, 1e-5);
  assert_close(rows[1][3], GiB * 30 / 16 / 4000e-6 / 1e9, 1e-5);
  assert_close(rows[1][5], 4000, 1e-6);
  assert_close(rows[1][6], 6250, 1e-6);
  free(text);
  cs_plot_free(p);
}

static void series_errors(void **state) {
  (void)state;
  struct cs_error err = {0};
  assert_null(cs_plot_alloc("../busbw", NULL, &err));
  assert_int_equal(err.status, CS_ERR_USAGE);
  assert_null(cs_plot_alloc("", NULL, &err));
  struct cs_plot *p = cs_plot_alloc("busbw", NULL, &err);
  assert_non_null(p);
  const double b[] = {8, 16}, t[] = {1e-6, 2e-6};
  assert_int_equal(cs_plot_add_times(p, CS_PLOT_MEASURED, "x", 0, CS_COLL_ALL_REDUCE, 2, 0, b, t,
                                     NULL, NULL, &err),
                   CS_ERR_USAGE);
  assert_int_equal(cs_plot_add_times(p, CS_PLOT_MEASURED, "x", 0, CS_COLL_ALL_REDUCE, 2, 2, NULL, t,
                                     NULL, NULL, &err),
                   CS_ERR_USAGE);
  assert_int_equal(cs_plot_add_times(p, CS_PLOT_KIND_COUNT, "x", 0, CS_COLL_ALL_REDUCE, 2, 2, b, t,
                                     NULL, NULL, &err),
                   CS_ERR_USAGE);
  assert_int_equal(cs_plot_add_times(p, CS_PLOT_MEASURED, "x", -1, CS_COLL_ALL_REDUCE, 2, 2, b, t,
                                     NULL, NULL, &err),
                   CS_ERR_USAGE);
  /* one rank has no bus bandwidth: nothing to plot, and the figure is unchanged */
  assert_int_equal(cs_plot_add_times(p, CS_PLOT_MEASURED, "one rank", 0, CS_COLL_ALL_REDUCE, 1, 2,
                                     b, t, NULL, NULL, &err),
                   CS_ERR_RANGE);
  assert_non_null(strstr(err.msg, "one rank"));
  assert_int_equal((int)p->n, 0);
  /* an empty figure cannot be written */
  char path[512];
  assert_int_equal(cs_plot_write_dat(p, cs_test_tmp("plot_empty.dat", path, sizeof path), &err),
                   CS_ERR_USAGE);
  struct cs_plot_opts o = {0};
  o.prefix = cs_test_tmp("plot_empty", path, sizeof path);
  assert_int_equal(cs_plot_write(p, &o, &err), CS_ERR_USAGE);
  cs_plot_free(p);
  cs_plot_free(NULL);
}

static void bad_prefix(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_plot *p = sample_plot();
  struct cs_plot_opts o = {0};
  char path[700];
  o.formats = 0;
  o.prefix = NULL;
  assert_int_equal(cs_plot_write(p, &o, &err), CS_ERR_USAGE);
  o.prefix = cs_test_tmp("", path, sizeof path); /* ends in '/' */
  assert_int_equal(cs_plot_write(p, &o, &err), CS_ERR_USAGE);
  assert_non_null(strstr(err.msg, "directory"));
  o.prefix = cs_test_tmp("no-such-dir/busbw", path, sizeof path);
  assert_int_equal(cs_plot_write(p, &o, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, "no-such-dir/busbw.dat"));
  /* formats 0 writes the .dat and .gp without running gnuplot */
  char dir[512];
  fresh_dir("plot_nogp", dir, sizeof dir);
  snprintf(path, sizeof path, "%s/fig", dir);
  o.prefix = path;
  o.gnuplot = "/nonexistent/gnuplot";
  assert_int_equal(cs_plot_write(p, &o, &err), CS_OK);
  assert_int_equal(count_files(dir, "fig."), 2);
  cs_plot_free(p);
}

static void render_reproducible(void **state) {
  (void)state;
  if (!have_gnuplot()) skip();
  struct cs_error err = {0};
  struct cs_plot *p = sample_plot();
  char dir[512], prefix[600], path[700];
  struct cs_plot_opts o =
      busbw_opts("plot_render", CS_PLOT_SVG | CS_PLOT_PNG, dir, sizeof dir, prefix, sizeof prefix);
  enum cs_status st = cs_plot_write(p, &o, &err);
  if (st != CS_OK) print_error("%s\n", err.msg);
  assert_int_equal(st, CS_OK);

  static const char *ext[] = {".dat", ".gp", ".svg", ".png"};
  char *first[4];
  size_t len[4];
  for (int i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s%s", prefix, ext[i]);
    first[i] = slurp(path, &len[i]);
    assert_non_null(first[i]);
    assert_true(len[i] > 100);
  }
  /* the SVG carries the series titles; the PNG is a PNG */
  assert_non_null(strstr(first[2], "<svg"));
  assert_non_null(strstr(first[2], "measured 1x2 ring/simple"));
  assert_non_null(strstr(first[2], "model 1x2 ring/simple"));
  assert_non_null(strstr(first[2], "predicted 4x8"));
  assert_non_null(strstr(first[2], "all_reduce bus bandwidth (test)"));
  assert_memory_equal(first[3], "\x89PNG", 4);
  /* the .gp refers to its data by file name and loads the template by full path */
  assert_non_null(strstr(first[1], "cs_data = 'busbw.dat'"));
  assert_non_null(strstr(first[1], "cs_ylog = 0\n"));
  assert_non_null(strstr(first[1], "/busbw.gp'"));
  assert_int_equal(count_files(dir, ".tmp"), 0);

  /* a second run gives byte-identical files */
  assert_int_equal(cs_plot_write(p, &o, &err), CS_OK);
  for (int i = 0; i < 3; i++) {
    size_t n;
    snprintf(path, sizeof path, "%s%s", prefix, ext[i]);
    char *again = slurp(path, &n);
    assert_non_null(again);
    assert_int_equal(n, len[i]);
    assert_memory_equal(again, first[i], n);
    free(again);
  }
  for (int i = 0; i < 4; i++)
    free(first[i]);
  assert_int_equal(count_files(dir, ".tmp"), 0);
  cs_plot_free(p);
}

static void missing_template(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_plot *p = sample_plot();
  char dir[512], prefix[600], tpl[1024];
  struct cs_plot_opts o =
      busbw_opts("plot_notpl", CS_PLOT_SVG, dir, sizeof dir, prefix, sizeof prefix);
  o.templates_dir = dir;
  assert_int_equal(cs_plot_write(p, &o, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, "busbw.gp not found"));
  assert_false(exists(prefix)); /* nothing written */
  assert_int_equal(count_files(dir, "busbw."), 0);
  /* the environment variable is authoritative too */
  o.templates_dir = NULL;
  setenv("COMMSCALE_PLOTS_DIR", dir, 1);
  assert_int_equal(cs_plot_find_template("busbw", NULL, tpl, sizeof tpl, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, "COMMSCALE_PLOTS_DIR"));
  unsetenv("COMMSCALE_PLOTS_DIR");
  /* without either, the build's plots/ holds it */
  assert_int_equal(cs_plot_find_template("busbw", NULL, tpl, sizeof tpl, &err), CS_OK);
  assert_true(exists(tpl));
  assert_int_equal(cs_plot_find_template("nosuch", NULL, tpl, sizeof tpl, &err), CS_ERR_IO);
  assert_non_null(strstr(err.msg, "COMMSCALE_PLOTS_DIR"));
  cs_plot_free(p);
}

static void gnuplot_missing(void **state) {
  (void)state;
  struct cs_error err = {0};
  struct cs_plot *p = sample_plot();
  char dir[512], prefix[600], path[700];
  struct cs_plot_opts o = busbw_opts("plot_nognuplot", CS_PLOT_SVG | CS_PLOT_PNG, dir, sizeof dir,
                                     prefix, sizeof prefix);
  o.gnuplot = "/nonexistent/gnuplot";
  assert_int_equal(cs_plot_write(p, &o, &err), CS_ERR_EXTERNAL);
  assert_non_null(strstr(err.msg, "cannot run gnuplot"));
  assert_non_null(strstr(err.msg, "busbw.gp"));
  /* the data and the script stay for the user; no image, no temporary file */
  snprintf(path, sizeof path, "%s.dat", prefix);
  assert_true(exists(path));
  snprintf(path, sizeof path, "%s.gp", prefix);
  assert_true(exists(path));
  assert_int_equal(count_files(dir, ".svg"), 0);
  assert_int_equal(count_files(dir, ".tmp"), 0);
  cs_plot_free(p);
}

static void gnuplot_fails(void **state) {
  (void)state;
  if (!have_gnuplot()) skip();
  struct cs_error err = {0};
  struct cs_plot *p = sample_plot();
  char dir[512], tdir[512], prefix[600], path[700];
  struct cs_plot_opts o =
      busbw_opts("plot_gpfail", CS_PLOT_SVG | CS_PLOT_PNG, dir, sizeof dir, prefix, sizeof prefix);
  fresh_dir("plot_badtpl", tdir, sizeof tdir);
  snprintf(path, sizeof path, "%s/busbw.gp", tdir);
  cs_test_write_file(path, "set xrange [1:2]\nplot cs_data index 0 using 1:2 with nosuchstyle\n");
  o.templates_dir = tdir;
  assert_int_equal(cs_plot_write(p, &o, &err), CS_ERR_EXTERNAL);
  assert_non_null(strstr(err.msg, "gnuplot failed"));
  assert_non_null(strstr(err.msg, "line 2")); /* gnuplot's own error line */
  assert_int_equal(count_files(dir, ".svg"), 0);
  assert_int_equal(count_files(dir, ".png"), 0);
  assert_int_equal(count_files(dir, ".tmp"), 0);
  cs_plot_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(busbw_convention),    cmocka_unit_test(dat_layout),
      cmocka_unit_test(series_errors),       cmocka_unit_test(bad_prefix),
      cmocka_unit_test(render_reproducible), cmocka_unit_test(missing_template),
      cmocka_unit_test(gnuplot_missing),     cmocka_unit_test(gnuplot_fails),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
