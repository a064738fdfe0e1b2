/* nccltests_json.c — importing nccl-tests -J output; see nccltests_json.h.
 *
 * nccl-tests -J writes one JSON object (format version 3 in nccl-tests 2.19): "args", "env",
 * "nccl_version", "config" {"nthreads", "ngpus", "devices": one entry per process}, "results"
 * [{"size", "type", "out_of_place": {"time", "alg_bw", "bus_bw", "nwrong"}, "in_place": {...},
 * "out_of_place_per_iter": {"min_us", "max_us", ...}}].
 *
 * JSON is YAML's flow style, so libyaml (already the reader of every configuration file) parses
 * it: its event parser feeds a small tree that keeps each value's line and column, built without
 * recursion. Being YAML, the reader is lenient where nccl-tests never writes (a trailing comma,
 * unquoted strings, single quotes); it refuses aliases, more than JSON_MAX_BYTES of input, more
 * than JSON_MAX_VALUES values and nesting deeper than JSON_MAX_DEPTH, each as soon as it is met
 * (the parser streams), with the line and column. A key given twice keeps its first value.
 */
#include "nccltests_json.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "input.h"
#include "nccllog.h"

/* Limits far above what nccl-tests writes (about 300 bytes and 20 values per message size) and
 * far below what would take seconds or gigabytes to hold. */
#define JSON_MAX_DEPTH 64
#define JSON_MAX_BYTES (16 << 20)
#define JSON_MAX_VALUES 1000000

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

/* Where the results left out for wrong elements are counted (cs_nccltests_json_import's). */
struct wrong_out {
  long *wrong;
  char *first;
  size_t len;
};

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

/* The reader: libyaml's event parser (JSON is YAML's flow style) turned into a jval tree. */
struct jreader {
  const char *path;
  FILE *f;
  size_t read; /* bytes read so far */
  int too_big; /* the input passed JSON_MAX_BYTES */
  long values; /* values in the tree so far */
  struct cs_error *err;
};

static int jread(void *data, unsigned char *buf, size_t size, size_t *got) {
  struct jreader *r = data;
  *got = fread(buf, 1, size, r->f);
  r->read += *got;
  if (r->read > JSON_MAX_BYTES) {
    r->too_big = 1;
    return 0;
  }
  return !ferror(r->f);
}

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

static enum cs_status jat_mark(const struct jreader *r, yaml_mark_t m, const char *what) {
  return cs_error_at(r->err, CS_ERR_PARSE, r->path, (long)m.line + 1, (long)m.column + 1,
                     "expected %s", what);
}

/* A scalar's value: quoted text is a string; plain text is null, a boolean, a number or (YAML
 * leniency) a string. */
static enum cs_status jscalar(const struct jreader *r, const yaml_event_t *ev, struct jval *v) {
  const char *text = (const char *)ev->data.scalar.value;
  v->line = (long)ev->start_mark.line + 1;
  v->col = (long)ev->start_mark.column + 1;
  if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
    if (strcmp(text, "null") == 0) return v->type = J_NULL, CS_OK;
    if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)
      return v->type = J_BOOL, v->boolean = text[0] == 't', CS_OK;
    if (cs_nccllog_double(text, &v->num) == 0) return v->type = J_NUM, CS_OK;
  }
  v->type = J_STR;
  v->str = strdup(text);
  if (v->str == NULL)
    return cs_error_set(r->err, CS_ERR_NOMEM, "out of memory reading %s", r->path);
  return CS_OK;
}

/* Appends kid (moved) to container v under key (moved; NULL for an array). */
static enum cs_status jpush(const struct jreader *r, struct jval *v, char *key, struct jval *kid) {
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
  return cs_error_set(r->err, CS_ERR_NOMEM, "out of memory reading %s", r->path);
}

/* Builds the tree from libyaml's events, iteratively: a stack of the open containers, never deeper
 * than JSON_MAX_DEPTH, each with the key that waits for its value. On failure what was built
 * stays in *root for the caller to free. */
static enum cs_status jbuild(yaml_parser_t *parser, struct jreader *r, struct jval *root) {
  struct jval *stack[JSON_MAX_DEPTH];
  char *key[JSON_MAX_DEPTH];
  int depth = 0, done = 0, end = 0;
  enum cs_status st = CS_OK;
  while (st == CS_OK && !end) {
    yaml_event_t ev;
    if (!yaml_parser_parse(parser, &ev)) {
      long line = (long)parser->problem_mark.line + 1, col = (long)parser->problem_mark.column + 1;
      if (r->too_big)
        st = cs_error_at(r->err, CS_ERR_PARSE, r->path, (long)parser->mark.line + 1,
                         (long)parser->mark.column + 1,
                         "expected nccl-tests JSON of at most %d MiB", JSON_MAX_BYTES >> 20);
      else if (parser->error == YAML_READER_ERROR && ferror(r->f))
        st = cs_error_at(r->err, CS_ERR_IO, r->path, 0, 0, "read error: %s", strerror(errno));
      else if (parser->error == YAML_READER_ERROR) /* bad bytes: libyaml keeps only the offset */
        st = cs_error_at(r->err, CS_ERR_PARSE, r->path, 0, 0, "expected JSON text (%s at byte %zu)",
                         parser->problem ? parser->problem : "unreadable input",
                         parser->problem_offset);
      else
        st = cs_error_at(r->err, CS_ERR_PARSE, r->path, line, col, "expected JSON (%s%s%s)",
                         parser->problem ? parser->problem : "syntax error",
                         parser->context ? " " : "", parser->context ? parser->context : "");
      break;
    }
    int opens = ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT;
    struct jval *parent = depth > 0 ? stack[depth - 1] : NULL;
    switch (ev.type) {
    case YAML_STREAM_END_EVENT:
      end = 1;
      break;
    case YAML_DOCUMENT_START_EVENT:
      if (done) st = jat_mark(r, ev.start_mark, "the end of the JSON document");
      break;
    case YAML_ALIAS_EVENT:
      st = jat_mark(r, ev.start_mark, "JSON (YAML aliases are not accepted)");
      break;
    case YAML_MAPPING_END_EVENT:
    case YAML_SEQUENCE_END_EVENT:
      if (depth > 0) depth--;
      if (depth == 0) done = 1;
      break;
    case YAML_SCALAR_EVENT:
    case YAML_MAPPING_START_EVENT:
    case YAML_SEQUENCE_START_EVENT:
      if (parent && parent->type == J_OBJ && key[depth - 1] == NULL) {
        if (ev.type != YAML_SCALAR_EVENT)
          st = jat_mark(r, ev.start_mark, "an object key in double quotes");
        else if ((key[depth - 1] = strdup((const char *)ev.data.scalar.value)) == NULL)
          st = cs_error_set(r->err, CS_ERR_NOMEM, "out of memory reading %s", r->path);
        break;
      }
      if (++r->values > JSON_MAX_VALUES) {
        st = jat_mark(r, ev.start_mark, "nccl-tests JSON of at most 1000000 values");
        break;
      }
      if (opens && depth == JSON_MAX_DEPTH) {
        st = jat_mark(r, ev.start_mark, "JSON nested at most 64 levels deep");
        break;
      }
      struct jval v;
      memset(&v, 0, sizeof v);
      v.line = (long)ev.start_mark.line + 1;
      v.col = (long)ev.start_mark.column + 1;
      if (opens)
        v.type = ev.type == YAML_MAPPING_START_EVENT ? J_OBJ : J_ARR;
      else if ((st = jscalar(r, &ev, &v)) != CS_OK)
        break;
      struct jval *at = root;
      if (parent) {
        st = jpush(r, parent, key[depth - 1], &v);
        key[depth - 1] = NULL;
        if (st != CS_OK) break;
        at = &parent->kids[parent->n - 1];
      } else {
        *root = v;
        if (!opens) done = 1;
      }
      if (opens) {
        stack[depth] = at;
        key[depth++] = NULL;
      }
      break;
    default:
      break;
    }
    yaml_event_delete(&ev);
  }
  for (int i = 0; i < depth; i++)
    free(key[i]);
  return st;
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

/* The collective of the run, from the program name in "args" (./all_reduce_perf), else from the
 * file name at path. Errors: CS_ERR_PARSE naming the value (or the document) when neither names a
 * known collective. */
static enum cs_status json_coll(const char *path, const struct jval *root, enum cs_coll *coll,
                                struct cs_error *err) {
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
  if (cs_coll_parse(cname, coll) != 0) {
    const struct jval *w = cnode ? cnode : root;
    return cs_error_at(err, CS_ERR_PARSE, path, w->line, w->col,
                       "expected a known collective (%s), got \"%s\"", cs_nccllog_known_colls,
                       cname);
  }
  return CS_OK;
}

/* The shape of the run into row (ranks, nodes, GPUs per node, launch): one "config" "devices"
 * entry per process, each driving nthreads x ngpus ranks, the hosts counted by name; each entry's
 * GPU and host go into set's metadata. Errors: CS_ERR_PARSE naming the value for a missing or
 * out-of-range field, hosts with different process counts, or more than 2^24 ranks; those of
 * cs_nccllog_meta_add. */
static enum cs_status json_shape(const char *path, const struct jval *root, struct cs_meas_row *row,
                                 struct cs_meas_set *set, struct cs_error *err) {
  enum cs_status st;
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
  row->ranks = ranks;
  row->nodes = nodes;
  row->gpus_per_node = ranks / nodes;
  row->launch = per_proc > 1 ? CS_LAUNCH_THREAD : CS_LAUNCH_PROCESS;
  return CS_OK;
}

/* Pushes onto set one row per timed group ("out_of_place", "in_place") of each entry of
 * "results", row (the collective, settings and shape filled) completed with the size, type, times
 * and the place in path; entries of size 0 are skipped. Errors: CS_ERR_PARSE naming the value for
 * an entry that is not an object, a size that is not a whole number of bytes, a missing or
 * non-positive time, a "bus_bw" that disagrees with the row, or no entry at all; those of
 * cs_meas_set_push. */
static enum cs_status json_results(const char *path, const struct jval *root,
                                   const struct jval *results, struct cs_meas_row *row,
                                   struct cs_meas_set *set, struct wrong_out *left,
                                   struct cs_error *err) {
  enum cs_status st;
  static const char *const groups[2] = {"out_of_place", "in_place"};
  for (size_t i = 0; i < results->n; i++) {
    const struct jval *r = &results->kids[i];
    if (r->type != J_OBJ) return jat(path, r, root, err, "a result object");
    if (jnum(jget(r, "size"), &row->bytes) != 0 || !(row->bytes >= 0) || row->bytes > 0x1p50 ||
        row->bytes != floor(row->bytes))
      return jat(path, jget(r, "size"), r, err, "\"size\": a whole number of bytes");
    const struct jval *type = jget(r, "type");
    cs_nccllog_copy(row->dtype, sizeof row->dtype, type && type->type == J_STR ? type->str : "");
    if (row->bytes == 0) continue;
    snprintf(row->source, sizeof row->source, "%s:%ld:%ld", path, r->line, r->col);
    for (int g = 0; g < 2; g++) {
      const struct jval *body = jget(r, groups[g]);
      if (body == NULL || body->type == J_NULL) continue;
      const struct jval *tv = jget(body, "time");
      if (tv == NULL) tv = jget(body, "cpu_time");
      if (jnum(tv, &row->time_us) != 0 || !isfinite(row->time_us) || row->time_us <= 0)
        return jat(path, tv ? tv : body, root, err, "a positive finite \"time\" in us");
      double wrong = 0;
      if (jnum(jget(body, "nwrong"), &wrong) == 0 && wrong > 0) {
        if ((*left->wrong)++ == 0)
          snprintf(left->first, left->len, "%s (%s, #wrong %.0f)", row->source,
                   g ? "in-place" : "out-of-place", wrong);
        continue;
      }
      char key[32];
      snprintf(key, sizeof key, "%s_per_iter", groups[g]);
      const struct jval *pi = jget(r, key);
      row->time_min_us = row->time_max_us = NAN;
      if (jnum(jget(pi, "min_us"), &row->time_min_us) != 0) row->time_min_us = NAN;
      if (jnum(jget(pi, "max_us"), &row->time_max_us) != 0) row->time_max_us = NAN;
      row->in_place = g;
      cs_meas_row_derive(row);
      double printed;
      if (jnum(jget(body, "bus_bw"), &printed) == 0 && isfinite(printed) &&
          !cs_nccllog_busbw_agrees(printed, row->busbw_GBps))
        return jat(path, jget(body, "bus_bw"), root, err,
                   "\"bus_bw\" to agree with size, time and the rank count of \"config\"");
      if ((st = cs_meas_set_push(set, row, err)) != CS_OK) return st;
    }
  }
  if (results->n == 0) return jat(path, results, root, err, "at least one entry in \"results\"");
  return CS_OK;
}

static enum cs_status import_json_tree(const char *path, const struct jval *root,
                                       struct cs_meas_set *set, struct wrong_out *left,
                                       struct cs_error *err) {
  if (root->type != J_OBJ)
    return jat(path, root, root, err, "a JSON object (nccl-tests -J output)");
  const struct jval *results = jget(root, "results");
  if (results == NULL || results->type != J_ARR)
    return jat(path, results, root, err, "a \"results\" list (nccl-tests -J output)");
  enum cs_status st;
  enum cs_coll coll;
  if ((st = json_coll(path, root, &coll, err)) != CS_OK) return st;

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

  struct cs_meas_row row;
  memset(&row, 0, sizeof row);
  if ((st = json_shape(path, root, &row, set, err)) != CS_OK) return st;
  row.coll = coll;
  if (cs_nccllog_settings_apply(&eff, &row.algo, &row.proto, row.config, sizeof row.config) != 0)
    return jat(path, env, root, err, "NCCL_* settings that fit in 255 characters");
  return json_results(path, root, results, &row, set, left, err);
}

enum cs_status cs_nccltests_json_import(const char *path, FILE *f, struct cs_meas_set *set,
                                        long *wrong, char *first, size_t len,
                                        struct cs_error *err) {
  struct wrong_out out = {wrong, first, len};
  struct wrong_out *left = &out;
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser))
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory reading %s", path);
  struct jreader r = {path, f, 0, 0, 0, err};
  yaml_parser_set_input(&parser, jread, &r);
  struct jval root;
  memset(&root, 0, sizeof root);
  enum cs_status st = jbuild(&parser, &r, &root);
  yaml_parser_delete(&parser);
  if (st == CS_OK) st = import_json_tree(path, &root, set, left, err);
  jfree(&root);
  return st;
}
