/* stepfit.c — steps calibration; see stepfit.h. */
#include "stepfit.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calfile.h"
#include "datadir.h"
#include "gpu.h"
#include "input.h"
#include "plan.h"
#include "step.h"
#include "topology.h"
#include "workload.h"
#include "yamlcfg.h"

#define MAX_STEPS 256
#define COLLINEAR 0.995 /* |correlation| of two Jacobian columns beyond which one is not fitted */

struct entry {
  char name[160];
  struct cs_workload *w;
  struct cs_gpu gpu;
  struct cs_topology topo;
  struct cs_cal *cal; /* owned */
  struct cs_plan plan;
  double measured; /* seconds */
};

struct cs_steps {
  struct entry *e;
  size_t n;
};

size_t cs_steps_count(const struct cs_steps *s) {
  return s->n;
}

const char *cs_steps_name(const struct cs_steps *s, size_t i) {
  return s->e[i].name;
}

double cs_steps_measured(const struct cs_steps *s, size_t i) {
  return s->e[i].measured;
}

void cs_steps_free(struct cs_steps *s) {
  if (s == NULL) return;
  for (size_t i = 0; i < s->n; i++) {
    cs_workload_free(s->e[i].w);
    if (s->e[i].cal) cs_cal_fini(s->e[i].cal);
    free(s->e[i].cal);
  }
  free(s->e);
  free(s);
}

/* ---- reading -------------------------------------------------------------------------------- */

/* The folder of path with name appended, unless name is absolute. */
static void relative(const char *path, const char *name, char *out, size_t len) {
  const char *slash = strrchr(path, '/');
  if (name[0] == '/' || slash == NULL)
    snprintf(out, len, "%s", name);
  else
    snprintf(out, len, "%.*s/%s", (int)(slash - path), path, name);
}

static int is_file(const char *name) {
  return strchr(name, '/') != NULL || strstr(name, ".yaml") != NULL;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The step time in seconds that log `path` reports in `format`; gbs for deepspeed's rate. */
static enum cs_status log_step(const char *path, const char *format, double gbs, double *out,
                               struct cs_error *err) {
  /* through the input caps: a line of at most 1 MiB, a log of at most 256 MiB (log: /dev/zero
   * read forever in 4 KiB pieces, and a longer line was split into pieces read as lines) */
  FILE *f = cs_input_open(path, err);
  if (f == NULL) return err->status;
  double v[4096];
  size_t n = 0;
  int torch = strcmp(format, "torch") == 0, mega = strcmp(format, "megatron") == 0;
  struct cs_lines in = {.f = f, .path = path};
  while (n < 4096 && cs_lines_next(&in, err) >= 0) {
    const char *line = in.buf;
    const char *p = NULL, *key = NULL;
    if (torch && strncmp(line, "# result ", 9) == 0)
      key = " step_ms=";
    else if (mega)
      key = "elapsed time per iteration (ms):";
    else if (!torch && !mega)
      key = strstr(line, "samples/sec:") ? "samples/sec:" : "SamplesPerSec=";
    if (key == NULL || (p = strstr(line, key)) == NULL) continue;
    char *end;
    double x = strtod(p + strlen(key), &end);
    if (end != p + strlen(key) && isfinite(x) && x > 0) v[n++] = x;
    if (torch && n > 0) break; /* the first result line */
  }
  free(in.buf);
  fclose(f);
  if (in.st != CS_OK) return in.st;
  if (n == 0)
    return cs_error_set(err, CS_ERR_PARSE, "%s: no %s step line (%s)", path, format,
                        torch  ? "expected \"# result ... step_ms=X\""
                        : mega ? "expected \"elapsed time per iteration (ms): X\""
                               : "expected \"samples/sec: X\" or \"SamplesPerSec=X\"");
  qsort(v, n, sizeof *v, cmp_d);
  double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  if (torch || mega) {
    *out = med * 1e-3;
    return CS_OK;
  }
  if (!(gbs > 0))
    return cs_error_set(err, CS_ERR_PARSE, "%s: a deepspeed rate needs the plan's gbs", path);
  *out = gbs / med;
  return CS_OK;
}

static const char *text(const struct cs_yaml *d, int entry, int defaults, const char *key) {
  int n = entry ? cs_yaml_get(d, entry, key) : 0;
  if (n == 0 && defaults) n = cs_yaml_get(d, defaults, key);
  return n && cs_yaml_kind(d, n) == CS_YAML_SCALAR ? cs_yaml_scalar(d, n) : NULL;
}

static enum cs_status load_entry(const struct cs_yaml *d, const char *path, const char *exe,
                                 int item, int defaults, struct entry *e, struct cs_error *err) {
  static const char *const keys[] = {"name", "workload", "gpu", "topology", "cal", "plan",
                                     "gpus", "step",     "log", "format",   NULL};
  for (size_t k = 0; k < cs_yaml_len(d, item); k++) {
    const char *key = cs_yaml_scalar(d, cs_yaml_key(d, item, k));
    int ok = 0;
    for (int j = 0; keys[j] && key; j++)
      ok |= strcmp(key, keys[j]) == 0;
    if (!ok)
      return cs_yaml_error(d, cs_yaml_key(d, item, k), err, CS_ERR_PARSE,
                           "unknown key \"%s\"; expected name, workload, gpu, topology, cal, "
                           "plan, gpus, step, log or format",
                           key ? key : "");
  }
  const char *wl = text(d, item, defaults, "workload"), *gpu = text(d, item, defaults, "gpu");
  const char *topo = text(d, item, defaults, "topology"), *cal = text(d, item, defaults, "cal");
  const char *plan = text(d, item, 0, "plan");
  if (!wl || !gpu || !topo || !plan)
    return cs_yaml_error(d, item, err, CS_ERR_PARSE,
                         "a step needs workload, gpu, topology (here or in defaults) and plan");
  char buf[4096], found[4096];
  enum cs_status st;
  relative(path, wl, buf, sizeof buf);
  if ((st = cs_workload_load(buf, &e->w, err)) != CS_OK) return st;
  if (is_file(gpu)) {
    relative(path, gpu, found, sizeof found);
  } else if ((st = cs_datadir_find("gpus", "model/gpus", gpu, exe, found, sizeof found, err)) !=
             CS_OK)
    return st;
  if ((st = cs_gpu_load(found, &e->gpu, err)) != CS_OK) return st;
  if (is_file(topo))
    relative(path, topo, found, sizeof found);
  else if ((st = cs_topo_find(topo, found, sizeof found, err)) != CS_OK)
    return st;
  if ((st = cs_topo_load(found, &e->topo, err)) != CS_OK) return st;
  if ((e->cal = malloc(sizeof *e->cal)) == NULL)
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  cs_cal_init(e->cal);
  if (cal) {
    relative(path, cal, buf, sizeof buf);
    if ((st = cs_calfile_read(buf, e->cal, err)) != CS_OK) return st;
  }
  cs_plan_init(&e->plan);
  if ((st = cs_plan_parse(plan, &e->plan, err)) != CS_OK)
    return cs_yaml_error(d, cs_yaml_get(d, item, "plan"), err, CS_ERR_PARSE, "plan: %s", err->msg);
  int gn = cs_yaml_get(d, item, "gpus");
  long gpus = 1;
  if (gn && (st = cs_yaml_int(d, gn, 1, 1 << 24, &gpus, err)) != CS_OK) return st;
  long mp = (long)e->plan.tp * e->plan.pp * e->plan.cp;
  if (gpus % mp != 0)
    return cs_yaml_error(d, item, err, CS_ERR_PARSE, "%ld GPUs are not a multiple of tp*pp*cp %ld",
                         gpus, mp);
  e->plan.dp = (int)(gpus / mp);
  if ((st = cs_workload_check_plan(e->w, &e->plan, err)) != CS_OK) return st;
  int sn = cs_yaml_get(d, item, "step");
  const char *log = text(d, item, 0, "log"), *fmt = text(d, item, 0, "format");
  if (sn) {
    if ((st = cs_yaml_quantity(d, sn, CS_UNIT_TIME, &e->measured, err)) != CS_OK) return st;
  } else if (log) {
    fmt = fmt ? fmt : "torch";
    if (strcmp(fmt, "torch") && strcmp(fmt, "megatron") && strcmp(fmt, "deepspeed"))
      return cs_yaml_error(d, cs_yaml_get(d, item, "format"), err, CS_ERR_PARSE,
                           "format: expected torch, megatron or deepspeed, got \"%s\"", fmt);
    relative(path, log, buf, sizeof buf);
    if ((st = log_step(buf, fmt, e->plan.gbs, &e->measured, err)) != CS_OK) return st;
  } else {
    return cs_yaml_error(d, item, err, CS_ERR_PARSE, "a step needs step: TIME or log: FILE");
  }
  if (!(e->measured > 0))
    return cs_yaml_error(d, item, err, CS_ERR_PARSE, "the measured step must be positive");
  const char *name = text(d, item, 0, "name");
  if (name)
    snprintf(e->name, sizeof e->name, "%s", name);
  else
    snprintf(e->name, sizeof e->name, "%s on %ld GPUs", plan, gpus);
  return CS_OK;
}

enum cs_status cs_steps_load(const char *path, const char *exe, struct cs_steps **out,
                             struct cs_error *err) {
  *out = NULL;
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load(path, &d, err);
  if (st != CS_OK) return st;
  int root = cs_yaml_root(d);
  int ver = root && cs_yaml_kind(d, root) == CS_YAML_MAP ? cs_yaml_get(d, root, "version") : 0;
  long v = 0;
  if (ver == 0 || cs_yaml_int(d, ver, 1, 1, &v, err) != CS_OK) {
    st = cs_yaml_error(d, ver ? ver : root, err, CS_ERR_PARSE,
                       "expected a steps file: a mapping with version: 1, defaults and steps");
    cs_yaml_free(d);
    return st;
  }
  int defaults = cs_yaml_get(d, root, "defaults"), seq = cs_yaml_get(d, root, "steps");
  if (seq == 0 || cs_yaml_kind(d, seq) != CS_YAML_SEQ || cs_yaml_len(d, seq) == 0 ||
      cs_yaml_len(d, seq) > MAX_STEPS) {
    st = cs_yaml_error(d, seq ? seq : root, err, CS_ERR_PARSE,
                       "steps: expected a list of 1 to %d timed steps", MAX_STEPS);
    cs_yaml_free(d);
    return st;
  }
  struct cs_steps *s = calloc(1, sizeof *s);
  if (s) s->e = calloc(cs_yaml_len(d, seq), sizeof *s->e);
  if (s == NULL || s->e == NULL) {
    free(s);
    cs_yaml_free(d);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < cs_yaml_len(d, seq) && st == CS_OK; i++) {
    int item = cs_yaml_item(d, seq, i);
    if (cs_yaml_kind(d, item) != CS_YAML_MAP) {
      st = cs_yaml_error(d, item, err, CS_ERR_PARSE, "expected a step: {plan: ..., step: ...}");
      break;
    }
    s->n++;
    st = load_entry(d, path, exe, item, defaults, &s->e[i], err);
    if (st != CS_OK && strncmp(err->msg, path, strlen(path)) != 0) {
      long line, col;
      cs_yaml_mark(d, item, &line, &col);
      char pre[4200];
      snprintf(pre, sizeof pre, "%s:%ld:%ld", path, line, col);
      cs_error_prefix(err, pre);
    }
  }
  cs_yaml_free(d);
  if (st != CS_OK) {
    cs_steps_free(s);
    return st;
  }
  *out = s;
  return CS_OK;
}

/* ---- the model of a step ------------------------------------------------------------------- */

static enum cs_status predict(const struct entry *e, double scale, double host, double interf,
                              double *step, struct cs_error *err) {
  struct cs_compute c;
  enum cs_status st = cs_compute_init(&c, &e->gpu, e->plan.precision, err);
  if (st != CS_OK) return st;
  c.scale = scale;
  c.step_overhead = host;
  c.band_rel = 0; /* the fit reads the step alone */
  struct cs_sim_inputs in = {e->w, &e->plan, &c, &e->topo, e->cal, interf, NULL};
  struct cs_sim_result r;
  if ((st = cs_sim_predict(&in, &r, err)) != CS_OK) return st;
  *step = r.step;
  return CS_OK;
}

enum cs_status cs_steps_predict(const struct cs_steps *s, size_t i, const struct cs_cal_steps *f,
                                double *step, struct cs_error *err) {
  int fit = f && f->fitted;
  return predict(&s->e[i], fit ? f->compute_scale : 1, fit ? f->host_s : 0,
                 fit ? f->interference : CS_SIM_DEFAULT_INTERFERENCE, step, err);
}

/* ---- the fit -------------------------------------------------------------------------------- */

/* Parameters x: ln(compute scale), host overhead in ms, interference - 1; `use` says which of the
 * three are free (the others stay at fixed[]). */
struct fitctx {
  const struct cs_steps *s;
  int use[3];
  double fixed[3];
  struct cs_error err;
  int failed;
};

static void unpack(const struct fitctx *f, const gsl_vector *x, double p[3]) {
  size_t k = 0;
  for (int j = 0; j < 3; j++)
    p[j] = f->use[j] ? gsl_vector_get(x, k++) : f->fixed[j];
}

static int residuals(const gsl_vector *x, void *data, gsl_vector *r) {
  struct fitctx *f = data;
  double p[3];
  unpack(f, x, p);
  double scale = exp(p[0]), host = fmax(0, p[1]) * 1e-3, interf = 1 + fmax(0, p[2]);
  for (size_t i = 0; i < f->s->n; i++) {
    double t = 0;
    if (predict(&f->s->e[i], scale, host, interf, &t, &f->err) != CS_OK || !(t > 0)) {
      f->failed = 1;
      return GSL_EDOM;
    }
    gsl_vector_set(r, i, log(t / f->s->e[i].measured));
  }
  return GSL_SUCCESS;
}

static enum cs_status run_fit(struct fitctx *f, size_t np, double *x0, double *se, double *corr01,
                              struct cs_error *err) {
  size_t n = f->s->n;
  if (n <= np) return cs_error_set(err, CS_ERR_RANGE, "%zu steps cannot fit %zu parameters", n, np);
  gsl_multifit_nlinear_fdf fdf = {residuals, NULL, NULL, n, np, f, 0, 0, 0};
  gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
  gsl_multifit_nlinear_workspace *w =
      gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, n, np);
  gsl_matrix *cov = gsl_matrix_alloc(np, np);
  if (w == NULL || cov == NULL) {
    if (w) gsl_multifit_nlinear_free(w);
    if (cov) gsl_matrix_free(cov);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory for the steps fit");
  }
  gsl_vector_view xv = gsl_vector_view_array(x0, np);
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  int info = 0, gs = gsl_multifit_nlinear_init(&xv.vector, &fdf, w);
  if (gs == GSL_SUCCESS)
    gs = gsl_multifit_nlinear_driver(100, 1e-8, 1e-8, 1e-8, NULL, NULL, &info, w);
  enum cs_status st = CS_OK;
  if (f->failed) {
    *err = f->err;
    st = err->status ? err->status : CS_ERR_NUMERIC;
  } else if (gs != GSL_SUCCESS && gs != GSL_EMAXITER) {
    st = cs_error_set(err, CS_ERR_NUMERIC, "the steps fit did not converge (%s)", gsl_strerror(gs));
  } else {
    gsl_vector *x = gsl_multifit_nlinear_position(w);
    for (size_t k = 0; k < np; k++)
      x0[k] = gsl_vector_get(x, k);
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    gsl_multifit_nlinear_covar(J, 0.0, cov);
    gsl_vector *r = gsl_multifit_nlinear_residual(w);
    double chi2 = 0;
    gsl_blas_ddot(r, r, &chi2);
    double s2 = chi2 / (double)(n - np);
    for (size_t k = 0; k < np; k++)
      se[k] = sqrt(gsl_matrix_get(cov, k, k) * s2);
    *corr01 = np >= 2 ? gsl_matrix_get(cov, 0, 1) /
                            sqrt(gsl_matrix_get(cov, 0, 0) * gsl_matrix_get(cov, 1, 1))
                      : NAN;
  }
  gsl_set_error_handler(old);
  gsl_multifit_nlinear_free(w);
  gsl_matrix_free(cov);
  return st;
}

/* |correlation| of the responses of the steps to the compute scale and to the host overhead: the
 * two Jacobian columns by finite differences at the starting point. */
static double collinearity(const struct cs_steps *s, struct cs_error *err, enum cs_status *st) {
  size_t n = s->n;
  double *a = calloc(3 * n, sizeof *a);
  if (a == NULL) {
    *st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    return 0;
  }
  double *b = a + n, *c = a + 2 * n;
  for (size_t i = 0; i < n && *st == CS_OK; i++) {
    *st = predict(&s->e[i], 1, 0, CS_SIM_DEFAULT_INTERFERENCE, &a[i], err);
    if (*st == CS_OK) *st = predict(&s->e[i], 1.01, 0, CS_SIM_DEFAULT_INTERFERENCE, &b[i], err);
    if (*st == CS_OK) *st = predict(&s->e[i], 1, 1e-3, CS_SIM_DEFAULT_INTERFERENCE, &c[i], err);
  }
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (size_t i = 0; i < n && *st == CS_OK; i++) {
    double x = log(b[i] / a[i]), y = log(c[i] / a[i]);
    sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
  }
  free(a);
  double vx = sxx - sx * sx / n, vy = syy - sy * sy / n, cxy = sxy - sx * sy / n;
  return vx > 0 && vy > 0 ? fabs(cxy / sqrt(vx * vy)) : 1;
}

enum cs_status cs_steps_fit(const struct cs_steps *s, struct cs_cal_steps *out,
                            struct cs_error *err) {
  memset(out, 0, sizeof *out);
  struct fitctx f = {s, {1, 1, 0}, {0, 0, CS_SIM_DEFAULT_INTERFERENCE - 1}, {0}, 0};
  for (size_t i = 0; i < s->n; i++)
    if (s->e[i].plan.dp * s->e[i].plan.tp * s->e[i].plan.pp * s->e[i].plan.cp > 1) f.use[2] = 1;
  enum cs_status st = CS_OK;
  double coll = collinearity(s, err, &st);
  if (st != CS_OK) return st;
  if (coll > COLLINEAR) f.use[1] = 0; /* the host overhead is not determined: it stays 0 */
  double x[3], se[3] = {NAN, NAN, NAN}, corr = NAN;
  size_t np;
  for (int pass = 0;; pass++) {
    np = 0;
    for (int j = 0; j < 3; j++)
      if (f.use[j]) x[np++] = f.fixed[j] + (j == 2 ? 0.05 : 0);
    if ((st = run_fit(&f, np, x, se, &corr, err)) != CS_OK) return st;
    /* collinear at the solution though not at the start: the host is not determined after all */
    if (pass > 0 || !f.use[1] || !(fabs(corr) > COLLINEAR)) break;
    f.use[1] = 0;
  }
  double p[3], sp[3] = {NAN, NAN, NAN};
  size_t k = 0;
  for (int j = 0; j < 3; j++) {
    p[j] = f.use[j] ? x[k] : f.fixed[j];
    if (f.use[j]) sp[j] = se[k];
    k += f.use[j];
  }
  out->fitted = 1;
  out->compute_scale = exp(p[0]);
  out->compute_scale_se = out->compute_scale * sp[0];
  out->host_s = fmax(0, p[1]) * 1e-3;
  out->host_s_se = f.use[1] ? sp[1] * 1e-3 : NAN;
  out->interference = 1 + fmax(0, p[2]);
  out->interference_se = f.use[2] ? sp[2] : NAN;
  out->corr_scale_host = f.use[1] ? corr : NAN;
  out->points = (int)s->n;
  double *e = malloc(s->n * sizeof *e);
  if (e == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < s->n && st == CS_OK; i++) {
    double t = 0;
    st = cs_steps_predict(s, i, out, &t, err);
    e[i] = fabs(t / s->e[i].measured - 1);
  }
  if (st == CS_OK) {
    qsort(e, s->n, sizeof *e, cmp_d);
    out->median_rel_err = s->n % 2 ? e[s->n / 2] : 0.5 * (e[s->n / 2 - 1] + e[s->n / 2]);
    out->max_rel_err = e[s->n - 1];
  }
  free(e);
  return st;
}
