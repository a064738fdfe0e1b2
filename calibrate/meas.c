/* meas.c — reading and writing the measurements CSV; see meas.h.
 *
 * The reader is strict: every field is validated where it enters (known names, positive counts,
 * finite non-negative times) and the first bad field ends the read with "path:line:col: expected
 * ...". Columns are found by header name, so files with extra columns still read.
 */
#include "meas.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FIELDS 64

void cs_meas_set_init(struct cs_meas_set *set) { memset(set, 0, sizeof *set); }

void cs_meas_set_fini(struct cs_meas_set *set) {
  if (set == NULL) return;
  free(set->rows);
  free(set->meta);
  memset(set, 0, sizeof *set);
}

enum cs_status cs_meas_set_push(struct cs_meas_set *set, const struct cs_meas_row *row,
                                struct cs_error *err) {
  if (set->n == set->cap) {
    size_t nc = set->cap ? set->cap * 2 : 64;
    struct cs_meas_row *p = realloc(set->rows, nc * sizeof *p);
    if (p == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory storing measurements");
    set->rows = p;
    set->cap = nc;
  }
  set->rows[set->n++] = *row;
  return CS_OK;
}

static void copy_str(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src ? src : "");
}

enum cs_status cs_meas_set_meta(struct cs_meas_set *set, const char *key, const char *value,
                                struct cs_error *err) {
  for (size_t i = 0; i < set->n_meta; i++)
    if (strcmp(set->meta[i].key, key) == 0) {
      copy_str(set->meta[i].value, sizeof set->meta[i].value, value);
      return CS_OK;
    }
  if (set->n_meta == set->cap_meta) {
    size_t nc = set->cap_meta ? set->cap_meta * 2 : 8;
    struct cs_meas_meta *p = realloc(set->meta, nc * sizeof *p);
    if (p == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory storing provenance");
    set->meta = p;
    set->cap_meta = nc;
  }
  struct cs_meas_meta *m = &set->meta[set->n_meta++];
  copy_str(m->key, sizeof m->key, key);
  copy_str(m->value, sizeof m->value, value);
  return CS_OK;
}

const char *cs_meas_get_meta(const struct cs_meas_set *set, const char *key) {
  for (size_t i = 0; i < set->n_meta; i++)
    if (strcmp(set->meta[i].key, key) == 0) return set->meta[i].value;
  return NULL;
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
  if (strcmp(name, "process") == 0) *out = CS_LAUNCH_PROCESS;
  else if (strcmp(name, "thread") == 0) *out = CS_LAUNCH_THREAD;
  else return -1;
  return 0;
}

const char *cs_meas_launch_name(enum cs_launch l) {
  return l == CS_LAUNCH_THREAD ? "thread" : "process";
}

/* Writes s as one CSV field, quoted when it holds a comma, quote or line break. */
static void put_field(FILE *f, const char *s) {
  if (strpbrk(s, ",\"\r\n") == NULL) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (const char *p = s; *p; p++) {
    if (*p == '"') fputc('"', f);
    if (*p == '\r' || *p == '\n') fputc(' ', f);
    else fputc(*p, f);
  }
  fputc('"', f);
}

static void put_opt(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.6g", v);
}

enum cs_status cs_meas_write_header(FILE *f, const struct cs_meas_set *meta_from,
                                    struct cs_error *err) {
  fprintf(f, "%s\n", CS_MEAS_MAGIC);
  if (meta_from)
    for (size_t i = 0; i < meta_from->n_meta; i++) {
      /* a value never spans lines */
      char v[sizeof meta_from->meta[i].value];
      copy_str(v, sizeof v, meta_from->meta[i].value);
      for (char *p = v; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
      fprintf(f, "# %s: %s\n", meta_from->meta[i].key, v);
    }
  fprintf(f, "%s\n", CS_MEAS_HEADER);
  if (fflush(f) != 0 || ferror(f))
    return cs_error_set(err, CS_ERR_IO, "cannot write measurements: %s", strerror(errno));
  return CS_OK;
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
  put_field(f, r->dtype);
  fprintf(f, ",%d,%d,%d,%.0f,%.6g,", r->ranks, r->nodes, r->gpus_per_node, r->bytes, r->time_us);
  put_opt(f, r->time_min_us);
  fputc(',', f);
  put_opt(f, r->time_max_us);
  fputc(',', f);
  if (r->trials > 0) fprintf(f, "%d", r->trials);
  fprintf(f, ",%.6g,%.6g,%d,%s,", r->algbw_GBps, r->busbw_GBps, r->in_place ? 1 : 0,
          cs_meas_launch_name(r->launch));
  put_field(f, r->config);
  fputc(',', f);
  put_field(f, r->source);
  fputc('\n', f);
  if (fflush(f) != 0 || ferror(f))
    return cs_error_set(err, CS_ERR_IO, "cannot write measurements: %s", strerror(errno));
  return CS_OK;
}

enum cs_status cs_meas_write_file(const char *path, const struct cs_meas_set *set,
                                  struct cs_error *err) {
  int to_stdout = strcmp(path, "-") == 0;
  char tmp[4096];
  FILE *f = stdout;
  if (!to_stdout) {
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
      return cs_error_set(err, CS_ERR_USAGE, "%s: path too long", path);
    f = fopen(tmp, "w");
    if (f == NULL) return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
  }
  enum cs_status st = cs_meas_write_header(f, set, err);
  for (size_t i = 0; st == CS_OK && i < set->n; i++) st = cs_meas_write_row(f, &set->rows[i], err);
  if (to_stdout) return st;
  if (fclose(f) != 0 && st == CS_OK)
    st = cs_error_set(err, CS_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  if (st == CS_OK && rename(tmp, path) != 0)
    st = cs_error_set(err, CS_ERR_IO, "%s: cannot rename into place: %s", path, strerror(errno));
  if (st != CS_OK) {
    remove(tmp);
    if (err) cs_error_prefix(err, path);
  }
  return st;
}

/* ---- reading ------------------------------------------------------------------------------- */

/* Splits line into fields in place (RFC 4180 quoting). cols[i] receives the 1-based column of the
 * field's first character. Returns the field count or -1 for an unterminated quote. */
static int split_csv(char *line, char **fields, long *cols, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    if (n == max) return n;
    cols[n] = (long)(p - line) + 1;
    if (*p == '"') {
      char *out = p, *in = p + 1;
      fields[n++] = out;
      for (;;) {
        if (*in == '\0') return -1;
        if (*in == '"') {
          if (in[1] == '"') {
            *out++ = '"';
            in += 2;
            continue;
          }
          in++;
          break;
        }
        *out++ = *in++;
      }
      *out = '\0';
      p = in;
      if (*p == ',') {
        p++;
        continue;
      }
      return n;
    }
    fields[n++] = p;
    char *c = strchr(p, ',');
    if (c == NULL) return n;
    *c = '\0';
    p = c + 1;
  }
}

enum col { C_COLL, C_ALGO, C_PROTO, C_DTYPE, C_RANKS, C_NODES, C_GPN, C_BYTES, C_TIME, C_TMIN,
           C_TMAX, C_TRIALS, C_ALGBW, C_BUSBW, C_INPLACE, C_LAUNCH, C_CONFIG, C_SOURCE, C_COUNT };
static const char *const col_names[C_COUNT] = {
    "collective", "algorithm", "protocol", "dtype", "ranks", "nodes", "gpus_per_node", "bytes",
    "time_us", "time_min_us", "time_max_us", "trials", "algbw_GBps", "busbw_GBps", "in_place",
    "launch", "config", "source"};
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

/* A finite number >= 0; empty allowed when opt (then NAN). */
static int read_num(const char *s, int opt, double *out) {
  if (*s == '\0') {
    if (!opt) return -1;
    *out = NAN;
    return 0;
  }
  char *e;
  errno = 0;
  double v = strtod(s, &e);
  if (e == s || *e != '\0' || errno == ERANGE || !isfinite(v) || v < 0) return -1;
  for (const char *p = s; *p; p++)
    if (isalpha((unsigned char)*p) && *p != 'e' && *p != 'E') return -1;
  *out = v;
  return 0;
}

static void chomp(char *s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
}

enum cs_status cs_meas_read_file(const char *path, struct cs_meas_set *set, struct cs_error *err) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return cs_error_set(err, CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  long lineno = 0;
  int idx[C_COUNT];
  int have_header = 0, nhead = 0;
  enum cs_status st = CS_OK;
  for (int i = 0; i < C_COUNT; i++) idx[i] = -1;
  while (getline(&line, &cap, f) > 0) {
    lineno++;
    chomp(line);
    if (lineno == 1 && strcmp(line, CS_MEAS_MAGIC) != 0 && strncmp(line, "collective,", 11) != 0) {
      st = cs_error_at(err, CS_ERR_PARSE, path, 1, 1,
                       "expected \"%s\" or the CSV header: not a commscale measurements file",
                       CS_MEAS_MAGIC);
      break;
    }
    if (line[0] == '#') {
      char *colon = strchr(line, ':');
      if (colon && lineno > 1) {
        *colon = '\0';
        char *k = line + 1, *v = colon + 1;
        while (*k == ' ') k++;
        while (*v == ' ') v++;
        if ((st = cs_meas_set_meta(set, k, v, err)) != CS_OK) break;
      }
      continue;
    }
    if (line[0] == '\0') continue;
    char *fields[MAX_FIELDS];
    long cols[MAX_FIELDS];
    int nf = split_csv(line, fields, cols, MAX_FIELDS);
    if (nf < 0) {
      st = cs_error_at(err, CS_ERR_PARSE, path, lineno, 1, "expected a closing double quote");
      break;
    }
    if (!have_header) {
      for (int i = 0; i < nf; i++)
        for (int c = 0; c < C_COUNT; c++)
          if (strcmp(fields[i], col_names[c]) == 0) idx[c] = i;
      for (int c = 0; c < C_COUNT; c++)
        if (col_required[c] && idx[c] < 0) {
          st = cs_error_at(err, CS_ERR_PARSE, path, lineno, 1, "expected a header with column \"%s\"",
                           col_names[c]);
          break;
        }
      if (st != CS_OK) break;
      have_header = 1;
      nhead = nf;
      continue;
    }
    if (nf != nhead) {
      st = cs_error_at(err, CS_ERR_PARSE, path, lineno, 1, "expected %d fields, found %d", nhead, nf);
      break;
    }
    struct cs_meas_row r;
    memset(&r, 0, sizeof r);
    r.time_min_us = r.time_max_us = NAN;
    copy_str(r.dtype, sizeof r.dtype, "float");
    int bad = -1;
    const char *what = "";
    double bw;
#define FIELD(c) (idx[c] >= 0 ? fields[idx[c]] : "")
    if (cs_coll_parse(FIELD(C_COLL), &r.coll) != 0) bad = C_COLL, what = "a collective name such as all_reduce";
    else if (cs_algo_parse(FIELD(C_ALGO), &r.algo) != 0) bad = C_ALGO, what = "an algorithm (ring, tree, hier, nvls, collnet, pat, p2p, auto)";
    else if (cs_proto_parse(FIELD(C_PROTO), &r.proto) != 0) bad = C_PROTO, what = "a protocol (ll, ll128, simple, auto)";
    else if (read_int(FIELD(C_RANKS), 1, 1 << 24, &r.ranks) != 0) bad = C_RANKS, what = "a rank count >= 1";
    else if (read_int(FIELD(C_NODES), 1, 1 << 24, &r.nodes) != 0) bad = C_NODES, what = "a node count >= 1";
    else if (read_int(FIELD(C_GPN), 1, 1 << 16, &r.gpus_per_node) != 0) bad = C_GPN, what = "a GPUs-per-node count >= 1";
    else if (read_num(FIELD(C_BYTES), 0, &r.bytes) != 0 || r.bytes > 1.2e15 || r.bytes != floor(r.bytes)) bad = C_BYTES, what = "a whole number of bytes up to 2^50";
    else if (read_num(FIELD(C_TIME), 0, &r.time_us) != 0 || r.time_us <= 0) bad = C_TIME, what = "a time in microseconds > 0";
    else if (read_num(FIELD(C_TMIN), 1, &r.time_min_us) != 0) bad = C_TMIN, what = "a time in microseconds or nothing";
    else if (read_num(FIELD(C_TMAX), 1, &r.time_max_us) != 0) bad = C_TMAX, what = "a time in microseconds or nothing";
    else if (*FIELD(C_TRIALS) && read_int(FIELD(C_TRIALS), 0, 1 << 30, &r.trials) != 0) bad = C_TRIALS, what = "a trial count";
    /* the bandwidths are derived again from bytes and time, but a file that holds impossible
     * ones is damaged */
    else if (read_num(FIELD(C_ALGBW), 1, &bw) != 0) bad = C_ALGBW, what = "a bandwidth in GB/s >= 0 or nothing";
    else if (read_num(FIELD(C_BUSBW), 1, &bw) != 0) bad = C_BUSBW, what = "a bandwidth in GB/s >= 0 or nothing";
    else if (*FIELD(C_INPLACE) && read_int(FIELD(C_INPLACE), 0, 1, &r.in_place) != 0) bad = C_INPLACE, what = "0 or 1";
    else if (*FIELD(C_LAUNCH) && cs_meas_launch_parse(FIELD(C_LAUNCH), &r.launch) != 0) bad = C_LAUNCH, what = "process or thread";
    else if (r.ranks != r.nodes * r.gpus_per_node) bad = C_RANKS, what = "ranks = nodes x gpus_per_node";
    if (bad >= 0) {
      long col = idx[bad] >= 0 ? cols[idx[bad]] : 1;
      st = cs_error_at(err, CS_ERR_PARSE, path, lineno, col, "column %s: expected %s, got \"%s\"",
                       col_names[bad], what, idx[bad] >= 0 ? fields[idx[bad]] : "");
      break;
    }
    if (*FIELD(C_DTYPE)) copy_str(r.dtype, sizeof r.dtype, FIELD(C_DTYPE));
    copy_str(r.config, sizeof r.config, FIELD(C_CONFIG));
    if (*FIELD(C_SOURCE)) copy_str(r.source, sizeof r.source, FIELD(C_SOURCE));
    else snprintf(r.source, sizeof r.source, "%s:%ld", path, lineno);
#undef FIELD
    cs_meas_row_derive(&r);
    if ((st = cs_meas_set_push(set, &r, err)) != CS_OK) break;
  }
  /* getline() fails without setting the error flag when memory runs out */
  if (st == CS_OK && (ferror(f) || !feof(f)))
    st = cs_error_set(err, CS_ERR_IO, "%s: read error: %s", path, strerror(errno));
  if (st == CS_OK && !have_header)
    st = cs_error_at(err, CS_ERR_PARSE, path, lineno + 1, 0, "expected the CSV header line \"%s\"",
                     "collective,algorithm,protocol,...");
  free(line);
  fclose(f);
  return st;
}
