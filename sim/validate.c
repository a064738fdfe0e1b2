/* validate.c — the validation case engine (see validate.h).
 *
 * A case is a setup (a training step: workload, gpu, topology, plan, gpus; or one
 * collective: collective, size, nodes, gpus_per_node, topology, algo, proto), a metric (speedup,
 * hw_tflops, tflops, step, busbw or time), the published value, the tolerance the issue accepts
 * (12% unless the source justifies another) and, for a known miss, the `bound` its error stays
 * within today (a regression guard) with a `note` saying why it misses. Published values carry
 * their units
 * ("1.42s", "326GBps", "137TFLOPS"); where a log holds the figure the case names the log instead
 * of copying the number: `{log: FILE, key: step_ms}` reads a "# result ... key=value" line,
 * `per: {log, key}` divides by another, `{nccl_tests: FILE, field: busbw|time}` reads the row of
 * an nccl-tests log that matches the case's collective, size and shape (in_place: both makes the
 * out-of-place and in-place figures a range). A two-item list [lo, hi] is a published range: the
 * error is zero inside it. Paths are relative to the case file.
 *
 * Each case is costed with the library as the verbs do: a training step with cs_sim_predict
 * (cs_compute_calibrate first when a measured single-GPU time is given), a collective with
 * cs_cal_predict after cs_topo_cal_apply has written the topology's links into the model
 * (as `commscale coll --topology`). A calibration is the default NCCL-anchored model (clusters
 * this project never measured: their link speeds come from the topology), a calibration.yaml, or
 * `{fit: measurements.csv, launch: process}`, fitted once per run.
 */
#include "validate.h"

#include <dirent.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calfile.h"
#include "compute.h"
#include "datadir.h"
#include "fit.h"
#include "gpu.h"
#include "map.h"
#include "measread.h"
#include "nccltests.h"
#include "plan.h"
#include "scenario.h"
#include "step.h"
#include "topology.h"
#include "units.h"
#include "valband.h"
#include "workload.h"
#include "yamlcfg.h"

#define MAX_FILES 64
#define MAX_CASES 1024
#define MAX_CALS 16

static const char *const metric_names[] = {"speedup", "hw_tflops", "step", "tflops",
                                           "busbw",   "time",      NULL};
static const char *const metric_units[] = {"x", "TFLOP/s", "s", "TFLOP/s", "GB/s", "us"};
static const double metric_scale[] = {1, 1e-12, 1, 1e-12, 1e-9, 1e6}; /* SI -> printed unit */
static const int metric_kind[] = {
    -1, CS_UNIT_FLOPS, CS_UNIT_TIME, CS_UNIT_FLOPS, CS_UNIT_BANDWIDTH, CS_UNIT_TIME};

static const char *const status_names[] = {"ok", "MISS (known, within bound)", "MISS"};
struct cfile {
  char path[4096];
  char dir[4096];
  struct cs_yaml *doc;
  char section[16];
  int cal_node; /* the file's calibration: node, or 0 = the default model */
};

struct vcase {
  /* read through the fields table */
  char section[16], name[128], workload[512], gpu[128], topology[512], plan[512];
  char probes[1024]; /* compute probes of the GPU, FILE[,FILE] relative to the case file */
  int gpus, nodes, gpus_per_node;
  char collective[32], algo[16], proto[16];
  double size, throughput_1gpu, throughput;
  int metric;
  double tolerance, bound;
  char note[1024];
  /* read after the case is merged with the defaults */
  int measured_node, published_node, cal_node;
  unsigned given; /* one bit per field of the table */
  const struct cfile *file;
  int node;
  /* results, SI */
  double pred, pub_lo, pub_hi, err;
  double band_lo, band_hi; /* the prediction's band */
  int status;
  struct cs_valband b; /* what the band pass reads (valband.h) */
};

#define F(key, type, member, size, lo, hi, def, names, help)                                       \
  { key, type, offsetof(struct vcase, member), size, CS_UNIT_BYTES, lo, hi, def, names, help }
static const struct cs_cfg_field fields[] = {
    F("name", CS_CFG_STRING, name, 128, 0, 0, NULL, NULL, "what the case is, one line"),
    F("section", CS_CFG_STRING, section, 16, 0, 0, "", NULL, "section of VALIDATION.md"),
    F("metric", CS_CFG_ENUM, metric, 0, 0, 0, NULL, metric_names,
      "speedup, hw_tflops, tflops (model FLOPs), step, busbw or time"),
    F("workload", CS_CFG_STRING, workload, 512, 0, 0, "", NULL, "a bundled workload or a file"),
    F("gpu", CS_CFG_STRING, gpu, 128, 0, 0, "", NULL, "a bundled GPU or a file"),
    F("topology", CS_CFG_STRING, topology, 512, 0, 0, "", NULL, "a bundled topology or a file"),
    F("probes", CS_CFG_STRING, probes, 1024, 0, 0, "", NULL,
      "compute probes of the GPU (probe CSVs, comma-separated, relative to the case file)"),
    F("plan", CS_CFG_STRING, plan, 512, 0, 0, "", NULL, "the plan, e.g. tp=8,pp=2,mbs=1,gbs=512"),
    F("gpus", CS_CFG_INT, gpus, 0, 1, 1 << 24, NULL, NULL, "GPUs of a training step"),
    F("nodes", CS_CFG_INT, nodes, 0, 1, 1 << 20, NULL, NULL, "nodes (default 1)"),
    F("gpus_per_node", CS_CFG_INT, gpus_per_node, 0, 1, 1024, NULL, NULL,
      "GPUs per node of a collective (default: the topology's)"),
    F("collective", CS_CFG_STRING, collective, 32, 0, 0, "all_reduce", NULL, "the collective"),
    F("size", CS_CFG_QTY, size, 0, 1, 1125899906842624.0, NULL, NULL, "message size (nccl-tests)"),
    F("algo", CS_CFG_STRING, algo, 16, 0, 0, "auto", NULL, "forced algorithm, as NCCL_ALGO"),
    F("proto", CS_CFG_STRING, proto, 16, 0, 0, "auto", NULL, "forced protocol, as NCCL_PROTO"),
    F("throughput_1gpu", CS_CFG_DOUBLE, throughput_1gpu, 0, 0, 1e12, "0", NULL,
      "published samples/s of one GPU: sets measured (mbs / it) and the speedup's reference"),
    F("throughput", CS_CFG_DOUBLE, throughput, 0, 0, 1e12, "0", NULL,
      "published samples/s at the case's GPUs: speedup = throughput / throughput_1gpu"),
    F("tolerance", CS_CFG_DOUBLE, tolerance, 0, 0, 10, "0.12", NULL, "accepted |relative error|"),
    F("bound", CS_CFG_DOUBLE, bound, 0, 0, 10, "0", NULL,
      "a known miss: the |error| that holds today (0 = none)"),
    F("note", CS_CFG_STRING, note, 1024, 0, 0, "", NULL, "why a known miss misses"),
};
#undef F
#define NFIELDS (sizeof fields / sizeof fields[0])
static const char *const case_extra[] = {"measured", "published", "calibration", NULL};

static unsigned bit(const char *key) {
  for (size_t i = 0; i < NFIELDS; i++)
    if (strcmp(fields[i].key, key) == 0) return 1u << i;
  return 0;
}

/* ---- reading case files -------------------------------------------------------------------- */

static enum cs_status unknown_key(const struct cs_yaml *d, int kn, const char *k, const char *what,
                                  struct cs_error *err) {
  char list[768] = "";
  size_t w = 0;
  for (size_t i = 0; i < NFIELDS && w < sizeof list; i++)
    w += (size_t)snprintf(list + w, sizeof list - w, "%s%s", i ? ", " : "", fields[i].key);
  for (size_t i = 0; case_extra[i] && w < sizeof list; i++)
    w += (size_t)snprintf(list + w, sizeof list - w, ", %s", case_extra[i]);
  return cs_yaml_error(d, kn, err, CS_ERR_PARSE, "unknown %s key \"%s\"; expected one of: %s", what,
                       k, list);
}

/* Applies the keys of mapping `map` to c (over what it holds already: the defaults). */
static enum cs_status read_case_keys(const struct cfile *f, int map, struct vcase *c,
                                     const char *what, struct cs_error *err) {
  const struct cs_yaml *d = f->doc;
  if (cs_yaml_kind(d, map) != CS_YAML_MAP)
    return cs_yaml_error(d, map, err, CS_ERR_PARSE, "expected a mapping of %s keys", what);
  for (size_t i = 0; i < cs_yaml_len(d, map); i++) {
    int kn = cs_yaml_key(d, map, i), vn = cs_yaml_value(d, map, i);
    const char *k = cs_yaml_scalar(d, kn);
    if (k == NULL) return cs_yaml_error(d, kn, err, CS_ERR_PARSE, "expected a key");
    if (strcmp(k, "measured") == 0)
      c->measured_node = vn;
    else if (strcmp(k, "published") == 0)
      c->published_node = vn;
    else if (strcmp(k, "calibration") == 0)
      c->cal_node = vn;
    else {
      size_t j = 0;
      while (j < NFIELDS && strcmp(fields[j].key, k) != 0)
        j++;
      if (j == NFIELDS) return unknown_key(d, kn, k, what, err);
      const char *text = cs_yaml_scalar(d, vn);
      if (text == NULL)
        return cs_yaml_error(d, vn, err, CS_ERR_PARSE, "%s: expected a single value (%s)", k,
                             fields[j].help);
      struct cs_error e2 = {0};
      enum cs_status st = cs_cfg_set_text(&fields[j], c, text, &e2);
      if (st == CS_ERR_NOMEM) return cs_error_set(err, st, "%s", e2.msg);
      if (st != CS_OK) return cs_yaml_error(d, vn, err, CS_ERR_PARSE, "%s", e2.msg);
      c->given |= 1u << j;
      if (strcmp(k, "note") == 0) /* a folded YAML block ends in a newline */
        for (size_t l = strlen(c->note);
             l > 0 && (c->note[l - 1] == '\n' || c->note[l - 1] == ' ');)
          c->note[--l] = '\0';
    }
  }
  return CS_OK;
}

/* Checks what a case's metric needs; the error is located at the case. */
static enum cs_status check_case(const struct vcase *c, struct cs_error *err) {
  const struct cs_yaml *d = c->file->doc;
  const char *need = NULL;
  if (!(c->given & bit("name")))
    need = "name";
  else if (!(c->given & bit("metric")))
    need = "metric";
  else if (c->metric <= CS_VAL_TFLOPS) { /* a training step */
    if (!c->workload[0])
      need = "workload";
    else if (!c->gpu[0])
      need = "gpu";
    else if (!c->topology[0])
      need = "topology";
    else if (!c->gpus && !c->nodes)
      need = "gpus";
  } else if (!(c->given & bit("size")))
    need = "size";
  if (need)
    return cs_yaml_error(d, c->node, err, CS_ERR_PARSE, "missing required key \"%s\" for a %s case",
                         need, (c->given & bit("metric")) ? metric_names[c->metric] : "validation");
  if (!c->published_node &&
      !(c->metric == CS_VAL_SPEEDUP && c->throughput > 0 && c->throughput_1gpu > 0))
    return cs_yaml_error(d, c->node, err, CS_ERR_PARSE,
                         "missing required key \"published\" (a value with its unit, [lo, hi], "
                         "{log, key} or {nccl_tests, field})");
  if (c->bound > 0 && c->bound < c->tolerance)
    return cs_yaml_error(d, c->node, err, CS_ERR_PARSE,
                         "bound %.3g is below the tolerance %.3g: a bound is for a known miss",
                         c->bound, c->tolerance);
  if (c->bound > 0 && !c->note[0])
    return cs_yaml_error(d, c->node, err, CS_ERR_PARSE,
                         "a case with a bound (a known miss) needs a note saying why it misses");
  return CS_OK;
}

static enum cs_status read_text_key(const struct cs_yaml *d, int node, const char *k,
                                    struct cs_error *err) {
  if (cs_yaml_kind(d, node) != CS_YAML_SCALAR || !cs_yaml_scalar(d, node)[0])
    return cs_yaml_error(d, node, err, CS_ERR_PARSE, "%s: expected prose text", k);
  return CS_OK;
}

/* Loads the case file at path into f and appends its cases (matching sections, when given) to
 * cs. *skipped is set for a topology file that lives beside the cases. */
static enum cs_status load_file(const char *path, struct cfile *f, struct vcase *cs, size_t *n,
                                const char *sections, int *skipped, struct cs_error *err) {
  memset(f, 0, sizeof *f);
  *skipped = 0;
  snprintf(f->path, sizeof f->path, "%s", path);
  snprintf(f->dir, sizeof f->dir, "%s", path);
  char *slash = strrchr(f->dir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(f->dir, sizeof f->dir, ".");
  enum cs_status st = cs_yaml_load(path, &f->doc, err);
  if (st != CS_OK) return st;
  const struct cs_yaml *d = f->doc;
  int root = cs_yaml_root(d);
  if (cs_yaml_kind(d, root) != CS_YAML_MAP)
    return cs_yaml_error(d, root, err, CS_ERR_PARSE,
                         "expected a validation case file (a mapping "
                         "with version, source, assumptions, cases)");
  if (!cs_yaml_get(d, root, "cases") && cs_yaml_get(d, root, "node")) {
    *skipped = 1; /* a topology the cases use (titan-rtx-*.yaml) */
    return CS_OK;
  }
  int defaults = 0, cases = 0, have_src = 0, have_ass = 0, have_ver = 0;
  for (size_t i = 0; i < cs_yaml_len(d, root); i++) {
    int kn = cs_yaml_key(d, root, i), vn = cs_yaml_value(d, root, i);
    const char *k = cs_yaml_scalar(d, kn);
    if (k == NULL) return cs_yaml_error(d, kn, err, CS_ERR_PARSE, "expected a key");
    if (strcmp(k, "version") == 0) {
      long v;
      if ((st = cs_yaml_int(d, vn, 1, 1, &v, err)) != CS_OK) return st;
      have_ver = 1;
    } else if (strcmp(k, "source") == 0) {
      if ((st = read_text_key(d, vn, k, err)) != CS_OK) return st;
      have_src = 1;
    } else if (strcmp(k, "assumptions") == 0) {
      if ((st = read_text_key(d, vn, k, err)) != CS_OK) return st;
      have_ass = 1;
    } else if (strcmp(k, "section") == 0) {
      const char *s = cs_yaml_scalar(d, vn);
      if (s == NULL || strlen(s) >= sizeof f->section)
        return cs_yaml_error(d, vn, err, CS_ERR_PARSE, "section: expected a short name such as 2");
      snprintf(f->section, sizeof f->section, "%s", s);
    } else if (strcmp(k, "calibration") == 0)
      f->cal_node = vn;
    else if (strcmp(k, "defaults") == 0)
      defaults = vn;
    else if (strcmp(k, "cases") == 0)
      cases = vn;
    else
      return cs_yaml_error(d, kn, err, CS_ERR_PARSE,
                           "unknown key \"%s\"; expected one of: version, source, assumptions, "
                           "section, calibration, defaults, cases",
                           k);
  }
  const char *missing = !have_ver   ? "version"
                        : !have_src ? "source"
                        : !have_ass ? "assumptions"
                        : !cases    ? "cases"
                                    : NULL;
  if (missing)
    return cs_yaml_error(d, root, err, CS_ERR_PARSE, "missing required key \"%s\" of a case file",
                         missing);
  if (cs_yaml_kind(d, cases) != CS_YAML_SEQ || cs_yaml_len(d, cases) == 0)
    return cs_yaml_error(d, cases, err, CS_ERR_PARSE, "cases: expected a list of cases");
  struct vcase base;
  memset(&base, 0, sizeof base);
  if ((st = cs_cfg_defaults(fields, NFIELDS, &base, err)) != CS_OK) return st;
  snprintf(base.section, sizeof base.section, "%s", f->section);
  base.cal_node = f->cal_node;
  base.file = f;
  if (defaults && (st = read_case_keys(f, defaults, &base, "defaults", err)) != CS_OK) return st;
  for (size_t i = 0; i < cs_yaml_len(d, cases); i++) {
    struct vcase c = base;
    c.node = cs_yaml_item(d, cases, i);
    if ((st = read_case_keys(f, c.node, &c, "case", err)) != CS_OK) return st;
    if ((st = check_case(&c, err)) != CS_OK) return st;
    if (sections) {
      char buf[256];
      snprintf(buf, sizeof buf, "%s", sections);
      int keep = 0;
      char *save = NULL;
      for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        keep |= strcmp(t, c.section) == 0;
      if (!keep) continue;
    }
    if (*n >= MAX_CASES)
      return cs_yaml_error(d, c.node, err, CS_ERR_RANGE, "more than %d cases", MAX_CASES);
    cs[(*n)++] = c;
  }
  return CS_OK;
}

/* ---- values: numbers, ranges, log lines and nccl-tests rows --------------------------------- */

static enum cs_status resolve(const struct cfile *f, const char *name, char *out, size_t len,
                              struct cs_error *err) {
  int n =
      name[0] == '/' ? snprintf(out, len, "%s", name) : snprintf(out, len, "%s/%s", f->dir, name);
  if (n < 0 || (size_t)n >= len) return cs_error_set(err, CS_ERR_RANGE, "path too long: %s", name);
  return CS_OK;
}

static int is_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') || (n > 5 && strcmp(s + n - 5, ".yaml") == 0) ||
         (n > 4 && strcmp(s + n - 4, ".yml") == 0);
}

/* The scalar text of key in map, or NULL with a located error. */
static const char *get_text(const struct cs_yaml *d, int map, const char *key,
                            struct cs_error *err) {
  int v = cs_yaml_get(d, map, key);
  const char *s = v ? cs_yaml_scalar(d, v) : NULL;
  if (s == NULL || !s[0])
    cs_yaml_error(d, v ? v : map, err, CS_ERR_PARSE, "expected \"%s:\" with a value", key);
  return s;
}

static enum cs_status only_keys(const struct cs_yaml *d, int map, const char *const *keys,
                                const char *list, struct cs_error *err) {
  for (size_t i = 0; i < cs_yaml_len(d, map); i++) {
    int kn = cs_yaml_key(d, map, i);
    const char *k = cs_yaml_scalar(d, kn);
    int ok = 0;
    for (size_t j = 0; k && keys[j]; j++)
      ok |= strcmp(keys[j], k) == 0;
    if (!ok)
      return cs_yaml_error(d, kn, err, CS_ERR_PARSE, "unknown key \"%s\"; expected one of: %s",
                           k ? k : "", list);
  }
  return CS_OK;
}

/* The value of key on the first "# result" line of the log named in map {log, key}; *unit is the
 * SI factor of its time suffix (_ms, _us, _s), 0 for a key without one. */
static enum cs_status log_value(const struct cfile *f, int map, double *v, double *unit,
                                struct cs_error *err) {
  static const char *const keys[] = {"log", "key", "per", NULL};
  const struct cs_yaml *d = f->doc;
  enum cs_status st = only_keys(d, map, keys, "log, key, per", err);
  const char *log = st == CS_OK ? get_text(d, map, "log", err) : NULL;
  const char *key = log ? get_text(d, map, "key", err) : NULL;
  if (key == NULL) return CS_ERR_PARSE;
  char path[4096];
  if ((st = resolve(f, log, path, sizeof path, err)) != CS_OK) return st;
  FILE *in = fopen(path, "r");
  if (in == NULL)
    return cs_yaml_error(d, cs_yaml_get(d, map, "log"), err, CS_ERR_IO, "cannot open %s", path);
  char line[4096];
  int found = 0;
  size_t kl = strlen(key);
  while (!found && fgets(line, sizeof line, in))
    if (strncmp(line, "# result ", 9) == 0)
      for (char *s = line; (s = strstr(s, key)) != NULL; s += kl)
        if (s[-1] == ' ' && s[kl] == '=') {
          char *end;
          *v = strtod(s + kl + 1, &end);
          found = end != s + kl + 1 && isfinite(*v);
          break;
        }
  fclose(in);
  if (!found)
    return cs_yaml_error(d, cs_yaml_get(d, map, "key"), err, CS_ERR_PARSE,
                         "expected \"%s=NUMBER\" on a \"# result\" line of %s", key, path);
  *unit = 0;
  if (kl > 3 && strcmp(key + kl - 3, "_ms") == 0)
    *unit = 1e-3;
  else if (kl > 3 && strcmp(key + kl - 3, "_us") == 0)
    *unit = 1e-6;
  else if (kl > 2 && strcmp(key + kl - 2, "_s") == 0)
    *unit = 1;
  return CS_OK;
}

static enum cs_status case_query(const struct vcase *c, struct cs_coll_query *q,
                                 struct cs_error *err);

/* The rows of an nccl-tests log {nccl_tests: FILE, field: busbw|time, in_place: no|yes|both}
 * that match the case's collective, size, ranks, algorithm and protocol in the default
 * configuration: their smallest and largest value (SI). */
static enum cs_status nccl_value(const struct vcase *c, int map, int kind, double *lo, double *hi,
                                 struct cs_error *err) {
  static const char *const keys[] = {"nccl_tests", "field", "in_place", NULL};
  const struct cfile *f = c->file;
  const struct cs_yaml *d = f->doc;
  enum cs_status st = only_keys(d, map, keys, "nccl_tests, field, in_place", err);
  const char *log = st == CS_OK ? get_text(d, map, "nccl_tests", err) : NULL;
  const char *field = log ? get_text(d, map, "field", err) : NULL;
  if (field == NULL) return CS_ERR_PARSE;
  int busbw = strcmp(field, "busbw") == 0;
  if ((!busbw && strcmp(field, "time") != 0) ||
      (busbw ? kind != CS_UNIT_BANDWIDTH : kind != CS_UNIT_TIME))
    return cs_yaml_error(d, cs_yaml_get(d, map, "field"), err, CS_ERR_PARSE,
                         "field: expected %s for a %s case",
                         kind == CS_UNIT_BANDWIDTH ? "busbw" : "time", metric_names[c->metric]);
  int want_ip = 0; /* 0 out-of-place, 1 in-place, 2 both */
  int ipn = cs_yaml_get(d, map, "in_place");
  if (ipn) {
    const char *s = cs_yaml_scalar(d, ipn);
    if (s && strcmp(s, "both") == 0)
      want_ip = 2;
    else if ((st = cs_yaml_bool(d, ipn, &want_ip, err)) != CS_OK)
      return cs_yaml_error(d, ipn, err, CS_ERR_PARSE, "in_place: expected true, false or both");
  }
  struct cs_coll_query q;
  if ((st = case_query(c, &q, err)) != CS_OK) return st;
  char path[4096];
  if ((st = resolve(f, log, path, sizeof path, err)) != CS_OK) return st;
  struct cs_meas_set set;
  cs_meas_set_init(&set);
  st = cs_nccltests_import(path, &set, err);
  int n = 0;
  for (size_t i = 0; st == CS_OK && i < set.n; i++) {
    const struct cs_meas_row *r = &set.rows[i];
    if (r->coll != q.coll || r->bytes != q.bytes || r->ranks != q.ranks || r->algo != q.algo ||
        r->proto != q.proto || r->config[0] || (want_ip != 2 && r->in_place != want_ip))
      continue;
    double v = busbw ? r->busbw_GBps * 1e9 : r->time_us * 1e-6;
    if (n == 0 || v < *lo) *lo = v;
    if (n == 0 || v > *hi) *hi = v;
    n++;
  }
  cs_meas_set_fini(&set);
  if (st == CS_OK && n == 0)
    st = cs_yaml_error(d, map, err, CS_ERR_PARSE,
                       "no row of %s matches %s %s, %d ranks, %.0f bytes, default configuration",
                       path, cs_coll_name(q.coll), cs_algo_name(q.algo), q.ranks, q.bytes);
  return st;
}

/* Reads a value node: kind < 0 a plain number, else a quantity of that unit kind; a range [lo, hi]
 * when range is allowed; {log, key[, per]} and {nccl_tests, field}. */
static enum cs_status read_value(const struct vcase *c, int node, int kind, int range, double *lo,
                                 double *hi, struct cs_error *err) {
  const struct cs_yaml *d = c->file->doc;
  enum cs_status st;
  switch (cs_yaml_kind(d, node)) {
  case CS_YAML_SCALAR:
    st = kind < 0 ? cs_yaml_double(d, node, 0, 1e30, lo, err)
                  : cs_yaml_quantity(d, node, (enum cs_unit_kind)kind, lo, err);
    *hi = *lo;
    return st;
  case CS_YAML_SEQ:
    if (!range || cs_yaml_len(d, node) != 2) break;
    {
      double a, b, x;
      if ((st = read_value(c, cs_yaml_item(d, node, 0), kind, 0, &a, &x, err)) != CS_OK ||
          (st = read_value(c, cs_yaml_item(d, node, 1), kind, 0, &b, &x, err)) != CS_OK)
        return st;
      if (!(a <= b)) return cs_yaml_error(d, node, err, CS_ERR_PARSE, "expected [low, high]");
      *lo = a, *hi = b;
      return CS_OK;
    }
  case CS_YAML_MAP:
    if (cs_yaml_get(d, node, "nccl_tests")) return nccl_value(c, node, kind, lo, hi, err);
    if (cs_yaml_get(d, node, "log")) {
      double v, u;
      if ((st = log_value(c->file, node, &v, &u, err)) != CS_OK) return st;
      int per = cs_yaml_get(d, node, "per");
      if (per) {
        double v2, u2;
        if (cs_yaml_kind(d, per) != CS_YAML_MAP)
          return cs_yaml_error(d, per, err, CS_ERR_PARSE, "per: expected {log: FILE, key: KEY}");
        if ((st = log_value(c->file, per, &v2, &u2, err)) != CS_OK) return st;
        if (!(v2 > 0) || u != u2 || kind >= 0)
          return cs_yaml_error(d, per, err, CS_ERR_PARSE,
                               "per: expected a positive value in the same unit, for a ratio");
        *lo = *hi = v / v2;
        return CS_OK;
      }
      if ((kind == CS_UNIT_TIME) != (u > 0))
        return cs_yaml_error(d, cs_yaml_get(d, node, "key"), err, CS_ERR_PARSE,
                             kind == CS_UNIT_TIME
                                 ? "expected a key with a time suffix (_ms, _us, _s)"
                                 : "expected a key without a unit, or per: for a "
                                   "ratio");
      *lo = *hi = u > 0 ? v * u : v;
      return CS_OK;
    }
    break;
  default:
    break;
  }
  return cs_yaml_error(d, node, err, CS_ERR_PARSE,
                       "expected %s%s, {log: FILE, key: KEY} or {nccl_tests: FILE, field: F}",
                       kind < 0 ? "a number" : "a value with its unit",
                       range ? ", a range [low, high]" : "");
}

/* ---- predictions ------------------------------------------------------------------------------
 */

struct calent {
  char key[4200];
  struct cs_cal cal;
};

struct cs_val {
  char exe[4096];
  struct calent cals[MAX_CALS];
  int ncal;
  char **paths; /* the files added, in order */
  size_t np;
  struct cfile *files; /* [MAX_FILES] */
  size_t nf;
  struct vcase *cs; /* [MAX_CASES] */
  size_t n;
  struct cs_val_case *out; /* [n] after a run */
  struct cs_progress progress;
};

void cs_val_set_progress(struct cs_val *v, const struct cs_progress *p) {
  v->progress = *p;
}

/* The calibration a case names (node 0: the default model), loaded or fitted once per run. */
static enum cs_status get_cal(struct cs_val *x, const struct vcase *c, const struct cs_cal **out,
                              struct cs_error *err) {
  const struct cfile *f = c->file;
  const struct cs_yaml *d = f->doc;
  int node = c->cal_node;
  char key[4200], path[4096];
  const char *s = node ? cs_yaml_scalar(d, node) : "default";
  const char *launch = "", *config = "";
  enum cs_status st = CS_OK;
  if (s && strcmp(s, "default") == 0)
    snprintf(key, sizeof key, "default");
  else if (s) {
    if ((st = resolve(f, s, path, sizeof path, err)) != CS_OK) return st;
    snprintf(key, sizeof key, "file:%s", path);
  } else if (cs_yaml_kind(d, node) == CS_YAML_MAP) {
    static const char *const keys[] = {"fit", "launch", "config", NULL};
    if ((st = only_keys(d, node, keys, "fit, launch, config", err)) != CS_OK) return st;
    const char *csv = get_text(d, node, "fit", err);
    if (csv == NULL) return CS_ERR_PARSE;
    if (cs_yaml_get(d, node, "launch") && !(launch = get_text(d, node, "launch", err)))
      return CS_ERR_PARSE;
    if (cs_yaml_get(d, node, "config") && !(config = get_text(d, node, "config", err)))
      return CS_ERR_PARSE;
    if ((st = resolve(f, csv, path, sizeof path, err)) != CS_OK) return st;
    snprintf(key, sizeof key, "fit:%s:%s:%s", launch, config, path);
  } else
    return cs_yaml_error(d, node, err, CS_ERR_PARSE,
                         "calibration: expected default, a calibration.yaml or {fit: CSV, launch: "
                         "process|thread, config: NCCL_TAG}");
  for (int i = 0; i < x->ncal; i++)
    if (strcmp(x->cals[i].key, key) == 0) {
      *out = &x->cals[i].cal;
      return CS_OK;
    }
  if (x->ncal == MAX_CALS)
    return cs_yaml_error(d, node, err, CS_ERR_RANGE, "more than %d calibrations", MAX_CALS);
  struct calent *e = &x->cals[x->ncal];
  cs_cal_init(&e->cal);
  snprintf(e->key, sizeof e->key, "%s", key);
  if (strncmp(key, "file:", 5) == 0)
    st = cs_calfile_read(path, &e->cal, err);
  else if (strncmp(key, "fit:", 4) == 0) {
    struct cs_fit_opts fo;
    cs_fit_opts_default(&fo);
    fo.cross_validate = 0;
    fo.config = config;
    if (launch[0]) {
      enum cs_launch l;
      if (cs_meas_launch_parse(launch, &l) != 0) {
        cs_cal_fini(&e->cal);
        return cs_yaml_error(d, cs_yaml_get(d, node, "launch"), err, CS_ERR_PARSE,
                             "launch: expected process or thread");
      }
      fo.launch = (int)l;
    }
    struct cs_meas_set set;
    cs_meas_set_init(&set);
    st = cs_meas_read_any(path, &set, err);
    if (st == CS_OK) st = cs_fit_run(&set, &fo, &e->cal, NULL, err);
    cs_meas_set_fini(&set);
  }
  if (st != CS_OK) {
    cs_cal_fini(&e->cal);
    return st;
  }
  x->ncal++;
  *out = &e->cal;
  return CS_OK;
}

static enum cs_status find_topology(const struct vcase *c, struct cs_topology *t,
                                    struct cs_error *err) {
  char path[4096];
  enum cs_status st = is_path(c->topology) ? resolve(c->file, c->topology, path, sizeof path, err)
                                           : cs_topo_find(c->topology, path, sizeof path, err);
  return st == CS_OK ? cs_topo_load(path, t, err) : st;
}

/* The collective query of a case (its shape without the topology's grouping). */
static enum cs_status case_query(const struct vcase *c, struct cs_coll_query *q,
                                 struct cs_error *err) {
  const struct cs_yaml *d = c->file->doc;
  memset(q, 0, sizeof *q);
  if (cs_coll_parse(c->collective, &q->coll) != 0)
    return cs_yaml_error(d, c->node, err, CS_ERR_PARSE, "collective: unknown collective \"%s\"",
                         c->collective);
  if (cs_algo_parse(c->algo, &q->algo) != 0)
    return cs_yaml_error(d, c->node, err, CS_ERR_PARSE, "algo: unknown algorithm \"%s\"", c->algo);
  if (cs_proto_parse(c->proto, &q->proto) != 0)
    return cs_yaml_error(d, c->node, err, CS_ERR_PARSE, "proto: unknown protocol \"%s\"", c->proto);
  if (q->algo != CS_ALGO_AUTO && !cs_coll_algo_valid(q->coll, q->algo))
    return cs_yaml_error(d, c->node, err, CS_ERR_PARSE, "algo: %s cannot run %s", c->algo,
                         c->collective);
  q->nodes = c->nodes ? c->nodes : 1;
  q->gpus_per_node = c->gpus_per_node;
  if (!q->gpus_per_node && c->topology[0]) {
    struct cs_topology t;
    enum cs_status st = find_topology(c, &t, err);
    if (st != CS_OK) return st;
    q->gpus_per_node = t.node.gpus;
  }
  if (!q->gpus_per_node)
    return cs_yaml_error(d, c->node, err, CS_ERR_PARSE,
                         "missing required key \"gpus_per_node\" (or a topology) for a %s case",
                         metric_names[c->metric]);
  q->ranks = q->nodes * q->gpus_per_node;
  q->bytes = c->size;
  return CS_OK;
}

/* busbw or time of one collective, as `commscale coll --topology` predicts it. */
static enum cs_status predict_coll(struct cs_val *x, const struct vcase *c, double *v,
                                   struct cs_error *err) {
  const struct cs_cal *cal;
  struct cs_coll_query q;
  enum cs_status st = get_cal(x, c, &cal, err);
  if (st == CS_OK) st = case_query(c, &q, err);
  if (st != CS_OK) return st;
  struct cs_cal shape = *cal; /* shallow: the topology's links go into a copy of the model */
  if (c->topology[0]) {
    struct cs_topology t;
    struct cs_topo_group grp;
    if ((st = find_topology(c, &t, err)) != CS_OK ||
        (st = cs_topo_map_shape(&t, q.nodes, q.gpus_per_node, 0, &grp, err)) != CS_OK)
      return st;
    cs_topo_cal_apply(&t, &grp, 0, &shape);
    cs_topo_group_query(&grp, &q);
  }
  struct cs_coll_pred pr;
  double lo, hi;
  if ((st = cs_cal_predict(&shape, &q, &pr, &lo, &hi, err)) != CS_OK) return st;
  if (!(pr.time > 0) || !isfinite(pr.time))
    return cs_error_set(err, CS_ERR_NUMERIC, "the model gives no finite time");
  double fb = q.bytes * cs_coll_busbw_factor(q.coll, q.ranks);
  *v = c->metric == CS_VAL_TIME ? pr.time : fb / pr.time;
  struct vcase *cw = (struct vcase *)c; /* the band goes with the prediction */
  cw->band_lo = c->metric == CS_VAL_TIME ? lo : fb / hi;
  cw->band_hi = c->metric == CS_VAL_TIME ? hi : fb / lo;
  cw->b.coll_default = cal->n_fit == 0;
  return CS_OK;
}

/* speedup, hardware TFLOP/s per GPU or step time of a training step. */
static enum cs_status predict_step(struct cs_val *x, const struct vcase *c, double *v,
                                   struct cs_error *err) {
  const struct cs_cal *cal;
  enum cs_status st = get_cal(x, c, &cal, err);
  if (st != CS_OK) return st;
  struct cs_scenario_spec sp = {.workload = c->workload,
                                .gpu = c->gpu,
                                .topology = c->topology,
                                .shared_cal = cal,
                                .plan_text = c->plan,
                                .base_dir = c->file->dir,
                                .exe = x->exe};
  char probes[2200] = "";
  if (c->probes[0]) {
    /* each file relative to the case file's folder */
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", c->probes);
    char *save = NULL;
    size_t used = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
      used += (size_t)snprintf(probes + used, used < sizeof probes ? sizeof probes - used : 0,
                               "%s%s%s%s", used ? "," : "", t[0] == '/' ? "" : c->file->dir,
                               t[0] == '/' ? "" : "/", t);
    if (used >= sizeof probes)
      return cs_error_set(err, CS_ERR_USAGE, "probes: the paths are too long");
    sp.probes = probes;
  }
  struct cs_scenario s;
  if ((st = cs_scenario_load(&s, &sp, err)) != CS_OK) return st;
  struct cs_plan *plan = &s.base;
  long gpus = c->gpus ? c->gpus : (long)c->nodes * s.topo.node.gpus;
  long mp = (long)plan->tp * plan->pp * plan->cp;
  if (gpus % mp != 0)
    st = cs_error_set(err, CS_ERR_USAGE, "%ld GPUs are not a multiple of tp*pp*cp = %ld", gpus, mp);
  if (st == CS_OK) plan->dp = (int)(gpus / mp);
  double measured = 0, hi;
  if (st == CS_OK && c->measured_node)
    st = read_value(c, c->measured_node, CS_UNIT_TIME, 0, &measured, &hi, err);
  else if (st == CS_OK && c->throughput_1gpu > 0)
    measured = plan->mbs / c->throughput_1gpu; /* DLPerf: one GPU's micro-batch time */
  if (st == CS_OK && measured > 0) st = cs_scenario_calibrate(&s, measured, err);
  struct cs_sim_result r;
  if (st == CS_OK) {
    struct cs_sim_inputs in = cs_scenario_sim_inputs(&s, plan);
    st = cs_sim_predict(&in, &r, err);
  }
  if (st == CS_OK) {
    struct vcase *cw = (struct vcase *)c; /* the band goes with the prediction */
    /* a speedup's two ends share the compute level: only the step's other parts carry it */
    double comp = r.part.compute + r.part.optimizer;
    cw->b.sim = r;
    if (c->metric == CS_VAL_SPEEDUP) {
      cw->b.u_compute = s.compute.band_rel * (r.step - comp);
      if (cw->b.u_compute < 0) cw->b.u_compute = 0;
    } else {
      cw->b.u_compute = cs_sim_compute_band(&s.compute, &r);
    }
    cw->b.multi = cs_plan_gpus(plan) > 1 && s.compute.band_fw > 0;
    if (c->metric == CS_VAL_HW_TFLOPS) {
      *v = r.hw_tflops_per_gpu * 1e12;
      cw->band_lo = *v * r.step / r.step_hi, cw->band_hi = *v * r.step / r.step_lo;
    } else if (c->metric == CS_VAL_TFLOPS) {
      *v = r.tflops_per_gpu * 1e12;
      cw->band_lo = *v * r.step / r.step_hi, cw->band_hi = *v * r.step / r.step_lo;
    } else if (c->metric == CS_VAL_STEP) {
      *v = r.step;
      cw->band_lo = r.step_lo, cw->band_hi = r.step_hi;
    } else {
      double one;
      st = cs_sim_single_gpu(s.workload, plan, &s.compute, &one, err);
      if (st == CS_OK) *v = r.samples_per_s / one;
      cw->band_lo = *v * r.step / r.step_hi_coll, cw->band_hi = *v * r.step / r.step_lo_coll;
    }
  }
  cs_scenario_fini(&s);
  return st;
}

static enum cs_status run_case(struct cs_val *x, struct vcase *c, struct cs_error *err) {
  enum cs_status st;
  if (c->published_node)
    st = read_value(c, c->published_node, metric_kind[c->metric], 1, &c->pub_lo, &c->pub_hi, err);
  else {
    c->pub_lo = c->pub_hi = c->throughput / c->throughput_1gpu;
    st = CS_OK;
  }
  if (st == CS_OK && !(c->pub_lo > 0))
    st = cs_yaml_error(c->file->doc, c->published_node ? c->published_node : c->node, err,
                       CS_ERR_PARSE, "published: expected a value greater than 0");
  if (st == CS_OK)
    st = c->metric >= CS_VAL_BUSBW ? predict_coll(x, c, &c->pred, err)
                                   : predict_step(x, c, &c->pred, err);
  if (st != CS_OK) {
    /* say which case, unless the message already points into the case file */
    if (strncmp(err->msg, c->file->path, strlen(c->file->path)) != 0) {
      long line, col;
      cs_yaml_mark(c->file->doc, c->node, &line, &col);
      char pre[4400];
      snprintf(pre, sizeof pre, "%s:%ld:%ld: case \"%s\"", c->file->path, line, col, c->name);
      cs_error_prefix(err, pre);
    }
    return st;
  }
  if (c->pred < c->pub_lo)
    c->err = (c->pred - c->pub_lo) / c->pub_lo;
  else if (c->pred > c->pub_hi)
    c->err = (c->pred - c->pub_hi) / c->pub_hi;
  else
    c->err = 0;
  double e = fabs(c->err);
  c->status = e <= c->tolerance                 ? CS_VAL_OK
              : (c->bound > 0 && e <= c->bound) ? CS_VAL_KNOWN
                                                : CS_VAL_MISS;
  return CS_OK;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the case files of a folder (every *.yaml, sorted) or the file itself to paths. */
static enum cs_status add_paths(const char *p, char ***paths, size_t *np, struct cs_error *err) {
  DIR *dir = opendir(p);
  char **add = NULL;
  size_t na = 0;
  if (dir == NULL) {
    if (!(add = malloc(sizeof *add)) || !(add[0] = strdup(p))) {
      free(add);
      return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
    }
    na = 1;
  } else {
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
      size_t l = strlen(e->d_name);
      if (l < 6 || strcmp(e->d_name + l - 5, ".yaml") != 0) continue;
      char **t = realloc(add, (na + 1) * sizeof *add);
      char *s = malloc(strlen(p) + l + 2);
      if (t) add = t;
      if (!t || !s) {
        free(s);
        for (size_t i = 0; i < na; i++)
          free(add[i]);
        free(add);
        closedir(dir);
        return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
      }
      sprintf(s, "%s/%s", p, e->d_name);
      add[na++] = s;
    }
    closedir(dir);
    if (na == 0) return cs_error_set(err, CS_ERR_USAGE, "%s: no *.yaml case files", p);
    qsort(add, na, sizeof *add, cmp_str);
  }
  char **t = realloc(*paths, (*np + na) * sizeof **paths);
  if (t == NULL) {
    for (size_t i = 0; i < na; i++)
      free(add[i]);
    free(add);
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  }
  *paths = t;
  memcpy(*paths + *np, add, na * sizeof *add);
  *np += na;
  free(add);
  return CS_OK;
}

/* The bundled case files (validation/ through datadir.h). */
static enum cs_status bundled_paths(const char *exe, char ***paths, size_t *np,
                                    struct cs_error *err) {
  char **names = NULL;
  size_t nn = 0;
  enum cs_status st = cs_datadir_list("validation", "tests/validation", exe, &names, &nn, err);
  if (st == CS_OK && nn == 0)
    st = cs_error_set(err, CS_ERR_IO, "no validation case files found (set COMMSCALE_DATA_DIR)");
  for (size_t i = 0; st == CS_OK && i < nn; i++) {
    char path[4096];
    st = cs_datadir_find("validation", "tests/validation", names[i], exe, path, sizeof path, err);
    if (st == CS_OK) st = add_paths(path, paths, np, err);
  }
  cs_datadir_list_free(names, nn);
  return st;
}
/* ---- the engine ------------------------------------------------------------------------------ */

struct cs_val *cs_val_alloc(const char *exe) {
  struct cs_val *v = calloc(1, sizeof *v);
  if (v == NULL) return NULL;
  v->files = calloc(MAX_FILES, sizeof *v->files);
  v->cs = calloc(MAX_CASES, sizeof *v->cs);
  if (!v->files || !v->cs) {
    cs_val_free(v);
    return NULL;
  }
  snprintf(v->exe, sizeof v->exe, "%s", exe ? exe : "");
  return v;
}

void cs_val_free(struct cs_val *v) {
  if (v == NULL) return;
  for (size_t i = 0; i < v->nf; i++)
    cs_yaml_free(v->files[i].doc);
  for (size_t i = 0; i < v->np; i++)
    free(v->paths[i]);
  free(v->paths);
  for (int i = 0; i < v->ncal; i++)
    cs_cal_fini(&v->cals[i].cal);
  free(v->files);
  free(v->cs);
  free(v->out);
  free(v);
}

enum cs_status cs_val_add(struct cs_val *v, const char *path, struct cs_error *err) {
  return add_paths(path, &v->paths, &v->np, err);
}

enum cs_status cs_val_add_bundled(struct cs_val *v, struct cs_error *err) {
  return bundled_paths(v->exe, &v->paths, &v->np, err);
}

enum cs_status cs_val_run(struct cs_val *v, const char *sections, struct cs_error *err) {
  enum cs_status st = CS_OK;
  for (size_t i = 0; st == CS_OK && i < v->np; i++) {
    int skipped;
    if (v->nf == MAX_FILES)
      return cs_error_set(err, CS_ERR_RANGE, "more than %d case files", MAX_FILES);
    st = load_file(v->paths[i], &v->files[v->nf], v->cs, &v->n, sections, &skipped, err);
    v->nf++; /* the document is freed at the end, loaded or not */
  }
  if (st == CS_OK && v->n == 0)
    st = cs_error_set(err, CS_ERR_USAGE, "no validation case%s",
                      sections ? " in those sections" : "");
  for (size_t i = 0; st == CS_OK && i < v->n; i++) {
    cs_progress_report(&v->progress, v->cs[i].name, (int)i, (int)v->n);
    st = run_case(v, &v->cs[i], err);
  }
  struct cs_valband **b = st == CS_OK ? malloc((v->n ? v->n : 1) * sizeof *b) : NULL;
  if (st == CS_OK && b == NULL) st = cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; st == CS_OK && i < v->n; i++) {
    struct vcase *c = &v->cs[i];
    c->b.section = c->section, c->b.pred = c->pred, c->b.err = c->err;
    c->b.lo = c->band_lo, c->b.hi = c->band_hi;
    c->b.kind = c->metric >= CS_VAL_BUSBW     ? CS_VALBAND_COLL
                : c->metric == CS_VAL_STEP    ? CS_VALBAND_STEP
                : c->metric == CS_VAL_SPEEDUP ? CS_VALBAND_SPEEDUP
                                              : CS_VALBAND_RATE;
    b[i] = &c->b;
  }
  if (st == CS_OK) st = cs_valband_pass(b, v->n, err);
  for (size_t i = 0; st == CS_OK && i < v->n; i++)
    v->cs[i].band_lo = v->cs[i].b.lo, v->cs[i].band_hi = v->cs[i].b.hi;
  free(b);
  cs_progress_report(&v->progress, "done", (int)v->n, (int)v->n);
  if (st != CS_OK) return st;
  free(v->out);
  if ((v->out = calloc(v->n, sizeof *v->out)) == NULL)
    return cs_error_set(err, CS_ERR_NOMEM, "out of memory");
  for (size_t i = 0; i < v->n; i++) {
    const struct vcase *c = &v->cs[i];
    struct cs_val_case *o = &v->out[i];
    o->file = c->file->path;
    snprintf(o->section, sizeof o->section, "%s", c->section);
    snprintf(o->name, sizeof o->name, "%s", c->name);
    snprintf(o->note, sizeof o->note, "%s", c->note);
    o->metric = (enum cs_val_metric)c->metric;
    o->tolerance = c->tolerance, o->bound = c->bound;
    o->pred = c->pred, o->pub_lo = c->pub_lo, o->pub_hi = c->pub_hi, o->err = c->err;
    o->band_lo = c->band_lo, o->band_hi = c->band_hi;
    o->status = (enum cs_val_status)c->status;
  }
  return CS_OK;
}

const struct cs_val_case *cs_val_cases(const struct cs_val *v, size_t *n) {
  *n = v->out ? v->n : 0;
  return v->out;
}

const char *cs_val_metric_name(enum cs_val_metric m) {
  return metric_names[m];
}
const char *cs_val_metric_unit(enum cs_val_metric m) {
  return metric_units[m];
}
double cs_val_metric_scale(enum cs_val_metric m) {
  return metric_scale[m];
}
const char *cs_val_status_name(enum cs_val_status s) {
  return status_names[s];
}
