/* units.c — reading and writing quantities with units; see units.h.
 *
 * A unit table per kind maps a suffix to its SI factor. Matching is exact on the suffix text,
 * except that the bits/bytes distinction is case-sensitive by convention ("b" bits, "B" bytes).
 */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_MAX 4096
#define SIZE_MAX_BYTES 1125899906842624.0 /* 2^50 */

struct unit {
  const char *suffix;
  double factor;
};

static const struct unit time_units[] = {
    {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {NULL, 0}};
static const struct unit bw_units[] = {
    {"bps", 1.0 / 8},  {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8},
    {"Gb/s", 1e9 / 8}, {"Bps", 1.0},      {"KBps", 1e3},     {"MBps", 1e6},     {"GBps", 1e9},
    {"TBps", 1e12},    {"GB/s", 1e9},     {"MB/s", 1e6},     {"TB/s", 1e12},    {NULL, 0}};
static const struct unit byte_units[] = {
    {"B", 1.0},         {"KB", 1e3},           {"MB", 1e6},
    {"GB", 1e9},        {"TB", 1e12},          {"KiB", 1024.0},
    {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
    {NULL, 0}};
static const struct unit flops_units[] = {
    {"FLOPS", 1.0}, {"GFLOPS", 1e9}, {"TFLOPS", 1e12}, {"PFLOPS", 1e15}, {NULL, 0}};

static const char *kind_name(enum cs_unit_kind kind) {
  switch (kind) {
  case CS_UNIT_TIME:
    return "a time such as 2.5us, 1ms or 0.3s";
  case CS_UNIT_BANDWIDTH:
    return "a bandwidth such as 400Gbps or 50GBps";
  case CS_UNIT_BYTES:
    return "a size such as 80GiB or 512MB";
  case CS_UNIT_FLOPS:
    return "a rate such as 989TFLOPS";
  }
  return "a quantity";
}

static const struct unit *table_for(enum cs_unit_kind kind) {
  switch (kind) {
  case CS_UNIT_TIME:
    return time_units;
  case CS_UNIT_BANDWIDTH:
    return bw_units;
  case CS_UNIT_BYTES:
    return byte_units;
  case CS_UNIT_FLOPS:
    return flops_units;
  }
  return time_units;
}

/* The largest value of each kind that any real system has, with a wide margin: above it a
 * number is a typo or hostile, and later arithmetic (times x ranks x steps) would overflow. */
static double ceiling(enum cs_unit_kind kind) {
  switch (kind) {
  case CS_UNIT_TIME:
    return 1e6; /* s: 11.6 days */
  case CS_UNIT_BANDWIDTH:
    return 1e15; /* bytes/s: 1 PB/s */
  case CS_UNIT_BYTES:
    return 0x1p60; /* 1 EiB */
  case CS_UNIT_FLOPS:
    return 1e21; /* 1 ZFLOP/s */
  }
  return 0;
}

static const char *ceiling_text(enum cs_unit_kind kind) {
  switch (kind) {
  case CS_UNIT_TIME:
    return "time of at most 1000000s";
  case CS_UNIT_BANDWIDTH:
    return "bandwidth of at most 1000TBps";
  case CS_UNIT_BYTES:
    return "size of at most 1048576TiB";
  case CS_UNIT_FLOPS:
    return "rate of at most 1000000PFLOPS";
  }
  return "";
}

/* Reads a finite non-negative decimal number at the start of text; *end points past it. */
static int read_number(const char *text, double *v, const char **end) {
  if (text == NULL) return 0;
  while (isspace((unsigned char)*text))
    text++;
  if (!(isdigit((unsigned char)*text) || *text == '.')) return 0;
  errno = 0;
  char *e;
  double x = strtod(text, &e);
  if (e == text || errno == ERANGE || !isfinite(x) || x < 0) return 0;
  /* strtod accepts hex and inf/nan spellings; our inputs are plain decimals */
  for (const char *p = text; p < e; p++)
    if (!(isdigit((unsigned char)*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' ||
          *p == '-'))
      return 0;
  *v = x;
  *end = e;
  return 1;
}

enum cs_status cs_units_parse_quantity(const char *text, enum cs_unit_kind kind, double *si,
                                       struct cs_error *err) {
  double v;
  const char *end;
  if (!read_number(text, &v, &end))
    return cs_error_set(err, CS_ERR_PARSE, "expected %s, got \"%s\"", kind_name(kind),
                        text ? text : "");
  while (*end == ' ')
    end++;
  size_t len = strlen(end);
  while (len > 0 && isspace((unsigned char)end[len - 1]))
    len--;
  if (len == 0)
    return cs_error_set(err, CS_ERR_PARSE, "expected %s: \"%s\" has no unit", kind_name(kind),
                        text);
  for (const struct unit *u = table_for(kind); u->suffix; u++) {
    if (strlen(u->suffix) == len && strncmp(u->suffix, end, len) == 0) {
      double x = v * u->factor;
      if (!isfinite(x)) return cs_error_set(err, CS_ERR_RANGE, "value \"%s\" is too large", text);
      if (x > ceiling(kind))
        return cs_error_set(err, CS_ERR_RANGE, "\"%s\" is beyond any real system (expected a %s)",
                            text, ceiling_text(kind));
      *si = x;
      return CS_OK;
    }
  }
  return cs_error_set(err, CS_ERR_PARSE, "expected %s: unknown unit in \"%s\"", kind_name(kind),
                      text);
}

enum cs_status cs_units_parse_size(const char *text, double *bytes, struct cs_error *err) {
  double v;
  const char *end;
  if (!read_number(text, &v, &end))
    return cs_error_set(err, CS_ERR_PARSE,
                        "expected a message size such as 8, 64K, 1M or 8G, got \"%s\"",
                        text ? text : "");
  double f = 1.0;
  char u[8] = {0};
  size_t k = 0;
  while (*end && !isspace((unsigned char)*end) && k < sizeof u - 1)
    u[k++] = *end++;
  while (isspace((unsigned char)*end))
    end++;
  if (*end != '\0' || (k == sizeof u - 1))
    return cs_error_set(err, CS_ERR_PARSE, "expected a message size such as 64K, got \"%s\"", text);
  if (k == 0 || strcmp(u, "B") == 0 || strcmp(u, "b") == 0) {
    f = 1.0;
  } else {
    /* nccl-tests suffixes are binary and case-insensitive; "MB" is decimal, "MiB" binary */
    char c = (char)toupper((unsigned char)u[0]);
    int pow2;
    switch (c) {
    case 'K':
      pow2 = 10;
      break;
    case 'M':
      pow2 = 20;
      break;
    case 'G':
      pow2 = 30;
      break;
    case 'T':
      pow2 = 40;
      break;
    default:
      return cs_error_set(err, CS_ERR_PARSE, "expected a size suffix K, M, G or T in \"%s\"", text);
    }
    const char *rest = u + 1;
    if (*rest == '\0' || strcmp(rest, "iB") == 0 || strcmp(rest, "ib") == 0) {
      f = ldexp(1.0, pow2);
    } else if (strcmp(rest, "B") == 0) {
      f = pow(10.0, pow2 / 10 * 3);
    } else {
      return cs_error_set(err, CS_ERR_PARSE, "expected a size suffix K, M, G or T in \"%s\"", text);
    }
  }
  double x = v * f;
  if (x > SIZE_MAX_BYTES)
    return cs_error_set(err, CS_ERR_RANGE, "message size \"%s\" is larger than 1 PiB", text);
  if (x != floor(x))
    return cs_error_set(err, CS_ERR_PARSE, "message size \"%s\" is not a whole number of bytes",
                        text);
  *bytes = x;
  return CS_OK;
}

/* Appends v to a growing array; fails beyond LIST_MAX entries. */
static enum cs_status push(double **arr, size_t *n, size_t *cap, double v, struct cs_error *err) {
  if (*n >= LIST_MAX)
    return cs_error_set(err, CS_ERR_RANGE, "list has more than %d entries", LIST_MAX);
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    double *p = realloc(*arr, nc * sizeof *p);
    if (p == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    *arr = p;
    *cap = nc;
  }
  (*arr)[(*n)++] = v;
  return CS_OK;
}

/* Splits text at commas, calls item() on each piece (NUL-terminated copy). */
static enum cs_status split_items(const char *text, const char *what,
                                  enum cs_status (*item)(const char *, void *, struct cs_error *),
                                  void *ctx, struct cs_error *err) {
  if (text == NULL || *text == '\0')
    return cs_error_set(err, CS_ERR_PARSE, "expected a list of %s, got an empty string", what);
  size_t len = strlen(text);
  char *copy = malloc(len + 1);
  if (copy == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  memcpy(copy, text, len + 1);
  enum cs_status st = CS_OK;
  int count = 0;
  for (char *tok = copy; tok && st == CS_OK;) {
    char *comma = strchr(tok, ',');
    if (comma) *comma = '\0';
    count++;
    const char *t = tok;
    while (isspace((unsigned char)*t))
      t++;
    if (*t == '\0') /* "1,,4", ",4" and "4," are typing errors, not a shorter list */
      st = cs_error_set(err, CS_ERR_PARSE, "expected a list of %s, got an empty item %d in \"%s\"",
                        what, count, text);
    else
      st = item(tok, ctx, err);
    tok = comma ? comma + 1 : NULL;
  }
  free(copy);
  return st;
}

struct dlist {
  double *v;
  size_t n, cap;
};

static enum cs_status size_item(const char *tok, void *ctx, struct cs_error *err) {
  struct dlist *l = ctx;
  char *c1 = strchr(tok, ':');
  if (c1 == NULL) {
    double b;
    enum cs_status st = cs_units_parse_size(tok, &b, err);
    return st ? st : push(&l->v, &l->n, &l->cap, b, err);
  }
  *c1 = '\0';
  char *c2 = strchr(c1 + 1, ':');
  if (c2) *c2 = '\0';
  double a, b, f = 2.0;
  enum cs_status st;
  if ((st = cs_units_parse_size(tok, &a, err)) != CS_OK) return st;
  if ((st = cs_units_parse_size(c1 + 1, &b, err)) != CS_OK) return st;
  if (c2) {
    char *e;
    errno = 0;
    long fl = strtol(c2 + 1, &e, 10);
    if (*e != '\0' || errno || fl < 2 || fl > 1024)
      return cs_error_set(err, CS_ERR_PARSE, "expected a step factor from 2 to 1024, got \"%s\"",
                          c2 + 1);
    f = (double)fl;
  }
  if (a <= 0 || b < a)
    return cs_error_set(err, CS_ERR_PARSE,
                        "expected a size range \"a:b\" with 0 < a <= b, got %.0f:%.0f", a, b);
  for (double x = a; x <= b; x *= f)
    if ((st = push(&l->v, &l->n, &l->cap, x, err)) != CS_OK) return st;
  return CS_OK;
}

enum cs_status cs_units_parse_sizes(const char *text, double **sizes, size_t *n,
                                    struct cs_error *err) {
  struct dlist l = {0};
  enum cs_status st = split_items(text, "message sizes", size_item, &l, err);
  if (st != CS_OK) {
    free(l.v);
    return st;
  }
  *sizes = l.v;
  *n = l.n;
  return CS_OK;
}

struct ilist {
  struct dlist d;
  long min, max;
};

static enum cs_status read_long(const char *s, long min, long max, long *out,
                                struct cs_error *err) {
  char *e;
  errno = 0;
  while (isspace((unsigned char)*s))
    s++;
  long v = strtol(s, &e, 10);
  while (isspace((unsigned char)*e))
    e++;
  if (e == s || *e != '\0' || errno)
    return cs_error_set(err, CS_ERR_PARSE, "expected an integer, got \"%s\"", s);
  if (v < min || v > max)
    return cs_error_set(err, CS_ERR_RANGE, "expected an integer from %ld to %ld, got %ld", min, max,
                        v);
  *out = v;
  return CS_OK;
}

/* "a", or a range "a:b" (doubling), "a:b:f" or "a:b:xf" (factor f from 2 to 1024), "a:b:+k"
 * (step k >= 1); a range always ends with b. */
static enum cs_status int_item(const char *tok, void *ctx, struct cs_error *err) {
  struct ilist *l = ctx;
  char *colon = strchr(tok, ':');
  long a, b;
  enum cs_status st;
  if (colon == NULL) {
    if ((st = read_long(tok, l->min, l->max, &a, err)) != CS_OK) return st;
    return push(&l->d.v, &l->d.n, &l->d.cap, (double)a, err);
  }
  *colon = '\0';
  char *c2 = strchr(colon + 1, ':');
  if (c2) *c2 = '\0';
  if ((st = read_long(tok, l->min, l->max, &a, err)) != CS_OK) return st;
  if ((st = read_long(colon + 1, l->min, l->max, &b, err)) != CS_OK) return st;
  if (a < 1 || b < a)
    return cs_error_set(err, CS_ERR_PARSE, "expected a range \"a:b\" with 1 <= a <= b");
  long factor = 2, step = 0;
  if (c2) {
    const char *s = c2 + 1;
    int linear = *s == '+';
    if (*s == '+' || *s == 'x') s++;
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || *e != '\0' || errno || v < (linear ? 1 : 2) || v > (linear ? l->max : 1024))
      return cs_error_set(err, CS_ERR_PARSE,
                          "expected a range step \"+k\" (k >= 1) or a factor \"xf\" (f from 2 to "
                          "1024) after \"a:b:\", got \"%s\"",
                          c2 + 1);
    if (linear)
      step = v;
    else
      factor = v;
  }
  for (long x = a; x < b; x = step ? x + step : x * factor)
    if ((st = push(&l->d.v, &l->d.n, &l->d.cap, (double)x, err)) != CS_OK) return st;
  return push(&l->d.v, &l->d.n, &l->d.cap, (double)b, err);
}

enum cs_status cs_units_parse_ints(const char *text, long min, long max, long **vals, size_t *n,
                                   struct cs_error *err) {
  struct ilist l = {.min = min, .max = max};
  enum cs_status st = split_items(text, "integers", int_item, &l, err);
  if (st != CS_OK) {
    free(l.d.v);
    return st;
  }
  long *out = malloc((l.d.n ? l.d.n : 1) * sizeof *out);
  if (out == NULL) {
    free(l.d.v);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < l.d.n; i++)
    out[i] = (long)l.d.v[i];
  free(l.d.v);
  *vals = out;
  *n = l.d.n;
  return CS_OK;
}

void cs_units_format_size(double bytes, char *buf, size_t len) {
  static const char suffix[] = {'T', 'G', 'M', 'K'};
  static const int shift[] = {40, 30, 20, 10};
  for (int i = 0; i < 4; i++) {
    double unit = ldexp(1.0, shift[i]);
    if (bytes >= unit && fmod(bytes, unit) == 0) {
      snprintf(buf, len, "%.0f%c", bytes / unit, suffix[i]);
      return;
    }
  }
  snprintf(buf, len, "%.0f", bytes);
}

void cs_units_format_quantity(double si, enum cs_unit_kind kind, char *buf, size_t len) {
  switch (kind) {
  case CS_UNIT_TIME:
    snprintf(buf, len, "%.6gus", si * 1e6);
    return;
  case CS_UNIT_BANDWIDTH:
    snprintf(buf, len, "%.6gGBps", si / 1e9);
    return;
  case CS_UNIT_BYTES:
    snprintf(buf, len, "%.6gB", si);
    return;
  case CS_UNIT_FLOPS:
    snprintf(buf, len, "%.6gTFLOPS", si / 1e12);
    return;
  }
  snprintf(buf, len, "%.6g", si);
}
