/* nccltests_json.c — importing nccl-tests -J output; see nccltests_json.h.
 *
 * nccl-tests -J writes one JSON object (format version 3 in nccl-tests 2.19): "args", "env",
 * "nccl_version", "config" {"nthreads", "ngpus", "devices": one entry per process}, "results"
 * [{"size", "type", "out_of_place": {"time", "alg_bw", "bus_bw", "nwrong"}, "in_place": {...},
 * "out_of_place_per_iter": {"min_us", "max_us", ...}}]. A small recursive-descent reader below
 * turns it into a tree that keeps each value's line and column.
 */
#include "nccltests_json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nccllog.h"

#define JSON_MAX_DEPTH 64

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
  enum jtype type;
  double num;
  int boolean;
  char *str;
  struct jval *kids; /* array elements or object values */
  char **keys;       /* object keys, parallel to kids */
  size_t n, cap;
  long line, col;
};

struct jparser {
  const char *path;
  const char *s, *p;
  long line;
  const char *line_start;
  struct cs_error *err;
};

static void jfree(struct jval *v) {
  if (v == NULL) return;
  free(v->str);
  for (size_t i = 0; i < v->n; i++) {
    jfree(&v->kids[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->kids);
  free(v->keys);
  memset(v, 0, sizeof *v);
}

static long jcol(const struct jparser *jp) {
  return (long)(jp->p - jp->line_start) + 1;
}

static enum cs_status jerr(struct jparser *jp, const char *what) {
  return cs_error_at(jp->err, CS_ERR_PARSE, jp->path, jp->line, jcol(jp), "expected %s", what);
}

static void jskip(struct jparser *jp) {
  while (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\r' || *jp->p == '\n') {
    if (*jp->p == '\n') jp->line++, jp->line_start = jp->p + 1;
    jp->p++;
  }
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static enum cs_status jstring(struct jparser *jp, char **out) {
  jp->p++; /* opening quote */
  size_t cap = 32, n = 0;
  char *b = malloc(cap);
  if (b == NULL) return cs_error_set(jp->err, CS_ERR_NOMEM, "out of memory reading %s", jp->path);
  for (;;) {
    char c = *jp->p;
    if (c == '\0' || c == '\n') {
      free(b);
      return jerr(jp, "a closing '\"'");
    }
    if (n + 5 >= cap) {
      char *nb = realloc(b, cap *= 2);
      if (nb == NULL) {
        free(b);
        return cs_error_set(jp->err, CS_ERR_NOMEM, "out of memory reading %s", jp->path);
      }
      b = nb;
    }
    jp->p++;
    if (c == '"') break;
    if (c != '\\') {
      b[n++] = c;
      continue;
    }
    char e = *jp->p++;
    switch (e) {
    case '"':
    case '\\':
    case '/':
      b[n++] = e;
      break;
    case 'b':
      b[n++] = '\b';
      break;
    case 'f':
      b[n++] = '\f';
      break;
    case 'n':
      b[n++] = '\n';
      break;
    case 'r':
      b[n++] = '\r';
      break;
    case 't':
      b[n++] = '\t';
      break;
    case 'u': {
      unsigned u = 0;
      for (int i = 0; i < 4; i++) {
        int h = hexval(jp->p[i]);
        if (h < 0) {
          free(b);
          return jerr(jp, "four hex digits after \\u");
        }
        u = u * 16 + (unsigned)h;
      }
      jp->p += 4;
      if (u < 0x80)
        b[n++] = (char)u;
      else if (u < 0x800)
        b[n++] = (char)(0xC0 | (u >> 6)), b[n++] = (char)(0x80 | (u & 0x3F));
      else
        b[n++] = (char)(0xE0 | (u >> 12)), b[n++] = (char)(0x80 | ((u >> 6) & 0x3F)),
        b[n++] = (char)(0x80 | (u & 0x3F));
      break;
    }
    default:
      jp->p--;
      free(b);
      return jerr(jp, "a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
    }
  }
  b[n] = '\0';
  *out = b;
  return CS_OK;
}

static enum cs_status jvalue(struct jparser *jp, struct jval *v, int depth);

static enum cs_status jpush(struct jparser *jp, struct jval *v, char *key, struct jval *kid) {
  if (v->n == v->cap) {
    size_t nc = v->cap ? v->cap * 2 : 8;
    struct jval *k = realloc(v->kids, nc * sizeof *k);
    if (k == NULL) goto nomem;
    v->kids = k;
    if (v->type == J_OBJ) {
      char **ks = realloc(v->keys, nc * sizeof *ks);
      if (ks == NULL) goto nomem;
      v->keys = ks;
    }
    v->cap = nc;
  }
  v->kids[v->n] = *kid;
  if (v->type == J_OBJ) v->keys[v->n] = key;
  v->n++;
  return CS_OK;
nomem:
  free(key);
  jfree(kid);
  return cs_error_set(jp->err, CS_ERR_NOMEM, "out of memory reading %s", jp->path);
}

static enum cs_status jcontainer(struct jparser *jp, struct jval *v, int depth) {
  int obj = *jp->p == '{';
  char close = obj ? '}' : ']';
  v->type = obj ? J_OBJ : J_ARR;
  jp->p++;
  jskip(jp);
  if (*jp->p == close) {
    jp->p++;
    return CS_OK;
  }
  for (;;) {
    char *key = NULL;
    enum cs_status st;
    if (obj) {
      jskip(jp);
      if (*jp->p != '"') return jerr(jp, "an object key in double quotes");
      st = jstring(jp, &key);
      if (st != CS_OK) return st;
      jskip(jp);
      if (*jp->p != ':') {
        free(key);
        return jerr(jp, "':' after an object key");
      }
      jp->p++;
    }
    struct jval kid;
    memset(&kid, 0, sizeof kid);
    st = jvalue(jp, &kid, depth + 1);
    if (st != CS_OK) {
      free(key);
      jfree(&kid);
      return st;
    }
    st = jpush(jp, v, key, &kid);
    if (st != CS_OK) return st;
    jskip(jp);
    if (*jp->p == ',') {
      jp->p++;
      continue;
    }
    if (*jp->p == close) {
      jp->p++;
      return CS_OK;
    }
    return jerr(jp, obj ? "',' or '}'" : "',' or ']'");
  }
}

static enum cs_status jvalue(struct jparser *jp, struct jval *v, int depth) {
  jskip(jp);
  v->line = jp->line;
  v->col = jcol(jp);
  if (depth > JSON_MAX_DEPTH) return jerr(jp, "JSON nested at most 64 levels deep");
  char c = *jp->p;
  if (c == '{' || c == '[') return jcontainer(jp, v, depth);
  if (c == '"') {
    v->type = J_STR;
    return jstring(jp, &v->str);
  }
  static const struct {
    const char *word;
    enum jtype type;
    int boolean;
  } words[] = {{"true", J_BOOL, 1}, {"false", J_BOOL, 0}, {"null", J_NULL, 0}};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    size_t len = strlen(words[i].word);
    if (strncmp(jp->p, words[i].word, len) == 0) {
      v->type = words[i].type;
      v->boolean = words[i].boolean;
      jp->p += len;
      return CS_OK;
    }
  }
  if (c == '-' || isdigit((unsigned char)c)) {
    char *end;
    v->num = strtod(jp->p, &end);
    if (end == jp->p) return jerr(jp, "a number");
    v->type = J_NUM;
    jp->p = end;
    return CS_OK;
  }
  return jerr(jp, "a JSON value");
}

static const struct jval *jget(const struct jval *obj, const char *key) {
  if (obj == NULL || obj->type != J_OBJ) return NULL;
  for (size_t i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->kids[i];
  return NULL;
}

/* A number, or a string holding one (nccl-tests writes NaN as "nan"). */
static int jnum(const struct jval *v, double *out) {
  if (v == NULL) return -1;
  if (v->type == J_NUM) return *out = v->num, 0;
  if (v->type == J_STR) return cs_nccllog_double(v->str, out);
  return -1;
}

static enum cs_status jat(const char *path, const struct jval *v, const struct jval *root,
                          struct cs_error *err, const char *what) {
  const struct jval *w = v ? v : root;
  return cs_error_at(err, CS_ERR_PARSE, path, w->line, w->col, "expected %s", what);
}

static enum cs_status import_json_tree(const char *path, const struct jval *root,
                                       struct cs_meas_set *set, struct cs_error *err) {
  if (root->type != J_OBJ)
    return jat(path, root, root, err, "a JSON object (nccl-tests -J output)");
  const struct jval *results = jget(root, "results");
  if (results == NULL || results->type != J_ARR)
    return jat(path, results, root, err, "a \"results\" list (nccl-tests -J output)");
  enum cs_status st;

  /* collective from the program name in "args" */
  const struct jval *args = jget(root, "args");
  char cname[64] = "";
  const struct jval *cnode = args;
  if (args && args->type == J_ARR)
    for (size_t i = 0; i < args->n && cname[0] == '\0'; i++)
      if (args->kids[i].type == J_STR &&
          cs_nccllog_perf_name(args->kids[i].str, cname, sizeof cname))
        cnode = &args->kids[i];
  if (cname[0] == '\0' && !cs_nccllog_perf_name(path, cname, sizeof cname))
    return jat(path, args, root, err,
               "the program name (\"args\": [\"./NAME_perf\", ...]) naming the collective");
  enum cs_coll coll;
  if (cs_coll_parse(cname, &coll) != 0) {
    const struct jval *w = cnode ? cnode : root;
    return cs_error_at(err, CS_ERR_PARSE, path, w->line, w->col,
                       "expected a known collective (%s), got \"%s\"", cs_nccllog_known_colls,
                       cname);
  }

  /* NCCL_* settings from "env" */
  struct cs_nccllog_settings eff;
  eff.n = 0;
  const struct jval *env = jget(root, "env");
  if (env && env->type == J_ARR)
    for (size_t i = 0; i < env->n; i++) {
      char name[64], value[192];
      if (env->kids[i].type == J_STR && strncmp(env->kids[i].str, "NCCL_", 5) == 0 &&
          cs_nccllog_assignment(env->kids[i].str, name, sizeof name, value, sizeof value))
        cs_nccllog_settings_put(&eff, name, value);
    }

  double code;
  if (jnum(jget(root, "nccl_version"), &code) == 0 && code > 0 && code < 1e9) {
    char v[32];
    cs_nccllog_version_string((long)code, v, sizeof v);
    if ((st = cs_nccllog_meta_add(set, "nccl", v, err)) != CS_OK) return st;
  }

  /* shape: one "devices" entry per process, each driving nthreads x ngpus ranks */
  const struct jval *config = jget(root, "config");
  const struct jval *devices = jget(config, "devices");
  if (devices == NULL || devices->type != J_ARR || devices->n == 0)
    return jat(path, devices ? devices : config, root, err,
               "\"config\": {\"devices\": [...]} listing the processes");
  double nthreads = 1, ngpus = 1;
  if (jnum(jget(config, "nthreads"), &nthreads) != 0 || nthreads < 1 || nthreads > 1024 ||
      jnum(jget(config, "ngpus"), &ngpus) != 0 || ngpus < 1 || ngpus > 1024)
    return jat(path, config, root, err, "\"nthreads\" and \"ngpus\" from 1 to 1024 in \"config\"");
  int per_proc = (int)nthreads * (int)ngpus;
  int nodes = 0, per_host = -1;
  for (size_t i = 0; i < devices->n; i++) {
    const struct jval *h = jget(&devices->kids[i], "hostname");
    if (h == NULL || h->type != J_STR)
      return jat(path, &devices->kids[i], root, err, "a \"hostname\" in each device entry");
    const struct jval *info = jget(&devices->kids[i], "device_info");
    if (info && info->type == J_STR &&
        (st = cs_nccllog_meta_add(set, "gpu", info->str, err)) != CS_OK)
      return st;
    if ((st = cs_nccllog_meta_add(set, "hosts", h->str, err)) != CS_OK) return st;
    int first = 1, count = 0;
    for (size_t j = 0; j < devices->n; j++) {
      const struct jval *hj = jget(&devices->kids[j], "hostname");
      if (hj == NULL || hj->type != J_STR || strcmp(hj->str, h->str) != 0) continue;
      if (j < i) first = 0;
      count++;
    }
    if (!first) continue;
    nodes++;
    if (per_host < 0)
      per_host = count;
    else if (count != per_host)
      return jat(path, &devices->kids[i], root, err, "the same number of processes on every host");
  }
  if ((double)per_proc * (double)devices->n > (double)(1 << 24))
    return jat(path, devices, root, err, "at most 2^24 ranks in \"devices\"");
  int ranks = per_proc * (int)devices->n;

  struct cs_meas_row row;
  memset(&row, 0, sizeof row);
  row.coll = coll;
  if (cs_nccllog_settings_apply(&eff, &row.algo, &row.proto, row.config, sizeof row.config) != 0)
    return jat(path, env, root, err, "NCCL_* settings that fit in 255 characters");
  row.ranks = ranks;
  row.nodes = nodes;
  row.gpus_per_node = ranks / nodes;
  row.launch = per_proc > 1 ? CS_LAUNCH_THREAD : CS_LAUNCH_PROCESS;

  static const char *const groups[2] = {"out_of_place", "in_place"};
  for (size_t i = 0; i < results->n; i++) {
    const struct jval *r = &results->kids[i];
    if (r->type != J_OBJ) return jat(path, r, root, err, "a result object");
    if (jnum(jget(r, "size"), &row.bytes) != 0 || !(row.bytes >= 0) || row.bytes > 0x1p50 ||
        row.bytes != floor(row.bytes))
      return jat(path, jget(r, "size"), r, err, "\"size\": a whole number of bytes");
    const struct jval *type = jget(r, "type");
    cs_nccllog_copy(row.dtype, sizeof row.dtype, type && type->type == J_STR ? type->str : "");
    if (row.bytes == 0) continue;
    snprintf(row.source, sizeof row.source, "%s:%ld:%ld", path, r->line, r->col);
    for (int g = 0; g < 2; g++) {
      const struct jval *body = jget(r, groups[g]);
      if (body == NULL || body->type == J_NULL) continue;
      const struct jval *tv = jget(body, "time");
      if (tv == NULL) tv = jget(body, "cpu_time");
      if (jnum(tv, &row.time_us) != 0 || !isfinite(row.time_us) || row.time_us <= 0)
        return jat(path, tv ? tv : body, root, err, "a positive finite \"time\" in us");
      char key[32];
      snprintf(key, sizeof key, "%s_per_iter", groups[g]);
      const struct jval *pi = jget(r, key);
      row.time_min_us = row.time_max_us = NAN;
      if (jnum(jget(pi, "min_us"), &row.time_min_us) != 0) row.time_min_us = NAN;
      if (jnum(jget(pi, "max_us"), &row.time_max_us) != 0) row.time_max_us = NAN;
      row.in_place = g;
      cs_meas_row_derive(&row);
      double printed;
      if (jnum(jget(body, "bus_bw"), &printed) == 0 && isfinite(printed) &&
          !cs_nccllog_busbw_agrees(printed, row.busbw_GBps))
        return jat(path, jget(body, "bus_bw"), root, err,
                   "\"bus_bw\" to agree with size, time and the rank count of \"config\"");
      if ((st = cs_meas_set_push(set, &row, err)) != CS_OK) return st;
    }
  }
  if (results->n == 0) return jat(path, results, root, err, "at least one entry in \"results\"");
  return CS_OK;
}

enum cs_status cs_nccltests_json_import(const char *path, FILE *f, struct cs_meas_set *set,
                                        struct cs_error *err) {
  size_t cap = 1 << 16, n = 0;
  char *text = malloc(cap);
  if (text == NULL) return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
  size_t got;
  while ((got = fread(text + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (n + 1 == cap) {
      char *nt = realloc(text, cap *= 2);
      if (nt == NULL) {
        free(text);
        return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
      }
      text = nt;
    }
  }
  if (ferror(f)) {
    free(text);
    return cs_error_at(err, CS_ERR_IO, path, 0, 0, "read error: %s", strerror(errno));
  }
  text[n] = '\0';
  if (strlen(text) != n) {
    free(text);
    return cs_error_at(err, CS_ERR_PARSE, path, 0, 0, "expected text, found a NUL byte");
  }
  struct jparser jp = {path, text, text, 1, text, err};
  struct jval root;
  memset(&root, 0, sizeof root);
  enum cs_status st = jvalue(&jp, &root, 0);
  if (st == CS_OK) {
    jskip(&jp);
    if (*jp.p != '\0') st = jerr(&jp, "the end of the JSON document");
  }
  if (st == CS_OK) st = import_json_tree(path, &root, set, err);
  jfree(&root);
  free(text);
  return st;
}
