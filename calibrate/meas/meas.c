/* meas.c — reading and writing the measurements CSV; see meas.h.
 *
 * The framing (magic line, provenance, header, quoting) is csv.h's. The reader is strict: every
 * field is validated where it enters (known names, positive counts, finite non-negative times) and
 * the first bad field ends the read with "path:line:col: expected ...". Columns are found by
 * header name, so files with extra columns still read.
 */
#include "meas.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wfile.h"

void cs_meas_set_init(struct cs_meas_set *set) {
  memset(set, 0, sizeof *set);
}

void cs_meas_set_fini(struct cs_meas_set *set) {
  if (set == NULL) return;
  free(set->rows);
  free(set->meta);
  memset(set, 0, sizeof *set);
}

enum cs_status cs_meas_set_push(struct cs_meas_set *set, const struct cs_meas_row *row,
                                struct cs_error *err) {
  void *p = set->rows;
  enum cs_status st =
      cs_csv_push(&p, &set->n, &set->cap, sizeof *set->rows, row, "measurements", err);
  set->rows = p;
  return st;
}

static void copy_str(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src ? src : "");
}

enum cs_status cs_meas_set_meta(struct cs_meas_set *set, const char *key, const char *value,
                                struct cs_error *err) {
  return cs_csv_meta_set(&set->meta, &set->n_meta, &set->cap_meta, key, value, err);
}

const char *cs_meas_get_meta(const struct cs_meas_set *set, const char *key) {
  return cs_csv_meta_get(set->meta, set->n_meta, key);
}

void cs_meas_row_derive(struct cs_meas_row *row) {
  if (row->time_us > 0) {
    row->algbw_GBps = row->bytes / (row->time_us * 1e3);
    row->busbw_GBps = row->algbw_GBps * cs_coll_busbw_factor(row->coll, row->ranks);
  } else {
    row->algbw_GBps = row->busbw_GBps = 0.0;
  }
}

int cs_meas_launch_parse(const char *name, enum cs_launch *out) {
  if (name == NULL) return -1;
  if (strcmp(name, "process") == 0)
    *out = CS_LAUNCH_PROCESS;
  else if (strcmp(name, "thread") == 0)
    *out = CS_LAUNCH_THREAD;
  else
    return -1;
  return 0;
}

const char *cs_meas_launch_name(enum cs_launch l) {
  return l == CS_LAUNCH_THREAD ? "thread" : "process";
}

static void put_opt(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.6g", v);
}

enum cs_status cs_meas_write_header(FILE *f, const struct cs_meas_set *meta_from,
                                    struct cs_error *err) {
  return cs_csv_write_header(f, CS_MEAS_MAGIC, meta_from ? meta_from->meta : NULL,
                             meta_from ? meta_from->n_meta : 0, CS_MEAS_HEADER, "measurements",
                             err);
}

enum cs_status cs_meas_write_row(FILE *f, const struct cs_meas_row *r, struct cs_error *err) {
  /* no NaN or Inf ever reaches the file: such a row is refused, the file stays readable */
  if (!isfinite(r->bytes) || !isfinite(r->time_us) || !isfinite(r->algbw_GBps) ||
      !isfinite(r->busbw_GBps))
    return cs_error_set(err, CS_ERR_NUMERIC,
                        "%s: refusing to write a measurement that is not a finite number (%s, "
                        "%.0f bytes, %g us)",
                        r->source, cs_coll_name(r->coll), r->bytes, r->time_us);
  fprintf(f, "%s,%s,%s,", cs_coll_name(r->coll), cs_algo_name(r->algo), cs_proto_name(r->proto));
  cs_csv_put_field(f, r->dtype);
  fprintf(f, ",%d,%d,%d,%.0f,%.6g,", r->ranks, r->nodes, r->gpus_per_node, r->bytes, r->time_us);
  put_opt(f, r->time_min_us);
  fputc(',', f);
  put_opt(f, r->time_max_us);
  fputc(',', f);
  if (r->trials > 0) fprintf(f, "%d", r->trials);
  fprintf(f, ",%.6g,%.6g,%d,%s,", r->algbw_GBps, r->busbw_GBps, r->in_place ? 1 : 0,
          cs_meas_launch_name(r->launch));
  cs_csv_put_field(f, r->config);
  fputc(',', f);
  cs_csv_put_field(f, r->source);
  fputc('\n', f);
  if (fflush(f) != 0 || ferror(f))
    return cs_error_set(err, CS_ERR_IO, "cannot write measurements: %s", strerror(errno));
  return CS_OK;
}

enum cs_status cs_meas_write_file(const char *path, const struct cs_meas_set *set,
                                  struct cs_error *err) {
  struct cs_wfile *w;
  enum cs_status st = cs_wfile_open(path, &w, err);
  if (st != CS_OK) return st;
  FILE *f = cs_wfile_fp(w);
  st = cs_meas_write_header(f, set, err);
  for (size_t i = 0; st == CS_OK && i < set->n; i++)
    st = cs_meas_write_row(f, &set->rows[i], err);
  /* a stream error: the commit fails too, and its message names the path and the reason */
  if (st == CS_OK || (st == CS_ERR_IO && ferror(f))) return cs_wfile_commit(w, err);
  cs_wfile_abort(w);
  return st;
}

/* ---- reading ------------------------------------------------------------------------------- */

enum col {
  C_COLL,
  C_ALGO,
  C_PROTO,
  C_DTYPE,
  C_RANKS,
  C_NODES,
  C_GPN,
  C_BYTES,
  C_TIME,
  C_TMIN,
  C_TMAX,
  C_TRIALS,
  C_ALGBW,
  C_BUSBW,
  C_INPLACE,
  C_LAUNCH,
  C_CONFIG,
  C_SOURCE,
  C_COUNT
};
static const char *const col_names[C_COUNT] = {
    "collective",    "algorithm",  "protocol", "dtype",       "ranks",       "nodes",
    "gpus_per_node", "bytes",      "time_us",  "time_min_us", "time_max_us", "trials",
    "algbw_GBps",    "busbw_GBps", "in_place", "launch",      "config",      "source"};
/* columns a file must have; the others default */
static const int col_required[C_COUNT] = {1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static int read_int(const char *s, long min, long max, int *out) {
  char *e;
  errno = 0;
  long v = strtol(s, &e, 10);
  if (e == s || *e != '\0' || errno || v < min || v > max) return -1;
  *out = (int)v;
  return 0;
}

static const struct cs_csv_format format = {
    CS_MEAS_MAGIC,  "collective,",
    "measurements", "expected the CSV header line \"collective,algorithm,protocol,...\"",
    col_names,      col_required,
    C_COUNT};

static enum cs_status add_meta(void *set, const char *key, const char *value,
                               struct cs_error *err) {
  return cs_meas_set_meta(set, key, value, err);
}

#define MAX_TIME_US 1e11 /* 27.8 hours */

/* Checks one data row into a struct cs_meas_row and appends it to the set. */
static enum cs_status add_row(void *ctx, const struct cs_csv_row *in, struct cs_error *err) {
  struct cs_meas_set *set = ctx;
  struct cs_meas_row r;
  memset(&r, 0, sizeof r);
  r.time_min_us = r.time_max_us = NAN;
  copy_str(r.dtype, sizeof r.dtype, "float");
  int bad = -1;
  const char *what = "";
  double bw;
#define FIELD(c) (in->field[c])
  if (cs_coll_parse(FIELD(C_COLL), &r.coll) != 0)
    bad = C_COLL, what = "a collective name such as all_reduce";
  else if (cs_algo_parse(FIELD(C_ALGO), &r.algo) != 0)
    bad = C_ALGO, what = "an algorithm (ring, tree, hier, nvls, collnet, pat, p2p, auto)";
  else if (cs_proto_parse(FIELD(C_PROTO), &r.proto) != 0)
    bad = C_PROTO, what = "a protocol (ll, ll128, simple, auto)";
  else if (read_int(FIELD(C_RANKS), 1, 1 << 24, &r.ranks) != 0)
    bad = C_RANKS, what = "a rank count >= 1";
  else if (read_int(FIELD(C_NODES), 1, 1 << 24, &r.nodes) != 0)
    bad = C_NODES, what = "a node count >= 1";
  else if (read_int(FIELD(C_GPN), 1, 1 << 16, &r.gpus_per_node) != 0)
    bad = C_GPN, what = "a GPUs-per-node count >= 1";
  else if (cs_csv_number(FIELD(C_BYTES), 0, &r.bytes) != 0 || r.bytes > 1.2e15 ||
           r.bytes != floor(r.bytes))
    bad = C_BYTES, what = "a whole number of bytes up to 2^50";
  /* MAX_TIME_US: no timed collective call lasts a day; larger values are damage, refused here
   * with their position rather than by the solver ("did not converge") */
  else if (cs_csv_number(FIELD(C_TIME), 0, &r.time_us) != 0 || r.time_us <= 0 ||
           r.time_us > MAX_TIME_US)
    bad = C_TIME, what = "a time in microseconds > 0 (at most 1e11, a day)";
  else if (cs_csv_number(FIELD(C_TMIN), 1, &r.time_min_us) != 0 || r.time_min_us > MAX_TIME_US)
    bad = C_TMIN, what = "a time in microseconds (at most 1e11) or nothing";
  else if (cs_csv_number(FIELD(C_TMAX), 1, &r.time_max_us) != 0 || r.time_max_us > MAX_TIME_US)
    bad = C_TMAX, what = "a time in microseconds (at most 1e11) or nothing";
  else if (*FIELD(C_TRIALS) && read_int(FIELD(C_TRIALS), 0, 1 << 30, &r.trials) != 0)
    bad = C_TRIALS, what = "a trial count";
  /* the bandwidths are derived again from bytes and time, but a file that holds impossible
   * ones is damaged */
  else if (cs_csv_number(FIELD(C_ALGBW), 1, &bw) != 0)
    bad = C_ALGBW, what = "a bandwidth in GB/s >= 0 or nothing";
  else if (cs_csv_number(FIELD(C_BUSBW), 1, &bw) != 0)
    bad = C_BUSBW, what = "a bandwidth in GB/s >= 0 or nothing";
  else if (*FIELD(C_INPLACE) && read_int(FIELD(C_INPLACE), 0, 1, &r.in_place) != 0)
    bad = C_INPLACE, what = "0 or 1";
  else if (*FIELD(C_LAUNCH) && cs_meas_launch_parse(FIELD(C_LAUNCH), &r.launch) != 0)
    bad = C_LAUNCH, what = "process or thread";
  else if (r.ranks != r.nodes * r.gpus_per_node)
    bad = C_RANKS, what = "ranks = nodes x gpus_per_node";
  if (bad >= 0) return cs_csv_reject(in, bad, what, err);
  if (*FIELD(C_DTYPE)) copy_str(r.dtype, sizeof r.dtype, FIELD(C_DTYPE));
  copy_str(r.config, sizeof r.config, FIELD(C_CONFIG));
  if (*FIELD(C_SOURCE))
    copy_str(r.source, sizeof r.source, FIELD(C_SOURCE));
  else
    snprintf(r.source, sizeof r.source, "%s:%ld", in->path, in->line);
#undef FIELD
  cs_meas_row_derive(&r);
  return cs_meas_set_push(set, &r, err);
}

enum cs_status cs_meas_read_file(const char *path, struct cs_meas_set *set, struct cs_error *err) {
  return cs_csv_read(path, &format, add_meta, add_row, set, err);
}

enum cs_status cs_meas_set_shape(struct cs_meas_set *set, size_t from, int nodes, int gpn,
                                 const char *what, struct cs_error *err) {
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = from; i < set->n; i++) {
      struct cs_meas_row *r = &set->rows[i];
      int N = nodes, g = gpn;
      if (N <= 0 && g > 0 && r->ranks % g == 0) N = r->ranks / g;
      if (g <= 0 && N > 0 && r->ranks % N == 0) g = r->ranks / N;
      if (N <= 0 || g <= 0 || (long)N * g != r->ranks)
        return cs_error_set(err, CS_ERR_USAGE,
                            "%s: a row of %d ranks is not %d nodes x %d GPUs per node (check "
                            "--nodes and --gpus-per-node)",
                            what, r->ranks, nodes, gpn);
      if (pass == 1) r->nodes = N, r->gpus_per_node = g;
    }
  return CS_OK;
}
