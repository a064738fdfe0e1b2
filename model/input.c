/* input.c — bounded reading of input files; see input.h. */
#define _GNU_SOURCE /* fopencookie */
#include "input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Standard input, read once. */
static char *stdin_text;
static size_t stdin_len;
static int stdin_read;

FILE *cs_input_open(const char *path, struct cs_error *err) {
  if (strcmp(path, "-") != 0) {
    FILE *f = fopen(path, "r");
    if (f == NULL) cs_error_set(err, CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    return f;
  }
  if (!stdin_read) {
    if (cs_input_read_all(stdin, "-", CS_INPUT_DOC_MAX, &stdin_text, &stdin_len, err) != CS_OK)
      return NULL;
    stdin_read = 1;
  }
  FILE *f = fmemopen(stdin_text, stdin_len, "r");
  if (f == NULL) cs_error_set(err, CS_ERR_IO, "-: cannot open: %s", strerror(errno));
  return f;
}

/* The stream cs_input_peek returns for an input that cannot seek: the bytes it looked at, then f.
 */
struct replay {
  FILE *f;
  char *buf;
  size_t len, pos;
};

static ssize_t replay_read(void *cookie, char *out, size_t size) {
  struct replay *r = cookie;
  if (r->pos < r->len) {
    size_t n = r->len - r->pos < size ? r->len - r->pos : size;
    memcpy(out, r->buf + r->pos, n);
    r->pos += n;
    return (ssize_t)n;
  }
  size_t n = fread(out, 1, size, r->f);
  if (n == 0 && ferror(r->f)) return -1;
  return (ssize_t)n;
}

static int replay_close(void *cookie) {
  struct replay *r = cookie;
  int rc = fclose(r->f);
  free(r->buf);
  free(r);
  return rc;
}

FILE *cs_input_peek(FILE *f, const char *path, int *first, struct cs_error *err) {
  size_t n = 0, cap = 256;
  char *buf = malloc(cap);
  int c = EOF;
  if (buf == NULL) goto nomem;
  while ((c = getc(f)) != EOF) {
    if (n == cap) {
      char *b = realloc(buf, cap * 2);
      if (b == NULL) goto nomem;
      buf = b, cap *= 2;
    }
    buf[n++] = (char)c;
    /* an endless run of white space is the reader's to refuse */
    if (!(c == ' ' || (c >= '\t' && c <= '\r')) || n > CS_INPUT_LINE_MAX) break;
  }
  if (c == EOF && ferror(f)) {
    cs_error_set(err, CS_ERR_IO, "%s: read error: %s", path, strerror(errno));
    free(buf);
    fclose(f);
    return NULL;
  }
  *first = c != EOF && !(c == ' ' || (c >= '\t' && c <= '\r')) ? c : EOF;
  if (fseek(f, 0, SEEK_SET) == 0) {
    free(buf);
    return f;
  }
  clearerr(f);
  struct replay *r = malloc(sizeof *r);
  if (r == NULL) goto nomem;
  *r = (struct replay){.f = f, .buf = buf, .len = n};
  cookie_io_functions_t io = {.read = replay_read, .close = replay_close};
  FILE *g = fopencookie(r, "r", io);
  if (g == NULL) {
    free(r);
    goto nomem;
  }
  return g;
nomem:
  free(buf);
  fclose(f);
  cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
  return NULL;
}

long cs_lines_next(struct cs_lines *l, struct cs_error *err) {
  size_t n = 0;
  int c = EOF;
  for (;;) {
    c = getc_unlocked(l->f);
    if (c == EOF) break;
    if (n + 1 >= l->cap) {
      size_t cap = l->cap ? 2 * l->cap : 256;
      if (cap > CS_INPUT_LINE_MAX + 2) cap = CS_INPUT_LINE_MAX + 2;
      char *b = realloc(l->buf, cap);
      if (b == NULL) {
        l->st = cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", l->path);
        return -2;
      }
      l->buf = b, l->cap = cap;
    }
    l->buf[n++] = (char)c;
    if (c == '\n') break;
    if (n > CS_INPUT_LINE_MAX) {
      l->st = cs_error_at(err, CS_ERR_RANGE, l->path, l->line + 1, 0, "line longer than %zu bytes",
                          CS_INPUT_LINE_MAX);
      return -2;
    }
  }
  if (c == EOF && ferror(l->f)) {
    l->st = cs_error_at(err, CS_ERR_IO, l->path, l->line + 1, 0, "read error: %s", strerror(errno));
    return -2;
  }
  if (n == 0) return -1;
  l->total += n;
  if (l->total > CS_INPUT_SIZE_MAX) {
    l->st = cs_error_set(err, CS_ERR_RANGE, "%s: input larger than %zu bytes", l->path,
                         CS_INPUT_SIZE_MAX);
    return -2;
  }
  if (l->line >= CS_INPUT_LINES_MAX) {
    l->st = cs_error_set(err, CS_ERR_RANGE, "%s: more than %ld lines", l->path, CS_INPUT_LINES_MAX);
    return -2;
  }
  l->line++;
  while (n > 0 && (l->buf[n - 1] == '\n' || l->buf[n - 1] == '\r'))
    n--;
  l->buf[n] = '\0';
  return (long)n;
}

enum cs_status cs_input_read_all(FILE *f, const char *path, size_t max, char **text, size_t *len,
                                 struct cs_error *err) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  if (buf == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
  for (;;) {
    size_t want = cap - n - 1;
    size_t got = fread(buf + n, 1, want, f);
    n += got;
    if (n > max) {
      free(buf);
      return cs_error_set(err, CS_ERR_RANGE, "%s: input larger than %zu bytes", path, max);
    }
    if (got < want) break;
    size_t ncap = cap * 2 > max + 2 ? max + 2 : cap * 2;
    char *nb = realloc(buf, ncap);
    if (nb == NULL) {
      free(buf);
      return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
    }
    buf = nb, cap = ncap;
  }
  if (ferror(f)) {
    free(buf);
    return cs_error_set(err, CS_ERR_IO, "%s: read error: %s", path, strerror(errno));
  }
  buf[n] = '\0';
  *text = buf;
  if (len) *len = n;
  return CS_OK;
}
