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

static const char *const kind_names[CS_PROBE_KIND_COUNT] = {"gemm", "membw", "interference"};
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
  if (cs_probe_kind_parse(s, &k) != 0) return -1;
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
  return parse_list(list, "--probes", CS_PROBE_KIND_COUNT, kind_int, "gemm, membw, interference",
                    bits, err);
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
    return *what = "gemm, membw or interference", C_KIND;
  const char *dt = FIELD(C_DTYPE);
  if (r->kind == CS_PROBE_MEMBW) {
    if (strcmp(dt, "copy") != 0 && strcmp(dt, "memset") != 0)
      return *what = "copy or memset (a membw row)", C_DTYPE;
    copy_str(r->dtype, sizeof r->dtype, dt);
  } else {
    if (cs_probe_dtype_parse(dt, &d) != 0) return *what = "bf16, fp16, tf32, fp32 or fp8", C_DTYPE;
    copy_str(r->dtype, sizeof r->dtype, cs_probe_dtype_name(d));
  }
  int gemm = r->kind != CS_PROBE_MEMBW;
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
  if (cs_csv_number(FIELD(C_GBPS), gemm, &r->GBps) != 0 || (!gemm && r->GBps <= 0))
    return *what = gemm ? "GB/s or nothing" : "GB/s > 0 (a membw row)", C_GBPS;
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
