/* mpifit.c — weighted linear least squares of Open MPI's all_reduce laws (mpifit.h). */
#include "mpifit.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

struct pt {
  double x[CS_MPI_NPARAMS];
  double t;  /* seconds */
  double w;  /* robust weight in (0, 1] */
  int shape; /* index into the distinct shapes */
};

static void note(struct cs_mpifit_notes *n, const char *fmt, ...) {
  if (n == NULL || n->n >= CS_MPIFIT_MAX_NOTES) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(n->line[n->n++], sizeof n->line[0], fmt, ap);
  va_end(ap);
}

int cs_mpifit_applies(const struct cs_meas_set *meas) {
  const char *be = cs_meas_get_meta(meas, "backend");
  if (be == NULL || strcmp(be, "mpi") != 0) return 0;
  for (size_t i = 0; i < meas->n; i++) {
    const struct cs_meas_row *r = &meas->rows[i];
    if ((r->coll == CS_COLL_ALL_REDUCE || r->coll == CS_COLL_ALL_GATHER) && r->ranks > 1) return 1;
  }
  return 0;
}

/* Bytes per element of a dtype name as the runner writes it; 4 when unknown. */
static int elem_size(const char *dtype) {
  enum cs_dtype d;
  return cs_dtype_parse(dtype, &d) == 0 ? (int)cs_dtype_size(d) : 4;
}

/* Order in which undetermined parameters are given up: gamma first (it rides on beta), then the
 * rendezvous, the latencies, the bandwidths last. */
static const int give_up_order[CS_MPI_NPARAMS] = {CS_MPI_GAMMA,
                                                  CS_MPI_RNDV(CS_MPI_LOCAL),
                                                  CS_MPI_RNDV(CS_MPI_NET),
                                                  CS_MPI_BEYOND(CS_MPI_LOCAL),
                                                  CS_MPI_BEYOND(CS_MPI_NET),
                                                  CS_MPI_ALPHA(CS_MPI_LOCAL),
                                                  CS_MPI_ALPHA(CS_MPI_NET),
                                                  CS_MPI_BETA(CS_MPI_LOCAL),
                                                  CS_MPI_BETA(CS_MPI_NET)};

/* Fits theta over the points not of shape `skip` (-1: none) with the parameters of mask free (the
 * others 0). On return *mask holds those determined. Returns 0, or -1 when nothing is left to
 * fit or GSL fails. cov may be NULL. */
static int solve(const struct pt *p, size_t n, int skip, unsigned *mask,
                 double theta[CS_MPI_NPARAMS], double cov[CS_MPI_NPARAMS][CS_MPI_NPARAMS]) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    m += p[i].shape != skip;
  for (int i = 0; i < CS_MPI_NPARAMS; i++) { /* a parameter no used point touches is free */
    int touched = 0;
    for (size_t k = 0; k < n && !touched; k++)
      touched = p[k].shape != skip && p[k].x[i] != 0;
    if (!touched) *mask &= ~(1u << i);
  }
  for (;;) {
    int idx[CS_MPI_NPARAMS], k = 0;
    for (int i = 0; i < CS_MPI_NPARAMS; i++)
      if (*mask & (1u << i)) idx[k++] = i;
    if (k == 0 || m <= (size_t)k) return -1;
    gsl_matrix *X = gsl_matrix_alloc(m, (size_t)k), *C = gsl_matrix_alloc((size_t)k, (size_t)k);
    gsl_vector *w = gsl_vector_alloc(m), *y = gsl_vector_alloc(m), *c = gsl_vector_alloc((size_t)k);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc(m, (size_t)k);
    double scale[CS_MPI_NPARAMS] = {0};
    int rc = -1;
    if (X && C && w && y && c && ws) {
      size_t r = 0;
      for (size_t i = 0; i < n; i++) {
        if (p[i].shape == skip) continue;
        for (int j = 0; j < k; j++) {
          gsl_matrix_set(X, r, (size_t)j, p[i].x[idx[j]] / p[i].t);
          scale[j] += pow(p[i].x[idx[j]] / p[i].t, 2);
        }
        gsl_vector_set(y, r, 1.0); /* t / t: relative residuals */
        gsl_vector_set(w, r, p[i].w);
        r++;
      }
      for (int j = 0; j < k; j++) {
        scale[j] = sqrt(scale[j]);
        for (size_t i = 0; i < m; i++)
          gsl_matrix_set(X, i, (size_t)j, gsl_matrix_get(X, i, (size_t)j) / scale[j]);
      }
      double chisq = 0;
      size_t rank = 0;
      if (gsl_multifit_wlinear_tsvd(X, w, y, 1e-10, c, C, &chisq, &rank, ws) == GSL_SUCCESS) {
        double s2 = m > (size_t)k ? chisq / (double)(m - (size_t)k) : 0;
        int drop = -1;
        if (rank < (size_t)k) {
          for (int o = 0; o < CS_MPI_NPARAMS && drop < 0; o++)
            if (*mask & (1u << give_up_order[o])) drop = give_up_order[o];
        } else {
          for (int o = 0; o < CS_MPI_NPARAMS && drop < 0; o++)
            for (int j = 0; j < k; j++) {
              if (idx[j] != give_up_order[o]) continue;
              double v = gsl_vector_get(c, (size_t)j), se = sqrt(s2 * gsl_matrix_get(C, j, j));
              if (!(v > 0) || se > v) drop = idx[j];
            }
        }
        /* a bandwidth the data cannot place is crowded out by a term beside it: give that up */
        for (int t = 0; t < CS_MPI_TIER_COUNT && drop >= 0; t++) {
          if (drop != CS_MPI_BETA(t)) continue;
          for (int o = 0; o < CS_MPI_NPARAMS; o++) {
            int q = give_up_order[o];
            int beside = q == CS_MPI_GAMMA || q == CS_MPI_ALPHA(t) || q == CS_MPI_RNDV(t) ||
                         q == CS_MPI_BEYOND(t);
            if (beside && (*mask & (1u << q))) {
              drop = q;
              break;
            }
          }
        }
        if (drop >= 0) {
          *mask &= ~(1u << drop);
          rc = 1; /* refit without it */
        } else {
          for (int i = 0; i < CS_MPI_NPARAMS; i++)
            theta[i] = 0;
          for (int j = 0; j < k; j++)
            theta[idx[j]] = gsl_vector_get(c, (size_t)j) / scale[j];
          if (cov) {
            memset(cov, 0, sizeof(double) * CS_MPI_NPARAMS * CS_MPI_NPARAMS);
            for (int a = 0; a < k; a++)
              for (int b = 0; b < k; b++)
                cov[idx[a]][idx[b]] =
                    s2 * gsl_matrix_get(C, (size_t)a, (size_t)b) / (scale[a] * scale[b]);
          }
          rc = 0;
        }
      }
    }
    gsl_multifit_linear_free(ws);
    gsl_vector_free(c), gsl_vector_free(y), gsl_vector_free(w);
    gsl_matrix_free(C), gsl_matrix_free(X);
    if (rc <= 0) return rc;
  }
}

static double predict_pt(const struct pt *p, const double theta[CS_MPI_NPARAMS]) {
  double s = 0;
  for (int i = 0; i < CS_MPI_NPARAMS; i++)
    s += p->x[i] * theta[i];
  return s;
}

/* Iteratively reweighted least squares with Huber weights (k = 1.345 robust standard deviations,
 * the scale 1.4826 x the median absolute deviation of the relative residuals), as fit.h's fitter
 * does: a point the laws cannot explain (a stalled TCP exchange) is down-weighted, not kept at
 * full weight. r and a are scratch of n doubles. Returns solve()'s answer. */
static int irls(struct pt *p, size_t n, double *r, double *a, unsigned *mask,
                double theta[CS_MPI_NPARAMS], double cov[CS_MPI_NPARAMS][CS_MPI_NPARAMS]) {
  for (size_t i = 0; i < n; i++)
    p[i].w = 1;
  int rc = -1;
  for (int pass = 0; pass < 8; pass++) {
    unsigned m = *mask;
    if ((rc = solve(p, n, -1, &m, theta, cov)) != 0) return rc;
    for (size_t i = 0; i < n; i++) {
      r[i] = (predict_pt(&p[i], theta) - p[i].t) / p[i].t;
      a[i] = fabs(r[i]);
    }
    double s = cs_stats_robust_scale(a, n), change = 0;
    for (size_t i = 0; i < n && s > 0; i++) {
      double w = fabs(r[i]) <= 1.345 * s ? 1 : 1.345 * s / fabs(r[i]);
      change = fmax(change, fabs(w - p[i].w));
      p[i].w = w;
    }
    if (pass == 7 || change < 1e-3) {
      *mask = m;
      break;
    }
  }
  return rc;
}

/* Relative residuals of the points of shape `only` (-1: all) under theta into r; their number. */
static size_t residuals(const struct pt *p, size_t n, int only, const double *theta, double *r) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (only < 0 || p[i].shape == only) r[k++] = (predict_pt(&p[i], theta) - p[i].t) / p[i].t;
  return k;
}

static void set_library(const struct cs_meas_set *meas, struct cs_mpi_fit *f) {
  const char *lib = cs_meas_get_meta(meas, "mpi");
  snprintf(f->library, sizeof f->library, "%.*s", lib ? (int)strcspn(lib, ",") : 7,
           lib ? lib : "unknown");
}

/* The run's setup into f: its eager limits ("mpi_eager" provenance line) and rank placement
 * ("mpi_placement"), or notes that the laws assume Open MPI's defaults and blocks. */
static void set_setup(const struct cs_meas_set *meas, struct cs_mpi_fit *f,
                      struct cs_mpifit_notes *notes) {
  const char *s = cs_meas_get_meta(meas, "mpi_eager");
  if (!s || cs_mpi_eager_parse(s, f->setup.eager) != 0)
    note(notes, "%s: the laws use Open MPI 4.1's defaults (%.0f B across nodes, %.0f B within one)",
         s ? "the run's eager limits are not readable" : "the run recorded no eager limits",
         cs_mpi_eager_limit(CS_MPI_NET), cs_mpi_eager_limit(CS_MPI_LOCAL));
  const char *pl = cs_meas_get_meta(meas, "mpi_placement");
  f->setup.cyclic = 0;
  if (pl && cs_mpi_placement_parse(pl, &f->setup.cyclic) != 0)
    note(notes, "ranks placed neither in blocks nor round robin (%.40s): the laws assume blocks",
         pl);
}

/* The points the laws price, from meas into p (and their distinct shapes), with f's extents. */
struct points {
  struct pt *p;
  size_t n;
  int (*shapes)[2];
  int nshapes, es;
};

static void collect(const struct cs_meas_set *meas, struct points *P, struct cs_mpi_fit *f,
                    struct cs_mpifit_notes *notes) {
  size_t mixed = 0, bad_tag = 0;
  for (size_t i = 0; i < meas->n; i++) {
    const struct cs_meas_row *row = &meas->rows[i];
    int tier = cs_mpi_tier_of(row->nodes, row->gpus_per_node);
    int alg = cs_mpi_row_coll_alg(row->coll, row->config);
    if ((row->coll != CS_COLL_ALL_REDUCE && row->coll != CS_COLL_ALL_GATHER) || row->ranks < 2 ||
        !(row->time_us > 0))
      continue;
    if (alg < 0) {
      bad_tag++;
      continue;
    }
    if (P->es == 0) P->es = elem_size(row->dtype);
    struct pt *q = &P->p[P->n];
    int run = cs_mpi_choice(row->coll, alg, row->ranks, row->bytes, P->es);
    if (run < 0 || cs_mpi_law_shape(row->coll, run, row->nodes, row->gpus_per_node, row->bytes,
                                    &f->setup, q->x) != 0)
      continue;
    int s = 0;
    while (s < P->nshapes &&
           !(P->shapes[s][0] == row->nodes && P->shapes[s][1] == row->gpus_per_node))
      s++;
    if (s == P->nshapes) {
      P->shapes[s][0] = row->nodes, P->shapes[s][1] = row->gpus_per_node;
      P->nshapes++;
    }
    q->shape = s;
    q->t = row->time_us * 1e-6;
    if (row->nodes > f->max_nodes && row->nodes > 1) f->max_nodes = row->nodes;
    if (row->gpus_per_node > f->max_ranks_local && row->gpus_per_node > 1)
      f->max_ranks_local = row->gpus_per_node;
    mixed += tier < 0;
    P->n++;
  }
  if (mixed)
    note(notes, "%zu rows of several nodes x several ranks, priced by the algorithms' schedules",
         mixed);
  if (bad_tag) note(notes, "%zu rows name an Open MPI algorithm number it does not have", bad_tag);
}

/* f's quality from the fitted points: median, max and robust scale of the relative residuals, and
 * leave-one-shape-out cross-validation. r and a are scratch of P->n doubles. */
static void quality(const struct points *P, unsigned mask, struct cs_mpi_fit *f, double *r,
                    double *a) {
  size_t k = residuals(P->p, P->n, -1, f->theta, r);
  for (size_t i = 0; i < k; i++)
    a[i] = fabs(r[i]);
  f->median_rel_err = cs_stats_median(a, k);
  f->max_rel_err = a[k - 1]; /* sorted by the median */
  double med = cs_stats_median(r, k);
  for (size_t i = 0; i < k; i++)
    a[i] = fabs(r[i] - med);
  f->noise_rel = cs_stats_robust_scale(a, k);
  double cv[64];
  int ncv = 0;
  for (int s = 0; s < P->nshapes && ncv < 64 && P->nshapes > 1; s++) {
    unsigned m2 = mask;
    double th[CS_MPI_NPARAMS];
    if (solve(P->p, P->n, s, &m2, th, NULL) != 0) continue;
    /* a held-out shape whose tiers the rest cannot price tells nothing */
    if ((P->shapes[s][0] > 1 && !(m2 & (1u << CS_MPI_BETA(CS_MPI_NET)))) ||
        (P->shapes[s][1] > 1 && !(m2 & (1u << CS_MPI_BETA(CS_MPI_LOCAL)))))
      continue;
    size_t ks = residuals(P->p, P->n, s, th, r);
    for (size_t i = 0; i < ks; i++)
      r[i] = fabs(r[i]);
    cv[ncv++] = cs_stats_median(r, ks);
  }
  f->cv_median_rel_err = ncv ? cs_stats_median(cv, (size_t)ncv) : NAN;
}

enum cs_status cs_mpifit_run(const struct cs_meas_set *meas, struct cs_mpi_fit *f,
                             struct cs_mpifit_notes *notes, struct cs_error *err) {
  memset(f, 0, sizeof *f);
  struct points P = {calloc(meas->n + 1, sizeof *P.p), 0, calloc(meas->n + 1, sizeof *P.shapes), 0,
                     0};
  double *r = calloc(meas->n + 1, sizeof *r), *a = calloc(meas->n + 1, sizeof *a);
  enum cs_status st = CS_OK;
  unsigned mask = (1u << CS_MPI_NPARAMS) - 1;
  if (!P.p || !P.shapes || !r || !a) {
    st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  } else {
    set_setup(meas, f, notes);
    collect(meas, &P, f, notes);
    if (P.n < 3)
      st = cs_error_set(err, CS_ERR_RANGE,
                        "only %zu all_reduce or all_gather rows of one rank per node or one node "
                        "(need at least 3)",
                        P.n);
    else if (irls(P.p, P.n, r, a, &mask, f->theta, f->cov) != 0)
      st = cs_error_set(err, CS_ERR_RANGE,
                        "the MPI rows determine no law parameter: measure more sizes "
                        "and rank counts");
  }
  if (st == CS_OK) {
    f->determined = mask;
    f->elem_size = P.es;
    f->points = (int)P.n;
    int measured[CS_MPI_TIER_COUNT] = {f->max_ranks_local > 0, f->max_nodes > 0};
    for (int t = 0; t < CS_MPI_TIER_COUNT; t++)
      if (!measured[t])
        note(notes, "no rows %s: its parameters are not fitted",
             t == CS_MPI_NET ? "of one rank per node across nodes" : "within one node");
    for (int i = 0; i < CS_MPI_NPARAMS; i++) {
      /* a tier's four parameters start at CS_MPI_ALPHA(t) = t * CS_MPI_ALPHA(1) */
      int tier = i == CS_MPI_GAMMA ? -1 : i / CS_MPI_ALPHA(1);
      if (!(mask & (1u << i)) && (tier < 0 || measured[tier]))
        note(notes, "%s not determined by these rows: set to 0", cs_mpi_param_name(i));
    }
    quality(&P, mask, f, r, a);
    set_library(meas, f);
    f->fitted = 1;
  } else {
    memset(f, 0, sizeof *f);
  }
  free(P.p), free(P.shapes), free(r), free(a);
  return st;
}
