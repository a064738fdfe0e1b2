/* test_calfile.c — calibration.yaml: a calibration with non-default values everywhere survives a
 * write and a read (values within 1e-9, identical predictions and bands, the same text when
 * written again); a minimal file reads as the defaults; and a table of bad files, each refused
 * with one line naming its line, column and what was expected, leaving the calibration at its
 * defaults and owning nothing. */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "calfile.h"
#include "testutil.h"

#define REL 1e-9

static int param(const char *name) {
  int i = cs_model_param_index(name);
  assert_true(i >= 0);
  return i;
}

/* A calibration unlike the defaults in every parameter family and every field. */
static void make_cal(struct cs_cal *cal) {
  cs_cal_init(cal);
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    double *p = cs_model_param(&cal->model, i);
    *p *= 1.0 + 0.013 * (i + 1) + 1.0 / 3.0; /* digits that %.6g would lose */
  }
  cal->model.intra = CS_TIER_PCIE;
  cal->model.net_form = CS_NET_TREE_LOG;
  cal->model.select = CS_SELECT_FASTEST;
  cal->model.algo_enabled = (1u << CS_ALGO_RING) | (1u << CS_ALGO_TREE) | (1u << CS_ALGO_HIER) |
                            (1u << CS_ALGO_NVLS) | (1u << CS_ALGO_P2P);
  static const char *const fitted[3] = {"bw.net", "hop.net.ll", "eff.ring.ll"};
  assert_int_equal(cs_cal_alloc_cov(cal, 3, NULL), CS_OK);
  for (int k = 0; k < 3; k++) {
    cal->fit_index[k] = param(fitted[k]);
    cal->source[cal->fit_index[k]] = CS_SRC_FIT;
  }
  static const double cov[9] = {1.2345678901e-3, -2.5e-4, 3.1e-5, -2.5e-4,      4.000000001e-3,
                                1.0e-6,          3.1e-5,  1.0e-6, 9.87654321e-2};
  memcpy(cal->cov, cov, sizeof cov);
  cal->source[param("force_lat.simple")] = CS_SRC_USER;
  for (int p = 0; p < CS_PROTO_COUNT; p++)
    cal->alt_hop_net[p] = (3.3 + p) * 1.0e-6 / 7.0;

  struct cs_cal_prov *pv = &cal->prov;
  snprintf(pv->tool, sizeof pv->tool, "commscale 0.1.0");
  snprintf(pv->created, sizeof pv->created, "2026-11-22T03:40:00Z");
  snprintf(pv->gpu, sizeof pv->gpu,
           "NVIDIA H200 \"SXM\" \\ \xe2\x80\x9cquoted\xe2\x80\x9d \xf0\x9f\x9a\x80");
  snprintf(pv->nccl, sizeof pv->nccl, "2.28.3");
  snprintf(pv->hosts, sizeof pv->hosts, "node-a: node-b # not a comment\ttab");
  snprintf(pv->config, sizeof pv->config, "NCCL_ALGO=Ring;NCCL_PROTO=LL");
  snprintf(pv->launch, sizeof pv->launch, "thread");
  snprintf(pv->sources[0], sizeof pv->sources[0], "tests/data/h200x2/nccl-tests: single.log");
  snprintf(pv->sources[1], sizeof pv->sources[1], "- [looks, like] {yaml}: &x *y");
  snprintf(pv->sources[2], sizeof pv->sources[2], "yes");
  pv->n_sources = 3;

  struct cs_cal_quality *q = &cal->quality;
  q->points = 270;
  q->outliers = 3;
  q->iterations = 12;
  q->converged = 1;
  q->noise_rel = 0.0213456789;
  q->median_rel_err = 0.0123456789;
  q->p90_rel_err = 0.0456789012;
  q->max_rel_err = 0.131313131;
  q->aic[CS_NET_RING_LINEAR] = -123.456789012;
  q->aic[CS_NET_TREE_LOG] = NAN;
  q->net_determined = 1;
  q->max_nodes = 4;
  q->max_ranks = 32;
  q->max_gpus_per_node = 8;
  q->node_counts[0] = 1, q->node_counts[1] = 2, q->node_counts[2] = 4;
  q->n_node_counts = 3;
  snprintf(q->cv[0].group, sizeof q->cv[0].group, "ring/ll n=2 N=1 g=2");
  q->cv[0].points = 28;
  q->cv[0].median_rel_err = 0.0312345;
  q->cv[0].max_rel_err = 0.101;
  snprintf(q->cv[1].group, sizeof q->cv[1].group, "tree/simple n=16 N=2 g=8");
  q->cv[1].points = 0;
  q->cv[1].median_rel_err = NAN;
  q->cv[1].max_rel_err = NAN;
  q->n_cv = 2;
  q->resid = malloc(2 * sizeof *q->resid);
  assert_non_null(q->resid);
  q->resid[0] =
      (struct cs_cal_resid){CS_COLL_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_LL128, 20, 9, 0.2134567891};
  q->resid[1] = (struct cs_cal_resid){CS_COLL_ALL_GATHER, CS_ALGO_RING, CS_PROTO_SIMPLE, 0, 3, 0};
  q->n_resid = 2;
}

static void assert_same_double(double a, double b) {
  if (isnan(b))
    assert_true(isnan(a));
  else
    assert_close(a, b, REL);
}

static void assert_same_cal(const struct cs_cal *a, const struct cs_cal *b) {
  for (int i = 0; i < CS_MODEL_NPARAMS; i++) {
    assert_close(cs_model_param_get(&a->model, i), cs_model_param_get(&b->model, i), REL);
    assert_int_equal(a->source[i], b->source[i]);
  }
  assert_int_equal(a->model.intra, b->model.intra);
  assert_int_equal(a->model.net_form, b->model.net_form);
  assert_int_equal(a->model.select, b->model.select);
  assert_int_equal(a->model.algo_enabled, b->model.algo_enabled);
  assert_int_equal(a->n_fit, b->n_fit);
  for (int k = 0; k < a->n_fit; k++) {
    assert_int_equal(a->fit_index[k], b->fit_index[k]);
    for (int j = 0; j < a->n_fit; j++)
      assert_close(a->cov[k * a->n_fit + j], b->cov[k * b->n_fit + j], REL);
  }
  for (int p = 0; p < CS_PROTO_COUNT; p++)
    assert_close(a->alt_hop_net[p], b->alt_hop_net[p], REL);
  assert_string_equal(a->prov.tool, b->prov.tool);
  assert_string_equal(a->prov.created, b->prov.created);
  assert_string_equal(a->prov.gpu, b->prov.gpu);
  assert_string_equal(a->prov.nccl, b->prov.nccl);
  assert_string_equal(a->prov.hosts, b->prov.hosts);
  assert_string_equal(a->prov.config, b->prov.config);
  assert_string_equal(a->prov.launch, b->prov.launch);
  assert_int_equal(a->prov.n_sources, b->prov.n_sources);
  for (int s = 0; s < a->prov.n_sources; s++)
    assert_string_equal(a->prov.sources[s], b->prov.sources[s]);
  const struct cs_cal_quality *x = &a->quality, *y = &b->quality;
  assert_int_equal(x->points, y->points);
  assert_int_equal(x->outliers, y->outliers);
  assert_int_equal(x->iterations, y->iterations);
  assert_int_equal(x->converged, y->converged);
  assert_same_double(x->noise_rel, y->noise_rel);
  assert_same_double(x->median_rel_err, y->median_rel_err);
  assert_same_double(x->p90_rel_err, y->p90_rel_err);
  assert_same_double(x->max_rel_err, y->max_rel_err);
  assert_same_double(x->aic[0], y->aic[0]);
  assert_same_double(x->aic[1], y->aic[1]);
  assert_int_equal(x->net_determined, y->net_determined);
  assert_int_equal(x->max_nodes, y->max_nodes);
  assert_int_equal(x->max_ranks, y->max_ranks);
  assert_int_equal(x->max_gpus_per_node, y->max_gpus_per_node);
  assert_int_equal(x->n_node_counts, y->n_node_counts);
  for (int k = 0; k < x->n_node_counts; k++)
    assert_int_equal(x->node_counts[k], y->node_counts[k]);
  assert_int_equal(x->n_cv, y->n_cv);
  for (int c = 0; c < x->n_cv; c++) {
    assert_string_equal(x->cv[c].group, y->cv[c].group);
    assert_int_equal(x->cv[c].points, y->cv[c].points);
    assert_same_double(x->cv[c].median_rel_err, y->cv[c].median_rel_err);
    assert_same_double(x->cv[c].max_rel_err, y->cv[c].max_rel_err);
  }
  assert_int_equal(x->n_resid, y->n_resid);
  for (int r = 0; r < x->n_resid; r++) {
    assert_int_equal(x->resid[r].coll, y->resid[r].coll);
    assert_int_equal(x->resid[r].algo, y->resid[r].algo);
    assert_int_equal(x->resid[r].proto, y->resid[r].proto);
    assert_int_equal(x->resid[r].octave, y->resid[r].octave);
    assert_int_equal(x->resid[r].points, y->resid[r].points);
    assert_same_double(x->resid[r].rms_ln, y->resid[r].rms_ln);
  }
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char *copy = malloc(n + 1);
  assert_non_null(copy);
  memcpy(copy, buf, n + 1);
  return copy;
}

static void round_trip(void **state) {
  (void)state;
  struct cs_cal cal, back;
  struct cs_error err = {0};
  char path[512], path2[512];
  make_cal(&cal);
  cs_test_tmp("calfile_round.yaml", path, sizeof path);
  assert_int_equal(cs_calfile_write(path, &cal, &err), CS_OK);
  cs_cal_init(&back);
  enum cs_status st = cs_calfile_read(path, &back, &err);
  if (st != CS_OK) print_error("%s\n", err.msg);
  assert_int_equal(st, CS_OK);
  assert_same_cal(&back, &cal);
  assert_close(cs_cal_param_se(&back, param("hop.net.ll")), sqrt(4.000000001e-3), REL);

  /* predictions and their bands agree, whichever part of the model dominates */
  static const double sizes[] = {8, 65536, 1048576, 1073741824};
  static const enum cs_coll colls[] = {CS_COLL_ALL_REDUCE, CS_COLL_ALL_GATHER, CS_COLL_ALL_TO_ALL};
  for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      struct cs_coll_query qy = {colls[c], CS_ALGO_AUTO, CS_PROTO_AUTO, 16, 2, 8, sizes[s]};
      struct cs_coll_pred p1, p2;
      double lo1, hi1, lo2, hi2;
      assert_int_equal(cs_cal_predict(&cal, &qy, &p1, &lo1, &hi1, &err), CS_OK);
      assert_int_equal(cs_cal_predict(&back, &qy, &p2, &lo2, &hi2, &err), CS_OK);
      assert_int_equal(p1.algo, p2.algo);
      assert_int_equal(p1.proto, p2.proto);
      assert_close(p2.time, p1.time, REL);
      assert_close(lo2, lo1, 1e-7); /* the band goes through finite differences */
      assert_close(hi2, hi1, 1e-7);
    }

  /* written again, the read-back calibration gives the same text */
  cs_test_tmp("calfile_round2.yaml", path2, sizeof path2);
  assert_int_equal(cs_calfile_write(path2, &back, &err), CS_OK);
  char *t1 = slurp(path), *t2 = slurp(path2);
  assert_string_equal(t1, t2);
  /* the tricky strings are quoted, not left for YAML to reinterpret */
  assert_non_null(strstr(t1, "config: \"NCCL_ALGO=Ring;NCCL_PROTO=LL\""));
  assert_non_null(strstr(t1, "tree-log: null"));
  assert_non_null(strstr(t1, "intra_tier: pcie"));
  free(t1);
  free(t2);
  cs_cal_fini(&cal);
  cs_cal_fini(&back);
}

/* A file with only the version is the defaults; the previous contents of cal are replaced. */
static void minimal(void **state) {
  (void)state;
  char path[512];
  struct cs_error err = {0};
  struct cs_cal cal, def;
  cs_test_tmp("calfile_min.yaml", path, sizeof path);
  cs_test_write_file(path, "# nothing fitted yet\nversion: 1\n");
  make_cal(&cal);
  assert_int_equal(cs_calfile_read(path, &cal, &err), CS_OK);
  cs_cal_init(&def);
  assert_same_cal(&cal, &def);
  assert_null(cal.cov);
  assert_int_equal(cal.n_fit, 0);
  assert_true(isnan(cal.quality.aic[0]));
  cs_cal_fini(&cal);
}

static void write_checks(void **state) {
  (void)state;
  struct cs_cal cal;
  struct cs_error err = {0};
  char path[512];
  cs_cal_init(&cal);
  /* a default calibration writes and reads back */
  cs_test_tmp("calfile_default.yaml", path, sizeof path);
  assert_int_equal(cs_calfile_write(path, &cal, &err), CS_OK);
  assert_int_equal(cs_calfile_read(path, &cal, &err), CS_OK);
  /* what the reader would refuse is not written */
  cal.model.bw[CS_TIER_NET] = NAN;
  assert_int_equal(cs_calfile_write(path, &cal, &err), CS_ERR_NUMERIC);
  assert_non_null(strstr(err.msg, "bw.net"));
  cs_cal_init(&cal);
  cal.source[param("bw.nvlink")] = CS_SRC_FIT; /* fitted, but no covariance */
  assert_int_equal(cs_calfile_write(path, &cal, &err), CS_ERR_RANGE);
  /* nor residual entries or node counts the reader would refuse */
  cs_cal_init(&cal);
  struct cs_cal_resid bad_resid = {CS_COLL_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_LL, 20, 3, NAN};
  cal.quality.resid = &bad_resid; /* borrowed: taken back before any cs_cal_fini */
  cal.quality.n_resid = 1;
  assert_int_equal(cs_calfile_write(path, &cal, &err), CS_ERR_RANGE);
  assert_non_null(strstr(err.msg, "residual entry 0"));
  cal.quality.resid = NULL;
  cal.quality.n_resid = 0;
  cal.quality.max_nodes = 4;
  cal.quality.node_counts[0] = 4, cal.quality.node_counts[1] = 2;
  cal.quality.n_node_counts = 2;
  assert_int_equal(cs_calfile_write(path, &cal, &err), CS_ERR_RANGE);
  assert_non_null(strstr(err.msg, "node counts"));
  /* the old file is untouched by the refusals */
  assert_int_equal(cs_calfile_read(path, &cal, &err), CS_OK);
  /* bytes that are not UTF-8 cannot live in YAML: they come back as '?', the rest intact */
  cs_cal_init(&cal);
  snprintf(cal.prov.gpu, sizeof cal.prov.gpu, "bad\xff\xc3 byte \xc3\xa9");
  cs_test_tmp("calfile_utf8.yaml", path, sizeof path);
  assert_int_equal(cs_calfile_write(path, &cal, &err), CS_OK);
  assert_int_equal(cs_calfile_read(path, &cal, &err), CS_OK);
  assert_string_equal(cal.prov.gpu, "bad?? byte \xc3\xa9");
  /* "-" is standard output */
  cs_test_tmp("calfile_stdout.yaml", path, sizeof path);
  fflush(stdout);
  int saved = dup(1), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(saved >= 0 && fd >= 0);
  dup2(fd, 1);
  close(fd);
  enum cs_status st = cs_calfile_write("-", &cal, &err);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  assert_int_equal(st, CS_OK);
  assert_int_equal(cs_calfile_read(path, &cal, &err), CS_OK);
  assert_string_equal(cal.prov.gpu, "bad?? byte \xc3\xa9");
  /* a directory that does not exist */
  cs_cal_init(&cal);
  cs_test_tmp("no-such-dir/cal.yaml", path, sizeof path);
  assert_int_equal(cs_calfile_write(path, &cal, &err), CS_ERR_IO);
  assert_int_equal(cs_calfile_read(path, &cal, &err), CS_ERR_IO);
}

/* Checks that a failed read left cal at the defaults, owning nothing. */
static void assert_defaults(const struct cs_cal *cal) {
  struct cs_cal def;
  cs_cal_init(&def);
  assert_null(cal->cov);
  assert_int_equal(cal->n_fit, 0);
  assert_int_equal(cal->prov.n_sources, 0);
  assert_int_equal(cal->quality.n_cv, 0);
  assert_memory_equal(&cal->model, &def.model, sizeof def.model);
}

static void bad_files(void **state) {
  (void)state;
  static const struct {
    const char *file;
    const char *where;
    const char *what;
  } cases[] = {
      {"unknown_key.yaml", "4:3", "unknown key \"foo\" in parameters; expected a parameter name"},
      {"bare_time.yaml", "3:26", "expected a time such as 2.5us, 1ms or 0.3s: \"0.6\" has no unit"},
      {"version2.yaml", "1:10", "expected version: 1, got \"2\""},
      {"missing_version.yaml", "1:1", "missing required key \"version\""},
      {"asymmetric.yaml", "9:8", "expected a symmetric matrix"},
      {"nan_value.yaml", "3:24", "eff.ring.ll: expected a finite number"},
      {"negative_bw.yaml", "3:19", "bw.net: expected a non-negative bandwidth"},
      {"duplicate_key.yaml", "4:3", "duplicate key \"net_form\""},
      {"syntax.yaml", "4:10", "YAML syntax: did not find expected ',' or '}'"},
      {"alias.yaml", "3:8", "aliases and anchors are not accepted"},
      {"long_string.yaml", "3:11", "provenance.launch: expected at most 15 characters"},
      {"unknown_algo.yaml", "3:22",
       "system.algorithms: expected ring, tree, hier, nvls, collnet, pat or p2p, got \"trie\""},
      {"unknown_netform.yaml", "3:13",
       "system.net_form: expected ring-linear or tree-log, got \"ring-log\""},
      {"unit_dimensionless.yaml", "3:24", "eff.ring.ll is dimensionless: expected a plain number"},
      {"fit_not_in_cov.yaml", "4:35",
       "bw.net has source: fit but is missing from covariance.params"},
      {"cov_not_fitted.yaml", "5:23", "bw.pcie is not a fitted parameter"},
      {"cov_not_square.yaml", "9:7", "expected a square matrix; row 2 has 1 entries, expected 2"},
      {"negative_variance.yaml", "6:13", "expected a non-negative variance"},
      {"top_unknown.yaml", "2:1", "unknown key \"fits\" in the calibration file"},
      {"wrong_type.yaml", "2:13", "parameters: expected a mapping"},
      {"alt_same_form.yaml", "5:13", "expected the form other than system.net_form"},
      {"intra_net.yaml", "3:15", "system.intra_tier: expected nvlink or pcie, got \"net\""},
      {"missing_value.yaml", "3:14", "bw.nvlink: missing required key \"value\""},
      {"huge_number.yaml", "3:22", "bw.nvlink: expected a bandwidth"},
      {"bad_bool.yaml", "3:14", "quality.converged: expected true or false"},
      {"root_list.yaml", "1:1", "expected a calibration: a mapping"},
      {"aic_nan.yaml", "3:22", "quality.aic.ring-linear: expected a finite number or null"},
      {"cv_unknown.yaml", "3:43", "unknown key \"mean\" in cross_validation entry"},
      {"too_many_cv.yaml", "67:5", "expected at most 64 entries (the limit)"},
      {"too_many_sources.yaml", "20:7", "expected at most 16 source files (the limit)"},
      {"resid_coll.yaml", "4:20",
       "quality.residuals.collective: expected all_reduce, all_gather, reduce_scatter, "
       "broadcast, reduce, all_to_all or send_recv, got \"allreduce\""},
      {"resid_octave.yaml", "4:74",
       "quality.residuals.octave: expected a whole number from 0 to 62, got 70"},
      {"resid_missing.yaml", "4:7", "quality.residuals entry: missing required key \"rms_ln\""},
      {"resid_negative.yaml", "4:97", "quality.residuals.rms_ln: expected a non-negative number"},
      {"counts_order.yaml", "3:48",
       "system.measured.node_counts: expected distinct counts in ascending order"},
      {"counts_above.yaml", "3:45", "system.measured.node_counts: 8 is above max_nodes (4)"},
      {"resid_not_list.yaml", "3:14", "quality.residuals: expected a list, found a mapping"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[512], where[600];
    snprintf(path, sizeof path, "%s/calfile/%s", CS_TEST_DATA, cases[i].file);
    snprintf(where, sizeof where, "%s:%s: ", path, cases[i].where);
    struct cs_cal cal;
    make_cal(&cal); /* owns a covariance that the failed read must release */
    struct cs_error err = {0};
    enum cs_status st = cs_calfile_read(path, &cal, &err);
    if (st != CS_ERR_PARSE || strncmp(err.msg, where, strlen(where)) != 0 ||
        strstr(err.msg, cases[i].what) == NULL || strchr(err.msg, '\n') != NULL)
      print_error("%s: status %d, got: %s\n  expected: %s... %s\n", cases[i].file, (int)st, err.msg,
                  where, cases[i].what);
    assert_int_equal(st, CS_ERR_PARSE);
    assert_int_equal(err.status, CS_ERR_PARSE);
    assert_true(strncmp(err.msg, where, strlen(where)) == 0);
    assert_non_null(strstr(err.msg, cases[i].what));
    assert_null(strchr(err.msg, '\n'));
    assert_defaults(&cal);
    cs_cal_fini(&cal);
  }
}

/* Input built to hurt: deep nesting, binary junk, numbers beyond double, empty and missing files.
 */
static void hostile(void **state) {
  (void)state;
  char path[512];
  struct cs_cal cal;
  struct cs_error err = {0};
  cs_cal_init(&cal);
  cs_test_tmp("calfile_hostile.yaml", path, sizeof path);

  size_t depth = 20000; /* libyaml is quadratic in depth: far beyond 64 is enough */
  char *deep = malloc(2 * depth + 64);
  assert_non_null(deep);
  char *p = deep + sprintf(deep, "version: 1\nparameters: ");
  for (size_t i = 0; i < depth; i++)
    *p++ = '[';
  for (size_t i = 0; i < depth; i++)
    *p++ = ']';
  *p++ = '\n';
  *p = '\0';
  cs_test_write_file(path, deep);
  free(deep);
  assert_int_equal(cs_calfile_read(path, &cal, &err), CS_ERR_PARSE);
  assert_non_null(strstr(err.msg, path));
  assert_defaults(&cal);

  unsigned seed = 12345;
  for (int trial = 0; trial < 20; trial++) {
    char junk[4096];
    size_t n = sizeof junk - 1;
    for (size_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      junk[i] = (char)((seed >> 16) & 0xFF);
      if (junk[i] == 0) junk[i] = 1;
    }
    junk[n] = '\0';
    if (trial % 2) memcpy(junk, "version: 1\n", 11); /* past the version check */
    cs_test_write_file(path, junk);
    assert_int_equal(cs_calfile_read(path, &cal, &err), CS_ERR_PARSE);
    assert_null(strchr(err.msg, '\n'));
    assert_defaults(&cal);
  }

  static const char *const texts[] = {
      "",
      "version: 1\nparameters:\n  bw.nvlink: {value: "
      "99999999999999999999999999999999999e300GBps}\n",
      "version: 1\ncovariance: {params: [], matrix: [[1e999]]}\n",
      "version: 99999999999999999999999999\n",
      "version: 1\nquality: {points: 99999999999999999999}\n",
      "version: 1\nprovenance: {gpu: [a, {b: c}]}\n",
      "version: 1\n? [complex, key]\n: value\n",
      "version: 1\n--- \nversion: 1\n",
      "%YAML 1.1\n--- !!map\nversion: !!str 1\nsystem: !custom {net_form: tree-log}\n",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    cs_test_write_file(path, texts[i]);
    enum cs_status st = cs_calfile_read(path, &cal, &err);
    /* the last two are well-formed: a second document is ignored, tags carry no meaning */
    if (i + 2 >= sizeof texts / sizeof texts[0]) {
      if (st != CS_OK) print_error("%zu: %s\n", i, err.msg);
      assert_int_equal(st, CS_OK);
      continue;
    }
    if (st != CS_ERR_PARSE) print_error("%zu: %d %s\n", i, (int)st, err.msg);
    assert_int_equal(st, CS_ERR_PARSE);
    assert_non_null(strstr(err.msg, path));
    assert_defaults(&cal);
  }
  cs_cal_fini(&cal);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(round_trip), cmocka_unit_test(minimal),
                                     cmocka_unit_test(write_checks), cmocka_unit_test(bad_files),
                                     cmocka_unit_test(hostile)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
