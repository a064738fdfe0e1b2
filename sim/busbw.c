/* busbw.c — see busbw.h. */
#include "busbw.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Passes a note to the caller's callback. */
__attribute__((format(printf, 2, 3))) static void note(const struct cs_busbw_spec *sp,
                                                       const char *fmt, ...) {
  if (!sp->note) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  sp->note(sp->ctx, msg);
}

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

/* Adds the measured series and the model's line for each shape found in rows[0..n) (sorted). */
static enum cs_status add_measured(struct cs_plot *p, const struct cs_cal *cal,
                                   const struct cs_meas_row *rows, size_t n, int show_launch,
                                   const struct cs_busbw_spec *sp, size_t *shapes,
                                   struct cs_error *err) {
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
      note(sp, "%s left out: %s", shape, e2.msg);
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
    if (s2 != CS_OK) note(sp, "no model line for %s: %s", shape, e2.msg);
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
                                    const struct cs_busbw_spec *pa, struct cs_error *err) {
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
      note(pa, "%s left out: %s", title, e2.msg);
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

/* The rows of set to draw (sp's collective, configuration and launch; out-of-place), sorted by
 * shape, in *rows (malloc'd); *launches has bit l set for each launch l among them. */
static enum cs_status select_rows(const struct cs_meas_set *set, const struct cs_busbw_spec *sp,
                                  struct cs_meas_row **rows, size_t *n, int *launches,
                                  struct cs_error *err) {
  size_t other_launch = 0;
  *n = 0, *launches = 0;
  if (!(*rows = malloc((set->n ? set->n : 1) * sizeof **rows)))
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < set->n; i++) {
    const struct cs_meas_row *r = &set->rows[i];
    if (r->coll != sp->coll || r->in_place || strcmp(r->config, sp->config) != 0) continue;
    if (sp->launch >= 0 && (int)r->launch != sp->launch) {
      other_launch++;
      continue;
    }
    *launches |= 1 << r->launch;
    (*rows)[(*n)++] = *r;
  }
  if (*n == 0) {
    char cfgs[512];
    list_configs(set, sp->coll, cfgs, sizeof cfgs);
    /* the data does not hold what was asked for: a failure (exit 1), not a usage error */
    return cs_error_set(err, CS_ERR_RANGE,
                        "no out-of-place %s rows with configuration \"%s\"%s%s in the %zu rows "
                        "read (configurations of %s: %s)",
                        cs_coll_name(sp->coll), sp->config, sp->launch >= 0 ? " and launch " : "",
                        sp->launch >= 0 ? cs_meas_launch_name(sp->launch) : "", set->n,
                        cs_coll_name(sp->coll), cfgs[0] ? cfgs : "none");
  }
  if (other_launch)
    note(sp,
         "%zu rows of another launch than the calibration's (%s) left out; --launch all draws "
         "them",
         other_launch, cs_meas_launch_name(sp->launch));
  qsort(*rows, *n, sizeof **rows, row_cmp);
  return CS_OK;
}

enum cs_status cs_busbw_figure(const struct cs_meas_set *set, const struct cs_cal *cal,
                               const struct cs_busbw_spec *sp, const struct cs_plot_opts *o,
                               struct cs_busbw_counts *out, struct cs_error *err) {
  struct cs_meas_row *rows = NULL;
  struct cs_plot *p = NULL;
  size_t n;
  int launches;
  out->shapes = 0;
  enum cs_status st = select_rows(set, sp, &rows, &n, &launches, err);
  if (st == CS_OK) {
    char title[256];
    snprintf(title, sizeof title,
             "%s bus bandwidth%s%s%s%s: measured, model, predicted at %d GPUs/node",
             cs_coll_name(sp->coll), cal->prov.gpu[0] ? ", " : "", cal->prov.gpu,
             sp->config[0] ? ", " : "", sp->config, sp->gpn);
    if (!(p = cs_plot_alloc("busbw", title, err))) st = err->status;
  }
  if (st == CS_OK) {
    p->ylog = sp->ylog;
    st = add_measured(p, cal, rows, n, launches == 3, sp, &out->shapes, err);
  }
  if (st == CS_OK && out->shapes == 0)
    st = cs_error_set(err, CS_ERR_RANGE, "none of the %zu matching rows has a bus bandwidth", n);
  if (st == CS_OK) st = add_predicted(p, cal, sp, err);
  if (st == CS_OK) st = cs_plot_write(p, o, err);
  cs_plot_free(p);
  free(rows);
  return st;
}
