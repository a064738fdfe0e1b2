/* calfile.c — calibration.yaml read back (calfile.h, cs_calfile_read; schema in
 * docs/calibration.md).
 *
 * Written by calwrite.c.
 *
 * The document is loaded through yamlcfg.h (libyaml's document API, which refuses
 * aliases, duplicate keys and deep nesting and keeps every node's line and column). The reader
 * fills a private struct cs_cal starting from cs_cal_init() defaults, section by section in a
 * fixed order whatever the order in the file (version first, so that a newer file is reported as
 * such and not as a list of unknown keys), and hands it to the caller only when the whole file was
 * accepted. Every refusal is one CS_ERR_PARSE line "path:line:col: what was expected".
 */
#define _POSIX_C_SOURCE 200809L

#include "calfile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "calmpi.h"
#include "calnames.h"
#include "yamlcfg.h"

#define SYM_TOL 1e-9

const char *const cs_cal_net_form_names[2] = {"ring-linear", "tree-log"};
const char *const cs_cal_select_names[3] = {"nccl", "fastest", "nccl-table"};
const char *const cs_cal_source_names[4] = {"default", "fit", "user", "topology"};
const char *const cs_cal_intra_names[2] = {"nvlink", "pcie"}; /* enum cs_tier order */

struct rd {
  const struct cs_yaml *d;
  struct cs_cal *cal;
  struct cs_error *err;
  int src_node[CS_MODEL_NPARAMS]; /* the node that made parameter i fitted, for messages */
};

/* Records "path:line:col: message" at node; always CS_ERR_PARSE. */
static enum cs_status bad(const struct rd *r, int node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum cs_status bad(const struct rd *r, int node, const char *fmt, ...) {
  char msg[CS_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cs_yaml_error(r->d, node, r->err, CS_ERR_PARSE, "%s", msg);
}

/* File text quoted in a message: at most 60 characters, control characters as '?', so that the
 * message stays one line. */
static const char *show(const char *s, char *buf, size_t len) {
  size_t k = 0;
  for (; s && *s && k + 4 < len && k < 60; s++)
    buf[k++] = (unsigned char)*s < 0x20 || *s == 0x7F ? '?' : *s;
  if (s && *s) {
    memcpy(buf + k, "...", 3);
    k += 3;
  }
  buf[k] = '\0';
  return buf;
}

static const char *kind_word(enum cs_yaml_kind k) {
  return k == CS_YAML_MAP ? "a mapping" : k == CS_YAML_SEQ ? "a list" : "a single value";
}

static enum cs_status need(const struct rd *r, int node, enum cs_yaml_kind want, const char *what,
                           const char *example) {
  enum cs_yaml_kind k = cs_yaml_kind(r->d, node);
  if (k == want) return CS_OK;
  return bad(r, node, "%s: expected %s%s%s, found %s", what, kind_word(want),
             example ? " such as " : "", example ? example : "", kind_word(k));
}

static const char *scalar(const struct rd *r, int node, const char *what) {
  const char *s = cs_yaml_scalar(r->d, node);
  if (s == NULL)
    bad(r, node, "%s: expected a single value, found %s", what,
        kind_word(cs_yaml_kind(r->d, node)));
  return s;
}

/* Reads the keys of mapping `map` (already checked to be one): vals[j] receives the value node of
 * keys[j], or 0. A key not in keys is an error naming the section and the keys it accepts. */
static enum cs_status collect(const struct rd *r, int map, const char *section,
                              const char *const *keys, size_t nkeys, int *vals) {
  for (size_t j = 0; j < nkeys; j++)
    vals[j] = 0;
  size_t n = cs_yaml_len(r->d, map);
  for (size_t i = 0; i < n; i++) {
    int kn = cs_yaml_key(r->d, map, i);
    const char *k = cs_yaml_scalar(r->d, kn);
    size_t j = 0;
    while (j < nkeys && strcmp(keys[j], k) != 0)
      j++;
    if (j < nkeys) {
      vals[j] = cs_yaml_value(r->d, map, i);
      continue;
    }
    char list[512] = "", sb[80];
    size_t w = 0;
    for (size_t m = 0; m < nkeys && w < sizeof list; m++) {
      int c = snprintf(list + w, sizeof list - w, "%s%s", m ? ", " : "", keys[m]);
      if (c < 0) break;
      w += (size_t)c;
    }
    return bad(r, kn, "unknown key \"%s\" in %s; expected one of: %s", show(k, sb, sizeof sb),
               section, list);
  }
  return CS_OK;
}

static int is_null(const char *s) {
  return strcmp(s, "") == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
         strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

/* Whether s spells infinity or NaN in any of the ways YAML, C or a user might (.nan, -.inf, NaN).
 */
static int non_finite_word(const char *s) {
  while (*s == '+' || *s == '-' || *s == '.' || *s == ' ')
    s++;
  return strncasecmp(s, "nan", 3) == 0 || strncasecmp(s, "inf", 3) == 0;
}

/* A decimal number with nothing after it; *rest points at what follows the number. */
static int plain_number(const char *s, double *v, const char **rest) {
  if (!(isdigit((unsigned char)*s) || *s == '.' || *s == '-' || *s == '+')) return 0;
  char *e;
  errno = 0;
  double x = strtod(s, &e);
  if (e == s) return 0;
  for (const char *p = s; p < e; p++)
    if (!(isdigit((unsigned char)*p) || strchr(".eE+-", *p))) return 0; /* hex, inf, nan */
  if (errno == ERANGE && fabs(x) > 1) return 0;
  if (errno == ERANGE) x = 0; /* underflow: as good as zero */
  *v = x;
  *rest = e;
  return 1;
}

enum { NONNEG = 1, POSITIVE = 2, NULLABLE = 4 };

/* A dimensionless number. flags: NONNEG (>= 0), POSITIVE (> 0), NULLABLE (null reads as NAN). */
static enum cs_status read_num(const struct rd *r, int node, const char *what, int flags,
                               double *out) {
  const char *s = scalar(r, node, what);
  if (s == NULL) return CS_ERR_PARSE;
  char sb[80];
  if ((flags & NULLABLE) && is_null(s)) {
    *out = NAN;
    return CS_OK;
  }
  const char *want = flags & POSITIVE ? "a positive number"
                     : flags & NONNEG ? "a non-negative number"
                                      : "a number";
  if (non_finite_word(s))
    return bad(r, node, "%s: expected a finite number%s, got \"%s\"", what,
               flags & NULLABLE ? " or null" : "", show(s, sb, sizeof sb));
  double v;
  const char *rest;
  if (!plain_number(s, &v, &rest))
    return bad(r, node, "%s: expected %s, got \"%s\"", what, want, show(s, sb, sizeof sb));
  if (*rest != '\0') {
    if (isalpha((unsigned char)*rest) || *rest == '/')
      return bad(r, node, "%s is dimensionless: expected a plain number without a unit, got \"%s\"",
                 what, show(s, sb, sizeof sb));
    return bad(r, node, "%s: expected %s, got \"%s\"", what, want, show(s, sb, sizeof sb));
  }
  if (((flags & NONNEG) && v < 0) || ((flags & POSITIVE) && !(v > 0)))
    return bad(r, node, "%s: expected %s, got %s", what, want, show(s, sb, sizeof sb));
  *out = v;
  return CS_OK;
}

/* A quantity with a unit of the given kind (times, bandwidths, sizes). */
static enum cs_status read_qty(const struct rd *r, int node, const char *what,
                               enum cs_unit_kind kind, int positive, double *out) {
  const char *s = scalar(r, node, what);
  if (s == NULL) return CS_ERR_PARSE;
  char sb[80];
  const char *noun = kind == CS_UNIT_TIME        ? "time"
                     : kind == CS_UNIT_BANDWIDTH ? "bandwidth"
                                                 : "size";
  if (non_finite_word(s))
    return bad(r, node, "%s: expected a finite %s, got \"%s\"", what, noun, show(s, sb, sizeof sb));
  const char *p = s;
  while (*p == ' ')
    p++;
  if (*p == '-')
    return bad(r, node, "%s: expected a non-negative %s, got \"%s\"", what, noun,
               show(s, sb, sizeof sb));
  struct cs_error e2 = {0};
  double v;
  if (cs_units_parse_quantity(s, kind, &v, &e2) != CS_OK)
    return bad(r, node, "%s: %s", what, e2.msg);
  if (positive && !(v > 0))
    return bad(r, node, "%s: expected a positive %s, got \"%s\"", what, noun,
               show(s, sb, sizeof sb));
  *out = v;
  return CS_OK;
}

static enum cs_status read_int(const struct rd *r, int node, const char *what, long min, long max,
                               int *out) {
  const char *s = scalar(r, node, what);
  if (s == NULL) return CS_ERR_PARSE;
  char sb[80];
  char *e;
  errno = 0;
  long v = strtol(s, &e, 10);
  if (e == s || *e != '\0' || errno == ERANGE || !(isdigit((unsigned char)*s) || *s == '-'))
    return bad(r, node, "%s: expected a whole number, got \"%s\"", what, show(s, sb, sizeof sb));
  if (v < min || v > max)
    return bad(r, node, "%s: expected a whole number from %ld to %ld, got %ld", what, min, max, v);
  *out = (int)v;
  return CS_OK;
}

static enum cs_status read_bool(const struct rd *r, int node, const char *what, int *out) {
  const char *s = scalar(r, node, what);
  if (s == NULL) return CS_ERR_PARSE;
  char sb[80];
  if (strcmp(s, "true") == 0)
    *out = 1;
  else if (strcmp(s, "false") == 0)
    *out = 0;
  else
    return bad(r, node, "%s: expected true or false, got \"%s\"", what, show(s, sb, sizeof sb));
  return CS_OK;
}

/* A string into buf[size]; longer ones are refused, never truncated. */
static enum cs_status read_str(const struct rd *r, int node, const char *what, char *buf,
                               size_t size) {
  const char *s = scalar(r, node, what);
  if (s == NULL) return CS_ERR_PARSE;
  size_t n = strlen(s);
  if (n >= size)
    return bad(r, node, "%s: expected at most %zu characters (the limit), got %zu", what, size - 1,
               n);
  memcpy(buf, s, n + 1);
  return CS_OK;
}

/* One of names[0..n-1], exactly. */
static enum cs_status read_name(const struct rd *r, int node, const char *what,
                                const char *const *names, int n, int *out) {
  const char *s = scalar(r, node, what);
  if (s == NULL) return CS_ERR_PARSE;
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0) {
      *out = i;
      return CS_OK;
    }
  char list[256] = "", sb[80];
  size_t w = 0;
  for (int i = 0; i < n && w < sizeof list; i++) {
    int c = snprintf(list + w, sizeof list - w, "%s%s",
                     i == 0       ? ""
                     : i == n - 1 ? " or "
                                  : ", ",
                     names[i]);
    if (c < 0) break;
    w += (size_t)c;
  }
  return bad(r, node, "%s: expected %s, got \"%s\"", what, list, show(s, sb, sizeof sb));
}

/* ---- sections -------------------------------------------------------------------------------- */

static enum cs_status read_provenance(struct rd *r, int map) {
  static const char *const keys[] = {"tool",  "created", "gpu",    "nccl",
                                     "hosts", "config",  "launch", "sources"};
  struct cs_cal_prov *pv = &r->cal->prov;
  struct {
    char *buf;
    size_t size;
  } dst[] = {{pv->tool, sizeof pv->tool},    {pv->created, sizeof pv->created},
             {pv->gpu, sizeof pv->gpu},      {pv->nccl, sizeof pv->nccl},
             {pv->hosts, sizeof pv->hosts},  {pv->config, sizeof pv->config},
             {pv->launch, sizeof pv->launch}};
  int v[8];
  enum cs_status st = need(r, map, CS_YAML_MAP, "provenance", NULL);
  if (st == CS_OK) st = collect(r, map, "provenance", keys, 8, v);
  for (int k = 0; k < 7 && st == CS_OK; k++) {
    char what[32];
    snprintf(what, sizeof what, "provenance.%s", keys[k]);
    if (v[k]) st = read_str(r, v[k], what, dst[k].buf, dst[k].size);
  }
  if (st != CS_OK || v[7] == 0) return st;
  if ((st = need(r, v[7], CS_YAML_SEQ, "provenance.sources", "[data/run1.log]")) != CS_OK)
    return st;
  size_t n = cs_yaml_len(r->d, v[7]);
  if (n > CS_CAL_MAX_SOURCES)
    return bad(r, cs_yaml_item(r->d, v[7], CS_CAL_MAX_SOURCES),
               "provenance.sources: expected at most %d source files (the limit)",
               CS_CAL_MAX_SOURCES);
  for (size_t i = 0; i < n; i++) {
    st = read_str(r, cs_yaml_item(r->d, v[7], i), "provenance.sources", pv->sources[i],
                  sizeof pv->sources[i]);
    if (st != CS_OK) return st;
  }
  pv->n_sources = (int)n;
  return CS_OK;
}

/* A list at node of at most max entries, their number in *n. */
static enum cs_status need_list(const struct rd *r, int node, const char *what, const char *example,
                                size_t max, size_t *n) {
  enum cs_status st = need(r, node, CS_YAML_SEQ, what, example);
  if (st != CS_OK) return st;
  *n = cs_yaml_len(r->d, node);
  if (*n > max)
    return bad(r, cs_yaml_item(r->d, node, max), "%s: expected at most %zu entries (the limit)",
               what, max);
  return CS_OK;
}

/* system.measured.node_counts: distinct whole numbers 1..1e8 in ascending order, at most
 * CS_CAL_MAX_NODE_COUNTS, none above max_nodes (read before them). */
static enum cs_status read_node_counts(struct rd *r, int seq) {
  struct cs_cal_quality *q = &r->cal->quality;
  size_t n;
  enum cs_status st =
      need_list(r, seq, "system.measured.node_counts", "[1, 2, 4]", CS_CAL_MAX_NODE_COUNTS, &n);
  if (st != CS_OK) return st;
  for (size_t i = 0; i < n && st == CS_OK; i++) {
    int item = cs_yaml_item(r->d, seq, i);
    st = read_int(r, item, "system.measured.node_counts", 1, 100000000, &q->node_counts[i]);
    if (st == CS_OK && i > 0 && q->node_counts[i] <= q->node_counts[i - 1])
      st = bad(r, item, "system.measured.node_counts: expected distinct counts in ascending order");
    if (st == CS_OK && q->max_nodes > 0 && q->node_counts[i] > q->max_nodes)
      st = bad(r, item, "system.measured.node_counts: %d is above max_nodes (%d)",
               q->node_counts[i], q->max_nodes);
  }
  if (st == CS_OK) q->n_node_counts = (int)n;
  return st;
}

static enum cs_status read_system(struct rd *r, int map) {
  static const char *const keys[] = {"intra_tier", "net_form", "select", "algorithms", "measured"};
  struct cs_model *m = &r->cal->model;
  int v[5], x;
  enum cs_status st = need(r, map, CS_YAML_MAP, "system", NULL);
  if (st == CS_OK) st = collect(r, map, "system", keys, 5, v);
  if (st == CS_OK && v[0] &&
      (st = read_name(r, v[0], "system.intra_tier", cs_cal_intra_names, 2, &x)) == CS_OK)
    m->intra = (enum cs_tier)x;
  if (st == CS_OK && v[1] &&
      (st = read_name(r, v[1], "system.net_form", cs_cal_net_form_names, 2, &x)) == CS_OK)
    m->net_form = (enum cs_net_form)x;
  if (st == CS_OK && v[2] &&
      (st = read_name(r, v[2], "system.select", cs_cal_select_names, 3, &x)) == CS_OK)
    m->select = (enum cs_select)x;
  if (st == CS_OK && v[3]) {
    const char *names[CS_ALGO_COUNT];
    for (int a = 0; a < CS_ALGO_COUNT; a++)
      names[a] = cs_algo_name(a);
    if ((st = need(r, v[3], CS_YAML_SEQ, "system.algorithms", "[ring, tree, pat, p2p]")) != CS_OK)
      return st;
    size_t n = cs_yaml_len(r->d, v[3]);
    if (n == 0) return bad(r, v[3], "system.algorithms: expected at least one algorithm");
    unsigned bits = 0;
    for (size_t i = 0; i < n && st == CS_OK; i++) {
      int item = cs_yaml_item(r->d, v[3], i);
      st = read_name(r, item, "system.algorithms", names, CS_ALGO_COUNT, &x);
      if (st == CS_OK && (bits & (1u << x)))
        st = bad(r, item, "system.algorithms: \"%s\" is listed twice", names[x]);
      if (st == CS_OK) bits |= 1u << x; /* x is not set when the name was refused */
    }
    if (st == CS_OK) m->algo_enabled = bits;
  }
  if (st == CS_OK && v[4]) {
    static const char *const mk[] = {"max_nodes", "max_ranks", "max_gpus_per_node", "node_counts"};
    struct cs_cal_quality *q = &r->cal->quality;
    int *dst[] = {&q->max_nodes, &q->max_ranks, &q->max_gpus_per_node};
    int mv[4];
    if ((st = need(r, v[4], CS_YAML_MAP, "system.measured", NULL)) == CS_OK)
      st = collect(r, v[4], "system.measured", mk, 4, mv);
    for (int k = 0; k < 3 && st == CS_OK; k++) {
      char what[48];
      snprintf(what, sizeof what, "system.measured.%s", mk[k]);
      if (mv[k]) st = read_int(r, mv[k], what, 0, 100000000, dst[k]);
    }
    if (st == CS_OK && mv[3]) st = read_node_counts(r, mv[3]);
  }
  return st;
}

#define MIN_BW_BPS 1e3 /* see read_param_value */
#define MIN_FACTOR 1e-6
#define MAX_EFF 10.0

/* One parameter's value, in the unit its family requires. */
static enum cs_status read_param_value(const struct rd *r, int node, int i, const char *name,
                                       double *out) {
  enum cs_param_kind kind = cs_model_param_kind(i);
  /* bandwidths, efficiencies and per-collective bandwidth factors divide: they must be positive */
  int positive = kind == CS_PK_BW || kind == CS_PK_EFF || kind == CS_PK_COLL_BW;
  const char *u = cs_model_param_unit(i);
  enum cs_status st;
  if (strcmp(u, "s") == 0) return read_qty(r, node, name, CS_UNIT_TIME, positive, out);
  if (strcmp(u, "B") == 0) return read_qty(r, node, name, CS_UNIT_BYTES, positive, out);
  if (strcmp(u, "Bps") == 0) {
    if ((st = read_qty(r, node, name, CS_UNIT_BANDWIDTH, positive, out)) != CS_OK) return st;
    /* MIN_BW_BPS: below any link a collective runs over (a 9600-baud serial line moves 1.2 kB/s);
     * 1e-300 GB/s otherwise gives infinite predictions far from the file */
    if (positive && *out < MIN_BW_BPS)
      return bad(r, node, "%s: expected a bandwidth of at least 1kBps, got %g B/s", name, *out);
    return CS_OK;
  }
  if ((st = read_num(r, node, name, positive ? POSITIVE : NONNEG, out)) != CS_OK) return st;
  /* MIN_FACTOR..MAX_EFF: an efficiency is the fraction of a link's bandwidth a protocol reaches;
   * the largest any fit here produced is 1.19 (eff.tree.simple, tests/data/h200x2, NCCL's tree
   * counting both directions). Ten times that is damage: 1e9 printed a 21 TB/s busbw. */
  if (positive && *out < MIN_FACTOR)
    return bad(r, node, "%s: expected a value of at least %g, got %g", name, MIN_FACTOR, *out);
  if (kind == CS_PK_EFF && *out > MAX_EFF)
    return bad(r, node, "%s: expected an efficiency from %g to %g, got %g", name, MIN_FACTOR,
               MAX_EFF, *out);
  return CS_OK;
}

static enum cs_status read_parameters(struct rd *r, int map) {
  static const char *const keys[] = {"value", "se_rel", "source"};
  enum cs_status st = need(r, map, CS_YAML_MAP, "parameters", "{bw.nvlink: {value: 350GBps}}");
  size_t n = cs_yaml_len(r->d, map);
  for (size_t e = 0; e < n && st == CS_OK; e++) {
    int kn = cs_yaml_key(r->d, map, e), vn = cs_yaml_value(r->d, map, e);
    const char *name = cs_yaml_scalar(r->d, kn);
    char sb[80];
    int i = cs_model_param_index(name);
    if (i < 0)
      return bad(r, kn,
                 "unknown key \"%s\" in parameters; expected a parameter name such as "
                 "bw.nvlink, hop.net.simple or eff.ring.ll",
                 show(name, sb, sizeof sb));
    int v[3], src = CS_SRC_DEFAULT;
    double se, value;
    if ((st = need(r, vn, CS_YAML_MAP, name, "{value: 350GBps, source: fit}")) != CS_OK) return st;
    if ((st = collect(r, vn, name, keys, 3, v)) != CS_OK) return st;
    if (v[0] == 0) return bad(r, vn, "%s: missing required key \"value\"", name);
    if ((st = read_param_value(r, v[0], i, name, &value)) != CS_OK) return st;
    char what[80];
    snprintf(what, sizeof what, "%s.se_rel", name);
    if (v[1] && (st = read_num(r, v[1], what, NONNEG | NULLABLE, &se)) != CS_OK) return st;
    snprintf(what, sizeof what, "%s.source", name);
    if (v[2] && (st = read_name(r, v[2], what, cs_cal_source_names, 4, &src)) != CS_OK) return st;
    if (src == CS_SRC_FIT && !(value > 0))
      return bad(r, v[0],
                 "%s: expected a positive value for a fitted parameter (the fit works "
                 "with its logarithm)",
                 name);
    *cs_model_param(&r->cal->model, i) = value;
    r->cal->source[i] = (enum cs_param_source)src;
    r->src_node[i] = v[2];
  }
  return st;
}

static enum cs_status read_covariance(struct rd *r, int map) {
  static const char *const keys[] = {"params", "matrix"};
  struct cs_cal *cal = r->cal;
  int v[2];
  enum cs_status st = need(r, map, CS_YAML_MAP, "covariance", NULL);
  if (st == CS_OK) st = collect(r, map, "covariance", keys, 2, v);
  if (st != CS_OK) return st;
  if (v[0] == 0) return bad(r, map, "covariance: missing required key \"params\"");
  if (v[1] == 0) return bad(r, map, "covariance: missing required key \"matrix\"");
  if ((st = need(r, v[0], CS_YAML_SEQ, "covariance.params", "[bw.nvlink, base.ring.ll]")) != CS_OK)
    return st;
  size_t n = cs_yaml_len(r->d, v[0]);
  if (n > CS_MODEL_NPARAMS)
    return bad(r, v[0], "covariance.params: expected at most %d parameter names", CS_MODEL_NPARAMS);
  int idx[CS_MODEL_NPARAMS];
  for (size_t k = 0; k < n; k++) {
    int item = cs_yaml_item(r->d, v[0], k);
    const char *name = scalar(r, item, "covariance.params");
    char sb[80];
    if (name == NULL) return CS_ERR_PARSE;
    int i = cs_model_param_index(name);
    if (i < 0)
      return bad(r, item,
                 "covariance.params: expected a parameter name such as bw.nvlink, got "
                 "\"%s\"",
                 show(name, sb, sizeof sb));
    if (cal->source[i] != CS_SRC_FIT)
      return bad(r, item,
                 "covariance.params: %s is not a fitted parameter; expected only "
                 "parameters with source: fit",
                 name);
    for (size_t j = 0; j < k; j++)
      if (idx[j] == i) return bad(r, item, "covariance.params: %s is listed twice", name);
    idx[k] = i;
  }
  if ((st = need(r, v[1], CS_YAML_SEQ, "covariance.matrix", "[[1e-4, 0], [0, 1e-4]]")) != CS_OK)
    return st;
  if (cs_yaml_len(r->d, v[1]) != n)
    return bad(r, v[1],
               "covariance.matrix: expected a square matrix of %zu rows of %zu numbers "
               "(one per name in params), found %zu rows",
               n, n, cs_yaml_len(r->d, v[1]));
  if ((st = cs_cal_alloc_cov(cal, (int)n, r->err)) != CS_OK) return st;
  int nf = (int)n;
  for (int a = 0; a < nf; a++) {
    int row = cs_yaml_item(r->d, v[1], (size_t)a);
    if ((st = need(r, row, CS_YAML_SEQ, "covariance.matrix row", "[1e-4, 0]")) != CS_OK) return st;
    if (cs_yaml_len(r->d, row) != n)
      return bad(r, row,
                 "covariance.matrix: expected a square matrix; row %d has %zu entries, "
                 "expected %zu",
                 a + 1, cs_yaml_len(r->d, row), n);
    for (int b = 0; b < nf; b++) {
      int cell = cs_yaml_item(r->d, row, (size_t)b);
      double *c = &cal->cov[a * nf + b];
      if ((st = read_num(r, cell, "covariance.matrix", 0, c)) != CS_OK) return st;
      if (a == b && *c < 0)
        return bad(r, cell,
                   "covariance.matrix: expected a non-negative variance on the diagonal, "
                   "got %g",
                   *c);
    }
  }
  for (int a = 0; a < nf; a++)
    for (int b = 0; b < a; b++) {
      double x = cal->cov[a * nf + b], y = cal->cov[b * nf + a];
      double scale =
          fmax(fmax(fabs(x), fabs(y)), sqrt(cal->cov[a * nf + a] * cal->cov[b * nf + b]));
      if (fabs(x - y) > SYM_TOL * scale)
        return bad(r, cs_yaml_item(r->d, cs_yaml_item(r->d, v[1], (size_t)a), (size_t)b),
                   "covariance.matrix: expected a symmetric matrix; row %d column %d is %g but row "
                   "%d column %d is %g",
                   a + 1, b + 1, x, b + 1, a + 1, y);
    }
  for (int k = 0; k < nf; k++)
    cal->fit_index[k] = idx[k];
  return CS_OK;
}

static enum cs_status read_alternative(struct rd *r, int map) {
  static const char *const keys[] = {"net_form", "hop.net.ll", "hop.net.ll128", "hop.net.simple"};
  _Static_assert(CS_PROTO_COUNT == 3, "alternative keys list one hop per protocol");
  int v[4], form;
  enum cs_status st = need(r, map, CS_YAML_MAP, "alternative", NULL);
  if (st == CS_OK) st = collect(r, map, "alternative", keys, 4, v);
  if (st == CS_OK && v[0]) {
    if ((st = read_name(r, v[0], "alternative.net_form", cs_cal_net_form_names, 2, &form)) != CS_OK)
      return st;
    if (form == (int)r->cal->model.net_form)
      return bad(r, v[0], "alternative.net_form: expected the form other than system.net_form (%s)",
                 cs_cal_net_form_names[1 - form]);
  }
  for (int p = 0; p < CS_PROTO_COUNT && st == CS_OK; p++)
    if (v[1 + p]) st = read_qty(r, v[1 + p], keys[1 + p], CS_UNIT_TIME, 0, &r->cal->alt_hop_net[p]);
  return st;
}

/* quality.residuals: entries of struct cs_cal_resid, each a map of its six keys. */
static enum cs_status read_resid(struct rd *r, int seq) {
  static const char *const keys[] = {"collective", "algorithm", "protocol",
                                     "octave",     "points",    "rms_ln"};
  const char *colls[CS_COLL_COUNT], *algos[CS_ALGO_COUNT], *protos[CS_PROTO_COUNT];
  for (int i = 0; i < CS_COLL_COUNT; i++)
    colls[i] = cs_coll_name(i);
  for (int i = 0; i < CS_ALGO_COUNT; i++)
    algos[i] = cs_algo_name(i);
  for (int i = 0; i < CS_PROTO_COUNT; i++)
    protos[i] = cs_proto_name(i);
  struct cs_cal_quality *q = &r->cal->quality;
  size_t n;
  enum cs_status st = need_list(r, seq, "quality.residuals", NULL, CS_CAL_MAX_RESID, &n);
  if (st != CS_OK || n == 0) return st;
  free(q->resid);
  q->n_resid = 0;
  if ((q->resid = malloc(n * sizeof *q->resid)) == NULL)
    return cs_error_set(r->err, CS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < n && st == CS_OK; i++) {
    int item = cs_yaml_item(r->d, seq, i), v[6], c = 0, a = 0, p = 0, o = 0, pts = 0;
    double rms = NAN;
    if ((st = need(r, item, CS_YAML_MAP, "quality.residuals entry",
                   "{collective: all_reduce, algorithm: tree, protocol: ll128, octave: 20, "
                   "points: 9, rms_ln: 0.21}")) != CS_OK)
      return st;
    if ((st = collect(r, item, "quality.residuals entry", keys, 6, v)) != CS_OK) return st;
    for (int k = 0; k < 6; k++)
      if (v[k] == 0)
        return bad(r, item, "quality.residuals entry: missing required key \"%s\"", keys[k]);
    st = read_name(r, v[0], "quality.residuals.collective", colls, CS_COLL_COUNT, &c);
    if (st == CS_OK)
      st = read_name(r, v[1], "quality.residuals.algorithm", algos, CS_ALGO_COUNT, &a);
    if (st == CS_OK)
      st = read_name(r, v[2], "quality.residuals.protocol", protos, CS_PROTO_COUNT, &p);
    if (st == CS_OK) st = read_int(r, v[3], "quality.residuals.octave", 0, 62, &o);
    if (st == CS_OK) st = read_int(r, v[4], "quality.residuals.points", 1, 2147483647L, &pts);
    if (st == CS_OK) st = read_num(r, v[5], "quality.residuals.rms_ln", NONNEG, &rms);
    if (st == CS_OK)
      q->resid[i] = (struct cs_cal_resid){
          (unsigned char)c, (unsigned char)a, (unsigned char)p, (signed char)o, pts, rms};
  }
  if (st == CS_OK) q->n_resid = (int)n;
  return st;
}

static enum cs_status read_quality(struct rd *r, int map) {
  static const char *const keys[] = {"points",    "outliers",       "iterations",  "converged",
                                     "noise_rel", "median_rel_err", "p90_rel_err", "max_rel_err",
                                     "aic",       "net_determined", "gate",        "forced",
                                     "extrap_sd", "extrap_from",    "extrap_to",   "residuals"};
  struct cs_cal_quality *q = &r->cal->quality;
  int *ints[] = {&q->points, &q->outliers, &q->iterations, &q->extrap_from, &q->extrap_to};
  static const int ik[] = {0, 1, 2, 13, 14};
  double *nums[] = {&q->noise_rel, &q->median_rel_err, &q->p90_rel_err, &q->max_rel_err};
  int v[16];
  char what[40];
  enum cs_status st = need(r, map, CS_YAML_MAP, "quality", NULL);
  if (st == CS_OK) st = collect(r, map, "quality", keys, 16, v);
  if (st == CS_OK && v[15]) st = read_resid(r, v[15]);
  if (st == CS_OK && v[12])
    st = read_num(r, v[12], "quality.extrap_sd", NONNEG | NULLABLE, &q->extrap_sd);
  if (st == CS_OK && v[10]) st = read_str(r, v[10], "quality.gate", q->gate, sizeof q->gate);
  if (st == CS_OK && v[11]) st = read_bool(r, v[11], "quality.forced", &q->forced);
  for (int k = 0; k < 5 && st == CS_OK; k++) {
    snprintf(what, sizeof what, "quality.%s", keys[ik[k]]);
    if (v[ik[k]]) st = read_int(r, v[ik[k]], what, 0, 2147483647L, ints[k]);
  }
  if (st == CS_OK && v[3]) st = read_bool(r, v[3], "quality.converged", &q->converged);
  for (int k = 0; k < 4 && st == CS_OK; k++) {
    snprintf(what, sizeof what, "quality.%s", keys[4 + k]);
    if (v[4 + k]) st = read_num(r, v[4 + k], what, NONNEG | NULLABLE, nums[k]);
  }
  if (st == CS_OK && v[8]) {
    int a[2];
    if ((st = need(r, v[8], CS_YAML_MAP, "quality.aic", "{ring-linear: -120.5, tree-log: null}")) ==
        CS_OK)
      st = collect(r, v[8], "quality.aic", cs_cal_net_form_names, 2, a);
    for (int f = 0; f < 2 && st == CS_OK; f++) {
      snprintf(what, sizeof what, "quality.aic.%s", cs_cal_net_form_names[f]);
      if (a[f]) st = read_num(r, a[f], what, NULLABLE, &q->aic[f]);
    }
  }
  if (st == CS_OK && v[9]) st = read_bool(r, v[9], "quality.net_determined", &q->net_determined);
  return st;
}

static enum cs_status read_cv(struct rd *r, int seq) {
  static const char *const keys[] = {"held_out", "points", "median_rel_err", "max_rel_err"};
  struct cs_cal_quality *q = &r->cal->quality;
  size_t n;
  enum cs_status st = need_list(r, seq, "cross_validation", NULL, CS_CAL_MAX_CV, &n);
  if (st != CS_OK) return st;
  for (size_t i = 0; i < n && st == CS_OK; i++) {
    int item = cs_yaml_item(r->d, seq, i), v[4];
    struct cs_cal_cv *c = &q->cv[i];
    c->median_rel_err = c->max_rel_err = NAN;
    if ((st = need(r, item, CS_YAML_MAP, "cross_validation entry",
                   "{held_out: \"ring/ll n=2 N=1 g=2\", points: 28}")) != CS_OK)
      return st;
    if ((st = collect(r, item, "cross_validation entry", keys, 4, v)) != CS_OK) return st;
    if (v[0] == 0) return bad(r, item, "cross_validation entry: missing required key \"held_out\"");
    st = read_str(r, v[0], "cross_validation.held_out", c->group, sizeof c->group);
    if (st == CS_OK && v[1])
      st = read_int(r, v[1], "cross_validation.points", 0, 2147483647L, &c->points);
    if (st == CS_OK && v[2])
      st = read_num(r, v[2], "cross_validation.median_rel_err", NONNEG | NULLABLE,
                    &c->median_rel_err);
    if (st == CS_OK && v[3])
      st = read_num(r, v[3], "cross_validation.max_rel_err", NONNEG | NULLABLE, &c->max_rel_err);
  }
  if (st == CS_OK) q->n_cv = (int)n;
  return st;
}

static enum cs_status read_steps(struct rd *r, int map) {
  static const char *const keys[] = {
      "source",       "compute_scale",   "compute_scale_se", "host",           "host_se",
      "interference", "interference_se", "corr_scale_host",  "median_rel_err", "max_rel_err",
      "points"};
  struct cs_cal_steps *s = &r->cal->steps;
  double *nums[] = {&s->compute_scale,
                    &s->compute_scale_se,
                    NULL,
                    NULL,
                    &s->interference,
                    &s->interference_se,
                    &s->corr_scale_host,
                    &s->median_rel_err,
                    &s->max_rel_err};
  int v[11];
  char what[48];
  enum cs_status st = need(r, map, CS_YAML_MAP, "steps", NULL);
  if (st == CS_OK) st = collect(r, map, "steps", keys, 11, v);
  if (st == CS_OK && v[0]) st = read_str(r, v[0], "steps.source", s->source, sizeof s->source);
  for (int k = 1; k < 10 && st == CS_OK; k++) {
    if (!v[k]) continue;
    snprintf(what, sizeof what, "steps.%s", keys[k]);
    if (k == 3 || k == 4) {
      const char *t = scalar(r, v[k], what);
      if (t && is_null(t))
        *(k == 3 ? &s->host_s : &s->host_s_se) = NAN;
      else
        st = read_qty(r, v[k], what, CS_UNIT_TIME, 0, k == 3 ? &s->host_s : &s->host_s_se);
    } else {
      st = read_num(r, v[k], what, (k == 7 ? 0 : NONNEG) | NULLABLE, nums[k - 1]);
    }
  }
  if (st == CS_OK && v[10]) st = read_int(r, v[10], "steps.points", 0, 2147483647L, &s->points);
  if (st == CS_OK && !(s->compute_scale > 0 && s->interference >= 1))
    st = bad(r, map, "steps: expected compute_scale > 0 and interference >= 1");
  if (st == CS_OK) s->fitted = 1;
  return st;
}

static enum cs_status read_document(struct rd *r) {
  static const char *const keys[] = {"version",    "provenance",  "system",  "parameters",
                                     "covariance", "alternative", "quality", "cross_validation",
                                     "steps",      "mpi"};
  int root = cs_yaml_root(r->d), v[10];
  if (cs_yaml_kind(r->d, root) != CS_YAML_MAP)
    return bad(r, root,
               "expected a calibration: a mapping that starts with \"version: 1\", found %s",
               kind_word(cs_yaml_kind(r->d, root)));
  int vn = cs_yaml_get(r->d, root, "version");
  if (vn == 0) return bad(r, root, "missing required key \"version\"; expected \"version: 1\"");
  const char *vs = scalar(r, vn, "version");
  char sb[80];
  if (vs == NULL) return CS_ERR_PARSE;
  if (strcmp(vs, "1") != 0)
    return bad(r, vn,
               "expected version: %d, got \"%s\" (this commscale reads calibration files "
               "of version %d only)",
               CS_CAL_VERSION, show(vs, sb, sizeof sb), CS_CAL_VERSION);
  enum cs_status st = collect(r, root, "the calibration file", keys, 10, v);
  /* system before parameters (nothing depends on it yet, but the file reads that way), parameters
   * before covariance (which checks their sources), system before alternative (the other form) */
  if (st == CS_OK && v[1]) st = read_provenance(r, v[1]);
  if (st == CS_OK && v[2]) st = read_system(r, v[2]);
  if (st == CS_OK && v[3]) st = read_parameters(r, v[3]);
  if (st == CS_OK && v[4]) st = read_covariance(r, v[4]);
  if (st == CS_OK && v[5]) st = read_alternative(r, v[5]);
  if (st == CS_OK && v[6]) st = read_quality(r, v[6]);
  if (st == CS_OK && v[7]) st = read_cv(r, v[7]);
  if (st == CS_OK && v[8]) st = read_steps(r, v[8]);
  if (st == CS_OK && v[9]) st = cs_calmpi_read(r->d, v[9], &r->cal->mpi, r->err);
  if (st != CS_OK) return st;
  /* every fitted parameter needs its row of the covariance, which is the truth for its spread */
  struct cs_cal *cal = r->cal;
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    if (cal->source[i] != CS_SRC_FIT) continue;
    int found = 0;
    for (int k = 0; k < cal->n_fit; k++)
      found |= cal->fit_index[k] == i;
    if (!found) {
      char name[64];
      return bad(r, r->src_node[i],
                 "%s has source: fit but is missing from covariance.params; "
                 "expected its row and column in the covariance",
                 cs_model_param_name(i, name, sizeof name));
    }
  }
  cal->version = CS_CAL_VERSION;
  return CS_OK;
}

enum cs_status cs_calfile_read(const char *path, struct cs_cal *cal, struct cs_error *err) {
  struct cs_yaml *doc = NULL;
  struct cs_cal next;
  cs_cal_init(&next);
  enum cs_status st = cs_yaml_load(path, &doc, err);
  if (st == CS_OK) {
    struct rd r = {.d = doc, .cal = &next, .err = err};
    st = read_document(&r);
  }
  cs_yaml_free(doc);
  if (st != CS_OK) {
    /* yamlcfg reports some refusals (deep nesting) as out of range: for a reader they are all
     * malformed input */
    if (st == CS_ERR_RANGE) {
      st = CS_ERR_PARSE;
      if (err) err->status = st;
    }
    cs_cal_fini(&next);
    cs_cal_fini(cal);
    cs_cal_init(cal);
    return st;
  }
  cs_cal_fini(cal);
  *cal = next;
  return CS_OK;
}
