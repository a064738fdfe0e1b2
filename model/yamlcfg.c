/* yamlcfg.c — YAML documents with positions and schema-table parsing; see yamlcfg.h.
 *
 * The loaded libyaml document is checked once at load time (no aliases, bounded depth, no
 * duplicate keys), so every reader afterwards walks a plain tree of scalars, sequences and
 * mappings and only has to check types and values.
 */
#include "yamlcfg.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "input.h"

#define MAX_DEPTH 64

struct cs_yaml {
  yaml_document_t doc;
  char path[512];
};

static yaml_node_t *node_of(const struct cs_yaml *d, int id) {
  return id > 0 ? yaml_document_get_node((yaml_document_t *)&d->doc, id) : NULL;
}

const char *cs_yaml_path(const struct cs_yaml *d) {
  return d->path;
}

void cs_yaml_mark(const struct cs_yaml *d, int node, long *line, long *col) {
  yaml_node_t *n = node_of(d, node);
  *line = n ? (long)n->start_mark.line + 1 : 0;
  *col = n ? (long)n->start_mark.column + 1 : 0;
}

enum cs_status cs_yaml_error(const struct cs_yaml *d, int node, struct cs_error *err,
                             enum cs_status st, const char *fmt, ...) {
  long line, col;
  cs_yaml_mark(d, node, &line, &col);
  char msg[CS_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cs_error_at(err, st, d->path, line, col, "%s", msg);
}

int cs_yaml_root(const struct cs_yaml *d) {
  return yaml_document_get_root_node((yaml_document_t *)&d->doc) ? 1 : 0;
}

enum cs_yaml_kind cs_yaml_kind(const struct cs_yaml *d, int node) {
  yaml_node_t *n = node_of(d, node);
  if (n == NULL) return CS_YAML_NONE;
  switch (n->type) {
  case YAML_SCALAR_NODE:
    return CS_YAML_SCALAR;
  case YAML_SEQUENCE_NODE:
    return CS_YAML_SEQ;
  case YAML_MAPPING_NODE:
    return CS_YAML_MAP;
  default:
    return CS_YAML_NONE;
  }
}

const char *cs_yaml_scalar(const struct cs_yaml *d, int node) {
  yaml_node_t *n = node_of(d, node);
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

size_t cs_yaml_len(const struct cs_yaml *d, int node) {
  yaml_node_t *n = node_of(d, node);
  if (n == NULL) return 0;
  if (n->type == YAML_SEQUENCE_NODE)
    return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
  if (n->type == YAML_MAPPING_NODE)
    return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
  return 0;
}

int cs_yaml_item(const struct cs_yaml *d, int seq, size_t i) {
  yaml_node_t *n = node_of(d, seq);
  if (n == NULL || n->type != YAML_SEQUENCE_NODE || i >= cs_yaml_len(d, seq)) return 0;
  return n->data.sequence.items.start[i];
}

int cs_yaml_key(const struct cs_yaml *d, int map, size_t i) {
  yaml_node_t *n = node_of(d, map);
  if (n == NULL || n->type != YAML_MAPPING_NODE || i >= cs_yaml_len(d, map)) return 0;
  return n->data.mapping.pairs.start[i].key;
}

int cs_yaml_value(const struct cs_yaml *d, int map, size_t i) {
  yaml_node_t *n = node_of(d, map);
  if (n == NULL || n->type != YAML_MAPPING_NODE || i >= cs_yaml_len(d, map)) return 0;
  return n->data.mapping.pairs.start[i].value;
}

int cs_yaml_get(const struct cs_yaml *d, int map, const char *key) {
  size_t n = cs_yaml_len(d, map);
  for (size_t i = 0; i < n; i++) {
    const char *k = cs_yaml_scalar(d, cs_yaml_key(d, map, i));
    if (k && strcmp(k, key) == 0) return cs_yaml_value(d, map, i);
  }
  return 0;
}

struct keyref {
  const char *key;
  int node;
};

static int cmp_keyref(const void *a, const void *b) {
  return strcmp(((const struct keyref *)a)->key, ((const struct keyref *)b)->key);
}

/* Depth, alias (shared node) and duplicate-key checks over the whole document. */
static enum cs_status check_tree(const struct cs_yaml *d, int node, int depth, unsigned char *seen,
                                 size_t nnodes, struct cs_error *err) {
  if (node <= 0 || (size_t)node > nnodes) return CS_OK;
  if (seen[node])
    return cs_yaml_error(d, node, err, CS_ERR_PARSE, "aliases and anchors are not accepted");
  seen[node] = 1;
  if (depth > MAX_DEPTH)
    return cs_yaml_error(d, node, err, CS_ERR_PARSE, "nesting deeper than %d levels", MAX_DEPTH);
  enum cs_yaml_kind k = cs_yaml_kind(d, node);
  size_t n = cs_yaml_len(d, node);
  enum cs_status st = CS_OK;
  if (k == CS_YAML_SEQ) {
    for (size_t i = 0; i < n && st == CS_OK; i++)
      st = check_tree(d, cs_yaml_item(d, node, i), depth + 1, seen, nnodes, err);
  } else if (k == CS_YAML_MAP) {
    struct keyref *keys = malloc((n ? n : 1) * sizeof *keys);
    if (keys == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", d->path);
    size_t nk = 0;
    for (size_t i = 0; i < n && st == CS_OK; i++) {
      int kn = cs_yaml_key(d, node, i);
      const char *ks = cs_yaml_scalar(d, kn);
      if (ks == NULL)
        st = cs_yaml_error(d, kn, err, CS_ERR_PARSE, "expected a plain key, not a collection");
      else
        keys[nk++] = (struct keyref){ks, kn};
      if (st == CS_OK) st = check_tree(d, kn, depth + 1, seen, nnodes, err);
      if (st == CS_OK) st = check_tree(d, cs_yaml_value(d, node, i), depth + 1, seen, nnodes, err);
    }
    if (st == CS_OK && nk > 1) {
      qsort(keys, nk, sizeof *keys, cmp_keyref);
      for (size_t i = 1; i < nk && st == CS_OK; i++)
        if (strcmp(keys[i].key, keys[i - 1].key) == 0) {
          int later = keys[i].node > keys[i - 1].node ? keys[i].node : keys[i - 1].node;
          st = cs_yaml_error(d, later, err, CS_ERR_PARSE, "duplicate key \"%s\"", keys[i].key);
        }
    }
    free(keys);
  }
  return st;
}

static enum cs_status load(yaml_parser_t *parser, const char *name, struct cs_yaml **out,
                           struct cs_error *err) {
  struct cs_yaml *d = calloc(1, sizeof *d);
  if (d == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", name);
  snprintf(d->path, sizeof d->path, "%s", name);
  if (!yaml_parser_load(parser, &d->doc)) {
    long line = (long)parser->problem_mark.line + 1, col = (long)parser->problem_mark.column + 1;
    enum cs_status st =
        cs_error_at(err, CS_ERR_PARSE, name, line, col, "YAML syntax: %s%s%s",
                    parser->problem ? parser->problem : "malformed document",
                    parser->context ? " " : "", parser->context ? parser->context : "");
    free(d);
    return st;
  }
  if (!cs_yaml_root(d)) {
    yaml_document_delete(&d->doc);
    free(d);
    return cs_error_at(err, CS_ERR_PARSE, name, 1, 1,
                       "expected a YAML mapping, found an empty document");
  }
  size_t nnodes = (size_t)(d->doc.nodes.top - d->doc.nodes.start);
  unsigned char *seen = calloc(nnodes + 1, 1);
  enum cs_status st = seen ? check_tree(d, 1, 0, seen, nnodes, err)
                           : cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", name);
  free(seen);
  if (st != CS_OK) {
    cs_yaml_free(d);
    return st;
  }
  *out = d;
  return CS_OK;
}

/* Refuses nesting deeper than MAX_DEPTH as soon as the parser reaches it (a pass over the events,
 * which stops there), before libyaml builds the document: 100,000 nested "[" are refused in
 * microseconds instead of being scanned whole first. Syntax errors are left to the load, which
 * reports them. */
static enum cs_status depth_check(const char *text, size_t len, const char *name,
                                  struct cs_error *err) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", name);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  enum cs_status st = CS_OK;
  int depth = 0, done = 0;
  while (!done && st == CS_OK) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) break;
    if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
      if (++depth > MAX_DEPTH)
        st =
            cs_error_at(err, CS_ERR_PARSE, name, (long)ev.start_mark.line + 1,
                        (long)ev.start_mark.column + 1, "nesting deeper than %d levels", MAX_DEPTH);
    } else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
      depth--;
    } else if (ev.type == YAML_STREAM_END_EVENT) {
      done = 1;
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&parser);
  return st;
}

static enum cs_status load_text(const char *text, size_t len, const char *name,
                                struct cs_yaml **doc, struct cs_error *err) {
  enum cs_status st = depth_check(text, len, name, err);
  if (st != CS_OK) return st;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", name);
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  st = load(&parser, name, doc, err);
  yaml_parser_delete(&parser);
  return st;
}

enum cs_status cs_yaml_load(const char *path, struct cs_yaml **doc, struct cs_error *err) {
  FILE *f = cs_input_open(path, err);
  if (f == NULL) return err ? err->status : CS_ERR_IO;
  char *text;
  size_t len;
  enum cs_status st = cs_input_read_all(f, path, CS_INPUT_DOC_MAX, &text, &len, err);
  fclose(f);
  if (st != CS_OK) return st;
  st = load_text(text, len, path, doc, err);
  free(text);
  return st;
}

enum cs_status cs_yaml_load_string(const char *text, const char *name, struct cs_yaml **doc,
                                   struct cs_error *err) {
  size_t len = strlen(text);
  if (len > CS_INPUT_DOC_MAX)
    return cs_error_set(err, CS_ERR_RANGE, "%s: input larger than %zu bytes", name,
                        CS_INPUT_DOC_MAX);
  return load_text(text, len, name, doc, err);
}

void cs_yaml_free(struct cs_yaml *doc) {
  if (doc == NULL) return;
  yaml_document_delete(&doc->doc);
  free(doc);
}

/* ---- typed scalars ----------------------------------------------------------------------- */

static const char *need_scalar(const struct cs_yaml *d, int node, const char *what,
                               struct cs_error *err) {
  const char *s = cs_yaml_scalar(d, node);
  if (s == NULL) cs_yaml_error(d, node, err, CS_ERR_PARSE, "expected %s, found a collection", what);
  return s;
}

enum cs_status cs_yaml_int(const struct cs_yaml *d, int node, long min, long max, long *out,
                           struct cs_error *err) {
  const char *s = need_scalar(d, node, "an integer", err);
  if (s == NULL) return CS_ERR_PARSE;
  char *e;
  errno = 0;
  long v = strtol(s, &e, 10);
  if (e == s || *e != '\0' || errno)
    return cs_yaml_error(d, node, err, CS_ERR_PARSE, "expected an integer, got \"%s\"", s);
  if (v < min || v > max)
    return cs_yaml_error(d, node, err, CS_ERR_RANGE, "expected an integer from %ld to %ld, got %ld",
                         min, max, v);
  *out = v;
  return CS_OK;
}

enum cs_status cs_yaml_double(const struct cs_yaml *d, int node, double min, double max,
                              double *out, struct cs_error *err) {
  const char *s = need_scalar(d, node, "a number", err);
  if (s == NULL) return CS_ERR_PARSE;
  char *e;
  errno = 0;
  double v = strtod(s, &e);
  int alpha = 0;
  for (const char *p = s; *p; p++)
    alpha |= isalpha((unsigned char)*p) && *p != 'e' && *p != 'E';
  if (e == s || *e != '\0' || errno == ERANGE || alpha || !isfinite(v))
    return cs_yaml_error(d, node, err, CS_ERR_PARSE, "expected a finite number, got \"%s\"", s);
  if (v < min || v > max)
    return cs_yaml_error(d, node, err, CS_ERR_RANGE, "expected a number from %g to %g, got %g", min,
                         max, v);
  *out = v;
  return CS_OK;
}

enum cs_status cs_yaml_quantity(const struct cs_yaml *d, int node, enum cs_unit_kind kind,
                                double *out, struct cs_error *err) {
  const char *s = need_scalar(d, node, "a quantity with a unit", err);
  if (s == NULL) return CS_ERR_PARSE;
  struct cs_error e2 = {0};
  if (cs_units_parse_quantity(s, kind, out, &e2) != CS_OK)
    return cs_yaml_error(d, node, err, e2.status, "%s", e2.msg);
  return CS_OK;
}

enum cs_status cs_yaml_bool(const struct cs_yaml *d, int node, int *out, struct cs_error *err) {
  const char *s = need_scalar(d, node, "true or false", err);
  if (s == NULL) return CS_ERR_PARSE;
  if (strcmp(s, "true") == 0 || strcmp(s, "yes") == 0)
    *out = 1;
  else if (strcmp(s, "false") == 0 || strcmp(s, "no") == 0)
    *out = 0;
  else
    return cs_yaml_error(d, node, err, CS_ERR_PARSE, "expected true or false, got \"%s\"", s);
  return CS_OK;
}

/* ---- schema tables ----------------------------------------------------------------------- */

static void *field_ptr(const struct cs_cfg_field *f, void *obj) {
  return (char *)obj + f->offset;
}

/* Parses text into the field through a one-scalar document, so that the same checks and messages
 * apply to file values, defaults and --set values. */
static enum cs_status set_from_node(const struct cs_cfg_field *f, void *obj,
                                    const struct cs_yaml *d, int node, struct cs_error *err) {
  void *p = field_ptr(f, obj);
  enum cs_status st = CS_OK;
  long l;
  double v;
  switch (f->type) {
  case CS_CFG_INT:
    st = cs_yaml_int(d, node, (long)f->min, (long)f->max, &l, err);
    if (st == CS_OK) *(int *)p = (int)l;
    break;
  case CS_CFG_DOUBLE:
    st = cs_yaml_double(d, node, f->min, f->max, &v, err);
    if (st == CS_OK) *(double *)p = v;
    break;
  case CS_CFG_QTY:
    st = cs_yaml_quantity(d, node, f->unit, &v, err);
    if (st == CS_OK && (v < f->min || v > f->max)) {
      char lo[48], hi[48];
      cs_units_format_quantity(f->min, f->unit, lo, sizeof lo);
      cs_units_format_quantity(f->max, f->unit, hi, sizeof hi);
      st = cs_yaml_error(d, node, err, CS_ERR_RANGE, "%s: expected a value from %s to %s", f->key,
                         lo, hi);
    }
    if (st == CS_OK) *(double *)p = v;
    break;
  case CS_CFG_BOOL:
    st = cs_yaml_bool(d, node, (int *)p, err);
    break;
  case CS_CFG_STRING: {
    const char *s = need_scalar(d, node, "a string", err);
    if (s == NULL) return CS_ERR_PARSE;
    if (strlen(s) >= f->size)
      return cs_yaml_error(d, node, err, CS_ERR_RANGE, "%s: longer than %zu characters", f->key,
                           f->size - 1);
    memcpy(p, s, strlen(s) + 1);
    break;
  }
  case CS_CFG_ENUM: {
    const char *s = need_scalar(d, node, "a name", err);
    if (s == NULL) return CS_ERR_PARSE;
    for (int i = 0; f->names && f->names[i]; i++)
      if (strcasecmp(s, f->names[i]) == 0) {
        *(int *)p = i;
        return CS_OK;
      }
    char list[256] = "";
    size_t k = 0;
    for (int i = 0; f->names && f->names[i] && k < sizeof list; i++) {
      int w = snprintf(list + k, sizeof list - k, "%s%s", i ? ", " : "", f->names[i]);
      if (w < 0) break;
      k += (size_t)w;
    }
    return cs_yaml_error(d, node, err, CS_ERR_PARSE, "%s: expected one of %s, got \"%s\"", f->key,
                         list, s);
  }
  }
  if (st != CS_OK && err && strncmp(err->msg, d->path, strlen(d->path)) != 0)
    cs_error_prefix(err, f->key);
  return st;
}

enum cs_status cs_cfg_set_text(const struct cs_cfg_field *f, void *obj, const char *text,
                               struct cs_error *err) {
  /* wrap as a quoted scalar so that YAML does not reinterpret "yes", "1e3" or ":" */
  size_t n = strlen(text);
  char *buf = malloc(2 * n + 8);
  if (buf == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  char *q = buf;
  *q++ = '"';
  for (const char *s = text; *s; s++) {
    if (*s == '"' || *s == '\\') *q++ = '\\';
    *q++ = *s;
  }
  *q++ = '"';
  *q = '\0';
  struct cs_yaml *d = NULL;
  enum cs_status st = cs_yaml_load_string(buf, f->key, &d, err);
  free(buf);
  if (st == CS_OK) {
    struct cs_error e2 = {0};
    st = set_from_node(f, obj, d, cs_yaml_root(d), &e2);
    if (st != CS_OK) {
      /* strip the "key:1:1: " position of the synthetic document */
      const char *m = e2.msg;
      size_t kl = strlen(f->key);
      if (strncmp(m, f->key, kl) == 0 && strncmp(m + kl, ":1:1: ", 6) == 0) m += kl + 6;
      if (strncmp(m, f->key, kl) == 0 && m[kl] == ':') /* the message names the key already */
        cs_error_set(err, st, "%s", m);
      else
        cs_error_set(err, st, "%s: %s", f->key, m);
    }
  }
  cs_yaml_free(d);
  return st;
}

enum cs_status cs_cfg_defaults(const struct cs_cfg_field *f, size_t n, void *obj,
                               struct cs_error *err) {
  for (size_t i = 0; i < n; i++) {
    if (f[i].def == NULL) continue;
    enum cs_status st = cs_cfg_set_text(&f[i], obj, f[i].def, err);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}

enum cs_status cs_cfg_read(const struct cs_yaml *d, int map, const struct cs_cfg_field *f, size_t n,
                           void *obj, const char *const *extra, struct cs_error *err) {
  if (cs_yaml_kind(d, map) != CS_YAML_MAP)
    return cs_yaml_error(d, map, err, CS_ERR_PARSE, "expected a mapping of keys to values");
  enum cs_status st = cs_cfg_defaults(f, n, obj, err);
  if (st != CS_OK) return st;
  size_t len = cs_yaml_len(d, map);
  for (size_t i = 0; i < len; i++) {
    int kn = cs_yaml_key(d, map, i);
    const char *k = cs_yaml_scalar(d, kn);
    size_t j;
    for (j = 0; j < n; j++)
      if (strcmp(f[j].key, k) == 0) break;
    if (j < n) {
      if ((st = set_from_node(&f[j], obj, d, cs_yaml_value(d, map, i), err)) != CS_OK) return st;
      continue;
    }
    int known = 0;
    for (size_t e = 0; extra && extra[e]; e++)
      known |= strcmp(extra[e], k) == 0;
    if (!known) {
      char list[512] = "";
      size_t w = 0;
      for (size_t m = 0; m < n && w < sizeof list; m++) {
        int c = snprintf(list + w, sizeof list - w, "%s%s", m ? ", " : "", f[m].key);
        if (c < 0) break;
        w += (size_t)c;
      }
      for (size_t e = 0; extra && extra[e] && w < sizeof list; e++) {
        int c = snprintf(list + w, sizeof list - w, ", %s", extra[e]);
        if (c < 0) break;
        w += (size_t)c;
      }
      return cs_yaml_error(d, kn, err, CS_ERR_PARSE, "unknown key \"%s\"; expected one of: %s", k,
                           list);
    }
  }
  for (size_t j = 0; j < n; j++)
    if (f[j].def == NULL && cs_yaml_get(d, map, f[j].key) == 0)
      return cs_yaml_error(d, map, err, CS_ERR_PARSE, "missing required key \"%s\" (%s)", f[j].key,
                           f[j].help ? f[j].help : "");
  return CS_OK;
}

enum cs_status cs_cfg_assign(const struct cs_cfg_field *f, size_t n, void *obj,
                             const char *assignment, struct cs_error *err) {
  const char *eq = strchr(assignment, '=');
  if (eq == NULL || eq == assignment)
    return cs_error_set(err, CS_ERR_USAGE, "expected key=value, got \"%s\"", assignment);
  size_t kl = (size_t)(eq - assignment);
  for (size_t i = 0; i < n; i++)
    if (strlen(f[i].key) == kl && strncmp(f[i].key, assignment, kl) == 0) {
      enum cs_status st = cs_cfg_set_text(&f[i], obj, eq + 1, err);
      if (st == CS_OK || st == CS_ERR_NOMEM) return st; /* out of memory is no usage error */
      if (err) err->status = CS_ERR_USAGE;
      return CS_ERR_USAGE;
    }
  return cs_error_set(err, CS_ERR_USAGE, "unknown key \"%.*s\" (see --help-config)", (int)kl,
                      assignment);
}

static const char *unit_suffix(enum cs_unit_kind k) {
  switch (k) {
  case CS_UNIT_TIME:
    return "us";
  case CS_UNIT_BANDWIDTH:
    return "GBps";
  case CS_UNIT_BYTES:
    return "B";
  case CS_UNIT_FLOPS:
    return "TFLOPS";
  }
  return "";
}

/* Decodes one UTF-8 character at s; returns its length (1..4) and the code point, or 0 when the
 * bytes are not a valid, shortest-form, non-surrogate encoding. */
static int utf8_char(const unsigned char *s, unsigned long *cp) {
  int n;
  unsigned long c;
  if (s[0] < 0x80) {
    *cp = s[0];
    return 1;
  }
  if ((s[0] & 0xE0) == 0xC0) {
    n = 2;
    c = s[0] & 0x1Fu;
  } else if ((s[0] & 0xF0) == 0xE0) {
    n = 3;
    c = s[0] & 0x0Fu;
  } else if ((s[0] & 0xF8) == 0xF0) {
    n = 4;
    c = s[0] & 0x07u;
  } else
    return 0;
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (s[i] & 0x3Fu);
  }
  static const unsigned long least[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < least[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return n;
}

void cs_yaml_write_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    unsigned long cp;
    int n = utf8_char(p, &cp);
    if (n == 0) {
      fputc('?', out);
      p++;
      continue;
    }
    p += n;
    if (cp == '"' || cp == '\\')
      fprintf(out, "\\%c", (int)cp);
    else if (cp >= 0x20 && cp < 0x7F)
      fputc((int)cp, out);
    else if (cp < 0x100)
      fprintf(out, "\\x%02lX", cp);
    else if (cp < 0x10000)
      fprintf(out, "\\u%04lX", cp);
    else
      fprintf(out, "\\U%08lX", cp);
  }
  fputc('"', out);
}

void cs_cfg_dump(FILE *out, const struct cs_cfg_field *f, size_t n, const void *obj, int indent) {
  for (size_t i = 0; i < n; i++) {
    const void *p = (const char *)obj + f[i].offset;
    fprintf(out, "%*s%s: ", indent, "", f[i].key);
    char buf[64];
    switch (f[i].type) {
    case CS_CFG_INT:
      fprintf(out, "%d\n", *(const int *)p);
      break;
    case CS_CFG_DOUBLE:
      fprintf(out, "%.10g\n", *(const double *)p);
      break;
    case CS_CFG_QTY:
      cs_units_format_quantity(*(const double *)p, f[i].unit, buf, sizeof buf);
      fprintf(out, "%s\n", buf);
      break;
    case CS_CFG_BOOL:
      fprintf(out, "%s\n", *(const int *)p ? "true" : "false");
      break;
    case CS_CFG_STRING:
      cs_yaml_write_string(out, p);
      fputc('\n', out);
      break;
    case CS_CFG_ENUM: {
      int v = *(const int *)p;
      fprintf(out, "%s\n", v >= 0 && f[i].names ? f[i].names[v] : "?");
      break;
    }
    }
  }
}

void cs_cfg_help(FILE *out, const struct cs_cfg_field *f, size_t n) {
  static const char *const tname[] = {"integer", "number", "quantity", "boolean", "string", "name"};
  for (size_t i = 0; i < n; i++) {
    char type[32];
    if (f[i].type == CS_CFG_QTY)
      snprintf(type, sizeof type, "quantity (%s)", unit_suffix(f[i].unit));
    else
      snprintf(type, sizeof type, "%s", tname[f[i].type]);
    fprintf(out, "  %-24s %-18s default %-12s %s\n", f[i].key, type,
            f[i].def ? f[i].def : "(required)", f[i].help ? f[i].help : "");
  }
}
