/* probe.c — reading and writing the compute-probe CSV, and turning its GEMM rows into the compute
 * model's efficiency table; see probe.h.
 *
 * The framing (magic line, provenance, header, quoting) is csv.h's, as for the measurements CSV:
 * columns found by header name, every field checked where it enters, the first bad one reported
 * as "path:line:col". Fields that only one kind fills (tflops, GBps, factor) may be empty in the
 * others.
 */
#include "probe.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void cs_probe_set_init(struct cs_probe_set *set) {
  memset(set, 0, sizeof *set);
}

void cs_probe_set_fini(struct cs_probe_set *set) {
  if (set == NULL) return;
  free(set->rows);
  free(set->meta);
  memset(set, 0, sizeof *set);
}

enum cs_status cs_probe_set_push(struct cs_probe_set *set, const struct cs_probe_row *row,
                                 struct cs_error *err) {
  void *p = set->rows;
  enum cs_status st =
      cs_csv_push(&p, &set->n, &set->cap, sizeof *set->rows, row, "probe rows", err);
  set->rows = p;
  return st;
}

static void copy_str(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src ? src : "");
}

enum cs_status cs_probe_set_meta(struct cs_probe_set *set, const char *key, const char *value,
                                 struct cs_error *err) {
  return cs_csv_meta_set(&set->meta, &set->n_meta, &set->cap_meta, key, value, err);
}

const char *cs_probe_get_meta(const struct cs_probe_set *set, const char *key) {
  return cs_csv_meta_get(set->meta, set->n_meta, key);
}

/* ---- names --------------------------------------------------------------------------------- */

static const char *const kind_names[CS_PROBE_KIND_COUNT] = {
    "gemm", "membw", "interference", "launch", "attn_fwd", "attn_bwd", "memop"};
static const char *const dtype_names[CS_PROBE_DTYPE_COUNT] = {"bf16", "fp16", "tf32", "fp32",
                                                              "fp8"};

const char *cs_probe_kind_name(enum cs_probe_kind k) {
  return (unsigned)k < CS_PROBE_KIND_COUNT ? kind_names[k] : "?";
}

int cs_probe_kind_parse(const char *name, enum cs_probe_kind *out) {
  if (name == NULL) return -1;
  for (int k = 0; k < CS_PROBE_KIND_COUNT; k++)
    if (strcmp(name, kind_names[k]) == 0) {
      *out = (enum cs_probe_kind)k;
      return 0;
    }
  return -1;
}

const char *cs_probe_dtype_name(enum cs_probe_dtype d) {
  return (unsigned)d < CS_PROBE_DTYPE_COUNT ? dtype_names[d] : "?";
}

int cs_probe_dtype_parse(const char *name, enum cs_probe_dtype *out) {
  static const struct {
    const char *s;
    enum cs_probe_dtype d;
  } alias[] = {{"bf16", CS_PROBE_BF16}, {"bfloat16", CS_PROBE_BF16}, {"fp16", CS_PROBE_FP16},
               {"half", CS_PROBE_FP16}, {"float16", CS_PROBE_FP16},  {"tf32", CS_PROBE_TF32},
               {"fp32", CS_PROBE_FP32}, {"float", CS_PROBE_FP32},    {"float32", CS_PROBE_FP32},
               {"fp8", CS_PROBE_FP8},   {"fp8_e4m3", CS_PROBE_FP8},  {"e4m3", CS_PROBE_FP8}};
  if (name == NULL) return -1;
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (strcasecmp(name, alias[i].s) == 0) {
      *out = alias[i].d;
      return 0;
    }
  return -1;
}

/* One parser for both lists: names[] in order, "all" for every bit. */
static enum cs_status parse_list(const char *list, const char *what, int count,
                                 int (*parse)(const char *, int *), const char *expected,
                                 unsigned *bits, struct cs_error *err) {
  char buf[256];
  if (snprintf(buf, sizeof buf, "%s", list ? list : "") >= (int)sizeof buf)
    return cs_error_set(err, CS_ERR_USAGE, "%s: list too long", what);
  unsigned sel = 0;
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int v;
    if (strcmp(t, "all") == 0)
      sel |= CS_PROBE_BIT(count) - 1u;
    else if (parse(t, &v) == 0)
      sel |= CS_PROBE_BIT(v);
    else
      return cs_error_set(err, CS_ERR_USAGE, "%s: unknown item \"%s\" (expected %s or all)", what,
                          t, expected);
  }
  if (sel == 0) return cs_error_set(err, CS_ERR_USAGE, "%s: empty list", what);
  *bits = sel;
  return CS_OK;
}

static int kind_int(const char *s, int *v) {
  enum cs_probe_kind k;
  if (cs_probe_kind_parse(s, &k) != 0 || k >= CS_PROBE_RUNNER_KIND_COUNT) return -1;
  *v = (int)k;
  return 0;
}

static int dtype_int(const char *s, int *v) {
  enum cs_probe_dtype d;
  if (cs_probe_dtype_parse(s, &d) != 0) return -1;
  *v = (int)d;
  return 0;
}

enum cs_status cs_probe_parse_kinds(const char *list, unsigned *bits, struct cs_error *err) {
  return parse_list(list, "--probes", CS_PROBE_RUNNER_KIND_COUNT, kind_int,
                    "gemm, membw, interference, launch", bits, err);
}

enum cs_status cs_probe_parse_dtypes(const char *list, unsigned *bits, struct cs_error *err) {
  return parse_list(list, "--probe-dtypes", CS_PROBE_DTYPE_COUNT, dtype_int,
                    "bf16, fp16, tf32, fp32, fp8", bits, err);
}

/* ---- writing ------------------------------------------------------------------------------- */

static void put_opt(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.6g", v);
  fputc(',', f);
}

enum cs_status cs_probe_write_header(FILE *f, const struct cs_probe_set *meta_from,
                                     struct cs_error *err) {
  return cs_csv_write_header(f, CS_PROBE_MAGIC, meta_from ? meta_from->meta : NULL,
                             meta_from ? meta_from->n_meta : 0, CS_PROBE_HEADER, "probe rows", err);
}

enum cs_status cs_probe_write_row(FILE *f, const struct cs_probe_row *r, struct cs_error *err) {
  fprintf(f, "%s,", cs_probe_kind_name(r->kind));
  cs_csv_put_field(f, r->dtype);
  fprintf(f, ",%.0f,%.0f,%.0f,%.0f,%.6g,", r->m, r->n, r->k, r->bytes, r->time_us);
  put_opt(f, r->time_min_us);
  put_opt(f, r->time_max_us);
  if (r->trials > 0) fprintf(f, "%d", r->trials);
  fputc(',', f);
  put_opt(f, r->tflops);
  put_opt(f, r->GBps);
  put_opt(f, r->frac_peak);
  put_opt(f, r->factor);
  cs_csv_put_field(f, r->gpu);
  fputc(',', f);
  cs_csv_put_field(f, r->source);
  fputc('\n', f);
  if (fflush(f) != 0 || ferror(f))
    return cs_error_set(err, CS_ERR_IO, "cannot write probe rows: %s", strerror(errno));
  return CS_OK;
}

/* ---- reading ------------------------------------------------------------------------------- */

enum col {
  C_KIND,
  C_DTYPE,
  C_M,
  C_N,
  C_K,
  C_BYTES,
  C_TIME,
  C_TMIN,
  C_TMAX,
  C_TRIALS,
  C_TFLOPS,
  C_GBPS,
  C_FRAC,
  C_FACTOR,
  C_GPU,
  C_SOURCE,
  C_COUNT
};
static const char *const col_names[C_COUNT] = {
    "kind",        "dtype",  "m",      "n",    "k",         "bytes",  "time_us", "time_min_us",
    "time_max_us", "trials", "tflops", "GBps", "frac_peak", "factor", "gpu",     "source"};
static const int col_required[C_COUNT] = {1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0};

/* A whole GEMM dimension in [1, 2^31), or 0 when zero_ok. */
static int read_dim(const char *s, int zero_ok, double *out) {
  double v;
  if (cs_csv_number(s, 0, &v) != 0 || v != floor(v) || v >= 2147483648.0 || (v < 1 && !zero_ok))
    return -1;
  *out = v;
  return 0;
}

/* Checks one data row's fields into r; returns the bad column and what it expected, or -1. */
static int parse_row(const struct cs_csv_row *in, struct cs_probe_row *r, const char **what) {
#define FIELD(c) (in->field[c])
  memset(r, 0, sizeof *r);
  r->time_min_us = r->time_max_us = r->tflops = r->GBps = r->frac_peak = r->factor = NAN;
  enum cs_probe_dtype d;
  if (cs_probe_kind_parse(FIELD(C_KIND), &r->kind) != 0)
    return *what = "gemm, membw, interference, launch, attn_fwd, attn_bwd or memop", C_KIND;
  const char *dt = FIELD(C_DTYPE);
  /* products (a shape and TFLOP/s), streams (GB/s) and the launch floor (a time) */
  int gemm = r->kind == CS_PROBE_GEMM || r->kind == CS_PROBE_INTERFERENCE ||
             r->kind == CS_PROBE_ATTN_FWD || r->kind == CS_PROBE_ATTN_BWD;
  int stream = r->kind == CS_PROBE_MEMBW || r->kind == CS_PROBE_MEMOP;
  if (r->kind == CS_PROBE_MEMBW) {
    if (strcmp(dt, "copy") != 0 && strcmp(dt, "memset") != 0)
      return *what = "copy or memset (a membw row)", C_DTYPE;
    copy_str(r->dtype, sizeof r->dtype, dt);
  } else if (r->kind == CS_PROBE_LAUNCH) {
    if (strcmp(dt, "device") != 0 && strcmp(dt, "host") != 0 && strcmp(dt, "eager") != 0 &&
        strcmp(dt, "eager_layer") != 0)
      return *what = "device, host, eager or eager_layer (a launch row)", C_DTYPE;
    copy_str(r->dtype, sizeof r->dtype, dt);
  } else if (r->kind == CS_PROBE_MEMOP) {
    size_t len = strlen(dt);
    if (len == 0 || len >= sizeof r->dtype ||
        strspn(dt, "abcdefghijklmnopqrstuvwxyz0123456789_") != len)
      return *what = "an operation name of a-z, 0-9 and _ (a memop row)", C_DTYPE;
    copy_str(r->dtype, sizeof r->dtype, dt);
  } else {
    if (cs_probe_dtype_parse(dt, &d) != 0) return *what = "bf16, fp16, tf32, fp32 or fp8", C_DTYPE;
    copy_str(r->dtype, sizeof r->dtype, cs_probe_dtype_name(d));
  }
  if (read_dim(FIELD(C_M), !gemm, &r->m) != 0) return *what = "a whole dimension >= 1", C_M;
  if (read_dim(FIELD(C_N), !gemm, &r->n) != 0) return *what = "a whole dimension >= 1", C_N;
  if (read_dim(FIELD(C_K), !gemm, &r->k) != 0) return *what = "a whole dimension >= 1", C_K;
  if (cs_csv_number(FIELD(C_BYTES), 0, &r->bytes) != 0 || r->bytes != floor(r->bytes) ||
      r->bytes > 1.2e15)
    return *what = "a whole number of bytes up to 2^50", C_BYTES;
  if (cs_csv_number(FIELD(C_TIME), 0, &r->time_us) != 0 || r->time_us <= 0)
    return *what = "a time in microseconds > 0", C_TIME;
  if (cs_csv_number(FIELD(C_TMIN), 1, &r->time_min_us) != 0)
    return *what = "a time in microseconds or nothing", C_TMIN;
  if (cs_csv_number(FIELD(C_TMAX), 1, &r->time_max_us) != 0)
    return *what = "a time in microseconds or nothing", C_TMAX;
  double t = 0;
  if (*FIELD(C_TRIALS)) {
    if (cs_csv_number(FIELD(C_TRIALS), 0, &t) != 0 || t != floor(t) || t > 1e9)
      return *what = "a trial count", C_TRIALS;
    r->trials = (int)t;
  }
  if (cs_csv_number(FIELD(C_TFLOPS), !gemm, &r->tflops) != 0 || (gemm && r->tflops <= 0))
    return *what = gemm ? "TFLOP/s > 0" : "TFLOP/s or nothing", C_TFLOPS;
  if (cs_csv_number(FIELD(C_GBPS), !stream, &r->GBps) != 0 || (stream && r->GBps <= 0))
    return *what = stream ? "GB/s > 0 (a membw or memop row)" : "GB/s or nothing", C_GBPS;
  if (cs_csv_number(FIELD(C_FRAC), 1, &r->frac_peak) != 0)
    return *what = "a fraction or nothing", C_FRAC;
  if (cs_csv_number(FIELD(C_FACTOR), r->kind != CS_PROBE_INTERFERENCE, &r->factor) != 0 ||
      (r->kind == CS_PROBE_INTERFERENCE && r->factor <= 0))
    return *what =
               r->kind == CS_PROBE_INTERFERENCE ? "a slowdown factor > 0" : "a factor or nothing",
           C_FACTOR;
  copy_str(r->gpu, sizeof r->gpu, FIELD(C_GPU));
  copy_str(r->source, sizeof r->source, FIELD(C_SOURCE));
  return -1;
#undef FIELD
}

static const struct cs_csv_format format = {
    CS_PROBE_MAGIC, "kind,",      "probe", "expected the header \"" CS_PROBE_HEADER "\"",
    col_names,      col_required, C_COUNT};

static enum cs_status add_meta(void *set, const char *key, const char *value,
                               struct cs_error *err) {
  return cs_probe_set_meta(set, key, value, err);
}

static enum cs_status add_row(void *set, const struct cs_csv_row *in, struct cs_error *err) {
  struct cs_probe_row r;
  const char *what = "";
  int bad = parse_row(in, &r, &what);
  if (bad >= 0) return cs_csv_reject(in, bad, what, err);
  if (r.source[0] == '\0') snprintf(r.source, sizeof r.source, "%.100s:%ld", in->path, in->line);
  return cs_probe_set_push(set, &r, err);
}

enum cs_status cs_probe_read_file(const char *path, struct cs_probe_set *set,
                                  struct cs_error *err) {
  return cs_csv_read(path, &format, add_meta, add_row, set, err);
}

int cs_probe_same_point(const struct cs_probe_row *a, const struct cs_probe_row *b) {
  return a->kind == b->kind && strcmp(a->dtype, b->dtype) == 0 && a->m == b->m && a->n == b->n &&
         a->k == b->k && a->bytes == b->bytes && strcmp(a->gpu, b->gpu) == 0;
}

/* ---- the compute model's table -------------------------------------------------------------- */

enum cs_status cs_probe_gemm_table(const struct cs_probe_set *set, const char *dtype, double peak,
                                   struct cs_gemm_point **pts, size_t *n, struct cs_error *err) {
  *pts = NULL;
  *n = 0;
  if (!(peak > 0) || !isfinite(peak))
    return cs_error_set(err, CS_ERR_RANGE, "GEMM table: the peak must be > 0 FLOP/s");
  enum cs_probe_dtype want;
  if (cs_probe_dtype_parse(dtype, &want) != 0)
    return cs_error_set(err, CS_ERR_UNSUPPORTED, "GEMM table: no probe dtype \"%s\"", dtype);
  const char *name = cs_probe_dtype_name(want);
  size_t count = 0;
  unsigned seen = 0;
  for (size_t i = 0; i < set->n; i++) {
    const struct cs_probe_row *r = &set->rows[i];
    if (r->kind != CS_PROBE_GEMM) continue;
    enum cs_probe_dtype d;
    if (cs_probe_dtype_parse(r->dtype, &d) == 0) seen |= CS_PROBE_BIT(d);
    count += strcmp(r->dtype, name) == 0;
  }
  if (count == 0) {
    char have[128] = "";
    size_t used = 0;
    for (int d = 0; d < CS_PROBE_DTYPE_COUNT; d++)
      if (seen & CS_PROBE_BIT(d))
        used += (size_t)snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "",
                                 cs_probe_dtype_name((enum cs_probe_dtype)d));
    return cs_error_set(err, CS_ERR_UNSUPPORTED, "no gemm rows of dtype %s (the file has %s)", name,
                        used ? have : "no gemm rows");
  }
  struct cs_gemm_point *p = malloc(count * sizeof *p);
  int *reps = calloc(count, sizeof *reps);
  if (p == NULL || reps == NULL) {
    free(p);
    free(reps);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory building the GEMM table");
  }
  size_t np = 0;
  for (size_t i = 0; i < set->n; i++) {
    const struct cs_probe_row *r = &set->rows[i];
    if (r->kind != CS_PROBE_GEMM || strcmp(r->dtype, name) != 0) continue;
    double eff = r->tflops * 1e12 / peak;
    size_t j = 0;
    while (j < np && !(p[j].m == r->m && p[j].n == r->n && p[j].k == r->k))
      j++;
    if (j == np) {
      p[np++] = (struct cs_gemm_point){r->m, r->n, r->k, 0};
    }
    /* running mean over repeated runs of one shape */
    reps[j]++;
    p[j].efficiency += (eff - p[j].efficiency) / reps[j];
  }
  free(reps);
  *pts = p;
  *n = np;
  return CS_OK;
}

/* ---- attention, memory-bound kernels, launch floor ------------------------------------------ */

enum cs_status cs_probe_attn_table(const struct cs_probe_set *set, double peak,
                                   struct cs_attn_point **pts, size_t *n, struct cs_error *err) {
  *pts = NULL;
  *n = 0;
  if (!(peak > 0) || !isfinite(peak))
    return cs_error_set(err, CS_ERR_RANGE, "attention table: the peak must be > 0 FLOP/s");
  size_t count = 0;
  for (size_t i = 0; i < set->n; i++)
    count += set->rows[i].kind == CS_PROBE_ATTN_FWD;
  if (count == 0) return cs_error_set(err, CS_ERR_UNSUPPORTED, "no attn_fwd rows");
  struct cs_attn_point *p = calloc(count, sizeof *p);
  int *nf = calloc(count, sizeof *nf), *nb = calloc(count, sizeof *nb);
  if (p == NULL || nf == NULL || nb == NULL) {
    free(p), free(nf), free(nb);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory building the attention table");
  }
  size_t np = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < set->n; i++) {
      const struct cs_probe_row *r = &set->rows[i];
      int bwd = r->kind == CS_PROBE_ATTN_BWD;
      if (r->kind != (pass ? CS_PROBE_ATTN_BWD : CS_PROBE_ATTN_FWD)) continue;
      size_t j = 0;
      while (j < np && !(p[j].s == r->m && p[j].d == r->n && p[j].bh == r->k))
        j++;
      if (j == np) {
        if (bwd) continue; /* a backward without its forward */
        p[np++] = (struct cs_attn_point){r->m, r->n, r->k, 0, 0};
      }
      double eff = r->tflops * 1e12 / peak;
      if (bwd)
        p[j].eff_bwd += (eff - p[j].eff_bwd) / ++nb[j];
      else
        p[j].eff_fwd += (eff - p[j].eff_fwd) / ++nf[j];
    }
  /* keep the shapes measured both ways */
  size_t k = 0;
  for (size_t j = 0; j < np; j++)
    if (nb[j] > 0 && p[j].eff_fwd > 0 && p[j].eff_bwd > 0) p[k++] = p[j];
  free(nf), free(nb);
  if (k == 0) {
    free(p);
    return cs_error_set(err, CS_ERR_UNSUPPORTED, "no attention shape with attn_fwd and attn_bwd");
  }
  *pts = p;
  *n = k;
  return CS_OK;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_dbl);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The time of the memop row named `name` at the shape of r (same m, n), or 0. */
static double memop_time(const struct cs_probe_set *set, const char *name, double m, double n) {
  for (size_t i = 0; i < set->n; i++) {
    const struct cs_probe_row *r = &set->rows[i];
    if (r->kind == CS_PROBE_MEMOP && strcmp(r->dtype, name) == 0 && r->m == m && r->n == n)
      return r->time_us * 1e-6;
  }
  return 0;
}

void cs_probe_memop_bw(const struct cs_probe_set *set, double e, double adam,
                       double bw[CS_MEM_CLASS_COUNT], unsigned *have) {
  double v[CS_MEM_CLASS_COUNT][64];
  size_t nv[CS_MEM_CLASS_COUNT] = {0};
  for (size_t i = 0; i < set->n; i++) {
    const struct cs_probe_row *r = &set->rows[i];
    int cls = -1;
    double bytes = 0, t = r->time_us * 1e-6;
    if (r->kind == CS_PROBE_MEMBW && strcmp(r->dtype, "copy") == 0) {
      cls = CS_MEM_COPY, bytes = r->bytes;
    } else if (r->kind != CS_PROBE_MEMOP) {
      continue;
    } else if (strcmp(r->dtype, "layernorm_fwd") == 0 || strcmp(r->dtype, "gelu_fwd") == 0) {
      /* forward 2 T n e, backward twice that: set against the two kernels' times together */
      int norm = r->dtype[0] == 'l';
      double tb = memop_time(set, norm ? "layernorm_bwd" : "gelu_bwd", r->m, r->n);
      if (!(tb > 0)) continue;
      cls = norm ? CS_MEM_NORM : CS_MEM_ACT, bytes = 3 * 2 * r->m * r->n * e, t += tb;
    } else if (strcmp(r->dtype, "residual_add") == 0) {
      cls = CS_MEM_RESIDUAL, bytes = 3 * r->m * r->n * e;
    } else if (strcmp(r->dtype, "softmax_fwd") == 0) {
      cls = CS_MEM_SOFTMAX, bytes = 2 * r->m * r->n * e;
    } else if (strcmp(r->dtype, "cross_entropy") == 0) {
      cls = CS_MEM_XENT, bytes = (12 + 24) * r->m * r->n; /* forward and backward together */
    } else if (strcmp(r->dtype, "adamw") == 0) {
      cls = CS_MEM_OPTIM, bytes = adam * r->m;
    } else if (strcmp(r->dtype, "qkv_grad_cat") == 0) {
      cls = CS_MEM_GATHER, bytes = 2 * r->m * r->n * e;
    } else if (strcmp(r->dtype, "bias_grad") == 0) {
      cls = CS_MEM_REDUCE, bytes = r->m * r->n * e;
    } else if (strcmp(r->dtype, "grad_cast") == 0) {
      cls = CS_MEM_CAST, bytes = r->m * r->n * (4 + e); /* fp32 weights */
    }
    if (cls < 0 || !(t > 0) || !(bytes > 0) || nv[cls] >= 64) continue;
    v[cls][nv[cls]++] = bytes / t;
  }
  for (int c = 0; c < CS_MEM_CLASS_COUNT; c++)
    if (nv[c] > 0) {
      bw[c] = median_of(v[c], nv[c]);
      if (have) *have |= 1u << c;
    }
}

void cs_probe_launch(const struct cs_probe_set *set, double *kernel_s, double *host_layer_s) {
  for (size_t i = 0; i < set->n; i++) {
    const struct cs_probe_row *r = &set->rows[i];
    if (r->kind != CS_PROBE_LAUNCH) continue;
    if (strcmp(r->dtype, "device") == 0 && kernel_s) *kernel_s = r->time_us * 1e-6;
    (void)host_layer_s; /* eager_layer rows are kept for reference only (see probe.h) */
  }
}
