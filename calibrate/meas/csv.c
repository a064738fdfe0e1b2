/* csv.c — the framing of commscale's CSV files; see csv.h.
 *
 * The reader is strict about the framing and leaves the fields to its caller: a file that does not
 * start with the magic line or a header, a quote that is not closed, a header without a required
 * column, or a row with more or fewer fields than the header ends the read at once with
 * "path:line:col: expected ...", so that a damaged file is never half taken for a good one.
 */
#include "csv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"

int cs_csv_grow(void **items, size_t *cap, size_t n, size_t size, size_t first) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : first;
  void *p = realloc(*items, nc * size);
  if (p == NULL) return -1;
  *items = p;
  *cap = nc;
  return 0;
}

enum cs_status cs_csv_push(void **items, size_t *n, size_t *cap, size_t size, const void *row,
                           const char *what, struct cs_error *err) {
  if (cs_csv_grow(items, cap, *n, size, 64) != 0)
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory storing %s", what);
  memcpy((char *)*items + *n * size, row, size);
  (*n)++;
  return CS_OK;
}

static void copy_str(char *dst, size_t len, const char *src) {
  snprintf(dst, len, "%s", src ? src : "");
}

enum cs_status cs_csv_meta_set(struct cs_csv_meta **meta, size_t *n, size_t *cap, const char *key,
                               const char *value, struct cs_error *err) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp((*meta)[i].key, key) == 0) {
      copy_str((*meta)[i].value, sizeof(*meta)[i].value, value);
      return CS_OK;
    }
  void *p = *meta;
  if (cs_csv_grow(&p, cap, *n, sizeof **meta, 8) != 0)
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory storing provenance");
  *meta = p;
  struct cs_csv_meta *m = &(*meta)[(*n)++];
  copy_str(m->key, sizeof m->key, key);
  copy_str(m->value, sizeof m->value, value);
  return CS_OK;
}

const char *cs_csv_meta_get(const struct cs_csv_meta *meta, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(meta[i].key, key) == 0) return meta[i].value;
  return NULL;
}

enum cs_status cs_csv_write_header(FILE *f, const char *magic, const struct cs_csv_meta *meta,
                                   size_t n, const char *header, const char *what,
                                   struct cs_error *err) {
  fprintf(f, "%s\n", magic);
  for (size_t i = 0; i < n; i++) {
    /* a value never spans lines */
    char v[sizeof meta[i].value];
    copy_str(v, sizeof v, meta[i].value);
    for (char *p = v; *p; p++)
      if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(f, "# %s: %s\n", meta[i].key, v);
  }
  fprintf(f, "%s\n", header);
  if (fflush(f) != 0 || ferror(f))
    return cs_error_set(err, CS_ERR_IO, "cannot write %s: %s", what, strerror(errno));
  return CS_OK;
}

void cs_csv_put_field(FILE *f, const char *s) {
  if (strpbrk(s, ",\"\r\n") == NULL) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (const char *p = s; *p; p++) {
    if (*p == '"') fputc('"', f);
    fputc(*p == '\r' || *p == '\n' ? ' ' : *p, f);
  }
  fputc('"', f);
}

int cs_csv_number(const char *s, int opt, double *out) {
  if (*s == '\0') {
    if (!opt) return -1;
    *out = NAN;
    return 0;
  }
  for (const char *p = s; *p; p++)
    if (isalpha((unsigned char)*p) && *p != 'e' && *p != 'E') return -1;
  char *e;
  errno = 0;
  double v = strtod(s, &e);
  if (e == s || *e != '\0' || errno == ERANGE || !isfinite(v) || v < 0) return -1;
  *out = v;
  return 0;
}

int cs_csv_split(char *line, char **fields, long *cols, int max) {
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

enum cs_status cs_csv_reject(const struct cs_csv_row *row, int c, const char *expected,
                             struct cs_error *err) {
  return cs_error_at(err, CS_ERR_PARSE, row->path, row->line, row->col[c],
                     "column %s: expected %s, got \"%s\"", row->format->columns[c], expected,
                     row->field[c]);
}

/* Finds fmt's columns among the header's fields into idx[] (-1 when absent); the first required
 * one missing is an error. */
static enum cs_status map_header(const struct cs_csv_format *fmt, char **fields, int nf, int *idx,
                                 const char *path, long lineno, struct cs_error *err) {
  for (int i = 0; i < nf; i++)
    for (int c = 0; c < fmt->ncolumns; c++)
      if (strcmp(fields[i], fmt->columns[c]) == 0) idx[c] = i;
  for (int c = 0; c < fmt->ncolumns; c++)
    if (fmt->required[c] && idx[c] < 0)
      return cs_error_at(err, CS_ERR_PARSE, path, lineno, 1, "expected a header with column \"%s\"",
                         fmt->columns[c]);
  return CS_OK;
}

enum cs_status cs_csv_read(const char *path, const struct cs_csv_format *fmt,
                           enum cs_status (*meta)(void *ctx, const char *key, const char *value,
                                                  struct cs_error *err),
                           enum cs_status (*row)(void *ctx, const struct cs_csv_row *r,
                                                 struct cs_error *err),
                           void *ctx, struct cs_error *err) {
  FILE *f = cs_input_open(path, err);
  if (f == NULL) return err ? err->status : CS_ERR_IO;
  struct cs_lines in = {.f = f, .path = path};
  char *line = NULL;
  long lineno = 0, len;
  int idx[CS_CSV_MAX_FIELDS];
  int have_header = 0, nhead = 0;
  enum cs_status st = CS_OK;
  struct cs_csv_row r;
  r.path = path;
  r.format = fmt;
  for (int i = 0; i < CS_CSV_MAX_FIELDS; i++)
    idx[i] = -1;
  while ((len = cs_lines_next(&in, err)) >= 0) {
    lineno = in.line;
    line = in.buf;
    if (lineno == 1 && strcmp(line, fmt->magic) != 0 &&
        strncmp(line, fmt->first_column, strlen(fmt->first_column)) != 0) {
      st = cs_error_at(err, CS_ERR_PARSE, path, 1, 1,
                       "expected \"%s\" or the CSV header: not a commscale %s file", fmt->magic,
                       fmt->noun);
      break;
    }
    if (line[0] == '#') {
      char *colon = strchr(line, ':');
      if (colon && lineno > 1) {
        *colon = '\0';
        char *k = line + 1, *v = colon + 1;
        while (*k == ' ')
          k++;
        while (*v == ' ')
          v++;
        if ((st = meta(ctx, k, v, err)) != CS_OK) break;
      }
      continue;
    }
    if (line[0] == '\0') continue;
    char *fields[CS_CSV_MAX_FIELDS];
    long cols[CS_CSV_MAX_FIELDS];
    int nf = cs_csv_split(line, fields, cols, CS_CSV_MAX_FIELDS);
    if (nf < 0) {
      st = cs_error_at(err, CS_ERR_PARSE, path, lineno, 1, "expected a closing double quote");
      break;
    }
    if (!have_header) {
      if ((st = map_header(fmt, fields, nf, idx, path, lineno, err)) != CS_OK) break;
      have_header = 1;
      nhead = nf;
      continue;
    }
    if (nf != nhead) {
      st = cs_error_at(err, CS_ERR_PARSE, path, lineno, 1, "expected %d fields, found %d", nhead,
                       nf);
      break;
    }
    r.line = lineno;
    for (int c = 0; c < fmt->ncolumns; c++) {
      r.present[c] = idx[c] >= 0;
      r.field[c] = idx[c] >= 0 ? fields[idx[c]] : "";
      r.col[c] = idx[c] >= 0 ? cols[idx[c]] : 1;
    }
    if ((st = row(ctx, &r, err)) != CS_OK) break;
  }
  if (st == CS_OK) st = in.st;
  if (st == CS_OK && !have_header)
    st = cs_error_at(err, CS_ERR_PARSE, path, lineno + 1, 0, "%s", fmt->no_header);
  free(in.buf);
  fclose(f);
  return st;
}
